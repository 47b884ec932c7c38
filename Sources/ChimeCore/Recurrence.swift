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
        _ rule: WrittenRule, now: Date, timeZone: RuleTimeZone, systemTimeZone: TimeZone,
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
                var rule = try PhraseParser.rule(text, now: now, systemTimeZone: zone, defaults: phraseDefaults)
                // A phrase without `in ZONE` is read on the given zone's calendar, and a named zone pins
                // its evaluation; a phrase's own `in ZONE` is more specific and is kept.
                if case .named = timeZone, rule.timeZone == .floating { rule.timeZone = timeZone }
                return .dateRule(rule)
            } catch let error as RuleSyntaxError {
                throw error
            } catch {
                throw RuleSyntaxError(grammar: "phrase", input: text, offset: 0, token: text, expected: "\(error)")
            }
        case .dateRule(var rule):
            guard rule.isWellFormed else {
                throw RuleSyntaxError(
                    grammar: "DateBuilder rule", input: "date-rule", offset: 0, token: "",
                    expected: "a rule whose numbers are in range (a stride of 1 or more, at most 64 days per period)")
            }
            // A rule built with `.in(timeZone:)` keeps its zone; a floating one takes the given zone.
            if case .named = timeZone, rule.timeZone == .floating { rule.timeZone = timeZone }
            return .dateRule(rule)
        }
    }

    /// The first occurrence strictly after `after`, or nil when there is none (ended, or never fires).
    ///
    /// RRULE occurrences are wall-clock times; each becomes an instant by the default DST policy (a time
    /// in a spring-forward gap fires at the end of the gap, one in a fall-back overlap fires once).
    public func nextOccurrence(after: Date, systemTimeZone: TimeZone) -> Date? {
        switch self {
        case .rrule(let set, let ruleZone):
            let zone = ruleZone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
            // Start two days early in local time so that an offset change cannot hide an occurrence.
            let from = WallClock.localDateTime(for: after, in: zone).adding(seconds: -2 * 86_400)
            var iterator = set.makeIterator(after: from, inclusive: false)
            while let local = iterator.next() {
                if let instant = WallClock.instants(for: local, in: zone).first(where: { $0 > after }) {
                    return instant
                }
            }
            return nil
        case .onCalendar(let spec):
            return spec.nextElapse(after: after, defaultTimeZone: systemTimeZone)
        case .dateRule(let rule):
            return rule.nextOccurrence(after: after, systemTimeZone: systemTimeZone)
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
                // where, however often it fires.
                func movesPast(_ t: Date) -> Bool {
                    base.nextOccurrence(after: t, systemTimeZone: systemTimeZone).map {
                        offset.apply(to: $0, in: zone) > after
                    } ?? false
                }
                var low = exact.addingTimeInterval(-OccurrenceOffset.daySlack)
                var high = exact.addingTimeInterval(OccurrenceOffset.daySlack)
                if !movesPast(low), movesPast(high) {
                    while high.timeIntervalSince(low) > 0.5 {
                        let middle = low.addingTimeInterval(high.timeIntervalSince(low) / 2)
                        if movesPast(middle) { high = middle } else { low = middle }
                    }
                }
                cursor = low
            }
            while let occurrence = base.nextOccurrence(after: cursor, systemTimeZone: systemTimeZone) {
                let moved = offset.apply(to: occurrence, in: zone)
                if moved > after { return moved }
                cursor = occurrence
            }
            return nil
        }
    }

    /// True when the rule has no occurrence at all (February 31 and the like).
    public func neverFires(systemTimeZone: TimeZone) -> Bool {
        switch self {
        case .rrule(let set, _): set.neverFires
        case .shifted(let base, _): base.neverFires(systemTimeZone: systemTimeZone)
        default: nextOccurrence(after: .distantPast, systemTimeZone: systemTimeZone) == nil
        }
    }
}
