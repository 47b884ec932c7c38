import Foundation
import Testing

@testable import ChimeCore

/// One instant checked against quiet hours in Europe/Berlin. Berlin is UTC+1 in winter and UTC+2 in
/// summer; on 2026-03-29 the clocks jump 02:00 → 03:00 (at 01:00 UTC) and on 2026-10-25 they go back
/// 03:00 → 02:00 (at 01:00 UTC), so 02:00–03:00 happens twice: 00:00–01:00 UTC, then 01:00–02:00 UTC.
struct QuietCase: Sendable, CustomStringConvertible {
    let start: String
    let end: String
    /// The instant, in UTC, and what Berlin's clock shows then.
    let date: String
    let note: String
    /// When the span containing `date` ends, in UTC; nil when `date` is not quiet.
    let ends: String?

    init(_ start: String, _ end: String, _ date: String, _ note: String, ends: String?) {
        self.start = start
        self.end = end
        self.date = date
        self.note = note
        self.ends = ends
    }

    var description: String { "\(start)–\(end) at \(date) (\(note))" }
}

let quietCases: [QuietCase] = [
    // An ordinary winter night, 22:00–07:00 CET.
    QuietCase("22:00", "07:00", "2026-12-04T21:00:00Z", "22:00, start", ends: "2026-12-05T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-12-04T20:59:59Z", "21:59:59", ends: nil),
    QuietCase("22:00", "07:00", "2026-12-04T23:00:00Z", "00:00 next day", ends: "2026-12-05T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-12-05T05:59:59Z", "06:59:59", ends: "2026-12-05T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-12-05T06:00:00Z", "07:00, end", ends: nil),
    QuietCase("22:00", "07:00", "2026-12-04T12:00:00Z", "13:00", ends: nil),
    // The spring-forward night is an hour shorter: 22:00 CET to 07:00 CEST.
    QuietCase("22:00", "07:00", "2026-03-28T21:00:00Z", "22:00 CET", ends: "2026-03-29T05:00:00Z"),
    QuietCase("22:00", "07:00", "2026-03-29T01:30:00Z", "03:30 CEST", ends: "2026-03-29T05:00:00Z"),
    QuietCase("22:00", "07:00", "2026-03-29T05:00:00Z", "07:00 CEST", ends: nil),
    // The fall-back night is an hour longer: 22:00 CEST to 07:00 CET.
    QuietCase("22:00", "07:00", "2026-10-24T20:00:00Z", "22:00 CEST", ends: "2026-10-25T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-10-25T01:30:00Z", "second 02:30", ends: "2026-10-25T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-10-25T05:59:59Z", "06:59:59 CET", ends: "2026-10-25T06:00:00Z"),
    QuietCase("22:00", "07:00", "2026-10-24T19:59:59Z", "21:59:59 CEST", ends: nil),
    // An end inside the spring-forward gap ends when the gap does, at 03:00 CEST.
    QuietCase("01:00", "02:30", "2026-03-29T00:00:00Z", "01:00 CET", ends: "2026-03-29T01:00:00Z"),
    QuietCase("01:00", "02:30", "2026-03-29T00:30:00Z", "01:30 CET", ends: "2026-03-29T01:00:00Z"),
    QuietCase("01:00", "02:30", "2026-03-29T01:00:00Z", "03:00 CEST", ends: nil),
    // A start inside the gap starts when the gap ends.
    QuietCase("02:30", "04:00", "2026-03-29T00:59:59Z", "01:59:59 CET", ends: nil),
    QuietCase("02:30", "04:00", "2026-03-29T01:00:00Z", "03:00 CEST", ends: "2026-03-29T02:00:00Z"),
    QuietCase("02:30", "04:00", "2026-03-28T01:30:00Z", "02:30 CET, day before", ends: "2026-03-28T03:00:00Z"),
    // An end inside the fall-back overlap ends the first time the clock reads it; the repeat is not quiet.
    QuietCase("22:00", "02:30", "2026-10-24T23:59:00Z", "01:59 CEST", ends: "2026-10-25T00:30:00Z"),
    QuietCase("22:00", "02:30", "2026-10-25T00:15:00Z", "first 02:15", ends: "2026-10-25T00:30:00Z"),
    QuietCase("22:00", "02:30", "2026-10-25T00:30:00Z", "first 02:30", ends: nil),
    QuietCase("22:00", "02:30", "2026-10-25T01:15:00Z", "second 02:15", ends: nil),
    // A start inside the overlap starts at its first instant and holds through the repeated half hour.
    QuietCase("02:30", "06:00", "2026-10-25T00:29:59Z", "first 02:29:59", ends: nil),
    QuietCase("02:30", "06:00", "2026-10-25T00:30:00Z", "first 02:30", ends: "2026-10-25T05:00:00Z"),
    QuietCase("02:30", "06:00", "2026-10-25T01:15:00Z", "second 02:15", ends: "2026-10-25T05:00:00Z"),
    // Across midnight on a summer night (CEST).
    QuietCase("23:00", "01:00", "2026-07-01T21:00:00Z", "23:00", ends: "2026-07-01T23:00:00Z"),
    QuietCase("23:00", "01:00", "2026-07-01T22:30:00Z", "00:30 next day", ends: "2026-07-01T23:00:00Z"),
    QuietCase("23:00", "01:00", "2026-07-01T23:00:00Z", "01:00 next day", ends: nil),
    QuietCase("23:00", "01:00", "2026-07-01T20:59:59Z", "22:59:59", ends: nil),
    // A daytime span does not cross midnight.
    QuietCase("09:00", "17:00", "2026-07-01T14:59:59Z", "16:59:59", ends: "2026-07-01T15:00:00Z"),
    QuietCase("09:00", "17:00", "2026-07-01T06:59:59Z", "08:59:59", ends: nil),
    QuietCase("09:00", "17:00", "2026-07-01T22:00:00Z", "00:00", ends: nil),
]

@Suite struct QuietHoursTests {
    func quiet(_ start: String, _ end: String) -> QuietHours {
        QuietHours(start: TimeOfDay(clock: start)!, end: TimeOfDay(clock: end)!)
    }

    @Test(arguments: quietCases)
    func containsAndEndFollowTheWallClockAcrossMidnightAndDST(_ c: QuietCase) {
        let hours = quiet(c.start, c.end)
        let date = Fixture.utc(c.date)
        #expect(hours.contains(date, timeZone: Fixture.berlin) == (c.ends != nil))
        #expect(hours.end(of: date, timeZone: Fixture.berlin) == c.ends.map(Fixture.utc))
    }

    @Test func equalStartAndEndAreNeverQuietAndDoNotValidate() {
        let hours = quiet("22:00", "22:00")
        for date in ["2026-12-04T21:00:00Z", "2026-12-04T21:30:00Z", "2026-12-04T03:00:00Z"] {
            #expect(!hours.contains(Fixture.utc(date), timeZone: Fixture.berlin))
            #expect(hours.end(of: Fixture.utc(date), timeZone: Fixture.berlin) == nil)
        }
        #expect(
            throws: ContentError(
                "the quiet hours start and end are both 22:00, so they would never be quiet; "
                    + "give two different times, e.g. 22:00 to 07:00")
        ) {
            try hours.validate()
        }
    }

    @Test func anInvalidTimeDoesNotValidateAndIsNeverQuiet() {
        let hours = QuietHours(start: TimeOfDay(hour: 24, minute: 0), end: TimeOfDay(hour: 7, minute: 0))
        #expect(
            throws: ContentError(
                "the quiet hours start 24:00 is not a time of day; write HH:MM from 00:00 to 23:59")
        ) {
            try hours.validate()
        }
        #expect(!hours.contains(Fixture.utc("2026-12-04T23:30:00Z"), timeZone: Fixture.berlin))
    }

    @Test func usualQuietHoursValidate() throws {
        try quiet("22:00", "07:00").validate()
        try quiet("09:00", "17:00").validate()
    }
}

extension QuietHoursTests {
    /// Away from offset changes the span is read straight off the wall clock; that shortcut must agree
    /// with resolving every candidate span, the way used on the days the clocks change.
    @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "UTC"])
    func theWallClockShortcutAgreesWithTheFullSearch(_ zone: String) throws {
        let timeZone = try #require(Zone(identifier: zone))
        var random = SplitMix64(seed: 7)
        let year = Fixture.utc("2026-01-01T00:00:00Z")
        for _ in 0..<2000 {
            let hours = QuietHours(
                start: TimeOfDay(hour: random.int(0...23), minute: random.pick([0, 30])),
                end: TimeOfDay(hour: random.int(0...23), minute: random.pick([0, 30])))
            guard let from = hours.start.secondsIntoDay, let to = hours.end.secondsIntoDay, from != to else { continue }
            let date = year + Double(random.int(0...(365 * 86_400)))
            let searched = hours.spanBySearch(containing: date, from: from, to: to, timeZone: timeZone)
            #expect(hours.span(containing: date, timeZone: timeZone) == searched, "\(hours) at \(date)")
        }
    }
}
