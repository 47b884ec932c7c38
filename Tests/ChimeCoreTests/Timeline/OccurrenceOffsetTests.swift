import Foundation
import Testing

@testable import ChimeCore

@Suite struct OccurrenceOffsetTests {
    @Test(arguments: [
        ("-15m", 0, -900), ("+1d", 1, 0), ("-1w2d", -9, 0), ("2h30m", 0, 9000), ("-1d2h", -1, -7200), ("45s", 0, 45),
        ("+1d-15m", 1, -900), ("-1d+2h", -1, 7200),
    ])
    func writtenOffsetsReadAndWriteBack(text: String, days: Int, seconds: Int) throws {
        let offset = try OccurrenceOffset.parse(text)
        #expect(offset == OccurrenceOffset(days: days, seconds: seconds))
        #expect(try OccurrenceOffset.parse(offset.description) == offset)
    }

    @Test(arguments: ["", "-", "15", "m15", "-15x", "1d-", "- 15m", "-367d", "+9000h", "-1d-366d"])
    func badOffsetsSayWhatIsExpected(text: String) {
        #expect(throws: TimeInputError.self) { try OccurrenceOffset.parse(text) }
    }

    @Test func aDayIsACalendarDayAcrossTheChangeToSummerTime() {
        // 09:00 on Monday 2027-03-29 in Berlin (summer time) is 07:00Z; a day earlier, Sunday 09:00, is
        // still 09:00 on the wall clock: 07:00Z too, 23 hours before, since the clocks went forward.
        let berlin = Fixture.berlin
        let monday = Fixture.utc("2027-03-29T07:00:00Z")
        #expect(OccurrenceOffset(days: -1).apply(to: monday, in: berlin) == Fixture.utc("2027-03-28T07:00:00Z"))
        #expect(OccurrenceOffset(seconds: -86_400).apply(to: monday, in: berlin) == Fixture.utc("2027-03-28T07:00:00Z"))
        // Saturday 09:00 (winter time, 08:00Z) is two calendar days before.
        #expect(OccurrenceOffset(days: -2).apply(to: monday, in: berlin) == Fixture.utc("2027-03-27T08:00:00Z"))
        #expect(OccurrenceOffset(days: -2, seconds: -900).words == "2 days 15 minutes before")
    }

    /// The shifted rule's occurrences, found one after another from any instant, are the base rule's
    /// occurrences each moved: compared over random rules, offsets and starting points.
    @Test func shiftedOccurrencesAreTheBaseOccurrencesMoved() throws {
        var random = SplitMix64(seed: 20_261_126)
        let rules = [
            "FREQ=DAILY;BYHOUR=9;BYMINUTE=0", "FREQ=WEEKLY;BYDAY=MO,WE;BYHOUR=2;BYMINUTE=30",
            "FREQ=MONTHLY;BYDAY=1FR;BYHOUR=20;BYMINUTE=15", "FREQ=HOURLY;INTERVAL=7",
        ]
        let berlin = Fixture.berlin
        let start = Fixture.utc("2026-11-26T00:00:00Z")
        for _ in 0..<60 {
            let rule = rules[Int(random.next() % UInt64(rules.count))]
            let offset = OccurrenceOffset(
                days: Int(random.next() % 5) - 3, seconds: (Int(random.next() % 181) - 90) * 60)
            let base = try Recurrence.parse(
                .rrule(rule, dtstart: LocalDateTime(year: 2026, month: 1, day: 1)), now: start,
                timeZone: .named("Europe/Berlin"), systemTimeZone: berlin)
            // The oracle: the base rule's occurrences over the year, each moved, sorted.
            var expected: [Date] = []
            var cursor = start.addingTimeInterval(-10 * 86_400)
            while let next = base.nextOccurrence(after: cursor, systemTimeZone: berlin),
                next < start.addingTimeInterval(400 * 86_400)
            {
                expected.append(offset.apply(to: next, in: berlin))
                cursor = next
            }
            expected.sort()
            let shifted = base.shifted(by: offset)
            let from = start.addingTimeInterval(Double(random.next() % (200 * 86_400)))
            let got = shifted.nextOccurrence(after: from, systemTimeZone: berlin)
            #expect(got == expected.first { $0 > from }, "\(rule) \(offset) after \(from)")
        }
    }
}
