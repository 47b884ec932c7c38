import Foundation
import Testing

@testable import ChimeCore

/// Bad rules are rejected with the offending token, its offset and what was expected.
struct RRuleBadInput: CustomStringConvertible, Sendable {
    var text: String
    var offset: Int
    var token: String
    var expected: String
    /// Whether dateutil rejects it too; the rest are rejected on purpose (see RRule.parse).
    var dateutilRejects: Bool

    var description: String { text }

    static let start = LocalDateTime(year: 2026, month: 1, day: 1, hour: 9)

    static let all: [RRuleBadInput] = [
        .init(
            text: "FREQ=DAILY;BYDAY=XX", offset: 17, token: "XX", expected: "a weekday such as MO",
            dateutilRejects: true),
        .init(text: "FREQ=MONTHLY;BYDAY=0MO", offset: 19, token: "0MO", expected: "cannot be 0", dateutilRejects: true),
        .init(text: "BYDAY=MO", offset: 8, token: "", expected: "a FREQ part", dateutilRejects: true),
        .init(
            text: "FREQ=FORTNIGHTLY", offset: 5, token: "FORTNIGHTLY", expected: "a frequency", dateutilRejects: true),
        .init(text: "FREQ=DAILY;FOO=1", offset: 11, token: "FOO", expected: "a rule part name", dateutilRejects: true),
        .init(text: "FREQ=DAILY;COUNT", offset: 11, token: "COUNT", expected: "NAME=VALUE", dateutilRejects: true),
        .init(text: "FREQ=DAILY;", offset: 11, token: "", expected: "no empty parts", dateutilRejects: true),
        .init(
            text: "FREQ=DAILY;COUNT=x", offset: 17, token: "x", expected: "a positive integer", dateutilRejects: true),
        .init(text: "FREQ=DAILY;BYMONTH=1,,2", offset: 21, token: "", expected: "from 1 to 12", dateutilRejects: true),
        .init(
            text: "FREQ=DAILY;UNTIL=20260230", offset: 17, token: "20260230", expected: "a date YYYYMMDD",
            dateutilRejects: true),
        .init(text: "FREQ=DAILY;WKST=XY", offset: 16, token: "XY", expected: "a weekday", dateutilRejects: true),
        .init(text: "FREQ=DAILY;BYSETPOS=0", offset: 20, token: "0", expected: "from 1 to 366", dateutilRejects: true),
        .init(
            text: "FREQ=DAILY;BYSETPOS=367", offset: 20, token: "367", expected: "from 1 to 366",
            dateutilRejects: true),
        .init(text: "FREQ=DAILY;BYHOUR=24", offset: 18, token: "24", expected: "from 0 to 23", dateutilRejects: true),
        .init(text: "FREQ=DAILY;BYMINUTE=60", offset: 20, token: "60", expected: "from 0 to 59", dateutilRejects: true),
        .init(
            text: "FREQ=HOURLY;INTERVAL=2;BYHOUR=10", offset: 30, token: "10", expected: "reachable from DTSTART",
            dateutilRejects: true),
        .init(
            text: "FREQ=MINUTELY;INTERVAL=120;BYHOUR=10", offset: 34, token: "10", expected: "can reach",
            dateutilRejects: true),
        .init(
            text: "FREQ=DAILY;UNTIL=20260110T000000Z", offset: 17, token: "20260110T000000Z",
            expected: "a floating UNTIL", dateutilRejects: true),
        .init(
            text: "RRULE;X=1:FREQ=DAILY", offset: 6, token: "X=1", expected: "no parameters on RRULE",
            dateutilRejects: true),
        .init(
            text: "DTSTART:20260101T090000\nRRULE:FREQ=DAILY\nEXRULE:FREQ=WEEKLY", offset: 41, token: "EXRULE",
            expected: "EXRULE is deprecated", dateutilRejects: false),
        .init(
            text: "DTSTART:20260101T090000\nVEVENT:X", offset: 24, token: "VEVENT",
            expected: "DTSTART, RRULE, RDATE or EXDATE",
            dateutilRejects: true),
        .init(
            text: "DTSTART:2026010\nRRULE:FREQ=DAILY", offset: 8, token: "2026010", expected: "a date YYYYMMDD",
            dateutilRejects: true),
        .init(
            text: "DTSTART;TZID=Mars/Olympus:20260101T090000\nRRULE:FREQ=DAILY", offset: 13, token: "Mars/Olympus",
            expected: "a known time zone", dateutilRejects: false),
        .init(
            text: "DTSTART;TZID=Europe/Paris:20260101T090000\nRRULE:FREQ=DAILY;UNTIL=20260110T000000", offset: 65,
            token: "20260110T000000", expected: "a UTC UNTIL", dateutilRejects: true),
        // Accepted by dateutil, rejected here on purpose (each is an error in RFC 5545 or can never match):
        .init(
            text: "FREQ=DAILY;COUNT=2;COUNT=3", offset: 19, token: "COUNT", expected: "each rule part at most once",
            dateutilRejects: false),
        .init(
            text: "FREQ=DAILY;COUNT=3;UNTIL=20260110", offset: 19, token: "UNTIL=20260110",
            expected: "either COUNT or UNTIL", dateutilRejects: false),
        .init(
            text: "FREQ=DAILY;INTERVAL=0", offset: 20, token: "0", expected: "a positive integer",
            dateutilRejects: false),
        .init(
            text: "FREQ=DAILY;COUNT=0", offset: 17, token: "0", expected: "a positive integer", dateutilRejects: false),
        .init(
            text: "FREQ=DAILY;BYMONTHDAY=0", offset: 22, token: "0", expected: "from 1 to 31", dateutilRejects: false),
        .init(text: "FREQ=DAILY;BYMONTH=13", offset: 19, token: "13", expected: "from 1 to 12", dateutilRejects: false),
        .init(
            text: "FREQ=YEARLY;BYWEEKNO=54", offset: 21, token: "54", expected: "from 1 to 53", dateutilRejects: false),
        .init(
            text: "FREQ=YEARLY;BYYEARDAY=0", offset: 22, token: "0", expected: "from 1 to 366", dateutilRejects: false),
        .init(
            text: "FREQ=MONTHLY;BYDAY=6MO", offset: 19, token: "6MO", expected: "an ordinal from 1 to 5",
            dateutilRejects: false),
        .init(
            text: "FREQ=YEARLY;BYMONTH=3;BYDAY=-9FR", offset: 28, token: "-9FR", expected: "within the month",
            dateutilRejects: false),
        .init(
            text: "FREQ=YEARLY;BYDAY=54SU", offset: 18, token: "54SU", expected: "at most 53", dateutilRejects: false),
        .init(
            text: "FREQ=DAILY;BYEASTER=0", offset: 11, token: "BYEASTER", expected: "a rule part name",
            dateutilRejects: false),
    ]
}

@Suite struct RRuleErrorTests {
    @Test(arguments: RRuleBadInput.all)
    func rejectsWithPosition(bad: RRuleBadInput) throws {
        do {
            let set = try RRuleSet.parse(bad.text, dtstart: RRuleBadInput.start)
            Issue.record("accepted \(bad.text.debugDescription) as \(set.rfcString)")
        } catch {
            #expect(error.grammar == "RRULE")
            #expect(error.input == bad.text)
            #expect(error.offset == bad.offset, "\(error)")
            #expect(error.token == bad.token, "\(error)")
            #expect(error.expected.contains(bad.expected), "\(error)")
            #expect(error.description.hasPrefix("invalid RRULE at position \(bad.offset + 1)"))
        }
    }

    @Test func dateutilRejectsWhatItShould() throws {
        try #require(RRuleOracle.isAvailable)
        let answers = try RRuleOracle.run(
            RRuleBadInput.all.enumerated().map {
                .init(
                    id: $0, text: $1.text, dtstart: RRuleOracle.iso(RRuleBadInput.start), after: nil, inc: false, n: 3)
            })
        for (i, bad) in RRuleBadInput.all.enumerated() {
            #expect(
                (answers[i]?.error != nil) == bad.dateutilRejects,
                "\(bad.text): dateutil said \(String(describing: answers[i]))")
        }
    }

    @Test func ruleParserRejectsAProperty() {
        #expect(throws: RuleSyntaxError.self) { try RRule.parse("EXDATE:FREQ=DAILY") }
        #expect(throws: RuleSyntaxError.self) { try RRule.parse("") }
    }

    @Test func setInitializerValidates() throws {
        let bad = RRule(frequency: .hourly, interval: 2, byHour: [4])
        #expect(throws: RuleSyntaxError.self) {
            try RRuleSet(dtstart: RRuleBadInput.start, rules: [bad])
        }
        let good = RRule(frequency: .hourly, interval: 2, byHour: [3, 9])
        let set = try RRuleSet(dtstart: RRuleBadInput.start, rules: [good])
        #expect(
            set.occurrences(limit: 3).map(\.description) == [
                "2026-01-01T09:00:00", "2026-01-02T03:00:00", "2026-01-02T09:00:00",
            ])
        // A decoded set that was never validated expands to nothing rather than failing.
        let unchecked = RRuleSet(unchecked: RRuleBadInput.start, rules: [bad], rdates: [], exdates: [], zone: nil)
        #expect(unchecked.neverFires)
    }
}
