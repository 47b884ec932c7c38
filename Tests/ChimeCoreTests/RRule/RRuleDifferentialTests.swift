import Foundation
import Testing

@testable import ChimeCore

/// Random rule sets from a fixed seed, expanded by ChimeCore and by dateutil, which must agree exactly:
/// same occurrences, same rejections.
struct RRuleRandomCase {
    var text: String
    var dtstart: LocalDateTime?
    var after: LocalDateTime?
    var inclusive: Bool
    var count: Int

    /// The year of a DTSTART line in the text, if any.
    static func startYear(_ text: String) -> Int? {
        guard let range = text.range(of: "DTSTART:", options: .caseInsensitive) else { return nil }
        return Int(text[range.upperBound...].prefix(4))
    }

    static func weekdayCode(_ w: Int) -> String { ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][w] }

    static func basic(_ t: LocalDateTime) -> String {
        String(t.description.filter { $0 != "-" && $0 != ":" })
    }

    /// Seconds in one step of the frequency (months and years approximated); used to place `after`.
    static func unitSeconds(_ f: RRule.Frequency) -> Int {
        switch f {
        case .yearly: return 365 * 86_400
        case .monthly: return 30 * 86_400
        case .weekly: return 7 * 86_400
        case .daily: return 86_400
        case .hourly: return 3600
        case .minutely: return 60
        case .secondly: return 1
        }
    }

    static func randomList(_ g: inout SplitMix64, count: ClosedRange<Int>, _ value: (inout SplitMix64) -> Int)
        -> String
    {
        (0..<g.int(count)).map { _ in String(value(&g)) }.joined(separator: ",")
    }

    static func make(_ g: inout SplitMix64) -> RRuleRandomCase {
        let freq = g.pick([
            RRule.Frequency.yearly, .yearly, .yearly, .monthly, .monthly, .monthly, .monthly, .weekly, .weekly, .weekly,
            .daily, .daily, .daily, .hourly, .hourly, .minutely, .secondly,
        ])
        let year = g.int(1990...2035)
        let month = g.int(1...12)
        let day =
            g.chance(0.15)
            ? LocalDateTime.daysInMonth(year: year, month: month)
            : g.int(1...LocalDateTime.daysInMonth(year: year, month: month))
        let dtstart: LocalDateTime
        if g.chance(0.4) {
            dtstart = LocalDateTime(year: year, month: month, day: day)
        } else {
            dtstart = LocalDateTime(
                year: year, month: month, day: day, hour: g.int(0...23), minute: g.chance(0.5) ? 0 : g.int(0...59),
                second: g.chance(0.7) ? 0 : g.int(0...59))
        }
        var parts = ["FREQ=" + freq.rawValue]
        var interval = 1
        if g.chance(0.35) {
            interval = freq >= .hourly ? g.pick([2, 3, 4, 5, 6, 7, 8, 12, 15, 20, 25, 45, 90]) : g.int(2...6)
            parts.append("INTERVAL=\(interval)")
        }
        let fine = freq >= .hourly
        // Combinations that can never match make dateutil scan to year 9999, which is slow; so one "day
        // selector" family is picked per rule and contradictory mixes are kept rare.
        let family = g.int(0...9)
        let mixAll = g.chance(0.03)
        if g.chance(fine ? 0.15 : 0.3) && (family != 3 || mixAll) {
            parts.append("BYMONTH=" + randomList(&g, count: 1...3) { $0.int(1...12) })
        }
        var hasByMonth: Bool { parts.contains { $0.hasPrefix("BYMONTH=") } }
        if (family <= 2 && !fine) || mixAll || (fine && family == 0) {
            parts.append(
                "BYMONTHDAY="
                    + randomList(&g, count: 1...3) { g in
                        g.chance(0.75) ? g.int(1...28) : (g.chance(0.5) ? g.int(29...31) : -g.int(1...31))
                    })
        }
        if family == 3 || (mixAll && g.chance(0.3)) {
            parts.append("BYYEARDAY=" + randomList(&g, count: 1...4) { g in (g.chance(0.7) ? 1 : -1) * g.int(1...366) })
        }
        if (family == 4 && (freq == .yearly || g.chance(0.3))) || (mixAll && g.chance(0.3)) {
            parts.append("BYWEEKNO=" + randomList(&g, count: 1...3) { g in (g.chance(0.8) ? 1 : -1) * g.int(1...53) })
        }
        let hasDaySelector = parts.contains { $0.hasPrefix("BYMONTHDAY=") || $0.hasPrefix("BYYEARDAY=") }
        if g.chance(hasDaySelector ? 0.2 : 0.5) {
            let n = g.int(1...4)
            var entries: [String] = []
            let ordinals = freq <= .monthly ? g.chance(0.45) : g.chance(0.08)
            let mixed = g.chance(0.1)
            for _ in 0..<n {
                var entry = weekdayCode(g.int(0...6))
                if ordinals && (!mixed || g.chance(0.5)) {
                    let bound =
                        (freq == .monthly || (freq == .yearly && hasByMonth))
                        ? 5 : (freq == .yearly && g.chance(0.5) ? 53 : 5)
                    let ordinal = g.int(1...bound) * (g.chance(0.7) ? 1 : -1)
                    entry = (g.chance(0.1) && ordinal > 0 ? "+" : "") + "\(ordinal)" + entry
                }
                entries.append(entry)
            }
            parts.append("BYDAY=" + entries.joined(separator: ","))
        }
        if g.chance(fine ? 0.35 : 0.2) {
            parts.append("BYHOUR=" + randomList(&g, count: 1...3) { $0.int(0...23) })
        }
        if g.chance(fine ? 0.3 : 0.15) {
            parts.append(
                "BYMINUTE="
                    + randomList(&g, count: 1...3) { $0.chance(0.5) ? $0.pick([0, 15, 30, 45]) : $0.int(0...59) })
        }
        if g.chance(fine ? 0.2 : 0.08) {
            parts.append("BYSECOND=" + randomList(&g, count: 1...2) { $0.chance(0.5) ? 0 : $0.int(0...59) })
        }
        // BYSETPOS picks among a period's candidates; a finer-than-weekly period rarely has many.
        if g.chance(freq <= .weekly ? 0.2 : (fine ? 0.005 : 0.04)) {
            parts.append("BYSETPOS=" + randomList(&g, count: 1...2) { g in (g.chance(0.6) ? 1 : -1) * g.int(1...3) })
        }
        if g.chance(0.2) {
            parts.append("WKST=" + weekdayCode(g.int(0...6)))
        }
        let unit = unitSeconds(freq) * interval
        if g.chance(0.35) {
            parts.append("COUNT=\(g.int(1...30))")
        } else if g.chance(0.35) {
            let until = dtstart.adding(seconds: g.int(-2...60) * unit + g.int(0...86_399) % max(1, unit))
            if until.year >= 1 && until.year <= 9999 {
                if g.chance(0.05) {
                    parts.append("UNTIL=" + basic(until) + "Z")
                } else if g.chance(0.2) {
                    parts.append("UNTIL=" + String(basic(until).prefix(8)))
                } else {
                    parts.append("UNTIL=" + basic(until))
                }
            }
        }
        // dateutil does not care about the order of the parts; shuffle everything after FREQ sometimes.
        if g.chance(0.3) {
            let first = parts.removeFirst()
            parts.shuffle(using: &g)
            parts.insert(first, at: g.int(0...parts.count))
        }
        var rule = parts.joined(separator: ";")
        if g.chance(0.05) { rule = rule.lowercased() }

        var lines: [String] = []
        var passDtstart: LocalDateTime?
        let form = g.int(0...9)
        let extras = g.chance(0.2)
        if form < 3 && !extras {
            passDtstart = dtstart
            lines.append(form == 0 ? rule : "RRULE:" + rule)
        } else {
            if form == 3 {
                passDtstart = dtstart
            } else {
                lines.append(
                    "DTSTART:"
                        + (g.chance(0.1) && dtstart.secondsIntoDay == 0
                            ? String(basic(dtstart).prefix(8)) : basic(dtstart)))
            }
            lines.append("RRULE:" + rule)
            if g.chance(0.05) {
                let second =
                    "FREQ=" + g.pick(["DAILY", "WEEKLY", "MONTHLY"]) + ";INTERVAL=\(g.int(1...5))"
                    + (g.chance(0.5) ? ";COUNT=\(g.int(1...10))" : "")
                lines.append("RRULE:" + second)
            }
        }
        if extras {
            // Dates on the rule's own grid are likely occurrences, so EXDATE actually removes something.
            func nearDate(_ g: inout SplitMix64) -> String {
                basic(dtstart.adding(seconds: g.int(-3...25) * unit))
            }
            if g.chance(0.6) {
                lines.append("EXDATE:" + (0..<g.int(1...3)).map { _ in nearDate(&g) }.joined(separator: ","))
            }
            if g.chance(0.6) {
                lines.append("RDATE:" + (0..<g.int(1...3)).map { _ in nearDate(&g) }.joined(separator: ","))
            }
        }
        g.shuffleLinesMaybe(&lines)
        var after: LocalDateTime?
        if g.chance(0.75) {
            let span = freq >= .hourly ? g.int(-3...60) : g.int(-3...45)
            after = dtstart.adding(seconds: span * unit + (g.chance(0.5) ? 0 : g.int(0...max(0, unit - 1))))
            if let a = after, a.year < 1 || a.year > 9999 { after = nil }
        }
        return RRuleRandomCase(
            text: lines.joined(separator: g.chance(0.1) ? " " : "\n"), dtstart: passDtstart, after: after,
            inclusive: g.chance(0.5), count: g.int(1...20))
    }
}

extension SplitMix64 {
    mutating func shuffleLinesMaybe(_ lines: inout [String]) {
        if chance(0.2) { lines.shuffle(using: &self) }
    }
}

@Suite struct RRuleDifferentialTests {
    static let caseCount = 3000
    static let seed: UInt64 = 0x5EED_2026_0C41_4E00

    @Test func randomRulesAgreeWithDateutil() throws {
        try #require(RRuleOracle.isAvailable)
        var g = SplitMix64(seed: RRuleDifferentialTests.seed)
        var cases = (0..<RRuleDifferentialTests.caseCount).map { _ in RRuleRandomCase.make(&g) }
        // Point `after` at an actual occurrence in a third of the cases, to pin down exclusivity.
        for i in cases.indices where i % 3 == 0 {
            if let set = try? RRuleSet.parse(cases[i].text, dtstart: cases[i].dtstart) {
                let some = set.occurrences(limit: 8)
                if !some.isEmpty { cases[i].after = some[i % some.count] }
            }
        }
        let requests = cases.enumerated().map { i, c in
            RRuleOracle.Case(
                id: i, text: c.text, dtstart: c.dtstart.map(RRuleOracle.iso), after: c.after.map(RRuleOracle.iso),
                inc: c.inclusive, n: c.count,
                horizon: max(c.dtstart?.year ?? 0, RRuleRandomCase.startYear(c.text) ?? 0, c.after?.year ?? 0) + 40)
        }
        let timer = ContinuousClock()
        let oracleStart = timer.now
        let answers = try RRuleOracle.run(requests, secondsPerCase: 0.5)
        let oracleTime = timer.now - oracleStart
        var failures: [String] = []
        var compared = 0
        var rejectedByBoth = 0
        var timeouts = 0
        var horizonCases = 0
        var ourTime = Duration.zero
        var slowest: [(Duration, String)] = []
        var occurrencesCompared = 0
        for (i, c) in cases.enumerated() {
            guard let answer = answers[i] else {
                failures.append("#\(i) no oracle answer")
                continue
            }
            let context =
                "#\(i) text=\(c.text.debugDescription) dtstart=\(c.dtstart?.description ?? "-") "
                + "after=\(c.after?.description ?? "-") inc=\(c.inclusive) n=\(c.count)"
            let parsed: RRuleSet
            do {
                parsed = try RRuleSet.parse(c.text, dtstart: c.dtstart)
            } catch {
                if answer.error != nil {
                    rejectedByBoth += 1
                } else {
                    failures.append(
                        "\(context)\n  dateutil accepted (\(answer.occ.prefix(3))…) but we rejected: \(error)")
                }
                continue
            }
            if let error = answer.error {
                failures.append("\(context)\n  dateutil raised \(error) but we accepted")
                continue
            }
            var ours: [String] = []
            let spent = timer.measure {
                ours = parsed.occurrences(after: c.after, inclusive: c.inclusive, limit: c.count).map(\.description)
            }
            ourTime += spent
            slowest.append((spent, context))
            if answer.horizon {
                // dateutil stopped scanning after the horizon year: compare what lies before it.
                horizonCases += 1
                let cut = String(format: "%04d-01-01T00:00:00", requests[i].horizon.map { $0 + 1 } ?? 10_000)
                let agree =
                    answer.single
                    ? ours.filter { $0 < cut } == answer.occ.filter { $0 < cut }
                    : Array(ours.prefix(answer.occ.count)) == answer.occ
                occurrencesCompared += answer.occ.count
                if !agree {
                    failures.append(
                        "\(context)\n  expected (dateutil, stopped after \(cut)) \(answer.occ)\n  got \(ours)")
                }
                continue
            }
            if answer.timeout {
                timeouts += 1
                if Array(ours.prefix(answer.occ.count)) != answer.occ {
                    failures.append("\(context)\n  expected (dateutil, timed out) \(answer.occ)\n  got \(ours)")
                }
                continue
            }
            compared += 1
            occurrencesCompared += ours.count
            if ours != answer.occ {
                failures.append("\(context)\n  expected \(answer.occ)\n  got      \(ours)")
            }
        }
        let summary =
            "\(cases.count) cases: \(compared) compared in full (\(occurrencesCompared) occurrences), "
            + "\(horizonCases) compared up to dateutil's 40-year horizon, \(rejectedByBoth) rejected by both, "
            + "\(timeouts) dateutil timeouts, \(failures.count) disagreements; "
            + "ChimeCore expansion took \(ourTime), dateutil \(oracleTime)"
        #expect(failures.isEmpty, "\(summary)\n\(failures.prefix(25).joined(separator: "\n"))")
        #expect(timeouts < cases.count / 100, "\(summary)")
        #expect(compared + horizonCases > cases.count * 8 / 10, "\(summary)")
        print("RRuleDifferentialTests: \(summary)")
        if ProcessInfo.processInfo.environment["RRULE_SLOWEST"] != nil {
            for (d, c) in slowest.sorted(by: { $0.0 > $1.0 }).prefix(15) { print("\(d) \(c)") }
        }
    }
}
