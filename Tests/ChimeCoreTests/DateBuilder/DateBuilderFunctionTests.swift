import Foundation
import Testing

@testable import ChimeCore

// The DSL functions the READMEs do not exercise, at now = 2021-01-31 (Sunday) in Europe/Berlin.
// Expected values computed by hand (weekday arithmetic checked against python-dateutil).

private typealias F = DateBuilderFixture
private let usEnglish = Locale(identifier: "en_US")

let dateBuilderFunctionExamples: [DateBuilderExample] = [
    // Weeks.
    DateBuilderExample(
        "EveryWeek(2, .thisWeek).weekdays([mon, wed, fri])",
        ["2021-01-25", "2021-01-27", "2021-01-29", "2021-02-01", "2021-02-03", "2021-02-05"]
    ) { F.ymd(EveryWeek(forWeeks: 2, starting: .thisWeek).weekdays([.monday, .wednesday, .friday])) },
    DateBuilderExample("EveryWeek(2, .nextWeek).lastDay", ["2021-02-07", "2021-02-14"]) {
        F.ymd(EveryWeek(forWeeks: 2, starting: .nextWeek).lastDay)
    },
    DateBuilderExample("EveryWeek(1, .thisWeek).allDays", F.foundationDays(from: "2021-01-25", count: 7)) {
        F.ymd(EveryWeek(forWeeks: 1, starting: .thisWeek).allDays)
    },
    DateBuilderExample("EveryWeek(3, .thisWeek).addingWeeks(1).firstDay", ["2021-02-01", "2021-02-08", "2021-02-15"]) {
        F.ymd(EveryWeek(forWeeks: 3, starting: .thisWeek).addingWeeks(1).firstDay)
    },
    DateBuilderExample("EveryWeek(3, .thisWeek, stride: 2).firstDay", ["2021-01-25", "2021-02-08", "2021-02-22"]) {
        F.ymd(EveryWeek(forWeeks: 3, starting: .thisWeek, stride: 2).firstDay)
    },
    DateBuilderExample("EveryWeek(2, .thisWeek).weekendEndDay (ISO)", ["2021-01-31", "2021-02-07"]) {
        F.ymd(EveryWeek(forWeeks: 2, starting: .thisWeek).weekendEndDay)
    },
    DateBuilderExample("EveryWeek(2, .thisWeek).weekendEndDay (en_US)", ["2021-02-07", "2021-02-14"]) {
        F.ymd(EveryWeek(forWeeks: 2, starting: .thisWeek).weekendEndDay.in(locale: usEnglish))
    },
    DateBuilderExample("EveryWeek(2, .thisWeek).weekendStartDay (en_US)", ["2021-02-06", "2021-02-13"]) {
        F.ymd(EveryWeek(forWeeks: 2, starting: .thisWeek).weekendStartDay.in(locale: usEnglish))
    },
    DateBuilderExample("EveryWeek(1, .weekOf(createdAt)).firstDay", ["2021-03-15"]) {
        F.ymd(EveryWeek(forWeeks: 1, starting: .weekOf(F.createdAt)).firstDay)
    },
    DateBuilderExample("EveryWeek(1, WeekOf(ExactDay(2021,1,1))).firstDay", ["2020-12-28"]) {
        F.ymd(EveryWeek(forWeeks: 1, starting: WeekOf(ExactDay(year: 2021, month: 1, day: 1))).firstDay)
    },
    // Months.
    DateBuilderExample("EveryMonth(3, .thisMonth).day(31) skips February", ["2021-01-31", "2021-03-31"]) {
        F.ymd(EveryMonth(forMonths: 3, starting: .thisMonth).day(31))
    },
    DateBuilderExample(
        "EveryMonth(4, .nextMonth).last(.friday)", ["2021-02-26", "2021-03-26", "2021-04-30", "2021-05-28"]
    ) { F.ymd(EveryMonth(forMonths: 4, starting: .nextMonth).last(.friday)) },
    DateBuilderExample("EveryMonth(6, .thisMonth).weekday(.fifth, .friday)", ["2021-01-29", "2021-04-30"]) {
        F.ymd(EveryMonth(forMonths: 6, starting: .thisMonth).weekday(.fifth, .friday))
    },
    DateBuilderExample("EveryMonth(3, .thisMonth, stride: 2).firstDay", ["2021-01-01", "2021-03-01", "2021-05-01"]) {
        F.ymd(EveryMonth(forMonths: 3, starting: .thisMonth, stride: 2).firstDay)
    },
    DateBuilderExample("EveryMonth(2, .thisMonth).addingMonths(1).firstDay", ["2021-02-01", "2021-03-01"]) {
        F.ymd(EveryMonth(forMonths: 2, starting: .thisMonth).addingMonths(1).firstDay)
    },
    DateBuilderExample("EveryMonth(1, .nextMonth).firstDay", ["2021-02-01"]) {
        F.ymd(EveryMonth(forMonths: 1, starting: .nextMonth).firstDay)
    },
    DateBuilderExample("EveryMonth(1, ExactMonth(2020, 2)).lastDay", ["2020-02-29"]) {
        F.ymd(EveryMonth(forMonths: 1, starting: ExactMonth(year: 2020, month: 2)).lastDay)
    },
    DateBuilderExample("ThisMonth().day(15)", ["2021-01-15"]) { F.ymd(ThisMonth().day(15)) },
    DateBuilderExample("NextMonth().day(30) does not exist", ["nil"]) { F.ymd(NextMonth().day(30)) },
    DateBuilderExample("ExactMonth(year: 2021, month: 13) does not exist", ["nil"]) {
        F.ymd(ExactMonth(year: 2021, month: 13).firstDay)
    },
    // Years.
    DateBuilderExample(
        "EveryYear(2, .thisYear).allMonths.first(.friday): count, first, last", ["24", "2021-01-01", "2022-12-02"]
    ) {
        let all = F.ymd(EveryYear(forYears: 2, starting: .thisYear).allMonths.first(.friday))
        return ["\(all.count)", all.first ?? "", all.last ?? ""]
    },
    DateBuilderExample("EveryYear(3, .nextYear).lastMonth.lastDay", ["2022-12-31", "2023-12-31", "2024-12-31"]) {
        F.ymd(EveryYear(forYears: 3, starting: .nextYear).lastMonth.lastDay)
    },
    DateBuilderExample(
        "EveryYear(3, .thisYear).addingYears(1).firstMonth.firstDay", ["2022-01-01", "2023-01-01", "2024-01-01"]
    ) { F.ymd(EveryYear(forYears: 3, starting: .thisYear).addingYears(1).firstMonth.firstDay) },
    DateBuilderExample("EveryYear(2, .thisYear).month(2).day(29): none", []) {
        F.ymd(EveryYear(forYears: 2, starting: .thisYear).month(2).day(29))
    },
    DateBuilderExample(
        "EveryYear(4, .thisYear).month(2).lastDay", ["2021-02-28", "2022-02-28", "2023-02-28", "2024-02-29"]
    ) { F.ymd(EveryYear(forYears: 4, starting: .thisYear).month(2).lastDay) },
    DateBuilderExample("EveryYear(1, .nextYear).firstMonth.firstDay", ["2022-01-01"]) {
        F.ymd(EveryYear(forYears: 1, starting: .nextYear).firstMonth.firstDay)
    },
    DateBuilderExample("EveryYear(1, .yearOf(createdAt)).lastMonth.firstDay", ["2021-12-01"]) {
        F.ymd(EveryYear(forYears: 1, starting: .yearOf(F.createdAt)).lastMonth.firstDay)
    },
    DateBuilderExample("EveryYear(1, ExactYear(2000)).month(2).lastDay", ["2000-02-29"]) {
        F.ymd(EveryYear(forYears: 1, starting: ExactYear(year: 2000)).month(2).lastDay)
    },
    DateBuilderExample("ThisYear().month(7).first(.monday)", ["2021-07-05"]) {
        F.ymd(ThisYear().month(7).first(.monday))
    },
    // Days.
    DateBuilderExample("EveryDay(4, .today, stride: 3)", ["2021-01-31", "2021-02-03", "2021-02-06", "2021-02-09"]) {
        F.ymd(EveryDay(forDays: 4, starting: .today, stride: 3))
    },
    DateBuilderExample("EveryDay(3, .tomorrow).addingDays(2)", ["2021-02-03", "2021-02-04", "2021-02-05"]) {
        F.ymd(EveryDay(forDays: 3, starting: .tomorrow).addingDays(2))
    },
    DateBuilderExample("EveryDay(2, ExactDay(2021, 12, 31))", ["2021-12-31", "2022-01-01"]) {
        F.ymd(EveryDay(forDays: 2, starting: ExactDay(year: 2021, month: 12, day: 31)))
    },
    DateBuilderExample("EveryDay(1, .dayOf(createdAt))", ["2021-03-20"]) {
        F.ymd(EveryDay(forDays: 1, starting: .dayOf(F.createdAt)))
    },
    DateBuilderExample("ExactDay(2021, 2, 29) does not exist", ["nil"]) {
        F.ymd(ExactDay(year: 2021, month: 2, day: 29))
    },
    // Resolved dates.
    DateBuilderExample("Moment.now.addingMinutes(10)", ["2021-01-31T10:10:00+01:00"]) {
        F.iso(DateBuilder.Moment.now.addingMinutes(10))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingSeconds(30)", ["2021-03-20T10:30:30+01:00"]) {
        F.iso(ExactlyAt(F.createdAt).addingSeconds(30))
    },
    DateBuilderExample("Today().at(hour: 25, minute: 0) is invalid", ["nil"]) {
        F.iso(Today().at(hour: 25, minute: 0))
    },
    DateBuilderExample(
        "EveryDay(3, .today).at(9:00).until(.tomorrow)", ["2021-01-31T09:00:00+01:00", "2021-02-01T09:00:00+01:00"]
    ) {
        F.iso(EveryDay(forDays: 3, starting: .today).at(hour: 9, minute: 0).until(.tomorrow))
    },
    DateBuilderExample(
        "Interval(everySeconds: 7200, count: 3)",
        ["2021-01-31T12:00:00+01:00", "2021-01-31T14:00:00+01:00", "2021-01-31T16:00:00+01:00"]
    ) {
        DateBuilder.Interval(everySeconds: 7200, count: 3).dates(now: F.now, systemTimeZone: F.berlin).map { F.iso($0) }
    },
    DateBuilderExample("Today().at(9:00).in(timeZone: .named(America/New_York))", ["2021-01-31T15:00:00+01:00"]) {
        F.iso(Today().at(hour: 9, minute: 0).in(timeZone: .named("America/New_York")))
    },
]

@Test(arguments: dateBuilderFunctionExamples)
func dateBuilderFunctionExample(_ example: DateBuilderExample) {
    #expect(example.evaluate() == example.expected, "\(example.description)")
}
