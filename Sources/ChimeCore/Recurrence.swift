import Foundation

/// A repeating trigger in any of the three rule forms, as the scheduler stores it: one value per entry,
/// whose next occurrence is computed when the previous one fired (never a list of occurrences).
public enum Recurrence: Codable, Hashable, Sendable {
    /// An RFC 5545 set on the wall clock of `timeZone` (floating: the system zone at each evaluation).
    case rrule(RRuleSet, timeZone: RuleTimeZone)
    /// A systemd calendar event; its own zone, else the system zone.
    case onCalendar(CalendarSpec)
    /// A DateBuilder rule (the phrase form resolves to one).
    case dateRule(DateRule)
    /// Another rule's occurrences, each moved by an offset (an entry's `offset`: a calendar alarm 15
    /// minutes before every event of a series).
    indirect case shifted(Recurrence, by: OccurrenceOffset)

    /// Parses a written rule, resolving relative words against `now`. `timeZone` is the zone the caller
    /// asked for (`--tz`, a group file's `tz`): a rule that names its own zone (a phrase's `in ZONE`, an
    /// RRULE's `DTSTART;TZID=…` or UTC DTSTART, a DateBuilder rule built with `.in(timeZone:)`) keeps it;
    /// a floating rule takes `timeZone`.
    /// `phraseDefaults` gives the times of the named parts of the day and of a phrase without a time.
    public static func parse(
        _ rule: WrittenRule, now: Date, timeZone: RuleTimeZone, systemTimeZone: Zone,
        phraseDefaults: PhraseDefaults = .standard
    ) throws(RuleSyntaxError) -> Recurrence {
        let zone = timeZone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
        switch rule {
        case .rrule(let text, let dtstart):
            let start = dtstart ?? WallClock.localDateTime(for: now, in: zone)
            let set = try RRuleSet.parse(text, dtstart: start, timeZone: zone)
            // `DTSTART;TZID=…` (or a UTC DTSTART) names the rule's own zone, which is kept.
            return .rrule(set, timeZone: set.timeZoneIdentifier.map { .named($0) } ?? timeZone)
        case .onCalendar(let text):
            return .onCalendar(try CalendarSpec.parse(text))
        case .phrase(let text):
            do {
                // A phrase without `in ZONE` is read on the given zone's calendar, and a named zone pins
                // its evaluation; a phrase's own `in ZONE` is more specific and is kept.
                return try PhraseParser.recurrence(
                    text, now: now, timeZone: timeZone, systemTimeZone: zone, defaults: phraseDefaults)
            } catch let error as RuleSyntaxError {
                throw error
            } catch {
                throw RuleSyntaxError(grammar: "phrase", input: text, offset: 0, token: text, expected: "\(error)")
            }
        case .dateRule(var rule):
            if let problem = rule.rangeProblem {
                throw RuleSyntaxError(
                    grammar: "DateBuilder rule", input: "date-rule", offset: 0, token: "",
                    expected: "a rule whose fields are in range (\(problem))")
            }
            // A rule built with `.in(timeZone:)` keeps its zone; a floating one takes the given zone.
            if case .named = timeZone, rule.timeZone == .floating { rule.timeZone = timeZone }
            return .dateRule(rule)
        }
    }

    /// The latest instant an occurrence may have: 9999-12-31T23:59:59Z (UTC), as for instants given on
    /// the bus (docs/security.md). A rule's occurrence after it is no occurrence: the rule ends there.
    public static let latestOccurrence = Date(timeIntervalSince1970: 253_402_300_799)

    /// The first occurrence strictly after `after`, or nil when there is none (ended, never fires, or
    /// after ``latestOccurrence``), or when one search's ``SearchBudget`` was not enough to find it: use
    /// ``nextOccurrence(after:systemTimeZone:budget:)`` to tell these apart.
    ///
    /// RRULE occurrences are wall-clock times; each becomes an instant by the default DST policy (a time
    /// in a spring-forward gap fires at the end of the gap, one in a fall-back overlap fires once).
    public func nextOccurrence(after: Date, systemTimeZone: Zone) -> Date? {
        var budget = SearchBudget()
        return try? nextOccurrence(after: after, systemTimeZone: systemTimeZone, budget: &budget)
    }

    /// The first occurrence strictly after `after` and at most ``latestOccurrence``, or nil when there is
    /// none; the work is taken from `budget`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the search needed more than `budget` allows.
    public func nextOccurrence(
        after: Date, systemTimeZone: Zone, budget: inout SearchBudget
    ) throws(SearchBudgetExhausted) -> Date? {
        guard let next = try unboundedNext(after: after, systemTimeZone: systemTimeZone, budget: &budget),
            next <= Self.latestOccurrence
        else { return nil }
        return next
    }

    /// The next occurrence whatever its year (an offset may move one after the limit back before it).
    func unboundedNext(
        after: Date, systemTimeZone: Zone, budget: inout SearchBudget
    ) throws(SearchBudgetExhausted) -> Date? {
        switch self {
        case .rrule(let set, let ruleZone):
            let zone = ruleZone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
            // A wall time names an instant after `after` only if it is later than `after` plus the least
            // UTC offset in force around it (farther away, a day's difference outweighs any offset), so the
            // expansion starts there rather than at every candidate of the days before.
            let afterSeconds = WallClock.clampedSeconds(after)
            try budget.spend(SearchBudget.wallClockCost)
            let least = WallClock.candidateOffsets(around: afterSeconds, in: WallClock.Source(zone)).min() ?? 0
            let startKey = afterSeconds + least - 1
            let from = LocalDateTime(
                daysSinceEpoch: WallClock.floorDiv(startKey, 86_400),
                secondsIntoDay: startKey - WallClock.floorDiv(startKey, 86_400) * 86_400)
            var iterator = set.makeIterator(after: from, inclusive: false, budget: budget)
            var found: Date?
            while let local = iterator.next() {
                guard iterator.charge(SearchBudget.wallClockCost) else { break }
                if let instant = WallClock.instants(for: local, in: zone).first(where: { $0 > after }) {
                    found = instant
                    break
                }
            }
            budget = iterator.budget
            if iterator.exhausted { throw SearchBudgetExhausted(steps: budget.limit) }
            return found
        case .onCalendar(let spec):
            return try spec.nextElapse(after: after, defaultTimeZone: systemTimeZone, budget: &budget)
        case .dateRule(let rule):
            return try rule.nextOccurrence(after: after, systemTimeZone: systemTimeZone, budget: &budget)
        case .shifted(let base, let offset):
            // The moved times keep the occurrences' order, so the first base occurrence whose moved time is
            // after `after` is found by starting where an exact move would put it, less the slack a day
            // offset may have across a daylight-saving change.
            let zone = base.offsetZone(systemTimeZone: systemTimeZone)
            let exact = after.addingTimeInterval(-Double(offset.days) * 86_400 - Double(offset.seconds))
            var cursor = exact
            if offset.days != 0 {
                // Bisected within the slack: whether the first occurrence after a cursor moves past `after`
                // only turns from no to yes as the cursor grows, so about 15 of the base rule's steps find
                // where, however often it fires. Each takes its work from the same budget.
                func movesPast(_ t: Date, _ budget: inout SearchBudget) throws(SearchBudgetExhausted) -> Bool {
                    try base.unboundedNext(after: t, systemTimeZone: systemTimeZone, budget: &budget).map {
                        offset.apply(to: $0, in: zone) > after
                    } ?? false
                }
                var low = exact.addingTimeInterval(-OccurrenceOffset.daySlack)
                var high = exact.addingTimeInterval(OccurrenceOffset.daySlack)
                if try !movesPast(low, &budget), try movesPast(high, &budget) {
                    while high.timeIntervalSince(low) > 0.5 {
                        let middle = low.addingTimeInterval(high.timeIntervalSince(low) / 2)
                        if try movesPast(middle, &budget) { high = middle } else { low = middle }
                    }
                }
                cursor = low
            }
            while let occurrence = try base.unboundedNext(
                after: cursor, systemTimeZone: systemTimeZone, budget: &budget)
            {
                try budget.spend(SearchBudget.wallClockCost)
                let moved = offset.apply(to: occurrence, in: zone)
                if moved > after { return moved }
                cursor = occurrence
            }
            return nil
        }
    }

    /// True when the rule has no occurrence at all (February 31 and the like); false also when one
    /// search's budget was not enough to tell.
    public func neverFires(systemTimeZone: Zone) -> Bool {
        var budget = SearchBudget()
        return (try? neverFires(systemTimeZone: systemTimeZone, budget: &budget)) ?? false
    }

    /// True when the rule has no occurrence at all, the work taken from `budget`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when `budget` was not enough to tell.
    public func neverFires(systemTimeZone: Zone, budget: inout SearchBudget) throws(SearchBudgetExhausted)
        -> Bool
    {
        switch self {
        case .rrule(let set, _):
            var iterator = set.makeIterator(budget: budget)
            let first = iterator.next()
            budget = iterator.budget
            if iterator.exhausted { throw SearchBudgetExhausted(steps: budget.limit) }
            return first == nil
        case .shifted(let base, _):
            return try base.neverFires(systemTimeZone: systemTimeZone, budget: &budget)
        default:
            return try unboundedNext(after: .distantPast, systemTimeZone: systemTimeZone, budget: &budget) == nil
        }
    }
}
