/// Python's `divmod`/`%`/`//` round toward negative infinity; Swift's round toward zero. The expansion is a
/// port of dateutil, so every division that can see a negative operand goes through these.
@inline(__always) func rrFloorDiv(_ a: Int, _ b: Int) -> Int {
    let q = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
}

@inline(__always) func rrFloorMod(_ a: Int, _ b: Int) -> Int { a - rrFloorDiv(a, b) * b }

func rrGCD(_ a: Int, _ b: Int) -> Int {
    var (x, y) = (abs(a), abs(b))
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

/// Why a rule cannot be expanded from a given start. dateutil raises these (some while constructing the
/// rule, some on the first step of iteration); Chime reports them when the rule set is built.
struct RRuleCompileProblem: Error, Sendable {
    /// The rule part to blame, e.g. "BYHOUR".
    var part: String
    var expected: String
}

/// A rule normalised against its start exactly the way dateutil's `rrule.__init__` does it: missing
/// BYxxx parts are filled in from DTSTART, lists become sets, BYDAY splits into plain weekdays and
/// (weekday, ordinal) pairs, and same-level BYHOUR/BYMINUTE/BYSECOND keep only reachable values.
struct RRuleCompiled: Sendable {
    struct OrdinalWeekday: Sendable, Hashable {
        var weekday: Int  // 0 = Monday, as in dateutil
        var n: Int
    }

    let freq: Int  // 0 = YEARLY … 6 = SECONDLY
    let interval: Int
    let count: Int?
    /// Inclusive bound, in seconds since 1970 of the wall-clock time.
    let untilKey: Int?
    let dtstart: LocalDateTime
    let dtstartKey: Int
    let wkst: Int
    let bysetpos: [Int]
    let bymonth: [Int]?
    let bymonthMask: UInt16
    let byweekno: [Int]?
    let byyearday: Set<Int>?
    let bymonthdayMask: UInt64  // bit d for day d
    let bynmonthdayMask: UInt64  // bit -d for day d < 0
    let hasMonthDay: Bool
    /// BYMONTHDAY's values counted from the start, and those counted from the end (1 = the last day), in
    /// order.
    let listedMonthDays: [Int]
    let listedMonthDaysFromEnd: [Int]
    let byweekdayMask: UInt8?  // bit w for weekday w (0 = Monday)
    let bynweekday: [OrdinalWeekday]?
    let byhour: [Int]?
    let byminute: [Int]?
    let bysecond: [Int]?
    /// Seconds into the day of each candidate time, sorted; only for YEARLY … DAILY.
    let timeset: [Int]

    /// Any day-level filter at all? When false every day passes and the expander skips the checks.
    var hasDayFilter: Bool {
        bymonth != nil || byweekno != nil || byweekdayMask != nil || hasMonthDay || byyearday != nil
    }

    init(rule: RRule, dtstart start: LocalDateTime, until: LocalDateTime?) throws(RRuleCompileProblem) {
        if let problem = rule.rangeProblem() { throw problem }
        let freq = rule.frequency.rank
        let dtWeekday = start.isoWeekday - 1
        self.freq = freq
        interval = max(1, rule.interval)
        count = rule.count
        untilKey = until?.secondsSinceEpoch
        dtstart = start
        dtstartKey = start.secondsSinceEpoch
        wkst = (rule.weekStart?.rawValue ?? 1) - 1
        bysetpos = rule.bySetPos

        var bymonthList = rule.byMonth
        var bymonthdayList = rule.byMonthDay
        var byday = rule.byDay
        if rule.byWeekNo.isEmpty && rule.byYearDay.isEmpty && rule.byMonthDay.isEmpty && rule.byDay.isEmpty {
            switch rule.frequency {
            case .yearly:
                if bymonthList.isEmpty { bymonthList = [start.month] }
                bymonthdayList = [start.day]
            case .monthly:
                bymonthdayList = [start.day]
            case .weekly:
                byday = [RRule.WeekdayNum(Weekday(rawValue: dtWeekday + 1) ?? .monday)]
            default:
                break
            }
        }
        if bymonthList.isEmpty {
            bymonth = nil
            bymonthMask = 0
        } else {
            let months = Array(Set(bymonthList)).sorted()
            bymonth = months
            bymonthMask = months.reduce(0) { $0 | (1 << UInt16($1)) }
        }
        byyearday = rule.byYearDay.isEmpty ? nil : Set(rule.byYearDay)
        var pos: UInt64 = 0
        var neg: UInt64 = 0
        for d in bymonthdayList where d != 0 && abs(d) <= 31 {
            if d > 0 { pos |= 1 << UInt64(d) } else { neg |= 1 << UInt64(-d) }
        }
        bymonthdayMask = pos
        bynmonthdayMask = neg
        hasMonthDay = pos != 0 || neg != 0
        listedMonthDays = (1...31).filter { pos & (1 << UInt64($0)) != 0 }
        listedMonthDaysFromEnd = (1...31).filter { neg & (1 << UInt64($0)) != 0 }
        byweekno = rule.byWeekNo.isEmpty ? nil : Array(Set(rule.byWeekNo)).sorted()

        if byday.isEmpty {
            byweekdayMask = nil
            bynweekday = nil
        } else {
            var plain: UInt8 = 0
            var ordinals: Set<OrdinalWeekday> = []
            for entry in byday {
                let w = entry.weekday.rawValue - 1
                if let n = entry.ordinal, n != 0, freq <= 1 {
                    ordinals.insert(OrdinalWeekday(weekday: w, n: n))
                } else {
                    plain |= 1 << UInt8(w)
                }
            }
            byweekdayMask = plain == 0 ? nil : plain
            bynweekday =
                (plain != 0 && ordinals.isEmpty)
                ? nil
                : ordinals.sorted { ($0.weekday, $0.n) < ($1.weekday, $1.n) }
        }

        func same(_ values: [Int], start: Int, base: Int, part: String) throws(RRuleCompileProblem) -> [Int] {
            let g = rrGCD(max(1, rule.interval), base)
            let kept = Set(values.filter { g == 1 || rrFloorMod($0 - start, g) == 0 })
            guard !kept.isEmpty else {
                throw RRuleCompileProblem(
                    part: part,
                    expected:
                        "\(part) values reachable from DTSTART in steps of INTERVAL=\(rule.interval) "
                        + "(each must differ from DTSTART's by a multiple of \(g)); none is"
                )
            }
            return kept.sorted()
        }
        if rule.byHour.isEmpty {
            byhour = freq < 4 ? [start.hour] : nil
        } else {
            byhour =
                freq == 4
                ? try same(rule.byHour, start: start.hour, base: 24, part: "BYHOUR") : Array(Set(rule.byHour)).sorted()
        }
        if rule.byMinute.isEmpty {
            byminute = freq < 5 ? [start.minute] : nil
        } else {
            byminute =
                freq == 5
                ? try same(rule.byMinute, start: start.minute, base: 60, part: "BYMINUTE")
                : Array(Set(rule.byMinute)).sorted()
        }
        if rule.bySecond.isEmpty {
            bysecond = freq < 6 ? [start.second] : nil
        } else {
            bysecond =
                freq == 6
                ? try same(rule.bySecond, start: start.second, base: 60, part: "BYSECOND")
                : Array(Set(rule.bySecond)).sorted()
        }
        if freq < 4, let hs = byhour, let ms = byminute, let ss = bysecond {
            var times: [Int] = []
            for h in hs { for m in ms { for s in ss { times.append(h * 3600 + m * 60 + s) } } }
            timeset = times.sorted()
        } else {
            timeset = []
        }
        try checkTimeReachable()
        let timesPerDay =
            switch freq {
            case 4: (byminute?.count ?? 1) * (bysecond?.count ?? 1)
            case 5: bysecond?.count ?? 1
            case 6: 1
            default: timeset.count
            }
        provablyEmpty = RRuleExpander.provablyEmpty(self, timesPerDay: timesPerDay)
    }

    /// The cheap checks of `RRuleExpander.provablyEmpty` prove that the rule never fires; made once, here,
    /// rather than at each expansion.
    private(set) var provablyEmpty = false

    /// dateutil's MINUTELY and SECONDLY steps search one full day-cycle of the progression for a time whose
    /// hour (and minute) is allowed, and raise "Invalid combination of interval and byhour resulting in
    /// empty rule" when there is none. Such a rule yields nothing before raising, so it is rejected here.
    private func checkTimeReachable() throws(RRuleCompileProblem) {
        let unit: Int
        switch freq {
        case 5:
            guard byhour != nil else { return }
            unit = 60
        case 6:
            guard byhour != nil || byminute != nil else { return }
            unit = 1
        default:
            return
        }
        // Over a day the progression visits exactly the times of day congruent to DTSTART's modulo
        // gcd(INTERVAL, units per day), so the rule is satisfiable iff an allowed time is congruent.
        let perDay = 86_400 / unit
        let g = rrGCD(interval, perDay)
        let startPosition = dtstart.secondsIntoDay / unit
        for h in byhour ?? Array(0...23) {
            for m in byminute ?? Array(0...59) {
                for s in (unit == 1 ? (bysecond ?? Array(0...59)) : [0]) {
                    let position = (h * 3600 + m * 60 + s) / unit
                    if rrFloorMod(position - startPosition, g) == 0 { return }
                }
            }
        }
        throw RRuleCompileProblem(
            part: byhour != nil ? "BYHOUR" : "BYMINUTE",
            expected:
                "BYHOUR/BYMINUTE/BYSECOND values that a step of INTERVAL=\(interval) from DTSTART can reach "
                + "(dateutil reports \"invalid combination of interval and byhour\")"
        )
    }

    /// Whether a time of day satisfies the BYHOUR/BYMINUTE/BYSECOND parts that dateutil checks while stepping
    /// an HOURLY/MINUTELY/SECONDLY rule.
    func timeAllowed(secondsIntoDay t: Int) -> Bool {
        let h = t / 3600
        let m = t / 60 % 60
        let s = t % 60
        switch freq {
        case 4:
            return byhour.map { $0.contains(h) } ?? true
        case 5:
            return (byhour.map { $0.contains(h) } ?? true) && (byminute.map { $0.contains(m) } ?? true)
        default:
            return (byhour.map { $0.contains(h) } ?? true) && (byminute.map { $0.contains(m) } ?? true)
                && (bysecond.map { $0.contains(s) } ?? true)
        }
    }
}

extension RRule {
    /// The first value outside the ranges ``parse(_:)`` enforces, for rules built in code or decoded.
    func rangeProblem() -> RRuleCompileProblem? {
        func check(_ name: String, _ values: [Int], _ range: ClosedRange<Int>, negative: Bool) -> RRuleCompileProblem? {
            for v in values where !(range.contains(v) || (negative && range.contains(-v))) {
                let sign = negative ? " or -\(range.upperBound) to -\(range.lowerBound)" : ""
                return RRuleCompileProblem(
                    part: name,
                    expected: "\(name) values from \(range.lowerBound) to \(range.upperBound)\(sign), not \(v)")
            }
            return nil
        }
        if interval < 1 || interval > 1_000_000 {
            return RRuleCompileProblem(part: "INTERVAL", expected: "a positive integer (1 to 1000000)")
        }
        if let count, count < 1 || count > RRule.maximumCount {
            return RRuleCompileProblem(part: "COUNT", expected: "a positive integer (1 to \(RRule.maximumCount))")
        }
        if count != nil && until != nil {
            return RRuleCompileProblem(
                part: "UNTIL", expected: "either COUNT or UNTIL, not both (RFC 5545 section 3.3.10)")
        }
        if let p = check("BYSECOND", bySecond, 0...59, negative: false) ?? check(
            "BYMINUTE", byMinute, 0...59, negative: false)
            ?? check("BYHOUR", byHour, 0...23, negative: false) ?? check(
                "BYMONTHDAY", byMonthDay, 1...31, negative: true)
            ?? check("BYYEARDAY", byYearDay, 1...366, negative: true) ?? check(
                "BYWEEKNO", byWeekNo, 1...53, negative: true)
            ?? check("BYMONTH", byMonth, 1...12, negative: false)
            ?? check("BYSETPOS", bySetPos, 1...366, negative: true)
        {
            return p
        }
        if let limit = RRuleScanner.ordinalLimit(for: self) {
            for entry in byDay {
                if let n = entry.ordinal, n == 0 || abs(n) > limit.bound {
                    return RRuleCompileProblem(
                        part: "BYDAY",
                        expected: "an ordinal from 1 to \(limit.bound) or -\(limit.bound) to -1 \(limit.reason)")
                }
            }
        }
        return nil
    }

    /// The largest COUNT accepted. dateutil has no limit, but a rule with a COUNT has to be expanded from its
    /// start to find later occurrences (the count is of occurrences since DTSTART), so the cost of a lookup
    /// grows with it; a million is far beyond any reminder.
    public static let maximumCount = 1_000_000
}
