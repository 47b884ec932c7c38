import Foundation

/// A rule in any of the three written forms, as `chime next` and config files give it.
public enum WrittenRule: Hashable, Sendable {
    /// RFC 5545: an `RRULE` (optionally with `DTSTART`, `RDATE`, `EXDATE` lines).
    case rrule(String, dtstart: LocalDateTime?)
    /// A systemd.time(7) calendar event.
    case onCalendar(String)
    /// The phrase form (docs/rule-phrases.md).
    case phrase(String)
}

/// What a preview found: occurrences, or the news that the rule can never fire.
public enum RulePreviewResult: Hashable, Sendable {
    case occurrences([Date])
    /// The rule has no occurrence at all (e.g. February 31).
    case neverFires
}

/// Computes upcoming occurrences of a written rule without a daemon: pure, `now` and zone passed in.
public enum RulePreview {
    /// The first `count` occurrences strictly after `after`, in wall-clock time of `timeZone`.
    ///
    /// RRULE expands on wall-clock time from DTSTART (default: `after`, to the second), and each local
    /// occurrence becomes an instant by the default DST policy (a time in a spring-forward gap fires at
    /// the end of the gap; in a fall-back overlap, once, at the first occurrence). OnCalendar follows
    /// systemd's own rules. Phrases resolve relative words ("tomorrow", "in 10 minutes") against `now`.
    public static func next(
        _ rule: WrittenRule, after: Date, now: Date, timeZone: TimeZone, count: Int
    ) throws(RuleSyntaxError) -> RulePreviewResult {
        switch rule {
        case .rrule(let text, let dtstart):
            let start = dtstart ?? WallClock.localDateTime(for: after, in: timeZone)
            let set = try RRuleSet.parse(text, dtstart: start, timeZone: timeZone)
            if set.neverFires { return .neverFires }
            var result: [Date] = []
            // Start a little before `after` in local time so that an occurrence just after it in a
            // shifted offset is not missed; instants at or before `after` are dropped below.
            let from = WallClock.localDateTime(for: after, in: timeZone).adding(seconds: -2 * 86_400)
            var iterator = set.makeIterator(after: from, inclusive: false)
            while result.count < count, let local = iterator.next() {
                for instant in WallClock.instants(for: local, in: timeZone, policy: DSTPolicy())
                where instant > after && result.count < count && result.last.map({ instant > $0 }) ?? true {
                    result.append(instant)
                }
            }
            return .occurrences(result)
        case .onCalendar(let text):
            let spec = try CalendarSpec.parse(text)
            let elapses = spec.elapses(after: after, defaultTimeZone: timeZone, count: count)
            if elapses.isEmpty, spec.nextElapse(after: Date(timeIntervalSince1970: 0), defaultTimeZone: timeZone) == nil
            {
                return .neverFires
            }
            return .occurrences(elapses)
        case .phrase(let text):
            let rule: DateRule
            do {
                rule = try PhraseParser.rule(text, now: now, systemTimeZone: timeZone)
            } catch let error as RuleSyntaxError {
                throw error
            } catch {
                throw RuleSyntaxError(grammar: "phrase", input: text, offset: 0, token: text, expected: "\(error)")
            }
            var result: [Date] = []
            var cursor = after
            while result.count < count, let next = rule.nextOccurrence(after: cursor, systemTimeZone: timeZone) {
                result.append(next)
                cursor = next
            }
            if result.isEmpty, rule.nextOccurrence(after: .distantPast, systemTimeZone: timeZone) == nil {
                return .neverFires
            }
            return .occurrences(result)
        }
    }
}
