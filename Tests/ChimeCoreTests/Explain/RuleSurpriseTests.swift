import Foundation
import Testing

@testable import ChimeCore

/// Months in one 400-year Gregorian cycle in which `hasDay` finds a day, counted with Foundation's calendar
/// (independent of ChimeCore's engine).
private func monthsWithADay(_ hasDay: (DateComponents, Calendar) -> Bool) -> Int {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(secondsFromGMT: 0)!
    var count = 0
    for year in 2027..<2427 {
        for month in 1...12 where hasDay(DateComponents(year: year, month: month), calendar) { count += 1 }
    }
    return count
}

private func explained(_ phrase: String) throws -> RuleExplanation {
    let utc = try #require(Zone(identifier: "UTC"))
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    return Recurrence.dateRule(try PhraseParser.rule(phrase, now: now, systemTimeZone: utc))
        .explanation(after: now, systemTimeZone: utc)
}

@Test func theThirtyFirstIsFlaggedWithTheMonthsItSkips() throws {
    let days = monthsWithADay { month, calendar in
        calendar.range(of: .day, in: .month, for: calendar.date(from: month)!)!.count == 31
    }
    #expect(days == 7 * 400)
    #expect(
        try explained("every month on the 31st at 9:00").skips
            == "fires in 7 of every 12 months: never in February, April, June, September or November")
}

@Test func theFifthFridayIsFlaggedWithHowOftenItFires() throws {
    let fifths = monthsWithADay { month, calendar in
        var fifth = month
        fifth.weekday = 6
        fifth.weekdayOrdinal = 5
        guard let date = calendar.date(from: fifth) else { return false }
        return calendar.component(.month, from: date) == month.month
    }
    let perYear = (Double(fifths) / 400 * 10).rounded() / 10
    #expect(
        try explained("every 5th friday at 17:00").skips
            == "fires in about \(perYear) of every 12 months: a month without a matching day is skipped")
}

@Test func dayTwentyNineAndFebruaryTwentyNine() throws {
    #expect(
        try explained("every month on the 29th at 9:00").skips
            == "fires in about 11.2 of every 12 months: February only in some years")
    #expect(try explained("every feb 29").skips == "fires in 97 of every 400 years: in leap years only")
    let rrule = try RRuleSet.parse("FREQ=MONTHLY;BYMONTHDAY=30", dtstart: LocalDateTime(year: 2027, month: 1, day: 30))
    #expect(rrule.skippedPeriods == "fires in 11 of every 12 months: never in February")
}

/// A rule that fires many times in each period it has a day is counted by its periods.
@Test func manyOccurrencesAPeriodCountOnce() throws {
    let hours = (0..<24).map(String.init).joined(separator: ",")
    let rrule = try RRuleSet.parse(
        "FREQ=MONTHLY;BYMONTHDAY=31;BYHOUR=\(hours);BYMINUTE=0,30", dtstart: LocalDateTime(year: 2027, month: 1, day: 1)
    )
    #expect(
        rrule.skippedPeriods == "fires in 7 of every 12 months: never in February, April, June, September or November")
}

/// Rules with a day in every period are not flagged, nor are rules of other frequencies.
@Test(arguments: [
    "every month on the first friday at 20:15", "every last day at 18:00", "every day at 9:00", "every weekday",
    "every month on the 28th", "every jan 31st", "every 3 hours",
])
func rulesThatNeverSkipAreNotFlagged(_ phrase: String) throws {
    #expect(try explained(phrase).skips == nil)
}

// MARK: - Daylight saving

private let berlin = Zone(identifier: "Europe/Berlin")!
private let newYork = Zone(identifier: "America/New_York")!

private func notes(_ recurrence: Recurrence, after: String, count: Int, in zone: Zone) throws -> [String: String] {
    let local = try #require(LocalDateTime(iso: after))
    var cursor = try #require(WallClock.instants(for: local, in: zone).first)
    var result: [String: String] = [:]
    for _ in 0..<count {
        guard let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: zone) else { break }
        if let note = recurrence.daylightSavingNote(for: next, systemTimeZone: zone) {
            result[WallClock.iso8601(next, in: zone)] = note
        }
        cursor = next
    }
    return result
}

/// A time in the spring-forward gap is marked with where it moved; the other days say nothing.
@Test func aTimeInTheGapIsMarkedWhereItMoved() throws {
    let daily = Recurrence.dateRule(
        DateRule(
            pattern: .days(start: LocalDateTime.days(fromCivil: 2027, 3, 1), stride: 1, offsets: [0]),
            time: .fixed(TimeOfDay(hour: 2, minute: 30))))
    let rrule = try Recurrence.parse(
        .rrule("FREQ=DAILY;BYHOUR=2;BYMINUTE=30", dtstart: LocalDateTime(year: 2027, month: 3, day: 1)),
        now: Date(), timeZone: .floating, systemTimeZone: berlin)
    for recurrence in [daily, rrule] {
        #expect(
            try notes(recurrence, after: "2027-03-25T00:00:00", count: 6, in: berlin) == [
                "2027-03-28T03:00:00+02:00":
                    "02:30 does not exist on 2027-03-28 (the clocks go forward): moved to 03:00"
            ])
    }
}

/// A time in the fall-back overlap is marked with which of the two instants it is, and the policy.
@Test func aTimeInTheOverlapIsMarkedWithWhichOfTheTwo() throws {
    var rule = DateRule(
        pattern: .days(start: LocalDateTime.days(fromCivil: 2026, 10, 1), stride: 1, offsets: [0]),
        time: .fixed(TimeOfDay(hour: 1, minute: 30)))
    #expect(
        try notes(.dateRule(rule), after: "2026-10-30T00:00:00", count: 4, in: newYork) == [
            "2026-11-01T01:30:00-04:00":
                "01:30 happens twice on 2026-11-01 (the clocks go back): this is the first, fired once"
        ])
    rule.dstPolicy = DSTPolicy(gap: .endOfGap, overlap: .both)
    #expect(
        try notes(.dateRule(rule), after: "2026-10-30T00:00:00", count: 5, in: newYork) == [
            "2026-11-01T01:30:00-04:00":
                "01:30 happens twice on 2026-11-01 (the clocks go back): this is the first, fired at both",
            "2026-11-01T01:30:00-05:00":
                "01:30 happens twice on 2026-11-01 (the clocks go back): this is the second, fired at both",
        ])
    // systemd fires once in the overlap, and skips a time in a gap.
    let calendar = Recurrence.onCalendar(try CalendarSpec.parse("*-*-* 01:30"))
    #expect(
        try notes(calendar, after: "2026-10-30T00:00:00", count: 4, in: newYork) == [
            "2026-11-01T01:30:00-04:00": "01:30 happens twice on 2026-11-01 (the clocks go back): this is the first"
        ])
    #expect(
        try notes(
            .onCalendar(try CalendarSpec.parse("*-*-* 02:30")), after: "2027-03-25T00:00:00", count: 6, in: berlin
        ).isEmpty)
}

/// A rule that is not on a wall clock, or a day without a change, has nothing to say.
@Test func nothingToSayWithoutAChange() throws {
    let every90 = try Recurrence.parse(
        .phrase("every 90 minutes"), now: Date(timeIntervalSince1970: 1_803_700_000), timeZone: .floating,
        systemTimeZone: berlin)
    #expect(try notes(every90, after: "2027-03-28T00:00:00", count: 4, in: berlin).isEmpty)
    let nineAM = try Recurrence.parse(
        .phrase("every day at 9:00"), now: Date(timeIntervalSince1970: 1_803_700_000), timeZone: .floating,
        systemTimeZone: berlin)
    #expect(try notes(nineAM, after: "2027-03-25T00:00:00", count: 6, in: berlin).isEmpty)
}
