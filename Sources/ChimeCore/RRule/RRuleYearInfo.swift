/// Per-year lookup tables, a port of dateutil's `_iterinfo`. Day indexes count from January 1 of the
/// current year (0-based) and run 7 days into the next year, because a weekly period can cross New Year.
struct RRuleYearInfo: Sendable {
    /// Month (1…12) of each day index; the 7 extra days are January of the next year.
    static let monthOf366: [Int] = buildMonthTable(leap: true)
    static let monthOf365: [Int] = buildMonthTable(leap: false)
    /// Day of the month of each index, and the same counted from the end of the month (-1 = last day).
    static let dayOf366: [Int] = buildDayTable(leap: true, negative: false)
    static let dayOf365: [Int] = buildDayTable(leap: false, negative: false)
    static let negDayOf366: [Int] = buildDayTable(leap: true, negative: true)
    static let negDayOf365: [Int] = buildDayTable(leap: false, negative: true)
    /// Index of the first day of each month, plus the year length.
    static let monthStart366 = [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366]
    static let monthStart365 = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365]

    private static func lengths(leap: Bool) -> [Int] {
        (1...12).map { LocalDateTime.daysInMonth(year: leap ? 2000 : 2001, month: $0) }
    }

    private static func buildMonthTable(leap: Bool) -> [Int] {
        var table: [Int] = []
        for (i, n) in lengths(leap: leap).enumerated() { table += Array(repeating: i + 1, count: n) }
        return table + Array(repeating: 1, count: 7)
    }

    private static func buildDayTable(leap: Bool, negative: Bool) -> [Int] {
        var table: [Int] = []
        for n in lengths(leap: leap) { table += negative ? Array((-n)...(-1)) : Array(1...n) }
        return table + (negative ? Array(-31...(-25)) : Array(1...7))
    }

    let rule: RRuleCompiled
    private(set) var lastYear = Int.min
    private(set) var lastMonth = Int.min
    private(set) var yearLength = 365
    private(set) var nextYearLength = 365
    /// Days since 1970-01-01 of January 1.
    private(set) var yearOrdinal = 0
    /// Weekday of January 1, 0 = Monday.
    private(set) var yearWeekday = 0
    private(set) var monthOf: [Int] = RRuleYearInfo.monthOf365
    private(set) var dayOf: [Int] = RRuleYearInfo.dayOf365
    private(set) var negDayOf: [Int] = RRuleYearInfo.negDayOf365
    private(set) var monthStart: [Int] = RRuleYearInfo.monthStart365
    private(set) var weekNoMask: [Bool]?
    private(set) var nthWeekdayMask: [Bool]?
    /// BYYEARDAY for this year: whether each day index (and the 7 days after the year) is one of them.
    private(set) var yearDayMask: [Bool]?
    /// The day indices each mask lets through, in order: a period's candidates are read from these
    /// instead of testing every day of it.
    private var weekNoDays: [Int] = []
    private var nthWeekdayDays: [Int] = []
    private var yearDays: [Int] = []
    /// For a yearly or monthly rule with BYYEARDAY, BYDAY with an ordinal, BYWEEKNO or BYMONTHDAY: the
    /// day indices of the current period (the year's allowed months, or the month) that filter lets
    /// through, in order; every kept day is one of them.
    private(set) var candidateDays: [Int]?
    /// For a weekly or finer rule with BYMONTH, BYMONTHDAY or BYYEARDAY: the day indices of the current
    /// year those parts can let through, in order (a superset of the days that pass), so that a search
    /// for the next passing day looks at a few days a year instead of every day.
    private(set) var yearCandidates: [Int]?

    // The rule's day filters as plain values, so that `isFiltered`, the expander's innermost check, reads
    // no array and copies no reference of the rule.
    private let monthMask: UInt16
    private let weekdayMask: UInt8
    private let monthDayMask: UInt64
    private let negativeMonthDayMask: UInt64
    private let hasMonthDay: Bool

    init(rule: RRuleCompiled) {
        self.rule = rule
        monthMask = rule.bymonth == nil ? UInt16.max : rule.bymonthMask
        weekdayMask = rule.byweekdayMask ?? UInt8.max
        monthDayMask = rule.bymonthdayMask
        negativeMonthDayMask = rule.bynmonthdayMask
        hasMonthDay = rule.hasMonthDay
    }

    /// Weekday (0 = Monday) of a day index; valid for any index, unlike dateutil's finite table.
    @inline(__always) func weekday(_ i: Int) -> Int { (yearWeekday + i) % 7 }

    mutating func rebuild(year: Int, month: Int) {
        if year != lastYear {
            let leap = LocalDateTime.isLeapYear(year)
            yearLength = leap ? 366 : 365
            nextYearLength = LocalDateTime.isLeapYear(year + 1) ? 366 : 365
            yearOrdinal = LocalDateTime.days(fromCivil: year, 1, 1)
            yearWeekday = LocalDateTime(year: year, month: 1, day: 1).isoWeekday - 1
            monthOf = leap ? RRuleYearInfo.monthOf366 : RRuleYearInfo.monthOf365
            dayOf = leap ? RRuleYearInfo.dayOf366 : RRuleYearInfo.dayOf365
            negDayOf = leap ? RRuleYearInfo.negDayOf366 : RRuleYearInfo.negDayOf365
            monthStart = leap ? RRuleYearInfo.monthStart366 : RRuleYearInfo.monthStart365
            if let weeks = rule.byweekno {
                (weekNoMask, weekNoDays) = buildWeekNoMask(year: year, weeks: weeks)
            }
            if let days = rule.byyearday {
                (yearDayMask, yearDays) = buildYearDayMask(days: days)
            }
        }
        if let ordinals = rule.bynweekday, rule.freq <= 1, month != lastMonth || year != lastYear {
            // The mask is kept from period to period: the last period's days are cleared and this one's set,
            // rather than a new mask made and filled.
            var mask = nthWeekdayMask ?? []
            nthWeekdayMask = nil
            if mask.count != RRuleYearInfo.maskLength {
                mask = [Bool](repeating: false, count: RRuleYearInfo.maskLength)
            } else {
                for i in nthWeekdayDays { mask[i] = false }
            }
            nthWeekdayDays.removeAll(keepingCapacity: true)
            if rule.freq == 1 {
                markOrdinals(ordinals, monthStart[month - 1], monthStart[month], &mask)
            } else if let months = rule.bymonth {
                for m in months { markOrdinals(ordinals, monthStart[m - 1], monthStart[m], &mask) }
            } else {
                markOrdinals(ordinals, 0, yearLength, &mask)
            }
            nthWeekdayDays.sort()
            nthWeekdayMask = mask
        }
        if rule.freq <= 1, year != lastYear || month != lastMonth {
            // A yearly or monthly rule's days can only be among those its sparsest filter lets through:
            // the expander looks at those instead of every day of the period. They are read from the
            // filter's own list of days, month by month (a year without BYMONTH is its twelve months in
            // order): a few steps a period instead of a test of each of its days.
            let listed: [Int]? =
                yearDayMask != nil
                ? yearDays : nthWeekdayMask != nil ? nthWeekdayDays : weekNoMask != nil ? weekNoDays : nil
            if listed != nil || hasMonthDay {
                var days = candidateDays ?? []
                candidateDays = nil
                days.removeAll(keepingCapacity: true)
                func add(_ m: Int) {
                    if let listed {
                        days += Self.slice(of: listed, in: monthStart[m - 1]..<monthStart[m])
                    } else {
                        addListedMonthDays(inMonth: m, to: &days)
                    }
                }
                if rule.freq == 1 {
                    add(month)
                } else if let months = rule.bymonth {
                    for m in months { add(m) }
                } else {
                    for m in 1...12 { add(m) }
                }
                candidateDays = days
            } else {
                candidateDays = nil
            }
        }
        if rule.freq >= 2, year != lastYear {
            yearCandidates = buildYearCandidates()
        }
        lastYear = year
        lastMonth = month
    }

    static let allMonths = Array(1...12)

    /// The elements of `sorted` (ascending) that lie in `range`.
    static func slice(of sorted: [Int], in range: Range<Int>) -> ArraySlice<Int> {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < sorted.count && sorted[end] < range.upperBound { end += 1 }
        return sorted[low..<end]
    }

    /// The length of the day masks: a leap year and the 7 days after it.
    static let maskLength = 366 + 7

    /// Marks, in `mask` and `nthWeekdayDays`, the days of `first..<end` that BYDAY's ordinal weekdays name
    /// (`1FR`, `-1SU`), each once.
    private mutating func markOrdinals(
        _ ordinals: [RRuleCompiled.OrdinalWeekday], _ first: Int, _ end: Int, _ mask: inout [Bool]
    ) {
        let last = end - 1
        for o in ordinals {
            var i: Int
            if o.n < 0 {
                i = last + (o.n + 1) * 7
                i -= rrFloorMod(weekday(i) - o.weekday, 7)
            } else {
                i = first + (o.n - 1) * 7
                i += rrFloorMod(7 - weekday(i) + o.weekday, 7)
            }
            if first <= i && i <= last, !mask[i] {
                mask[i] = true
                nthWeekdayDays.append(i)
            }
        }
    }

    /// Appends the day indices of month `m` of this year that BYMONTHDAY lists to `days`, in order, each
    /// once.
    private func addListedMonthDays(inMonth m: Int, to days: inout [Int]) {
        let first = monthStart[m - 1]
        let length = monthStart[m] - first
        let start = days.count
        for d in rule.listedMonthDays where d <= length { days.append(first + d - 1) }
        let fromEnd = rule.listedMonthDaysFromEnd
        guard !fromEnd.isEmpty else { return }
        for d in fromEnd.reversed() where d <= length {
            let i = first + length - d
            if !days[start...].contains(i) { days.append(i) }
        }
        days[start...].sort()
    }

    private func buildYearCandidates() -> [Int]? {
        guard rule.bymonth != nil || hasMonthDay || rule.byyearday != nil else { return nil }
        let months = rule.bymonth ?? Self.allMonths
        var days: [Int] = []
        if hasMonthDay {
            for m in months { addListedMonthDays(inMonth: m, to: &days) }
        } else if let yearDays = rule.byyearday {
            for d in yearDays {
                let i = d > 0 ? d - 1 : yearLength + d
                if i >= 0 && i < yearLength && monthMask & (1 << UInt16(monthOf[i])) != 0 { days.append(i) }
            }
            days.sort()
        } else {
            for m in months { days.append(contentsOf: monthStart[m - 1]..<monthStart[m]) }
        }
        return days
    }

    /// dateutil's week-number mask, line for line (including its treatment of week 1 of the next year and
    /// the last week of the previous one).
    private func buildWeekNoMask(year: Int, weeks: [Int]) -> ([Bool], [Int]) {
        let wkst = rule.wkst
        var mask = [Bool](repeating: false, count: yearLength + 7)
        var days: [Int] = []
        func set(_ i: Int) {
            if i >= 0 && i < mask.count && !mask[i] {
                mask[i] = true
                days.append(i)
            }
        }
        let firstwkst = rrFloorMod(7 - yearWeekday + wkst, 7)
        var no1wkst = firstwkst
        let wyearlen: Int
        if no1wkst >= 4 {
            no1wkst = 0
            wyearlen = yearLength + rrFloorMod(yearWeekday - wkst, 7)
        } else {
            wyearlen = yearLength - no1wkst
        }
        let numweeks = wyearlen / 7 + (wyearlen % 7) / 4
        for week in weeks {
            var n = week
            if n < 0 { n += numweeks + 1 }
            guard n > 0 && n <= numweeks else { continue }
            var i: Int
            if n > 1 {
                i = no1wkst + (n - 1) * 7
                if no1wkst != firstwkst { i -= 7 - firstwkst }
            } else {
                i = no1wkst
            }
            for _ in 0..<7 {
                set(i)
                i += 1
                if weekday(i) == wkst { break }
            }
        }
        if weeks.contains(1) {
            var i = no1wkst + numweeks * 7
            if no1wkst != firstwkst { i -= 7 - firstwkst }
            if i < yearLength {
                for _ in 0..<7 {
                    set(i)
                    i += 1
                    if weekday(i) == wkst { break }
                }
            }
        }
        if no1wkst != 0 {
            let lnumweeks: Int
            if !weeks.contains(-1) {
                let lyearweekday = LocalDateTime(year: year - 1, month: 1, day: 1).isoWeekday - 1
                var lno1wkst = rrFloorMod(7 - lyearweekday + wkst, 7)
                let lyearlen = LocalDateTime.isLeapYear(year - 1) ? 366 : 365
                if lno1wkst >= 4 {
                    lno1wkst = 0
                    lnumweeks = 52 + rrFloorMod(lyearlen + rrFloorMod(lyearweekday - wkst, 7), 7) / 4
                } else {
                    lnumweeks = 52 + rrFloorMod(yearLength - no1wkst, 7) / 4
                }
                _ = lno1wkst
            } else {
                lnumweeks = -1
            }
            if weeks.contains(lnumweeks) {
                for i in 0..<no1wkst { set(i) }
            }
        }
        return (mask, days.sorted())
    }

    /// dateutil's per-day filter: true when day index `i` of the current year is excluded by a BYxxx part.
    func isFiltered(_ i: Int) -> Bool {
        if monthMask & (1 << UInt16(monthOf[i])) == 0 { return true }
        if let mask = weekNoMask, !mask[i] { return true }
        if weekdayMask & (1 << UInt8(weekday(i))) == 0 { return true }
        if let mask = nthWeekdayMask, !(i < mask.count && mask[i]) { return true }
        if hasMonthDay, !isListedMonthDay(i) { return true }
        if let mask = yearDayMask, !mask[i] { return true }
        return false
    }

    /// Whether BYMONTHDAY lists day index `i`'s day of the month, counted from the start or from the end.
    private func isListedMonthDay(_ i: Int) -> Bool {
        monthDayMask & (1 << UInt64(dayOf[i])) != 0 || negativeMonthDayMask & (1 << UInt64(-negDayOf[i])) != 0
    }

    /// BYYEARDAY as a mask of this year's day indices and the 7 after it: day i of the year is kept when
    /// its number from the start (i + 1) or from the end (i - length) is listed; a day past the year is
    /// counted in the next one, as dateutil does.
    private func buildYearDayMask(days: Set<Int>) -> ([Bool], [Int]) {
        var mask = [Bool](repeating: false, count: yearLength + 7)
        var listed: [Int] = []
        func set(_ i: Int) {
            if !mask[i] {
                mask[i] = true
                listed.append(i)
            }
        }
        for d in days {
            let inYear = d > 0 ? d - 1 : yearLength + d
            if inYear >= 0 && inYear < yearLength { set(inYear) }
            let after = d > 0 ? yearLength + d - 1 : yearLength + nextYearLength + d
            if after >= yearLength && after < mask.count { set(after) }
        }
        return (mask, listed.sorted())
    }
}
