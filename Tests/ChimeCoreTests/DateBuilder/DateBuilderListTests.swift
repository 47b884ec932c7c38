import Foundation
import Testing

@testable import ChimeCore

// DateBuilder's own shapes beside the lazy runs: counted runs as arrays, DelayDistribution, Gregorian
// weekday numbers, ordinals counted from either end, and the single-call forms. "Now" is
// 2021-01-31T10:00:00+01:00, a Sunday, in Berlin.

private typealias F = DateBuilderFixture

@Test func countedRunsAreArraysSpacedByTheirDistribution() {
    let days: [DateBuilder.Day] = EveryDay(forDays: 3, starting: .today)
    #expect(F.ymd(days) == ["2021-01-31", "2021-02-01", "2021-02-02"])
    // Half the run one day apart, then the square of the distance past the half added: 0 1 2 3 5 9.
    #expect(
        F.ymd(EveryDay(forDays: 6, starting: .today, distribution: .optimized))
            == ["2021-01-31", "2021-02-01", "2021-02-02", "2021-02-03", "2021-02-05", "2021-02-09"])
    #expect(DelayDistribution.optimized.generate(count: 6, start: 0, addDelay: +) == [0, 1, 2, 3, 5, 9])
    #expect(DelayDistribution.normal.generate(count: -1, start: 0, addDelay: +).isEmpty)
    let everyThird = DelayDistribution { number, _ in number * 3 }
    #expect(
        F.ymd(EveryWeek(forWeeks: 2, starting: .thisWeek, distribution: everyThird).firstDay)
            == ["2021-01-25", "2021-02-15"])
    #expect(F.ymd(EveryMonth(forMonths: 2, starting: .thisMonth).first(.monday)) == ["2021-01-04", "2021-02-01"])
    #expect(
        F.ymd(EveryYear(forYears: 2, starting: .thisYear).addingYears(1).lastMonth.lastDay)
            == ["2022-12-31", "2023-12-31"])
    let atNine = EveryDay(starting: .tomorrow, forDays: 2, at: .time(hour: 9, minute: 0))
    #expect(atNine.flatMap { F.iso($0) } == ["2021-02-01T09:00:00+01:00", "2021-02-02T09:00:00+01:00"])
}

@Test func aListsTimeOfDayIsEvaluatedForEachDay() {
    var evaluated = 0
    let dates = EveryDay(forDays: 3, starting: .today).at(
        {
            evaluated += 1
            return TimeOfDay(hour: 8 + evaluated, minute: 0)
        }())
    #expect(evaluated == 3)
    #expect(
        dates.flatMap { F.iso($0) }
            == ["2021-01-31T09:00:00+01:00", "2021-02-01T10:00:00+01:00", "2021-02-02T11:00:00+01:00"])
}

@Test func gregorianWeekdaysCountFromSunday() {
    typealias G = DateBuilder.Week.GregorianWeekday
    #expect(G.sunday.rawValue == 1 && G.saturday.rawValue == 7)
    #expect(G.sunday.isoWeekday == .sunday && G.monday.isoWeekday == .monday && G.saturday.isoWeekday == .saturday)
    #expect(G(rawValue: 8).isoWeekday == .sunday && G(rawValue: 0).isoWeekday == .saturday)
    #expect(Weekday.allCases.allSatisfy { G($0).isoWeekday == $0 })
    let friday: G = 6
    #expect(friday == .friday)
    #expect(F.ymd(ThisWeek().weekday(friday)) == ["2021-01-29"])
}

@Test func ordinalsCountFromEitherEndAndOthersPickNoDay() throws {
    // January 2021's Fridays: 1, 8, 15, 22, 29.
    let month = ExactMonth(year: 2021, month: 1)
    func pick(_ ordinal: Int) -> [String] {
        F.ymd(month.weekday(DateBuilder.Ordinal(rawValue: ordinal), .friday, now: F.now, systemTimeZone: F.berlin))
    }
    #expect(pick(1) == ["2021-01-01"])
    #expect(pick(5) == ["2021-01-29"])
    #expect(pick(-1) == ["2021-01-29"])
    #expect(pick(-2) == ["2021-01-22"])
    #expect(pick(-5) == ["2021-01-01"])
    #expect(pick(0) == ["nil"] && pick(6) == ["nil"] && pick(-6) == ["nil"])
    #expect(
        F.ymd(EveryMonth(forMonths: 2, starting: month, stride: 1).weekday(.init(rawValue: -2), .friday))
            == ["2021-01-22", "2021-02-19"])
    #expect(String(decoding: try JSONEncoder().encode(DateBuilder.Ordinal.third), as: UTF8.self) == "3")
    #expect(try JSONDecoder().decode(DateBuilder.Ordinal.self, from: Data("-1".utf8)) == .last)
}

@Test func weeksStartWhereTheResolvingCallSaysUnlessTheExpressionNamesACalendar() {
    let sundayFirst = DateBuilder.WeekStructure(firstWeekday: .sunday, weekendStart: .saturday, weekendLength: 2)
    let nextWeek = NextWeek().firstDay
    #expect(F.components(nextWeek.dateComponents(now: F.now, systemTimeZone: F.berlin)) == "2021-02-01")
    #expect(
        F.components(nextWeek.dateComponents(now: F.now, systemTimeZone: F.berlin, defaultWeek: sundayFirst))
            == "2021-02-07")
    let named = nextWeek.in(week: .iso)
    #expect(
        F.components(named.dateComponents(now: F.now, systemTimeZone: F.berlin, defaultWeek: sundayFirst))
            == "2021-02-01")
    let weekly = EveryWeek(forWeeks: 1, starting: .thisWeek, stride: 1).firstDay.at(hour: 9, minute: 0)
    #expect(
        weekly.dates(now: F.now, systemTimeZone: F.berlin, defaultWeek: sundayFirst).map { F.iso($0) }
            == ["2021-01-31T09:00:00+01:00"])
}

@Test func singleCallFormsMeanTheirChains() {
    let createdAt = F.createdAt
    #expect(F.iso(Today(at: .time(hour: 7, minute: 30))) == ["2021-01-31T07:30:00+01:00"])
    #expect(F.iso(Tomorrow(at: .time(hour: 7, minute: 30))) == ["2021-02-01T07:30:00+01:00"])
    #expect(F.iso(AfterToday(days: 3, at: .time(hour: 7, minute: 30))) == ["2021-02-03T07:30:00+01:00"])
    #expect(F.iso(DayOf(createdAt, at: .time(hour: 8, minute: 0))) == ["2021-03-20T08:00:00+01:00"])
    // Summer time starts in Berlin on 2021-03-28: the wall-clock time is kept.
    #expect(F.iso(After(dayOf: createdAt, days: 10, at: .time(hour: 8, minute: 0))) == ["2021-03-30T08:00:00+02:00"])
}

@Test func exactAndComponentsAreDateBuildersTwoKindsOfResolvedDate() {
    #expect(DateBuilder.Moment.exact(F.createdAt) == ExactlyAt(F.createdAt))
    let components = DateBuilder.Moment.components(DateComponents(year: 2021, month: 2, day: 3, hour: 4))
    #expect(F.iso(components) == ["2021-02-03T04:00:00+01:00"])
    #expect(F.iso(.components(DateComponents(year: 2021))) == ["2021-01-01T00:00:00+01:00"])
    #expect(F.iso(.components(DateComponents(month: 2, day: 3))) == ["nil"])
    #expect(F.iso(.components(DateComponents(year: 2021, month: 2, day: 30))) == ["nil"])
    #expect(F.iso(.components(DateComponents(year: 2021, month: 2, day: 3, hour: 24))) == ["nil"])
}

@Test func addingDateComponentsAddsTheLargestUnitFirstAsFoundationDoes() throws {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: F.berlin.identifier)!
    let shifts = [
        DateComponents(month: 1, day: 2, hour: 3),
        DateComponents(year: 1, month: -2, minute: 90),
        DateComponents(day: 8, second: -30),
        DateComponents(weekOfYear: 2),
        DateComponents(hour: 24 * 9),
    ]
    for shift in shifts {
        let expected = try #require(calendar.date(byAdding: shift, to: F.createdAt))
        let added = try #require(ExactlyAt(F.createdAt).adding(dateComponents: shift))
        #expect(F.iso(added) == [F.iso(expected)], "\(shift)")
    }
    #expect(ExactlyAt(F.createdAt).adding(dateComponents: DateComponents(weekday: 2)) == nil)
    #expect(ExactlyAt(F.createdAt).adding(dateComponents: DateComponents(era: 1)) == nil)
}

@Test func aRandomTimeOfDayIsDrawnOnceWithinItsRange() {
    let lower = TimeOfDay(hour: 10, minute: 15)
    let upper = TimeOfDay(hour: 10, minute: 16)
    for _ in 0..<200 {
        let time: TimeOfDay = .randomTime(from: lower, to: upper)
        #expect(time >= lower && time < upper)
    }
    #expect(TimeOfDay.randomTime(from: upper, to: lower) == upper)
    // In `Day.at`, the same words take a seeded `RandomTime`, drawn again for each occurrence.
    let resolved = Today().at(.randomTime(from: lower, to: upper))
    #expect(F.iso(resolved).allSatisfy { $0.hasPrefix("2021-01-31T10:15:") })
}
