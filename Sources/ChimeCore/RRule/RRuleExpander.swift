/// Lazily yields one rule's occurrences in order: a port of dateutil's `rrule._iter`, plus three shortcuts
/// that skip work dateutil does one step at a time without changing what comes out:
///
/// 1. ``fastForward(to:)`` starts from the period that contains a target time instead of DTSTART (only
///    without COUNT, which counts from the start).
/// 2. DAILY and finer rules jump over days that no BYxxx day filter lets through (month by month where
///    BYMONTH excludes the month), landing on exactly the candidate dateutil would reach next.
/// 3. A rule that produces nothing for a whole calendar cycle never will: the Gregorian calendar repeats
///    every 400 years (146 097 days, a whole number of weeks), so a period's candidates depend only on its
///    position in that cycle, and the periods visited repeat after lcm(INTERVAL × period, 400 years).
///    A streak of empty periods that long ends the iteration (see ``streakLimit``).
struct RRuleExpander: Sendable {
    let rule: RRuleCompiled
    private var info: RRuleYearInfo
    private var year: Int
    private var month: Int
    private var day: Int
    private var hour: Int
    private var minute: Int
    private var second: Int
    private var weekday: Int
    private var timeset: [Int]
    private var countLeft: Int?
    private(set) var finished = false
    private var buffer: [Int] = []
    private var bufferIndex = 0
    private var kept: [Int] = []
    private var streakStart: Int
    private let streakLimit: Int
    /// Work done so far, in ``SearchBudget`` steps, and the most it may do: past it the expander stops
    /// with `exhausted` set instead of going on.
    private(set) var stepsTaken = 0
    var stepLimit = SearchBudget.stepsPerSearch
    private(set) var exhausted = false
    /// The times of day an HOURLY/MINUTELY/SECONDLY rule's stepping accepts, in its unit (minutes for
    /// MINUTELY, seconds for SECONDLY), sorted; made when first needed.
    private var allowedTimes: [Int]?

    static let maxYear = 9999

    init(rule: RRuleCompiled) {
        self.rule = rule
        let start = rule.dtstart
        year = start.year
        month = start.month
        day = start.day
        hour = start.hour
        minute = start.minute
        second = start.second
        weekday = start.isoWeekday - 1
        countLeft = rule.count
        info = RRuleYearInfo(rule: rule)
        info.rebuild(year: year, month: month)
        timeset = rule.timeset
        streakLimit = RRuleExpander.cycleLength(freq: rule.freq, interval: rule.interval)
        streakStart = 0
        streakStart = position
        if rule.freq >= 4 {
            let startsOnAllowedTime =
                !((rule.byhour.map { !$0.contains(start.hour) } ?? false)
                || (rule.freq >= 5 && (rule.byminute.map { !$0.contains(start.minute) } ?? false))
                || (rule.freq >= 6 && (rule.bysecond.map { !$0.contains(start.second) } ?? false)))
            timeset = startsOnAllowedTime ? makeTimeset() : []
        }
        if rule.provablyEmpty { finished = true }
    }

    /// Cheap checks that prove a rule can never fire, so the common impossible rules (February 30, BYSETPOS
    /// beyond what a period can hold) are answered without scanning a calendar cycle. Each check only uses
    /// facts every candidate must satisfy, so it never rejects a rule that can fire.
    static func provablyEmpty(_ rule: RRuleCompiled, timesPerDay: Int) -> Bool {
        // BYSETPOS picks among at most (days a period can keep) × (times per day) candidates.
        if !rule.bysetpos.isEmpty {
            var days = [366, 31, 7, 1, 1, 1, 1][rule.freq]
            if let weekdays = rule.byweekdayMask {
                days = min(days, weekdays.nonzeroBitCount * [53, 5, 1, 1, 1, 1, 1][rule.freq])
            }
            if rule.hasMonthDay {
                let values = rule.bymonthdayMask.nonzeroBitCount + rule.bynmonthdayMask.nonzeroBitCount
                days = min(days, values * (rule.freq == 0 ? 12 : 1))
            }
            if let yearDays = rule.byyearday { days = min(days, yearDays.count) }
            if let ordinals = rule.bynweekday, rule.byweekdayMask == nil {
                days = min(days, ordinals.count * (rule.freq == 0 ? (rule.bymonth?.count ?? 1) : 1))
            }
            let most = days * timesPerDay
            if !rule.bysetpos.contains(where: { $0 >= -most && $0 <= most }) { return true }
        }
        let months = rule.bymonth ?? Array(1...12)
        func longest(_ m: Int) -> Int { m == 2 ? 29 : LocalDateTime.daysInMonth(year: 2001, month: m) }
        // A BYMONTHDAY that exists in one of the allowed months.
        if rule.hasMonthDay {
            let fits = months.contains { m in
                (1...longest(m)).contains { d in
                    rule.bymonthdayMask & (1 << UInt64(d)) != 0 || rule.bynmonthdayMask & (1 << UInt64(d)) != 0
                }
            }
            if !fits { return true }
        }
        // A BYYEARDAY that falls in one of the allowed months, in a common or a leap year.
        if let yearDays = rule.byyearday, rule.bymonth != nil {
            let fits = [RRuleYearInfo.monthOf365, RRuleYearInfo.monthOf366].contains { table in
                let length = table.count - 7
                return yearDays.contains { yd in
                    let i = yd > 0 ? yd - 1 : length + yd
                    return i >= 0 && i < length && months.contains(table[i])
                }
            }
            if !fits { return true }
        }
        return false
    }

    // MARK: - Pulling occurrences

    /// The next occurrence as seconds since 1970 of its wall-clock time, or nil when the rule is exhausted.
    mutating func nextKey() -> Int? {
        while bufferIndex >= buffer.count {
            if finished { return nil }
            buffer.removeAll(keepingCapacity: true)
            bufferIndex = 0
            guard spend(SearchBudget.periodCost) else { return nil }
            step()
        }
        let key = buffer[bufferIndex]
        bufferIndex += 1
        return key
    }

    /// Counts `steps` of work; false (and the expander stopped, `exhausted`) when that goes past the limit.
    private mutating func spend(_ steps: Int) -> Bool {
        stepsTaken += steps
        guard stepsTaken > stepLimit else { return true }
        exhausted = true
        finished = true
        return false
    }

    /// One iteration of dateutil's main loop: (skip filtered days,) expand the current period, advance.
    private mutating func step() {
        if rule.freq >= 3 && rule.hasDayFilter && info.isFiltered(currentDayIndex) {
            skipFilteredDays()
        } else {
            expandPeriod()
            if finished { return }
            if !buffer.isEmpty { streakStart = position }
            if rule.freq == 2 && kept.isEmpty && rule.hasDayFilter {
                skipEmptyWeeks()
            } else {
                advance()
            }
        }
        if !finished && position - streakStart > streakLimit { finished = true }
    }

    // MARK: - Period expansion

    private var currentDayIndex: Int { LocalDateTime.days(fromCivil: year, month, day) - info.yearOrdinal }

    private mutating func expandPeriod() {
        let start: Int
        let end: Int
        switch rule.freq {
        case 0:
            (start, end) = (0, info.yearLength)
        case 1:
            (start, end) = (info.monthStart[month - 1], info.monthStart[month])
        case 2:
            var i = currentDayIndex
            start = i
            for _ in 0..<7 {
                i += 1
                if info.weekday(i) == rule.wkst { break }
            }
            end = i
        default:
            start = currentDayIndex
            end = start + 1
        }
        kept.removeAll(keepingCapacity: true)
        if rule.freq <= 1, let candidates = info.candidateDays {
            // Only the days of the rule's sparsest filter can pass: the same result as checking every day.
            guard spend(candidates.count) else { return }
            for i in candidates where i >= start && i < end && !info.isFiltered(i) { kept.append(i) }
        } else if rule.freq == 0, let months = rule.bymonth {
            // Days outside BYMONTH are filtered anyway; checking only the allowed months is the same result.
            for m in months {
                guard spend(info.monthStart[m] - info.monthStart[m - 1]) else { return }
                for i in info.monthStart[m - 1]..<info.monthStart[m] where !info.isFiltered(i) { kept.append(i) }
            }
        } else if rule.hasDayFilter || info.nthWeekdayMask != nil {
            guard spend(end - start) else { return }
            for i in start..<end where !info.isFiltered(i) { kept.append(i) }
        } else {
            kept.append(contentsOf: start..<end)
        }
        let base = info.yearOrdinal
        if !rule.bysetpos.isEmpty && !timeset.isEmpty {
            var chosen: [Int] = []
            let n = timeset.count
            for pos in rule.bysetpos {
                let dayPos = pos < 0 ? rrFloorDiv(pos, n) : rrFloorDiv(pos - 1, n)
                let timePos = pos < 0 ? rrFloorMod(pos, n) : rrFloorMod(pos - 1, n)
                let index = dayPos < 0 ? kept.count + dayPos : dayPos
                guard index >= 0 && index < kept.count else { continue }
                let key = (base + kept[index]) * 86_400 + timeset[timePos]
                if !chosen.contains(key) { chosen.append(key) }
            }
            chosen.sort()
            for key in chosen where !emit(key) { return }
        } else {
            for i in kept {
                let dayKey = (base + i) * 86_400
                for t in timeset where !emit(dayKey + t) { return }
            }
        }
    }

    /// dateutil's per-candidate checks: stop past UNTIL, drop candidates before DTSTART, count.
    /// Returns false when the iteration has ended.
    private mutating func emit(_ key: Int) -> Bool {
        // Every candidate is work, also one before DTSTART: a period holds up to 366 × 86,400 of them.
        guard spend(1) else { return false }
        if let until = rule.untilKey, key > until {
            finished = true
            return false
        }
        guard key >= rule.dtstartKey else { return true }
        if let left = countLeft {
            if left <= 0 {
                finished = true
                return false
            }
            countLeft = left - 1
        }
        if key >= RRuleExpander.endKey {
            finished = true
            return false
        }
        buffer.append(key)
        return true
    }

    /// The first instant of year 10000: dateutil's `datetime` cannot go there.
    static let endKey = LocalDateTime.days(fromCivil: maxYear + 1, 1, 1) * 86_400

    // MARK: - Advancing (dateutil's "Handle frequency and interval")

    private mutating func advance() {
        var fixday = false
        switch rule.freq {
        case 0:
            year += rule.interval
            if year > RRuleExpander.maxYear {
                finished = true
                return
            }
            info.rebuild(year: year, month: month)
        case 1:
            month += rule.interval
            if month > 12 {
                let div = rrFloorDiv(month, 12)
                let mod = rrFloorMod(month, 12)
                month = mod
                year += div
                if month == 0 {
                    month = 12
                    year -= 1
                }
                if year > RRuleExpander.maxYear {
                    finished = true
                    return
                }
            }
            info.rebuild(year: year, month: month)
        case 2:
            if rule.wkst > weekday {
                day += -(weekday + 1 + (6 - rule.wkst)) + rule.interval * 7
            } else {
                day += -(weekday - rule.wkst) + rule.interval * 7
            }
            weekday = rule.wkst
            fixday = true
        case 3:
            day += rule.interval
            fixday = true
        default:
            fixday = advanceTime()
            if finished { return }
        }
        if fixday { fixDay() }
    }

    /// Carries an overflowing `day` into the following months, as dateutil does after DAILY/WEEKLY steps.
    private mutating func fixDay() {
        guard day > 28 else { return }
        guard day > LocalDateTime.daysInMonth(year: year, month: month) else { return }
        // dateutil carries month by month; a step of a million seconds can carry thousands of months, so
        // the date is computed at once (the same date).
        let (y, m, d) = LocalDateTime.civil(fromDays: LocalDateTime.days(fromCivil: year, month, 1) + day - 1)
        if y > RRuleExpander.maxYear {
            finished = true
            return
        }
        (year, month, day) = (y, m, d)
        info.rebuild(year: year, month: month)
    }

    /// dateutil's HOURLY/MINUTELY/SECONDLY step (its `__mod_distance` and the "valid" loops). The
    /// `filtered` jump never happens here because filtered days are skipped before expansion.
    /// Returns whether `day` changed.
    private mutating func advanceTime() -> Bool {
        let interval = rule.interval
        var dayChanged = false
        switch rule.freq {
        case 4:
            var ndays: Int
            if let hours = rule.byhour {
                guard let (d, h) = modDistance(hour, hours, base: 24) else {
                    finished = true
                    return false
                }
                (ndays, hour) = (d, h)
            } else {
                ndays = rrFloorDiv(hour + interval, 24)
                hour = rrFloorMod(hour + interval, 24)
            }
            if ndays != 0 {
                day += ndays
                dayChanged = true
            }
        case 5:
            let repeats = 1440 / rrGCD(interval, 1440)
            var valid = false
            var unreachable = false
            for _ in 0..<min(repeats, Self.plainTimeSteps) {
                _ = spend(1)
                var nhours: Int
                if let minutes = rule.byminute {
                    guard let (h, m) = modDistance(minute, minutes, base: 60) else {
                        unreachable = true
                        break
                    }
                    (nhours, minute) = (h, m)
                } else {
                    nhours = rrFloorDiv(minute + interval, 60)
                    minute = rrFloorMod(minute + interval, 60)
                }
                let div = rrFloorDiv(hour + nhours, 24)
                hour = rrFloorMod(hour + nhours, 24)
                if div != 0 {
                    day += div
                    dayChanged = true
                }
                if rule.byhour.map({ $0.contains(hour) }) ?? true {
                    valid = true
                    break
                }
            }
            if !valid && !unreachable && repeats > Self.plainTimeSteps,
                let (days, position) = nextAllowedTime(after: hour * 60 + minute, unitsPerDay: 1440)
            {
                (hour, minute) = (position / 60, position % 60)
                if days != 0 {
                    day += days
                    dayChanged = true
                }
                valid = true
            }
            if !valid {
                finished = true
                return false
            }
        default:
            let repeats = 86_400 / rrGCD(interval, 86_400)
            var valid = false
            var unreachable = false
            for _ in 0..<min(repeats, Self.plainTimeSteps) {
                _ = spend(1)
                var nminutes: Int
                if let seconds = rule.bysecond {
                    guard let (m, s) = modDistance(second, seconds, base: 60) else {
                        unreachable = true
                        break
                    }
                    (nminutes, second) = (m, s)
                } else {
                    nminutes = rrFloorDiv(second + interval, 60)
                    second = rrFloorMod(second + interval, 60)
                }
                let div = rrFloorDiv(minute + nminutes, 60)
                minute = rrFloorMod(minute + nminutes, 60)
                if div != 0 {
                    hour += div
                    let div2 = rrFloorDiv(hour, 24)
                    hour = rrFloorMod(hour, 24)
                    if div2 != 0 {
                        day += div2
                        dayChanged = true
                    }
                }
                if (rule.byhour.map { $0.contains(hour) } ?? true)
                    && (rule.byminute.map { $0.contains(minute) } ?? true)
                    && (rule.bysecond.map { $0.contains(second) } ?? true)
                {
                    valid = true
                    break
                }
            }
            if !valid && !unreachable && repeats > Self.plainTimeSteps,
                let (days, position) = nextAllowedTime(
                    after: hour * 3600 + minute * 60 + second, unitsPerDay: 86_400)
            {
                (hour, minute, second) = (position / 3600, position / 60 % 60, position % 60)
                if days != 0 {
                    day += days
                    dayChanged = true
                }
                valid = true
            }
            if !valid {
                finished = true
                return false
            }
        }
        timeset = makeTimeset()
        return dayChanged
    }

    /// How many of dateutil's MINUTELY/SECONDLY steps are taken one by one before the next allowed time is
    /// computed instead (a dense rule finds it within a few; a sparse one would take up to 86,400).
    static let plainTimeSteps = 64

    /// The next element of the progression (a time of day `position` plus k·INTERVAL units, k ≥ 1) whose
    /// time of day BYHOUR/BYMINUTE/BYSECOND allow: the same element dateutil's stepping reaches, found by
    /// solving k·INTERVAL ≡ allowed − position (mod units per day) for each allowed time instead of
    /// stepping. Returns the days carried and the new position, or nil when no allowed time is reachable.
    private mutating func nextAllowedTime(after position: Int, unitsPerDay n: Int) -> (days: Int, position: Int)? {
        if allowedTimes == nil {
            var times: [Int] = []
            for h in rule.byhour ?? Array(0...23) {
                for m in rule.byminute ?? Array(0...59) {
                    if n == 1440 {
                        times.append(h * 60 + m)
                    } else {
                        for s in rule.bysecond ?? Array(0...59) { times.append(h * 3600 + m * 60 + s) }
                    }
                }
            }
            allowedTimes = times.sorted()
            _ = spend(times.count)
        }
        guard let times = allowedTimes, !exhausted else { return nil }
        let g = rrGCD(rule.interval, n)
        let period = n / g
        // INTERVAL/g is invertible modulo n/g; k for an allowed time t is ((t − position)/g)·inverse mod n/g.
        let inverse = Self.modularInverse(rrFloorMod(rule.interval / g, period), modulo: period)
        var best: Int?
        guard spend(times.count) else { return nil }
        for t in times {
            let difference = t - position
            guard rrFloorMod(difference, g) == 0 else { continue }
            var k = rrFloorMod(rrFloorMod(difference / g, period) * inverse, period)
            if k == 0 { k = period }
            if best.map({ k < $0 }) ?? true { best = k }
        }
        guard let k = best else { return nil }
        let total = position + k * rule.interval
        return (rrFloorDiv(total, n), rrFloorMod(total, n))
    }

    /// The inverse of `a` modulo `m` (gcd(a, m) = 1; 0 when m is 1).
    static func modularInverse(_ a: Int, modulo m: Int) -> Int {
        guard m > 1 else { return 0 }
        var (oldR, r) = (a, m)
        var (oldS, s) = (1, 0)
        while r != 0 {
            let q = oldR / r
            (oldR, r) = (r, oldR - q * r)
            (oldS, s) = (s, oldS - q * s)
        }
        return rrFloorMod(oldS, m)
    }

    /// dateutil's `__mod_distance`: steps of INTERVAL from `value` until one lands in `allowed` (mod `base`);
    /// returns the carry into the next unit and the new value.
    /// Each of its steps is work (up to `base` of them).
    private mutating func modDistance(_ value: Int, _ allowed: [Int], base: Int) -> (Int, Int)? {
        var accumulator = 0
        var v = value
        for step in 1...base {
            accumulator += rrFloorDiv(v + rule.interval, base)
            v = rrFloorMod(v + rule.interval, base)
            if allowed.contains(v) {
                _ = spend(step)
                return (accumulator, v)
            }
        }
        _ = spend(base)
        return nil
    }

    /// The candidate times of the current HOURLY/MINUTELY/SECONDLY period (dateutil's h/m/stimeset).
    private func makeTimeset() -> [Int] {
        switch rule.freq {
        case 4:
            var times: [Int] = []
            for m in rule.byminute ?? [minute] {
                for s in rule.bysecond ?? [second] { times.append(hour * 3600 + m * 60 + s) }
            }
            return times.sorted()
        case 5:
            return (rule.bysecond ?? [second]).map { hour * 3600 + minute * 60 + $0 }.sorted()
        default:
            return [hour * 3600 + minute * 60 + second]
        }
    }

    // MARK: - Shortcuts

    /// Where the iteration stands, in the unit the cycle length is measured in (years, months, days or
    /// seconds).
    private var position: Int {
        switch rule.freq {
        case 0: return year
        case 1: return year * 12 + month - 1
        case 2, 3: return LocalDateTime.days(fromCivil: year, month, day)
        default: return LocalDateTime.days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second
        }
    }

    /// How long (in ``position`` units) a run of periods without occurrences may last before the rule is
    /// known to be exhausted: one full cycle lcm(step, 400 years) plus one step. Capped at 10 000 years,
    /// beyond which the year-9999 limit ends the iteration anyway.
    static func cycleLength(freq: Int, interval: Int) -> Int {
        func lcm(_ a: Int, _ b: Int) -> Int {
            let (product, overflow) = (a / rrGCD(a, b)).multipliedReportingOverflow(by: b)
            return overflow ? Int.max / 4 : product
        }
        let cycle: Int
        let cap: Int
        switch freq {
        case 0:
            (cycle, cap) = (lcm(interval, 400), 10_000)
        case 1:
            (cycle, cap) = (lcm(interval, 4800), 120_000)
        case 2:
            (cycle, cap) = (lcm(7 * interval, 146_097), 3_652_500)
        case 3:
            (cycle, cap) = (lcm(interval, 146_097), 3_652_500)
        default:
            let unit = freq == 4 ? 3600 : (freq == 5 ? 60 : 1)
            (cycle, cap) = (lcm(interval * unit, 146_097 * 86_400), 3_652_500 * 86_400)
        }
        let unit = freq == 4 ? 3600 : (freq == 5 ? 60 : 1)
        let step = freq == 2 ? 7 * interval : (freq >= 4 ? interval * unit : interval)
        return min(cycle, cap) + step + 1
    }

    /// Moves a DAILY or finer rule off a day its BYxxx parts exclude, to the candidate dateutil would expand
    /// next (see the type's documentation).
    private mutating func skipFilteredDays() {
        let today = LocalDateTime.days(fromCivil: year, month, day)
        if rule.freq == 3 {
            guard let next = nextPassingDay(after: today, step: rule.interval) else {
                finished = true
                return
            }
            setDay(next)
        } else if (rule.interval * Self.unitSeconds(rule.freq)) % 86_400 == 0 {
            // A whole number of days per step: every element is at this time of day, every few days, like a
            // DAILY rule's, so the next passing day among those is the next candidate.
            let days = rule.interval * Self.unitSeconds(rule.freq) / 86_400
            guard let next = nextPassingDay(after: today, step: days) else {
                finished = true
                return
            }
            setDay(next)
        } else {
            guard let next = nextPassingDay(after: today, step: 1) else {
                finished = true
                return
            }
            if !jumpToFirstCandidate(atOrAfter: next * 86_400) {
                // Cannot happen (the next passing day is ahead of the current candidate); take dateutil's
                // plain step so the loop still moves forward.
                if advanceTime() { fixDay() }
            }
        }
    }

    /// Seconds in one unit of an HOURLY, MINUTELY or SECONDLY rule's INTERVAL.
    static func unitSeconds(_ freq: Int) -> Int { freq == 4 ? 3600 : (freq == 5 ? 60 : 1) }

    /// After a WEEKLY period in which no day passed the filter, moves to the first period (aligned to
    /// INTERVAL weeks from DTSTART's week) that contains the next day that does pass: the periods in between
    /// have no candidates, so dateutil's one-by-one steps through them produce nothing.
    private mutating func skipEmptyWeeks() {
        let today = LocalDateTime.days(fromCivil: year, month, day)
        var periodEnd = today
        repeat { periodEnd += 1 } while rrFloorMod(info.weekday(periodEnd - info.yearOrdinal), 7) != rule.wkst
        guard let next = nextPassingDay(after: periodEnd - 1, step: 1) else {
            finished = true
            return
        }
        let start = rule.dtstart
        let weekStart = start.daysSinceEpoch - rrFloorMod(start.isoWeekday - 1 - rule.wkst, 7)
        let span = 7 * rule.interval
        var target = weekStart + rrFloorDiv(next - weekStart, span) * span
        if next >= target + 7 { target += span }
        guard target > today else {
            advance()
            return
        }
        if LocalDateTime.civil(fromDays: target).year > RRuleExpander.maxYear {
            finished = true
            return
        }
        setDay(target)
        weekday = rule.wkst
    }

    /// The first day `today + k·step` (k ≥ 1) that the day filter lets through, or nil when there is none
    /// within a full 400-year cycle or before year 10000 (or the budget ran out: `exhausted`). Where
    /// BYMONTH, BYMONTHDAY or BYYEARDAY leave few days a year, only those are looked at, so a rule that
    /// fires on February 29 when it is a Monday costs a step or two a year, not one a day.
    private mutating func nextPassingDay(after today: Int, step: Int) -> Int? {
        let limit = today + RRuleExpander.cycleLength(freq: 3, interval: step)
        let endDay = RRuleExpander.endKey / 86_400
        var d = today + step
        while d <= limit && d < endDay {
            guard spend(1) else { return nil }
            if d < info.yearOrdinal || d >= info.yearOrdinal + info.yearLength {
                let (y, m, _) = LocalDateTime.civil(fromDays: d)
                info.rebuild(year: y, month: m)
            }
            let i = d - info.yearOrdinal
            if let candidates = info.yearCandidates, candidates.count * step <= info.yearLength {
                // The year's candidates from day i on, keeping those a whole number of steps away.
                var index = Self.lowerBound(of: i, in: candidates)
                guard spend(candidates.count - index) else { return nil }
                while index < candidates.count {
                    let c = candidates[index]
                    index += 1
                    if (c - i) % step == 0 && !info.isFiltered(c) {
                        let day = info.yearOrdinal + c
                        return day <= limit && day < endDay ? day : nil
                    }
                }
                let nextYear = info.yearOrdinal + info.yearLength
                d += (nextYear - d + step - 1) / step * step
                continue
            }
            let m = info.monthOf[i]
            if rule.bymonth != nil && rule.bymonthMask & (1 << UInt16(m)) == 0 {
                var (ny, nm) = (info.lastYear, m)
                repeat {
                    nm += 1
                    if nm == 13 { (ny, nm) = (ny + 1, 1) }
                } while rule.bymonthMask & (1 << UInt16(nm)) == 0
                let first = LocalDateTime.days(fromCivil: ny, nm, 1)
                d = today + (first - today + step - 1) / step * step
                continue
            }
            if !info.isFiltered(i) { return d }
            d += step
        }
        return nil
    }

    /// The index of the first element of sorted `values` that is at least `value`.
    static func lowerBound(of value: Int, in values: [Int]) -> Int {
        var (low, high) = (0, values.count)
        while low < high {
            let middle = (low + high) / 2
            if values[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func setDay(_ days: Int) {
        let (y, m, d) = LocalDateTime.civil(fromDays: days)
        (year, month, day) = (y, m, d)
        info.rebuild(year: y, month: m)
    }

    /// Puts an HOURLY/MINUTELY/SECONDLY rule on the first candidate of its progression
    /// (DTSTART + k·INTERVAL units) at or after `key` whose time dateutil's stepping accepts, by standing on
    /// the last progression element before `key` and taking one ordinary dateutil step from there.
    @discardableResult
    private mutating func jumpToFirstCandidate(atOrAfter key: Int) -> Bool {
        let unit = rule.freq == 4 ? 3600 : (rule.freq == 5 ? 60 : 1)
        let origin = rrFloorDiv(rule.dtstart.secondsSinceEpoch, unit)
        let target = rrFloorDiv(key, unit)
        let k0 = rrFloorDiv(target - origin + rule.interval - 1, rule.interval)
        let element = origin + (k0 - 1) * rule.interval
        guard k0 >= 1, element >= rrFloorDiv(position, unit) else { return false }
        let seconds = element * unit
        let days = rrFloorDiv(seconds, 86_400)
        let inDay = seconds - days * 86_400
        setDay(days)
        hour = inDay / 3600
        if rule.freq >= 5 { minute = inDay / 60 % 60 }
        if rule.freq >= 6 { second = inDay % 60 }
        if advanceTime() { fixDay() }
        info.rebuild(year: year, month: month)
        return true
    }

    /// Starts the iteration at the period containing `key` (seconds since 1970 of a wall-clock time) instead
    /// of at DTSTART. Occurrences before `key` may still come out; callers drop them. Does nothing for rules
    /// with COUNT, whose occurrences are numbered from DTSTART.
    mutating func fastForward(to key: Int) {
        guard rule.count == nil, !finished, key > rule.dtstartKey else { return }
        let target = LocalDateTime(daysSinceEpoch: rrFloorDiv(key, 86_400), secondsIntoDay: rrFloorMod(key, 86_400))
        let start = rule.dtstart
        let interval = rule.interval
        switch rule.freq {
        case 0:
            let k = rrFloorDiv(target.year - start.year, interval)
            guard k >= 1 else { return }
            year = start.year + k * interval
            if year > RRuleExpander.maxYear {
                finished = true
                return
            }
            info.rebuild(year: year, month: month)
        case 1:
            let origin = start.year * 12 + start.month - 1
            let k = rrFloorDiv(target.year * 12 + target.month - 1 - origin, interval)
            guard k >= 1 else { return }
            let index = origin + k * interval
            year = rrFloorDiv(index, 12)
            month = rrFloorMod(index, 12) + 1
            if year > RRuleExpander.maxYear {
                finished = true
                return
            }
            info.rebuild(year: year, month: month)
        case 2:
            let weekStart = start.daysSinceEpoch - rrFloorMod(start.isoWeekday - 1 - rule.wkst, 7)
            let k = rrFloorDiv(target.daysSinceEpoch - weekStart, 7 * interval)
            guard k >= 1 else { return }
            setDay(weekStart + k * 7 * interval)
            weekday = rule.wkst
        case 3:
            let k = rrFloorDiv(target.daysSinceEpoch - start.daysSinceEpoch, interval)
            guard k >= 1 else { return }
            setDay(start.daysSinceEpoch + k * interval)
        default:
            guard jumpToFirstCandidate(atOrAfter: key) else { return }
        }
        if year > RRuleExpander.maxYear { finished = true }
        streakStart = position
    }
}
