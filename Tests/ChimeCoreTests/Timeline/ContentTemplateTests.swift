import Foundation
import Testing

@testable import ChimeCore

@Suite struct ContentTemplateTests {
    /// 2026-12-04 20:15 in Berlin (CET, UTC+1), a Friday.
    let fridayEvening = Fixture.utc("2026-12-04T19:15:00Z")

    @Test(arguments: [
        ("{date}", "2026-12-04"),
        ("{time}", "20:15"),
        ("{weekday}", "Friday"),
        ("{day}", "4"),
        ("{month}", "December"),
        ("{year}", "2026"),
        ("{n}", "7"),
        (
            "Week {n}: {weekday} {day} {month} {year} at {time} ({date})",
            "Week 7: Friday 4 December 2026 at 20:15 (2026-12-04)"
        ),
        ("{n}{n}", "77"),
        ("no placeholders", "no placeholders"),
        ("", ""),
    ])
    func fillsEveryPlaceholderFromTheLocalDate(_ text: String, _ expected: String) {
        #expect(ContentTemplate.fill(text, date: fridayEvening, timeZone: Fixture.berlin, occurrence: 7) == expected)
    }

    @Test(arguments: [
        ("{{date}}", "{date}"),
        ("{{{date}}}", "{2026-12-04}"),
        ("}}{{", "}{"),
        ("a {{ b }} c", "a { b } c"),
        ("{{n}} is {n}", "{n} is 1"),
    ])
    func doubledBracesAreLiteralBraces(_ text: String, _ expected: String) {
        #expect(ContentTemplate.fill(text, date: fridayEvening, timeZone: Fixture.berlin, occurrence: 1) == expected)
    }

    @Test func theDateIsReadOnTheGivenWallClock() {
        // 23:30 UTC on New Year's Eve is already 00:30 on 2027-01-01 (a Friday) in Berlin.
        let date = Fixture.utc("2026-12-31T23:30:00Z")
        let text = "{date} {time} {weekday} {day} {month} {year}"
        #expect(
            ContentTemplate.fill(text, date: date, timeZone: Fixture.berlin, occurrence: 1)
                == "2027-01-01 00:30 Friday 1 January 2027")
        #expect(
            ContentTemplate.fill(text, date: date, timeZone: Fixture.utcZone, occurrence: 1)
                == "2026-12-31 23:30 Thursday 31 December 2026")
    }

    @Test(arguments: [
        ("2026-06-01T12:00:00Z", "Monday"), ("2026-06-02T12:00:00Z", "Tuesday"),
        ("2026-06-03T12:00:00Z", "Wednesday"), ("2026-06-04T12:00:00Z", "Thursday"),
        ("2026-06-05T12:00:00Z", "Friday"), ("2026-06-06T12:00:00Z", "Saturday"),
        ("2026-06-07T12:00:00Z", "Sunday"),
    ])
    func weekdaysHaveEnglishNames(_ date: String, _ expected: String) {
        let filled = ContentTemplate.fill(
            "{weekday}", date: Fixture.utc(date), timeZone: Fixture.utcZone, occurrence: 1)
        #expect(filled == expected)
    }

    @Test(arguments: [
        (1, "January"), (2, "February"), (3, "March"), (4, "April"), (5, "May"), (6, "June"), (7, "July"),
        (8, "August"), (9, "September"), (10, "October"), (11, "November"), (12, "December"),
    ])
    func monthsHaveEnglishNames(_ month: Int, _ expected: String) {
        let date = Fixture.utc("2026-\(month < 10 ? "0" : "")\(month)-15T12:00:00Z")
        #expect(ContentTemplate.fill("{month}", date: date, timeZone: Fixture.utcZone, occurrence: 1) == expected)
    }

    @Test(arguments: [
        ("2026-06-01T07:05:00Z", "UTC", "07:05"),
        ("2026-06-01T07:05:00Z", "Europe/Berlin", "09:05"),
        ("2026-06-01T22:00:00Z", "Europe/Berlin", "00:00"),
        ("2026-06-01T23:59:59Z", "UTC", "23:59"),
    ])
    func timeIsTwentyFourHourWithLeadingZeros(_ date: String, _ zone: String, _ expected: String) throws {
        let timeZone = try #require(Zone(identifier: zone))
        #expect(ContentTemplate.fill("{time}", date: Fixture.utc(date), timeZone: timeZone, occurrence: 1) == expected)
    }

    @Test func fillingContentFillsSummarySubtitleAndBodyOnly() {
        let content = NotificationContent(
            appName: "{app}", summary: "Day {n}", subtitle: "{weekday}", body: "See you at {time}", icon: "{icon}",
            urgency: .low)
        let filled = ContentTemplate.fill(content, date: fridayEvening, timeZone: Fixture.berlin, occurrence: 3)
        #expect(filled.summary == "Day 3")
        #expect(filled.subtitle == "Friday")
        #expect(filled.body == "See you at 20:15")
        #expect(filled.appName == "{app}")
        #expect(filled.icon == "{icon}")
        #expect(filled.urgency == .low)

        let noSubtitle = ContentTemplate.fill(
            NotificationContent(summary: "x"), date: fridayEvening, timeZone: Fixture.berlin, occurrence: 1)
        #expect(noSubtitle.subtitle == nil)
    }

    @Test func fillingLeavesUnknownPlaceholdersAndStrayBracesAsWritten() {
        let text = "{foo} and } and {date"
        #expect(ContentTemplate.fill(text, date: fridayEvening, timeZone: Fixture.berlin, occurrence: 1) == text)
    }

    static let known = "{date}, {time}, {weekday}, {day}, {month}, {year}, {n}"

    @Test func anUnknownPlaceholderIsNamedWithItsPositionAndTheKnownOnes() {
        #expect(
            throws: ContentError(
                "unknown placeholder {name} at character 7; known placeholders: \(Self.known) "
                    + "(write {{ or }} for a literal brace)")
        ) {
            try ContentTemplate.validate("Hello {name}")
        }
    }

    @Test func anUnmatchedBraceIsNamedWithItsPosition() {
        #expect(
            throws: ContentError(
                "unmatched { at character 3; close the placeholder with } or write {{ for a literal brace; "
                    + "known placeholders: \(Self.known)")
        ) {
            try ContentTemplate.validate("a {date")
        }
        #expect(
            throws: ContentError(
                "unmatched } at character 3; write }} for a literal brace; known placeholders: \(Self.known)")
        ) {
            try ContentTemplate.validate("a } b")
        }
    }

    @Test(arguments: [
        ("{date}}", "unmatched } at character 7"),
        ("{}", "unknown placeholder {} at character 1"),
        ("{da{te}", "unmatched { at character 1"),
        ("{Date}", "unknown placeholder {Date} at character 1"),
        ("é {x}", "unknown placeholder {x} at character 3"),
        ("👍🏽 {x}", "unknown placeholder {x} at character 3"),
        ("{n} {{ {bad} {worse}", "unknown placeholder {bad} at character 8"),
    ])
    func errorsNameTheFirstProblemByCharacterPosition(_ text: String, _ start: String) {
        do {
            try ContentTemplate.validate(text)
            Issue.record("\(text) was accepted")
        } catch {
            #expect(error.message.hasPrefix(start + ";"), "\(error.message)")
            #expect(error.message.contains(Self.known))
        }
    }

    @Test(arguments: ["", "plain", "{{", "}}", "{n}th", "{{{date}}}", "{date} {time} {weekday} {day} {month} {year}"])
    func wellFormedTextValidates(_ text: String) throws {
        try ContentTemplate.validate(text)
    }

    @Test func validatingContentSaysWhichFieldIsWrong() {
        #expect(
            throws: ContentError(
                "the body has an unknown placeholder {x} at character 1; known placeholders: \(Self.known) "
                    + "(write {{ or }} for a literal brace)")
        ) {
            try ContentTemplate.validate(NotificationContent(summary: "{n}", subtitle: "{date}", body: "{x}"))
        }
    }

    @Test func placeholdersListEveryNameWithAMeaning() {
        #expect(
            ContentTemplate.placeholders.map(\.name)
                == ["{date}", "{time}", "{weekday}", "{day}", "{month}", "{year}", "{n}"])
        #expect(ContentTemplate.placeholders.allSatisfy { !$0.meaning.isEmpty })
    }
}
