import Foundation

/// A resolved, absolute, `Codable` schedule: what a DateBuilder expression or a phrase becomes once
/// its relative anchors ("today", "this month") are fixed against a `now`.
///
/// Calendar patterns are stored as local days (days since 1970-01-01) and month indices
/// (`year * 12 + month - 1`) and are turned into instants only when evaluated, in the rule's
/// `RuleTimeZone` under its `DSTPolicy`: a floating rule keeps following the system zone.
/// Evaluation is lazy and jumps straight to the relevant period, so distant dates cost the same as
/// near ones and nothing is ever materialised.
public struct DateRule: Codable, Hashable, Sendable {
    /// Which days (or instants) the rule names.
    public enum Pattern: Codable, Hashable, Sendable {
        /// Periods start on local day `start + k * stride`; each fires on the days at `offsets` from
        /// its start (weekly rules: `stride` 7, offsets of the chosen weekdays).
        case days(start: Int, stride: Int, offsets: [Int])
        /// Periods start at month index `start + k * stride`; each contributes the months at
        /// `monthOffsets` from its start, and in each of those months the days the selectors pick,
        /// shifted by `dayOffset` days. Months where a selector has no day are skipped.
        case months(
            start: Int, stride: Int, monthOffsets: [Int], days: [DateBuilder.MonthDaySelector], dayOffset: Int)
        /// Absolute instants `start + k * seconds`; independent of time zones and DST.
        case interval(start: Date, seconds: Int)
    }

    /// How a rule ends.
    public enum End: Hashable, Sendable {
        case never
        /// After this many periods (days, weeks, months, years, or instants for intervals).
        case afterPeriods(Int)
        /// No occurrence after this local date-time.
        case until(LocalDateTime)
        /// Whichever of the two comes first.
        case afterPeriodsOrUntil(Int, LocalDateTime)
    }

    public var pattern: Pattern
    /// Time of day for calendar patterns (ignored by `.interval`).
    public var time: Time
    /// Number of periods; nil: unbounded.
    public var count: Int?
    /// Last local date-time an occurrence may have (inclusive); nil: unbounded.
    public var until: LocalDateTime?
    /// First local date-time an occurrence may have (inclusive), for "starting 2026-12-03" when the
    /// period containing that day starts earlier; nil: the pattern's own start.
    public var from: LocalDateTime?
    public var timeZone: RuleTimeZone
    public var dstPolicy: DSTPolicy

    public init(
        pattern: Pattern, time: Time = .fixed(TimeOfDay(hour: 0, minute: 0)), count: Int? = nil,
        until: LocalDateTime? = nil, from: LocalDateTime? = nil, timeZone: RuleTimeZone = .floating,
        dstPolicy: DSTPolicy = .default
    ) {
        self.from = from
        self.pattern = pattern
        self.time = time
        self.count = count
        self.until = until
        self.timeZone = timeZone
        self.dstPolicy = dstPolicy
    }

    /// A rule that never fires.
    public static let never = DateRule(pattern: .days(start: 0, stride: 1, offsets: []), count: 0)

    /// True when the rule has a count or an end date.
    public var isFinite: Bool { count != nil || until != nil }

    /// How the rule ends.
    public var end: End {
        switch (count, until) {
        case (nil, nil): return .never
        case (let count?, nil): return .afterPeriods(count)
        case (nil, let until?): return .until(until)
        case (let count?, let until?): return .afterPeriodsOrUntil(count, until)
        }
    }

    /// The first occurrence strictly after `after`, or nil when there is none. `systemTimeZone` is used
    /// only by floating rules. Cost does not grow with the distance from the rule's start, and a rule
    /// that can never fire (February 30, day 31 of every April) is answered with nil quickly. Nil also
    /// when one search's budget was not enough (see the budgeted form).
    public func nextOccurrence(after: Date, systemTimeZone: Zone) -> Date? {
        var budget = SearchBudget()
        return try? nextOccurrence(after: after, systemTimeZone: systemTimeZone, budget: &budget)
    }

    /// The first occurrence strictly after `after`, or nil when there is none; each period and day looked
    /// at is taken from `budget`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the search needed more than `budget` allows.
    public func nextOccurrence(
        after: Date, systemTimeZone: Zone, budget: inout SearchBudget
    ) throws(SearchBudgetExhausted) -> Date? {
        guard isWellFormed, let zone = timeZone.resolve(systemTimeZone: systemTimeZone) else { return nil }
        if case .interval(let start, let seconds) = pattern {
            try budget.spend()
            return nextInterval(after: after, start: start, seconds: seconds, zone: zone)
        }
        let fromDay = WallClock.localDateTime(for: after, in: zone).daysSinceEpoch - 2
        let afterSeconds = WallClock.clampedSeconds(after)
        var found: Date?
        try forEachLocalOccurrence(fromDay: fromDay, budget: &budget) { local in
            // No UTC offset is below -16 h, so such a wall time cannot name an instant after `after`.
            if local.secondsSinceEpoch + 16 * 3600 < afterSeconds { return false }
            found = WallClock.instants(for: local, in: zone, policy: dstPolicy).first { $0 > after }
            return found != nil
        }
        return found
    }

    /// The rule's first occurrence.
    public func firstOccurrence(systemTimeZone: Zone) -> Date? {
        guard isWellFormed, let zone = timeZone.resolve(systemTimeZone: systemTimeZone) else { return nil }
        if case .interval(let start, let seconds) = pattern {
            return nextInterval(after: start.addingTimeInterval(-1), start: start, seconds: seconds, zone: zone)
        }
        var found: Date?
        var budget = SearchBudget()
        try? forEachLocalOccurrence(fromDay: DateRule.earliestDay, budget: &budget) { local in
            found = WallClock.instants(for: local, in: zone, policy: dstPolicy).first
            return found != nil
        }
        return found
    }

    /// Occurrences in order, lazily: from the rule's start, or strictly after `after`.
    public func occurrences(after: Date? = nil, systemTimeZone: Zone) -> Occurrences {
        Occurrences(rule: self, after: after, systemTimeZone: systemTimeZone)
    }

    /// Scheduled wall-clock times of a calendar pattern, in order, lazily, before any time zone or DST
    /// is applied. Empty for `.interval` patterns, which have no wall-clock form.
    public func localOccurrences() -> LocalOccurrences { LocalOccurrences(rule: self) }

    // MARK: - Internals

    /// A day before year 1: "from the beginning".
    static let earliestDay = -800_000
    /// Periods visited per search beyond the pattern's repetition cycle.
    static let periodSlack = 64
    /// The Gregorian calendar repeats every 400 years.
    static let monthsInCycle = 4800

    /// Rejects values (possibly decoded from untrusted JSON) that would overflow or loop.
    public var isWellFormed: Bool { rangeProblem == nil }

    /// The first field out of range, as "field: what it must be", or nil when every field is usable: a
    /// rule decoded from outside (the bus's `date-rule`) is checked with this before use.
    public var rangeProblem: String? {
        let limit = DateBuilder.maxMagnitude
        if let count, count < 0 { return "count: 0 or more" }
        switch time {
        case .fixed(let t):
            if t.secondsIntoDay == nil { return "time: hour 0…23, minute and second 0…59" }
        case .random(let from, let to, _):
            if from.secondsIntoDay == nil || to.secondsIntoDay == nil {
                return "time: hours 0…23, minutes and seconds 0…59"
            }
        }
        if let until, !until.isValid { return "until: a real date and time in the years 1 to 9999" }
        if let from, !from.isValid { return "from: a real date and time in the years 1 to 9999" }
        switch pattern {
        case .days(let start, let stride, let offsets):
            guard DateBuilderMath.isSafeDay(start) else { return "pattern.days.start: a day of the years 1 to 9999" }
            guard (1...limit).contains(stride) else { return "pattern.days.stride: 1 to \(limit)" }
            guard (1...64).contains(offsets.count), offsets.allSatisfy(DateBuilderMath.isSafe) else {
                return "pattern.days.offsets: 1 to 64 offsets, each within ±\(limit)"
            }
        case .months(let start, let stride, let monthOffsets, let days, let dayOffset):
            guard DateBuilder.yearRange.contains(DateBuilderMath.floorDiv(start, 12)) else {
                return "pattern.months.start: a month of the years 1 to 9999"
            }
            guard (1...limit).contains(stride) else { return "pattern.months.stride: 1 to \(limit)" }
            guard (1...64).contains(monthOffsets.count), monthOffsets.allSatisfy(DateBuilderMath.isSafe) else {
                return "pattern.months.monthOffsets: 1 to 64 offsets, each within ±\(limit)"
            }
            guard (1...64).contains(days.count) else { return "pattern.months.days: 1 to 64 day selectors" }
            guard DateBuilderMath.isSafe(dayOffset) else { return "pattern.months.dayOffset: within ±\(limit)" }
        case .interval(let start, let seconds):
            guard start.timeIntervalSince1970.isFinite, abs(start.timeIntervalSince1970) < 1e12 else {
                return "pattern.interval.start: an instant within ±10^12 seconds of 1970"
            }
            guard (1...(limit * 3600)).contains(seconds) else {
                return "pattern.interval.seconds: 1 to \(limit * 3600)"
            }
        }
        return nil
    }

    private func nextInterval(after: Date, start: Date, seconds: Int, zone: Zone) -> Date? {
        var k = 0
        if after >= start {
            let periods = (after.timeIntervalSince(start) / Double(seconds)).rounded(.down)
            guard periods < 1e12 else { return nil }
            k = Int(periods)
        }
        if let count, count < 1_000_000_000_000 { guard k < count else { return nil } }
        var candidate = start.addingTimeInterval(Double(k) * Double(seconds))
        // Floating-point division may land one period early; step until strictly after.
        for _ in 0..<3 where candidate <= after {
            k += 1
            candidate = start.addingTimeInterval(Double(k) * Double(seconds))
        }
        guard candidate > after else { return nil }
        if let count, k >= count { return nil }
        if let until, WallClock.localDateTime(for: candidate, in: zone) > until { return nil }
        return candidate
    }

    /// Calls `body` with each scheduled local date-time on or after local day `fromDay`, in order,
    /// until it returns true, the rule ends, or the search bound is reached. Starts at the right
    /// period directly (no walking from the rule's start). Each period, day selector and call of `body`
    /// (a wall-clock conversion) is taken from `budget`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the budget ran out first.
    func forEachLocalOccurrence(
        fromDay: Int, budget: inout SearchBudget, _ body: (LocalDateTime) -> Bool
    ) throws(SearchBudgetExhausted) {
        guard isWellFormed else { return }
        var lastDay = Int.min
        let fromDay = max(fromDay, from?.daysSinceEpoch ?? fromDay)
        func visit(_ day: Int, _ budget: inout SearchBudget) throws(SearchBudgetExhausted) -> Bool {  // true: stop
            guard day >= fromDay, day > lastDay else { return false }
            guard DateBuilderMath.isSafeDay(day), let seconds = time.secondsIntoDay(onDay: day) else { return true }
            lastDay = day
            let local = LocalDateTime(daysSinceEpoch: day, secondsIntoDay: seconds)
            if let until, local > until { return true }
            if let from, local < from { return false }
            try budget.spend(SearchBudget.wallClockCost)
            return body(local)
        }
        switch pattern {
        case .days(let start, let stride, let offsets):
            let sorted = offsets.sorted()
            let last = sorted.last ?? 0
            var k = max(0, DateBuilderMath.floorDiv(fromDay - start - last, stride))
            for _ in 0..<DateRule.periodSlack {
                if let count, k >= count { return }
                try budget.spend(sorted.count)
                for offset in sorted where try visit(start + k * stride + offset, &budget) { return }
                k += 1
            }
        case .months(let start, let stride, let monthOffsets, let selectors, let dayOffset):
            let latestMonthOffset = monthOffsets.max() ?? 0
            let margin = abs(dayOffset) / 28 + 2
            let fromMonth = DateBuilderMath.monthIndex(ofDay: max(fromDay, DateRule.earliestDay))
            var k = max(0, DateBuilderMath.floorDiv(fromMonth - margin - start - latestMonthOffset, stride))
            let cycle = DateRule.monthsInCycle / DateBuilderMath.gcd(stride, DateRule.monthsInCycle)
            for _ in 0..<(cycle + DateRule.periodSlack) {
                if let count, k >= count { return }
                try budget.spend(1 + monthOffsets.count * selectors.count)
                var days: [Int] = []
                for monthOffset in monthOffsets {
                    let month = start + k * stride + monthOffset
                    guard DateBuilder.yearRange.contains(DateBuilderMath.floorDiv(month, 12)) else { return }
                    for selector in selectors {
                        if let day = selector.day(inMonth: month) { days.append(day + dayOffset) }
                    }
                }
                for day in days.sorted() where try visit(day, &budget) { return }
                k += 1
            }
        case .interval:
            return
        }
    }
}
