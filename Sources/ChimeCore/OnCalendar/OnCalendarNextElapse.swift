import Foundation

/// What systemd's next-elapse search concluded.
enum OnCalendarSearchOutcome: Equatable, Sendable {
    /// The next elapse, in microseconds since 1970 (UTC).
    case elapse(Int)
    /// The expression will not elapse again (systemd's -ENOENT: "Next elapse: never").
    case never
    /// systemd's search failed: its safety valve tripped (1000 steps without an answer, -EDEADLK) or the
    /// start or result was out of range (-EINVAL). systemd then reports an error instead of an elapse.
    case gaveUp
}

extension CalendarSpec {
    static let maximumYear = 2199
    static let minimumYear = 1970
    /// systemd's MAX_CALENDAR_ITERATIONS.
    static let maximumSearchSteps = 1000
    /// systemd's USEC_TIMESTAMP_FORMATTABLE_MAX (9999-12-30 23:59:59.999999 UTC).
    static let latestSearchableMicrosecond = 253_402_214_399_999_999

    /// The first elapse strictly after `after`, or nil when there is none.
    ///
    /// The expression's own zone (`UTC`, `Europe/Berlin`, …) wins; otherwise it is read in
    /// `defaultTimeZone`, which should be the system zone (systemd uses the zone of the process).
    /// Instants are handled with microsecond precision, like systemd's `usec_t`.
    public func nextElapse(after: Date, defaultTimeZone: Zone) -> Date? {
        var budget = SearchBudget()
        return try? nextElapse(after: after, defaultTimeZone: defaultTimeZone, budget: &budget)
    }

    /// The first elapse strictly after `after`, or nil when there is none, its work taken from `budget`:
    /// each step of systemd's search (at most ``maximumSearchSteps``, its own limit) costs
    /// ``stepCost`` steps, for the zone conversions it makes.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when `budget` had less left than the search took.
    public func nextElapse(
        after: Date, defaultTimeZone: Zone, budget: inout SearchBudget
    ) throws(SearchBudgetExhausted) -> Date? {
        var steps = 0
        let outcome = nextElapseOutcome(
            afterMicrosecond: Self.microseconds(of: after), defaultTimeZone: defaultTimeZone, steps: &steps)
        try budget.spend(steps * Self.stepCost)
        switch outcome {
        case .elapse(let usec): return Self.date(ofMicroseconds: usec)
        case .never, .gaveUp: return nil
        }
    }

    /// Budget steps one step of systemd's search costs: it settles six fields, each with a conversion
    /// between wall-clock time and instants.
    static let stepCost = 20

    /// Up to `count` successive elapses after `after` (each search starting from the previous answer, as
    /// `systemd-analyze calendar --iterations=N` does); shorter when the expression stops elapsing.
    public func elapses(after: Date, defaultTimeZone: Zone, count: Int) -> [Date] {
        var out: [Date] = []
        var cursor = Self.microseconds(of: after)
        while out.count < count {
            guard case .elapse(let usec) = nextElapseOutcome(afterMicrosecond: cursor, defaultTimeZone: defaultTimeZone)
            else { break }
            out.append(Self.date(ofMicroseconds: usec))
            cursor = usec
        }
        return out
    }

    /// Whole microseconds since 1970, rounding to nearest so that a `Date` built from an elapse maps back
    /// to exactly that elapse despite Double's representation.
    static func microseconds(of date: Date) -> Int {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        guard value.isFinite else { return value > 0 ? latestSearchableMicrosecond + 1 : -1 }
        if value >= Double(latestSearchableMicrosecond) { return latestSearchableMicrosecond + 1 }
        if value <= -1 { return -1 }
        return Int(value)
    }

    static func date(ofMicroseconds usec: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(usec / 1_000_000) + TimeInterval(usec % 1_000_000) / 1_000_000)
    }

    /// systemd's calendar_spec_next_usec(): `after` is microseconds since 1970 and must be >= -1 (an
    /// instant before 1970 is searched from 1970-01-01T00:00:00Z, the earliest systemd can express).
    func nextElapseOutcome(afterMicrosecond after: Int, defaultTimeZone: Zone) -> OnCalendarSearchOutcome {
        var steps = 0
        return nextElapseOutcome(afterMicrosecond: after, defaultTimeZone: defaultTimeZone, steps: &steps)
    }

    /// The same, counting in `steps` the steps of the search it took.
    func nextElapseOutcome(afterMicrosecond after: Int, defaultTimeZone: Zone, steps: inout Int)
        -> OnCalendarSearchOutcome
    {
        steps += 1
        if after > Self.latestSearchableMicrosecond { return .gaveUp }
        let usec = max(after, -1) + 1
        let zone: Zone?
        if isUTC {
            zone = nil
        } else if let timeZoneName {
            guard let named = OnCalendarTimeZoneNames.zone(named: timeZoneName, systemZone: defaultTimeZone) else {
                return .gaveUp
            }
            zone = named
        } else {
            zone = defaultTimeZone
        }
        var arithmetic = OnCalendarZoneArithmetic(zone: zone)
        guard var tm = arithmetic.convert(usec / 1_000_000) else { return .never }
        var tmMicrosecond = usec % 1_000_000
        let outcome = findNext(&tm, &tmMicrosecond, &arithmetic, steps: &steps)
        guard outcome == .elapse(0) else { return outcome }
        let t = arithmetic.makeTime(&tm)
        if t < 0 { return .gaveUp }
        return .elapse(t * 1_000_000 + tmMicrosecond)
    }

    /// Port of systemd's find_next(): settle the fields from the largest down, and whenever a field has to
    /// move, zero the smaller ones and start over from the normalised result. Returns `.elapse(0)` on
    /// success with `tm`/`microsecond` set to the answer.
    private func findNext(
        _ tm: inout OnCalendarBrokenDownTime, _ tmMicrosecond: inout Int, _ z: inout OnCalendarZoneArithmetic,
        steps: inout Int
    ) -> OnCalendarSearchOutcome {
        var c = tm
        var usec = tmMicrosecond
        // Set once the search found nothing later than where it started (a wall-clock time repeated or
        // skipped by a DST change): from then on mktime() decides tm_isdst instead of the expression.
        var invalidateDaylight = false

        func resetBelowDay() {
            c.hour = 0
            c.minute = 0
            c.second = 0
            usec = 0
        }

        for _ in 0..<Self.maximumSearchSteps {
            steps += 1
            _ = z.makeTime(&c)
            if !invalidateDaylight { c.isDaylight = daylightFlag }

            var value = c.year + 1900
            var r = findMatching(year, isDay: false, c, &value, &z)
            c.year = value - 1900
            if r > 0 {
                c.month = 0
                c.dayOfMonth = 1
                resetBelowDay()
            }
            if r < 0 { return .never }
            if withinBounds(&c, &z) <= 0 { return .never }

            value = c.month + 1
            r = findMatching(month, isDay: false, c, &value, &z)
            c.month = value - 1
            if r > 0 {
                c.dayOfMonth = 1
                resetBelowDay()
            }
            if r >= 0 { r = withinBounds(&c, &z) }
            if r < 0 {
                c.year += 1
                c.month = 0
                c.dayOfMonth = 1
                resetBelowDay()
                continue
            }
            if r == 0 { continue }

            value = c.dayOfMonth
            r = findMatching(day, isDay: true, c, &value, &z)
            c.dayOfMonth = value
            if r > 0 { resetBelowDay() }
            if r >= 0 { r = withinBounds(&c, &z) }
            if r < 0 {
                c.month += 1
                c.dayOfMonth = 1
                resetBelowDay()
                continue
            }
            if r == 0 { continue }

            if !matchesWeekday(c, &z) {
                c.dayOfMonth += 1
                resetBelowDay()
                continue
            }

            value = c.hour
            r = findMatching(hour, isDay: false, c, &value, &z)
            c.hour = value
            if r > 0 {
                c.minute = 0
                c.second = 0
                usec = 0
            }
            if r >= 0 { r = withinBounds(&c, &z) }
            if r < 0 {
                c.dayOfMonth += 1
                resetBelowDay()
                continue
            }
            // The hour just set may not exist on a DST change day: retry from the normalised time.
            if r == 0 { continue }

            value = c.minute
            r = findMatching(minute, isDay: false, c, &value, &z)
            c.minute = value
            if r > 0 {
                c.second = 0
                usec = 0
            }
            if r >= 0 { r = withinBounds(&c, &z) }
            if r < 0 {
                c.hour += 1
                c.minute = 0
                c.second = 0
                usec = 0
                continue
            }
            if r == 0 { continue }

            value = c.second * 1_000_000 + usec
            r = findMatching(microsecond, isDay: false, c, &value, &z)
            usec = value % 1_000_000
            c.second = value / 1_000_000
            if r >= 0 { r = withinBounds(&c, &z) }
            if r < 0 {
                c.minute += 1
                c.second = 0
                usec = 0
                continue
            }
            if r == 0 { continue }

            // Stuck at or before the starting wall-clock time: step an hour and let mktime() pick the offset.
            var order = Self.compareFields(tm, c)
            if order == 0 { order = tmMicrosecond < usec + 1 ? -1 : (tmMicrosecond > usec + 1 ? 1 : 0) }
            if order >= 0 {
                invalidateDaylight = true
                c.hour += 1
                continue
            }

            tm = c
            tmMicrosecond = usec
            return .elapse(0)
        }
        return .gaveUp
    }

    /// systemd's tm_compare(): wall-clock fields only, largest first.
    private static func compareFields(_ a: OnCalendarBrokenDownTime, _ b: OnCalendarBrokenDownTime) -> Int {
        let lhs = (a.year, a.month, a.dayOfMonth, a.hour, a.minute, a.second)
        let rhs = (b.year, b.month, b.dayOfMonth, b.hour, b.minute, b.second)
        return lhs < rhs ? -1 : (lhs > rhs ? 1 : 0)
    }

    /// systemd's find_end_of_month(): the day of `tm`'s month that is `day` days from its end (1 = last),
    /// or -1 when that falls outside the month.
    private func endOfMonthDay(_ tm: OnCalendarBrokenDownTime, _ day: Int, _ z: inout OnCalendarZoneArithmetic) -> Int {
        var t = tm
        t.month += 1
        t.dayOfMonth = 1 - day
        if z.makeTime(&t) < 0 || t.month != tm.month { return -1 }
        return t.dayOfMonth
    }

    /// systemd's find_matching_component(): the earliest value >= `value` that the list allows. Returns
    /// 0 when `value` already matches (or the field is `*`), 1 when it moved `value`, -1 when nothing
    /// matches any more in this period.
    private func findMatching(
        _ chain: [OnCalendarComponent]?, isDay: Bool, _ tm: OnCalendarBrokenDownTime, _ value: inout Int,
        _ z: inout OnCalendarZoneArithmetic
    ) -> Int {
        guard let chain, !chain.isEmpty else { return 0 }
        let countsFromEnd = endOfMonth && isDay
        var best = -1
        var bestSet = false
        for c in chain {
            var start = c.start
            var stop = c.stop
            if countsFromEnd {
                start = endOfMonthDay(tm, c.start, &z)
                stop = endOfMonthDay(tm, c.stop, &z)
                if stop > 0 { swap(&start, &stop) }
            }
            if start >= value {
                if !bestSet || start < best {
                    best = start
                    bestSet = true
                }
            } else if c.repetition > 0 {
                let k = start + c.repetition * ((value - start + c.repetition - 1) / c.repetition)
                if (!bestSet || k < best) && (stop < 0 || k <= stop) {
                    best = k
                    bestSet = true
                }
            }
        }
        guard bestSet else { return -1 }
        let moved = value != best
        value = best
        return moved ? 1 : 0
    }

    /// systemd's tm_within_bounds(): 1 when `tm` is a real local time, 0 when `mktime` had to normalise it
    /// forward (then `tm` holds the normalised time), negative when it is past 2199, unrepresentable, or
    /// normalised backwards.
    private func withinBounds(_ tm: inout OnCalendarBrokenDownTime, _ z: inout OnCalendarZoneArithmetic) -> Int {
        if tm.year + 1900 > Self.maximumYear { return -1 }
        var t = tm
        if z.makeTime(&t) < 0 { return -1 }
        var cmp: Int
        func compare(_ a: Int, _ b: Int) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        cmp = compare(t.year, tm.year)
        if cmp != 0 {
            t.month = 0
        } else {
            cmp = compare(t.month, tm.month)
            if cmp != 0 {
                t.dayOfMonth = 1
            } else {
                cmp = compare(t.dayOfMonth, tm.dayOfMonth)
                if cmp != 0 {
                    t.hour = 0
                } else {
                    cmp = compare(t.hour, tm.hour)
                    if cmp != 0 {
                        t.minute = 0
                    } else {
                        cmp = compare(t.minute, tm.minute)
                        if cmp != 0 {
                            t.second = 0
                        } else {
                            cmp = compare(t.second, tm.second)
                        }
                    }
                }
            }
        }
        if cmp < 0 { return -1 }
        if cmp > 0 { tm = t }
        return cmp == 0 ? 1 : 0
    }

    private func matchesWeekday(_ tm: OnCalendarBrokenDownTime, _ z: inout OnCalendarZoneArithmetic) -> Bool {
        if weekdayBits < 0 || weekdayBits >= 127 { return true }
        var t = tm
        if z.makeTime(&t) < 0 { return false }
        let k = t.weekday == 0 ? 6 : t.weekday - 1
        return weekdayBits & (1 << k) != 0
    }
}
