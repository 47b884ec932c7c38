import Foundation

// Rules that surprise, said before they bite: occurrences daylight saving moved or met twice, and rules
// that skip whole periods (`every month on the 31st`).

extension Recurrence {
    /// What daylight saving did to `instant`, an occurrence this rule produced: `02:30 does not exist on
    /// 2027-03-28 (the clocks go forward): moved to 03:00`, `02:30 happens twice on 2026-10-25 (the clocks
    /// go back): this is the first, fired once`; nil when nothing happened to it.
    public func daylightSavingNote(for instant: Date, systemTimeZone: Zone) -> String? {
        let zone: Zone
        let policy: DSTPolicy
        switch self {
        case .rrule(_, let ruleZone):
            guard let resolved = ruleZone.resolve(systemTimeZone: systemTimeZone) else { return nil }
            zone = resolved
            policy = .default
        case .dateRule(let rule):
            if case .interval = rule.pattern { return nil }  // absolute time: no wall clock
            guard let resolved = rule.timeZone.resolve(systemTimeZone: systemTimeZone) else { return nil }
            zone = resolved
            policy = rule.dstPolicy
        case .onCalendar(let spec):
            zone = spec.timeZoneIdentifier.flatMap { Zone(identifier: $0) } ?? systemTimeZone
            policy = .default
        case .shifted:
            // A moved time is not one the rule names; what daylight saving does to it is the offset's.
            return nil
        }
        // Nothing to say far from a change of the zone's offset (the common case, checked cheaply).
        let before = WallClock.utcOffset(at: instant.addingTimeInterval(-86_400), in: zone)
        let after = WallClock.utcOffset(at: instant.addingTimeInterval(86_400), in: zone)
        guard before != after else { return nil }
        let wall = WallClock.localDateTime(for: instant, in: zone)
        if case .overlap(let first, _) = WallClock.resolve(wall, in: zone) {
            let which = instant == first ? "the first" : "the second"
            let fired =
                if case .onCalendar = self { "" } else { policy.overlap == .both ? ", fired at both" : ", fired once" }
            return "\(Self.clock(wall)) happens twice on \(Self.day(wall)) (the clocks go back): this is \(which)"
                + fired
        }
        guard let scheduled = scheduledWallTime(movedTo: wall, zone: zone) else { return nil }
        return "\(Self.clock(scheduled)) does not exist on \(Self.day(scheduled)) (the clocks go forward): "
            + "moved to \(Self.clock(wall))"
    }

    /// The wall-clock time the rule named when `wall` is not one of its times but a daylight-saving gap
    /// moved one there; nil when `wall` is the rule's own time.
    private func scheduledWallTime(movedTo wall: LocalDateTime, zone: Zone) -> LocalDateTime? {
        let dayBefore = wall.adding(seconds: -86_400)
        func inGap(_ local: LocalDateTime) -> Bool {
            if case .gap = WallClock.resolve(local, in: zone) { return true }
            return false
        }
        switch self {
        case .rrule(let set, _):
            if set.nextOccurrence(after: wall, inclusive: true) == wall { return nil }
            var iterator = set.makeIterator(after: dayBefore, inclusive: false)
            var found: LocalDateTime?
            while let local = iterator.next(), local < wall {
                if inGap(local) { found = local }
            }
            return found
        case .dateRule(let rule):
            var found: LocalDateTime?
            var isOwn = false
            var budget = SearchBudget()
            try? rule.forEachLocalOccurrence(fromDay: dayBefore.daysSinceEpoch, budget: &budget) { local in
                if local == wall { isOwn = true }
                if local > wall { return true }
                if local >= dayBefore, local < wall, inGap(local) { found = local }
                return false
            }
            return isOwn ? nil : found
        case .onCalendar, .shifted:
            // systemd never fires at a time the event does not name: a time in a gap is skipped that day.
            return nil
        }
    }

    private static func clock(_ t: LocalDateTime) -> String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return two(t.hour) + ":" + two(t.minute) + (t.second == 0 ? "" : ":" + two(t.second))
    }

    private static func day(_ t: LocalDateTime) -> String { String(t.description.prefix(10)) }
}

// MARK: - Rules that skip periods

extension RRuleSet {
    /// How a monthly or yearly rule skips periods in which it has no day (`every month on the 31st` fires
    /// in 7 months of 12): `fires in 7 of every 12 months: never in February, April, June, September or
    /// November`. Counted over the Gregorian calendar's 400-year cycle from DTSTART; nil when every period
    /// has an occurrence, for other frequencies, and for a monthly rule that names its months.
    public var skippedPeriods: String? {
        guard rules.count == 1, let rule = rules.first, rdates.isEmpty, rule.count == nil, rule.until == nil,
            rule.bySetPos.isEmpty
        else { return nil }
        let monthly: Bool
        switch rule.frequency {
        case .monthly where rule.byMonth.isEmpty: monthly = true
        case .yearly: monthly = false
        default: return nil
        }
        let cycleYears = 400
        let periods = (monthly ? cycleYears * 12 : cycleYears) / rule.interval
        let startMonth = dtstart.year * 12 + dtstart.month - 1
        var hitPeriods = Set<Int>()
        var hitMonths = Set<Int>()
        var yearsHitPerMonth = [Int](repeating: 0, count: 12)
        var allLeapYears = true
        // One whole cycle of periods from DTSTART's (every calendar month comes 400 times), looking at the
        // first occurrence of each period only: a rule may fire many times a period (BYHOUR, BYMINUTE…).
        var from = dtstart
        while let local = nextOccurrence(after: from, inclusive: true) {
            let index = local.year * 12 + local.month - 1
            let period = monthly ? (index - startMonth) / rule.interval : (local.year - dtstart.year) / rule.interval
            guard period < periods else { break }
            hitPeriods.insert(period)
            if hitMonths.insert(index).inserted { yearsHitPerMonth[local.month - 1] += 1 }
            if !LocalDateTime.isLeapYear(local.year) { allLeapYears = false }
            // On to the start of the next period.
            if monthly {
                let next = startMonth + (period + 1) * rule.interval
                from = LocalDateTime(
                    year: DateBuilderMath.floorDiv(next, 12), month: DateBuilderMath.floorMod(next, 12) + 1, day: 1)
            } else {
                from = LocalDateTime(year: dtstart.year + (period + 1) * rule.interval, month: 1, day: 1)
            }
            guard from.year <= RRuleExpander.maxYear else { break }
        }
        guard hitPeriods.count < periods else { return nil }
        guard monthly, rule.interval == 1 else {
            let unit = monthly ? "months" : "years"
            let period = rule.interval == 1 ? String(unit.dropLast()) : "\(rule.interval) \(unit)"
            var (hit, all) = (hitPeriods.count, periods)
            var (a, b) = (hit, all)
            while b != 0 { (a, b) = (b, a % b) }
            if a > 0, all / a <= 12 { (hit, all) = (hit / a, all / a) }
            var text =
                rule.interval == 1
                ? "fires in \(hit) of every \(all) \(unit)"
                : "fires in \(hit) of every \(all) periods of \(period)"
            if !monthly, allLeapYears, !hitPeriods.isEmpty { text += ": in leap years only" }
            if monthly { text += ": a month without a matching day is skipped" }
            return text
        }
        let perYear = (Double(hitPeriods.count) / Double(cycleYears) * 10).rounded() / 10
        let count = perYear == perYear.rounded() ? "\(Int(perYear))" : "about \(perYear)"
        let text = "fires in \(count) of every 12 months"
        let never = (0..<12).filter { yearsHitPerMonth[$0] == 0 }.map { RRuleWords.monthNames[$0] }
        let some = (0..<12).filter { (1..<cycleYears).contains(yearsHitPerMonth[$0]) }.map { RRuleWords.monthNames[$0] }
        var parts: [String] = []
        if !never.isEmpty, never.count < 12 - some.count || some.isEmpty {
            parts.append("never in " + Self.orList(never))
        }
        if !some.isEmpty, some.count <= 3 { parts.append(Self.orList(some) + " only in some years") }
        if parts.isEmpty || (never.count + some.count == 12 && some.count > 3) {
            parts = ["a month without a matching day is skipped"]
        }
        return text + ": " + parts.joined(separator: ", ")
    }

    private static func orList(_ items: [String]) -> String {
        guard items.count > 1 else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " or " + items[items.count - 1]
    }
}
