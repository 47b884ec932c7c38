import Foundation
import Testing

@testable import ChimeCore

// Every example in the DateBuilder README and the NiceNotifications README, at the README's own
// "today" (now = 2021-01-31T10:00:00+01:00, a Sunday, Europe/Berlin, ISO weeks unless stated).
// Expected values were computed by hand and checked with python-dateutil / zoneinfo.

private typealias F = DateBuilderFixture
private let account = (createdAt: DateBuilderFixture.createdAt, unused: 0)

let dateBuilderReadmeExamples: [DateBuilderExample] = [
    // DateBuilder README, "Usage".
    DateBuilderExample("Today().at(20:15).dateComponents()", ["2021-01-31T20:15:00"]) {
        [F.components(Today().at(hour: 20, minute: 15).dateComponents(now: F.now, systemTimeZone: F.berlin))]
    },
    DateBuilderExample("NextWeek().weekday(.saturday).at(18:50)", ["2021-02-06T18:50:00+01:00"]) {
        F.iso(NextWeek().weekday(.saturday).at(hour: 18, minute: 50))
    },
    DateBuilderExample(
        "EveryWeek(forWeeks: 10, starting: .thisWeek).weekendStartDay.at(9:00).dates()",
        [
            "2021-01-30T09:00:00+01:00", "2021-02-06T09:00:00+01:00", "2021-02-13T09:00:00+01:00",
            "2021-02-20T09:00:00+01:00", "2021-02-27T09:00:00+01:00", "2021-03-06T09:00:00+01:00",
            "2021-03-13T09:00:00+01:00", "2021-03-20T09:00:00+01:00", "2021-03-27T09:00:00+01:00",
            "2021-04-03T09:00:00+02:00",
        ]
    ) {
        F.iso(EveryWeek(forWeeks: 10, starting: .thisWeek).weekendStartDay.at(hour: 9, minute: 00))
    },
    DateBuilderExample("ExactlyAt(account.createdAt).addingDays(15).date()", ["2021-04-04T10:30:00+02:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingDays(15))
    },
    DateBuilderExample("WeekOf(account.createdAt).addingWeeks(1).lastDay.at(10:00)", ["2021-03-28T10:00:00"]) {
        [
            F.components(
                WeekOf(account.createdAt).addingWeeks(1).lastDay.at(hour: 10, minute: 00)
                    .dateComponents(now: F.now, systemTimeZone: F.berlin))
        ]
    },
    DateBuilderExample(
        "EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.at(23:50).dateComponents()",
        [
            "2021-01-31T23:50:00", "2021-02-28T23:50:00", "2021-03-31T23:50:00", "2021-04-30T23:50:00",
            "2021-05-31T23:50:00", "2021-06-30T23:50:00", "2021-07-31T23:50:00", "2021-08-31T23:50:00",
            "2021-09-30T23:50:00", "2021-10-31T23:50:00", "2021-11-30T23:50:00", "2021-12-31T23:50:00",
        ]
    ) {
        EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.at(hour: 23, minute: 50)
            .dateComponents(now: F.now, systemTimeZone: F.berlin).map(F.components)
    },
    DateBuilderExample("NextYear().addingYears(2).firstMonth.addingMonths(3).first(.thursday)", ["2024-04-04"]) {
        F.ymd(NextYear().addingYears(2).firstMonth.addingMonths(3).first(.thursday))
    },
    DateBuilderExample("ExactDay(2020, 10, 5).at(10:15).date()", ["2020-10-05T10:15:00+02:00"]) {
        F.iso(ExactDay(year: 2020, month: 10, day: 5).at(hour: 10, minute: 15))
    },
    DateBuilderExample("ExactYear(year: 2020).lastMonth.lastDay.dateComponents()", ["2020-12-31"]) {
        F.ymd(ExactYear(year: 2020).lastMonth.lastDay)
    },
    // DateBuilder README, "Anatomy".
    DateBuilderExample("NextWeek().firstDay.at(10:15)", ["2021-02-01T10:15:00+01:00"]) {
        F.iso(NextWeek().firstDay.at(hour: 10, minute: 15))
    },
    DateBuilderExample("NextYear().firstMonth.addingMonths(3).first(.thursday).at(21:00)", ["2022-04-07T21:00:00"]) {
        [
            F.components(
                NextYear().firstMonth.addingMonths(3).first(.thursday).at(hour: 21, minute: 00)
                    .dateComponents(now: F.now, systemTimeZone: F.berlin))
        ]
    },
    // "Available functions": Day.
    DateBuilderExample("Today()", ["2021-01-31"]) { F.ymd(Today()) },
    DateBuilderExample("Tomorrow()", ["2021-02-01"]) { F.ymd(Tomorrow()) },
    DateBuilderExample("DayOf(account.createdAt)", ["2021-03-20"]) { F.ymd(DayOf(account.createdAt)) },
    DateBuilderExample("ExactDay(year: 2021, month: 1, day: 26)", ["2021-01-26"]) {
        F.ymd(ExactDay(year: 2021, month: 1, day: 26))
    },
    DateBuilderExample("AddingDays(15, to: .today)", ["2021-02-15"]) { F.ymd(AddingDays(15, to: .today)) },
    DateBuilderExample("AddingDays(15, to: .dayOf(account.createdAt))", ["2021-04-04"]) {
        F.ymd(AddingDays(15, to: .dayOf(account.createdAt)))
    },
    DateBuilderExample("EveryDay(forDays: 100, starting: .tomorrow)", F.foundationDays(from: "2021-02-01", count: 100))
    {
        F.ymd(EveryDay(forDays: 100, starting: .tomorrow))
    },
    DateBuilderExample(
        "EveryDay(forDays: 100, starting: .dayOf(account.createdAt))", F.foundationDays(from: "2021-03-20", count: 100)
    ) {
        F.ymd(EveryDay(forDays: 100, starting: .dayOf(account.createdAt)))
    },
    DateBuilderExample("Today().addingDays(10)", ["2021-02-10"]) { F.ymd(Today().addingDays(10)) },
    // Week (ISO weeks: Monday first, Saturday-Sunday weekend).
    DateBuilderExample("ThisWeek().firstDay", ["2021-01-25"]) { F.ymd(ThisWeek().firstDay) },
    DateBuilderExample("NextWeek().firstDay", ["2021-02-01"]) { F.ymd(NextWeek().firstDay) },
    DateBuilderExample("WeekOf(account.createdAt).firstDay", ["2021-03-15"]) {
        F.ymd(WeekOf(account.createdAt).firstDay)
    },
    DateBuilderExample("WeekOf(Today()).firstDay", ["2021-01-25"]) { F.ymd(WeekOf(Today()).firstDay) },
    DateBuilderExample("AddingWeeks(5, to: .thisWeek).firstDay", ["2021-03-01"]) {
        F.ymd(AddingWeeks(5, to: .thisWeek).firstDay)
    },
    DateBuilderExample(
        "EveryWeek(forWeeks: 10, starting: .nextWeek).firstDay",
        F.foundationDaily(from: "2021-02-01", count: 10, step: 7, time: "12:00:00").map { String($0.prefix(10)) }
    ) {
        F.ymd(EveryWeek(forWeeks: 10, starting: .nextWeek).firstDay)
    },
    DateBuilderExample("ThisWeek().addingWeeks(10).firstDay", ["2021-04-05"]) {
        F.ymd(ThisWeek().addingWeeks(10).firstDay)
    },
    DateBuilderExample("ThisWeek().lastDay", ["2021-01-31"]) { F.ymd(ThisWeek().lastDay) },
    DateBuilderExample("ThisWeek().allDays", F.foundationDays(from: "2021-01-25", count: 7)) {
        F.ymd(ThisWeek().allDays)
    },
    DateBuilderExample("ThisWeek().weekday(.thursday)", ["2021-01-28"]) { F.ymd(ThisWeek().weekday(.thursday)) },
    DateBuilderExample("ThisWeek().weekendStartDay", ["2021-01-30"]) { F.ymd(ThisWeek().weekendStartDay) },
    DateBuilderExample("ThisWeek().weekendEndDay", ["2021-01-31"]) { F.ymd(ThisWeek().weekendEndDay) },
    // Month.
    DateBuilderExample("ThisMonth().firstDay", ["2021-01-01"]) { F.ymd(ThisMonth().firstDay) },
    DateBuilderExample("NextMonth().firstDay", ["2021-02-01"]) { F.ymd(NextMonth().firstDay) },
    DateBuilderExample("MonthOf(account.createdAt).firstDay", ["2021-03-01"]) {
        F.ymd(MonthOf(account.createdAt).firstDay)
    },
    DateBuilderExample("MonthOf(Today()).lastDay", ["2021-01-31"]) { F.ymd(MonthOf(Today()).lastDay) },
    DateBuilderExample("ExactMonth(year: 2021, month: 03).lastDay", ["2021-03-31"]) {
        F.ymd(ExactMonth(year: 2021, month: 03).lastDay)
    },
    DateBuilderExample("AddingMonths(3, to: .thisMonth).firstDay", ["2021-04-01"]) {
        F.ymd(AddingMonths(3, to: .thisMonth).firstDay)
    },
    DateBuilderExample(
        "EveryMonth(forMonths: 5, starting: .monthOf(account.createdAt)).firstDay",
        ["2021-03-01", "2021-04-01", "2021-05-01", "2021-06-01", "2021-07-01"]
    ) {
        F.ymd(EveryMonth(forMonths: 5, starting: .monthOf(account.createdAt)).firstDay)
    },
    DateBuilderExample("ThisMonth().addingMonths(5).firstDay", ["2021-06-01"]) {
        F.ymd(ThisMonth().addingMonths(5).firstDay)
    },
    DateBuilderExample("ThisMonth().allDays", F.foundationDays(from: "2021-01-01", count: 31)) {
        F.ymd(ThisMonth().allDays(now: F.now, systemTimeZone: F.berlin))
    },
    DateBuilderExample("NextMonth().allDays (28 days)", F.foundationDays(from: "2021-02-01", count: 28)) {
        F.ymd(NextMonth().allDays(now: F.now, systemTimeZone: F.berlin))
    },
    DateBuilderExample("ThisMonth().first(.saturday)", ["2021-01-02"]) { F.ymd(ThisMonth().first(.saturday)) },
    DateBuilderExample("ThisMonth().weekday(.third, .friday)", ["2021-01-15"]) {
        F.ymd(ThisMonth().weekday(.third, .friday, now: F.now, systemTimeZone: F.berlin))
    },
    DateBuilderExample("ThisMonth().last(.friday)", ["2021-01-29"]) { F.ymd(ThisMonth().last(.friday)) },
    DateBuilderExample("ThisMonth().weekday(.fifth, .sunday)", ["2021-01-31"]) {
        F.ymd(ThisMonth().weekday(.fifth, .sunday, now: F.now, systemTimeZone: F.berlin))
    },
    DateBuilderExample("NextMonth().weekday(.fifth, .sunday) does not exist", ["nil"]) {
        F.ymd(NextMonth().weekday(.fifth, .sunday, now: F.now, systemTimeZone: F.berlin))
    },
    // Year.
    DateBuilderExample("ThisYear().firstMonth.firstDay", ["2021-01-01"]) { F.ymd(ThisYear().firstMonth.firstDay) },
    DateBuilderExample("NextYear().firstMonth.firstDay", ["2022-01-01"]) { F.ymd(NextYear().firstMonth.firstDay) },
    DateBuilderExample("YearOf(account.createdAt).lastMonth.lastDay", ["2021-12-31"]) {
        F.ymd(YearOf(account.createdAt).lastMonth.lastDay)
    },
    DateBuilderExample("YearOf(Tomorrow()).firstMonth.firstDay", ["2021-01-01"]) {
        F.ymd(YearOf(Tomorrow()).firstMonth.firstDay)
    },
    DateBuilderExample("YearOf(NextMonth()).firstMonth.firstDay", ["2021-01-01"]) {
        F.ymd(YearOf(NextMonth()).firstMonth.firstDay)
    },
    DateBuilderExample("ExactYear(year: 2022).firstMonth.firstDay", ["2022-01-01"]) {
        F.ymd(ExactYear(year: 2022).firstMonth.firstDay)
    },
    DateBuilderExample("AddingYears(1, to: ThisYear()).lastMonth.firstDay", ["2022-12-01"]) {
        F.ymd(AddingYears(1, to: ThisYear()).lastMonth.firstDay)
    },
    DateBuilderExample(
        "EveryYear(forYears: 100, starting: .thisYear).firstMonth.firstDay (first 3 of 100, last)",
        ["2021-01-01", "2022-01-01", "2023-01-01", "2120-01-01", "100"]
    ) {
        let all = F.ymd(EveryYear(forYears: 100, starting: .thisYear).firstMonth.firstDay)
        return Array(all.prefix(3)) + [all.last ?? "", "\(all.count)"]
    },
    DateBuilderExample("ThisYear().addingYears(1).firstMonth.firstDay", ["2022-01-01"]) {
        F.ymd(ThisYear().addingYears(1).firstMonth.firstDay)
    },
    DateBuilderExample(
        "ThisYear().allMonths.firstDay",
        (1...12).map { "2021-\($0 < 10 ? "0" : "")\($0)-01" }
    ) {
        F.ymd(ThisYear().allMonths.firstDay)
    },
    // Resolving.
    DateBuilderExample("Today().at(hour: 10, minute: 15)", ["2021-01-31T10:15:00+01:00"]) {
        F.iso(Today().at(hour: 10, minute: 15))
    },
    DateBuilderExample("Today().at(hour: 19, minute: 30, second: 30)", ["2021-01-31T19:30:30+01:00"]) {
        F.iso(Today().at(hour: 19, minute: 30, second: 30))
    },
    DateBuilderExample("Today().at(TimeOfDay(hour: 10, minute: 30, second: 0))", ["2021-01-31T10:30:00+01:00"]) {
        F.iso(Today().at(TimeOfDay(hour: 10, minute: 30, second: 0)))
    },
    DateBuilderExample("Today().at(.time(hour: 10, minute: 30))", ["2021-01-31T10:30:00+01:00"]) {
        F.iso(Today().at(.time(hour: 10, minute: 30)))
    },
    DateBuilderExample("Today().at(hour: 9, minute: 15).date()", ["2021-01-31T09:15:00+01:00"]) {
        F.iso(Today().at(hour: 9, minute: 15))
    },
    DateBuilderExample("Today().at(hour: 9, minute: 15).dateComponents()", ["2021-01-31T09:15:00"]) {
        [F.components(Today().at(hour: 9, minute: 15).dateComponents(now: F.now, systemTimeZone: F.berlin))]
    },
    DateBuilderExample("NextMonth().firstDay.dateComponents()", ["2021-02-01"]) { F.ymd(NextMonth().firstDay) },
    // ExactlyAt.
    DateBuilderExample("ExactlyAt(createdAt).addingMinutes(1)", ["2021-03-20T10:31:00+01:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingMinutes(1))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingHours(5)", ["2021-03-20T15:30:00+01:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingHours(5))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingDays(20)", ["2021-04-09T10:30:00+02:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingDays(20))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingMonths(3)", ["2021-06-20T10:30:00+02:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingMonths(3))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingWeeks(14)", ["2021-06-26T10:30:00+02:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingWeeks(14))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingYears(1)", ["2022-03-20T10:30:00+01:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingYears(1))
    },
    DateBuilderExample("ExactlyAt(createdAt).addingMinutes(15).dateComponents()", ["2021-03-20T10:45:00"]) {
        [
            F.components(
                ExactlyAt(account.createdAt).addingMinutes(15).dateComponents(now: F.now, systemTimeZone: F.berlin))
        ]
    },
    DateBuilderExample("ExactlyAt(2021-01-31T23:30).addingMonths(1) clamps to Feb 28", ["2021-02-28T23:30:00+01:00"]) {
        F.iso(ExactlyAt(Date(timeIntervalSince1970: 1_612_132_200)).addingMonths(1))
    },
    // Every functions.
    DateBuilderExample(
        "EveryMonth(forMonths: 12, starting: .thisMonth).firstDay.addingDays(9).at(20:00).dates()",
        (1...12).map { "2021-\($0 < 10 ? "0" : "")\($0)-10T20:00:00" + ((4...10).contains($0) ? "+02:00" : "+01:00") }
    ) {
        F.iso(EveryMonth(forMonths: 12, starting: .thisMonth).firstDay.addingDays(9).at(hour: 20, minute: 00))
    },
    DateBuilderExample(
        "EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.addingDays(-5).at(20:00).dateComponents()",
        [
            "2021-01-26T20:00:00", "2021-02-23T20:00:00", "2021-03-26T20:00:00", "2021-04-25T20:00:00",
            "2021-05-26T20:00:00", "2021-06-25T20:00:00", "2021-07-26T20:00:00", "2021-08-26T20:00:00",
            "2021-09-25T20:00:00", "2021-10-26T20:00:00", "2021-11-25T20:00:00", "2021-12-26T20:00:00",
        ]
    ) {
        EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.addingDays(-5).at(hour: 20, minute: 00)
            .dateComponents(now: F.now, systemTimeZone: F.berlin).map(F.components)
    },
    // Customizing the calendar / locale / zone.
    DateBuilderExample("firstWeekday = 6 (Friday): ThisWeek().firstDay", ["2021-01-29"]) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.firstWeekday = 6
        return F.ymd(ThisWeek().firstDay.in(calendar: calendar))
    },
    DateBuilderExample("withTimeZone(America/Cancun) { Tomorrow().at(9:15).date() }", ["2021-02-01T14:15:00Z"]) {
        let date = Tomorrow().at(hour: 9, minute: 15).in(timeZone: Zone(identifier: "America/Cancun")!)
            .date(now: F.now, systemTimeZone: F.berlin)
        return [date.map { ISO8601DateFormatter().string(from: $0) } ?? "nil"]
    },
    DateBuilderExample(
        "withLocale(he_IL) { NextWeek().weekendStartDay.at(7:00) } // next friday", ["2021-02-12T07:00:00+01:00"]
    ) {
        F.iso(NextWeek().weekendStartDay.at(hour: 7, minute: 00).in(locale: Locale(identifier: "he_IL")))
    },
    // NiceNotifications README.
    DateBuilderExample(
        "EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(20:15)",
        [
            "2021-01-01T20:15:00+01:00", "2021-02-05T20:15:00+01:00", "2021-03-05T20:15:00+01:00",
            "2021-04-02T20:15:00+02:00", "2021-05-07T20:15:00+02:00", "2021-06-04T20:15:00+02:00",
            "2021-07-02T20:15:00+02:00", "2021-08-06T20:15:00+02:00", "2021-09-03T20:15:00+02:00",
            "2021-10-01T20:15:00+02:00", "2021-11-05T20:15:00+01:00", "2021-12-03T20:15:00+01:00",
        ]
    ) {
        F.iso(EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20, minute: 15))
    },
    DateBuilderExample("Tomorrow().at(hour: 20, minute: 15)", ["2021-02-01T20:15:00+01:00"]) {
        F.iso(Tomorrow().at(hour: 20, minute: 15))
    },
    DateBuilderExample("Today().at(hour: 20, minute: 15)", ["2021-01-31T20:15:00+01:00"]) {
        F.iso(Today().at(hour: 20, minute: 15))
    },
    DateBuilderExample(
        "EveryDay(forDays: 30, starting: .today).at(19:15)",
        F.foundationDaily(from: "2021-01-31", count: 30, time: "19:15:00")
    ) {
        F.iso(EveryDay(forDays: 30, starting: .today).at(hour: 19, minute: 15))
    },
    DateBuilderExample("ExactlyAt(account.createdAt).addingDays(15)", ["2021-04-04T10:30:00+02:00"]) {
        F.iso(ExactlyAt(account.createdAt).addingDays(15))
    },
    DateBuilderExample("WeekOf(account.createdAt).addingWeeks(1).lastDay.at(10:00)", ["2021-03-28T10:00:00+02:00"]) {
        F.iso(WeekOf(account.createdAt).addingWeeks(1).lastDay.at(hour: 10, minute: 00))
    },
    DateBuilderExample(
        "EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.at(23:50) (first, DST, last)",
        ["2021-01-31T23:50:00+01:00", "2021-03-31T23:50:00+02:00", "2021-12-31T23:50:00+01:00", "12"]
    ) {
        let all = F.iso(EveryMonth(forMonths: 12, starting: .thisMonth).lastDay.at(hour: 23, minute: 50))
        return [all.first ?? "", all.count > 2 ? all[2] : "", all.last ?? "", "\(all.count)"]
    },
    DateBuilderExample("ExactDay(year: 2020, month: 10, day: 5).at(10:15)", ["2020-10-05T10:15:00+02:00"]) {
        F.iso(ExactDay(year: 2020, month: 10, day: 5).at(hour: 10, minute: 15))
    },
    DateBuilderExample("ExactYear(year: 2020).lastMonth.lastDay", ["2020-12-31"]) {
        F.ymd(ExactYear(year: 2020).lastMonth.lastDay)
    },
    DateBuilderExample("Today().at(hour: 20, minute: 30)", ["2021-01-31T20:30:00+01:00"]) {
        F.iso(Today().at(hour: 20, minute: 30))
    },
    DateBuilderExample("Tomorrow().at(hour: 20, minute: 45)", ["2021-02-01T20:45:00+01:00"]) {
        F.iso(Tomorrow().at(hour: 20, minute: 45))
    },
    DateBuilderExample(
        "EveryDay(forDays: 30, starting: .today).at(20:30:30)",
        F.foundationDaily(from: "2021-01-31", count: 30, time: "20:30:30")
    ) {
        F.iso(EveryDay(forDays: 30, starting: .today).at(hour: 20, minute: 30, second: 30))
    },
    DateBuilderExample(
        "EveryDay(forDays: 30, starting: .today).at(15:30)",
        F.foundationDaily(from: "2021-01-31", count: 30, time: "15:30:00")
    ) {
        F.iso(EveryDay(forDays: 30, starting: .today).at(hour: 15, minute: 30))
    },
    DateBuilderExample(
        "seed 000: EveryDay(forDays: 50, starting: .today).at(9:00)",
        F.foundationDaily(from: "2021-01-31", count: 50, time: "09:00:00")
    ) {
        F.iso(EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 00))
    },
]

@Test(arguments: dateBuilderReadmeExamples)
func dateBuilderReadmeExample(_ example: DateBuilderExample) {
    #expect(example.evaluate() == example.expected, "\(example.description)")
}
