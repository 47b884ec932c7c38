import Foundation
import Testing

@testable import ChimeCore

/// One random DSL expression with its RRULE equivalent for python-dateutil.
private struct DateBuilderOracleCase {
    let description: String
    let rule: DateRule
    let zone: String
    let oracleLine: String
    let after: Date
}

private let oracleZones = [
    "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia", "UTC",
    "America/Santiago", "Australia/Sydney",
]
private let rruleDays = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

private func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
private func stamp(_ day: Int, _ time: TimeOfDay) -> String {
    let d = LocalDateTime(daysSinceEpoch: day)
    return "\(d.year)\(two(d.month))\(two(d.day))T\(two(time.hour))\(two(time.minute))\(two(time.second))"
}
private func untilStamp(_ day: Int) -> String { stamp(day, TimeOfDay(hour: 23, minute: 59, second: 59)) }

/// Random rules of every shape (daily, weekly with weekday lists and en_US or ISO weeks, monthly and
/// yearly with each selector, strides, counts or unbounded), biased towards DST-sensitive times.
private func makeOracleCases(count: Int) -> [DateBuilderOracleCase] {
    var random = SplitMix64(seed: 20_261_122)
    var cases: [DateBuilderOracleCase] = []
    let now = Date(timeIntervalSince1970: 1_612_083_600)
    let utc = Zone(identifier: "UTC")!
    while cases.count < count {
        let zoneName = oracleZones[Int.random(in: 0..<oracleZones.count, using: &random)]
        guard let zone = Zone(identifier: zoneName) else { continue }
        let year =
            zoneName == "Pacific/Apia"
            ? Int.random(in: 2010...2012, using: &random) : Int.random(in: 2005...2030, using: &random)
        let month = Int.random(in: 1...12, using: &random)
        let day = Int.random(in: 1...28, using: &random)
        let hour =
            Bool.random(using: &random) ? Int.random(in: 0...3, using: &random) : Int.random(in: 0...23, using: &random)
        let time = TimeOfDay(
            hour: hour, minute: [0, 15, 30, 45][Int.random(in: 0...3, using: &random)],
            second: Bool.random(using: &random) ? 0 : Int.random(in: 0...59, using: &random))
        let stride = [1, 1, 1, 2, 3][Int.random(in: 0...4, using: &random)]
        let periods: Int? = Int.random(in: 0...3, using: &random) == 0 ? nil : Int.random(in: 1...30, using: &random)
        let startDay = LocalDateTime.days(fromCivil: year, month, day)
        var rrule: String
        var dtstart: String
        var description: String
        var expression: DateBuilder.ResolvedDates
        switch Int.random(in: 0...3, using: &random) {
        case 0:
            expression = EveryDay(
                forDays: periods, starting: ExactDay(year: year, month: month, day: day), stride: stride
            ).at(time)
            dtstart = stamp(startDay, time)
            rrule = "FREQ=DAILY;INTERVAL=\(stride)" + (periods.map { ";COUNT=\($0)" } ?? "")
            description = "EveryDay(\(periods as Any), \(year)-\(month)-\(day), stride \(stride))"
        case 1:
            let american = Bool.random(using: &random)
            let firstWeekday = american ? 7 : 1
            var weekdays = Weekday.allCases.filter { _ in Int.random(in: 0...2, using: &random) == 0 }
            if weekdays.isEmpty { weekdays = [.friday] }
            var days = EveryWeek(
                forWeeks: periods, starting: WeekOf(ExactDay(year: year, month: month, day: day)), stride: stride
            )
            .weekdays(weekdays.map(DateBuilder.Week.GregorianWeekday.init))
            if american { days = days.in(locale: Locale(identifier: "en_US")) }
            expression = days.at(time)
            let weekday = LocalDateTime(daysSinceEpoch: startDay).isoWeekday
            let weekStart = startDay - (weekday - firstWeekday + 7) % 7
            dtstart = stamp(weekStart, time)
            rrule =
                "FREQ=WEEKLY;INTERVAL=\(stride);WKST=\(american ? "SU" : "MO");BYDAY="
                + weekdays.map { rruleDays[$0.rawValue - 1] }.joined(separator: ",")
            if let periods { rrule += ";UNTIL=" + untilStamp(weekStart + (periods - 1) * stride * 7 + 6) }
            description =
                "EveryWeek(\(periods as Any), week of \(year)-\(month)-\(day), stride \(stride), \(american ? "en_US" : "ISO")).weekdays(\(weekdays))"
        default:
            let yearly = Bool.random(using: &random)
            let byMonth = Int.random(in: 1...12, using: &random)
            let selector: (DateBuilder.Months) -> DateBuilder.Days
            let byRule: String
            let wd = Weekday.allCases[Int.random(in: 0...6, using: &random)]
            switch Int.random(in: 0...4, using: &random) {
            case 0:
                selector = { $0.firstDay }
                byRule = "BYMONTHDAY=1"
            case 1:
                selector = { $0.lastDay }
                byRule = "BYMONTHDAY=-1"
            case 2:
                let n = Int.random(in: 28...31, using: &random)
                selector = { $0.day(n) }
                byRule = "BYMONTHDAY=\(n)"
            case 3:
                let ordinal = DateBuilder.Ordinal.allCases.filter { $0 != .last }[Int.random(in: 0...4, using: &random)]
                selector = { $0.weekday(ordinal, .init(wd)) }
                byRule = "BYDAY=+\(ordinal.rawValue)\(rruleDays[wd.rawValue - 1])"
            default:
                selector = { $0.last(.init(wd)) }
                byRule = "BYDAY=-1\(rruleDays[wd.rawValue - 1])"
            }
            if yearly {
                expression = selector(
                    EveryYear(forYears: periods, starting: ExactYear(year: year), stride: stride).month(byMonth)
                ).at(time)
                dtstart = stamp(LocalDateTime.days(fromCivil: year, 1, 1), time)
                rrule = "FREQ=YEARLY;INTERVAL=\(stride);BYMONTH=\(byMonth);\(byRule)"
                if let periods {
                    rrule +=
                        ";UNTIL=" + untilStamp(LocalDateTime.days(fromCivil: year + (periods - 1) * stride, 12, 31))
                }
                description = "EveryYear(\(periods as Any), \(year), stride \(stride)).month(\(byMonth)) \(byRule)"
            } else {
                expression = selector(
                    EveryMonth(forMonths: periods, starting: ExactMonth(year: year, month: month), stride: stride)
                ).at(time)
                dtstart = stamp(LocalDateTime.days(fromCivil: year, month, 1), time)
                rrule = "FREQ=MONTHLY;INTERVAL=\(stride);\(byRule)"
                if let periods {
                    let last = year * 12 + month - 1 + (periods - 1) * stride
                    let y = last / 12
                    let m = last % 12 + 1
                    rrule +=
                        ";UNTIL="
                        + untilStamp(LocalDateTime.days(fromCivil: y, m, LocalDateTime.daysInMonth(year: y, month: m)))
                }
                description = "EveryMonth(\(periods as Any), \(year)-\(month), stride \(stride)) \(byRule)"
            }
        }
        guard let rule = expression.in(timeZone: zone).rule(now: now, systemTimeZone: utc) else { continue }
        let after = Date(
            timeIntervalSince1970: TimeInterval(
                LocalDateTime.days(fromCivil: year, month, day) * 86_400
                    + Int.random(in: -86_400 * 30...86_400 * 1500, using: &random)))
        let line = "\(zoneName)|\(dtstart)|\(rrule)|\(Int(after.timeIntervalSince1970))|20"
        cases.append(
            DateBuilderOracleCase(
                description: "\(description) at \(time) in \(zoneName)", rule: rule, zone: zoneName, oracleLine: line,
                after: after))
    }
    return cases
}

@Test func dateBuilderAgreesWithPythonDateutil() throws {
    let cases = makeOracleCases(count: 400)
    let output = try WallClockOracle.run(
        WallClockOracle.python, [WallClockOracle.sibling("oracle_datebuilder.py")],
        input: cases.map(\.oracleLine).joined(separator: "\n") + "\n")
    try #require(output.count == cases.count, "oracle answered \(output.count) of \(cases.count)")
    let utc = try #require(Zone(identifier: "UTC"))
    var disagreements: [String] = []
    var occurrencesCompared = 0
    for (expected, c) in zip(output, cases) {
        let firsts = c.rule.occurrences(systemTimeZone: utc).prefix(20).map { String(Int($0.timeIntervalSince1970)) }
        let next =
            c.rule.nextOccurrence(after: c.after, systemTimeZone: utc).map { String(Int($0.timeIntervalSince1970)) }
            ?? "none"
        let got = firsts.joined(separator: " ") + " | " + next
        occurrencesCompared += firsts.count + 1
        if got != expected {
            disagreements.append("\(c.description) [\(c.oracleLine)]\n  expected \(expected)\n  got      \(got)")
        }
    }
    #expect(occurrencesCompared > 4000)
    #expect(
        disagreements.isEmpty,
        "\(disagreements.count) of \(cases.count) disagree:\n\(disagreements.prefix(15).joined(separator: "\n"))")
}
