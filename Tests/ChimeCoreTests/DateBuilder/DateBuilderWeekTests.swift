import Foundation
import Testing

@testable import ChimeCore

struct DateBuilderLocaleCase: Sendable, CustomStringConvertible {
    let locale: String
    let firstWeekday: Weekday
    let weekendStart: Weekday
    let weekendLength: Int
    /// ThisWeek() at 2021-01-31: first day, last day, weekend start day, weekend end day.
    let thisWeek: [String]

    var description: String { locale }
}

// CLDR week data: en_US Sunday-first, en_GB/de_DE Monday-first, he_IL Sunday-first with a
// Friday-Saturday weekend. Days computed by hand for the week containing Sunday 2021-01-31.
let dateBuilderLocaleCases = [
    DateBuilderLocaleCase(
        locale: "en_US", firstWeekday: .sunday, weekendStart: .saturday, weekendLength: 2,
        thisWeek: ["2021-01-31", "2021-02-06", "2021-02-06", "2021-02-07"]),
    DateBuilderLocaleCase(
        locale: "en_GB", firstWeekday: .monday, weekendStart: .saturday, weekendLength: 2,
        thisWeek: ["2021-01-25", "2021-01-31", "2021-01-30", "2021-01-31"]),
    DateBuilderLocaleCase(
        locale: "de_DE", firstWeekday: .monday, weekendStart: .saturday, weekendLength: 2,
        thisWeek: ["2021-01-25", "2021-01-31", "2021-01-30", "2021-01-31"]),
    DateBuilderLocaleCase(
        locale: "he_IL", firstWeekday: .sunday, weekendStart: .friday, weekendLength: 2,
        thisWeek: ["2021-01-31", "2021-02-06", "2021-02-05", "2021-02-06"]),
]

@Test(arguments: dateBuilderLocaleCases)
func dateBuilderWeekStructureFromLocale(_ c: DateBuilderLocaleCase) {
    let structure = DateBuilder.WeekStructure(locale: Locale(identifier: c.locale))
    #expect(structure.firstWeekday == c.firstWeekday)
    #expect(structure.weekendStart == c.weekendStart)
    #expect(structure.weekendLength == c.weekendLength)
    let locale = Locale(identifier: c.locale)
    let days = [
        ThisWeek().firstDay, ThisWeek().lastDay, ThisWeek().weekendStartDay, ThisWeek().weekendEndDay,
    ].map { DateBuilderFixture.ymd($0.in(locale: locale))[0] }
    #expect(days == c.thisWeek)
}

/// Differential check against Foundation's own week logic: for many weeks and locales, the first and
/// last day (`dateInterval(of: .weekOfYear)`) and the weekend (`nextWeekend(startingAfter:)` from the
/// week's start) must match ours.
@Test func dateBuilderWeeksAgreeWithFoundationCalendar() throws {
    let utc = try #require(Zone(identifier: "UTC"))
    var random = SplitMix64(seed: 7)
    var disagreements: [String] = []
    let locales = ["en_US", "en_GB", "de_DE", "he_IL", "fr_FR", "ar_EG", "fa_IR", "en_IN", "ar_SA", "pt_BR"]
    for index in 0..<400 {
        let identifier = locales[index % locales.count]
        var calendar = Calendar(identifier: .gregorian)
        calendar.locale = Locale(identifier: identifier)
        calendar.timeZone = TimeZone(identifier: utc.identifier)!
        let now = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 0...2_000_000_000, using: &random)))
        guard let interval = calendar.dateInterval(of: .weekOfYear, for: now),
            let weekend = calendar.nextWeekend(startingAfter: interval.start)
        else { continue }
        func ymd(_ date: Date) -> String { String(ISO8601DateFormatter().string(from: date).prefix(10)) }
        let expected = [
            ymd(interval.start), ymd(interval.end.addingTimeInterval(-1)), ymd(weekend.start),
            ymd(weekend.end.addingTimeInterval(-1)),
        ]
        let got = [ThisWeek().firstDay, ThisWeek().lastDay, ThisWeek().weekendStartDay, ThisWeek().weekendEndDay].map {
            DateBuilderFixture.components($0.in(calendar: calendar).dateComponents(now: now, systemTimeZone: utc))
        }
        if got != expected { disagreements.append("\(identifier) now=\(now): expected \(expected), got \(got)") }
    }
    #expect(
        disagreements.isEmpty,
        "\(disagreements.count) disagreements:\n\(disagreements.prefix(20).joined(separator: "\n"))")
}
