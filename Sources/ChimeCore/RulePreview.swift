import Foundation

/// A rule in any of the three written forms, as `chime next` and config files give it.
public enum WrittenRule: Codable, Hashable, Sendable {
    /// The longest RRULE set chimed takes (its RRULE, RDATE and EXDATE lines), in bytes.
    public static let maximumRRuleSetBytes = 16_000

    /// RFC 5545: an `RRULE` (optionally with `DTSTART`, `RDATE`, `EXDATE` lines).
    case rrule(String, dtstart: LocalDateTime?)
    /// A systemd.time(7) calendar event.
    case onCalendar(String)
    /// The phrase form (docs/rule-phrases.md).
    case phrase(String)
    /// A resolved DateBuilder rule, as ChimeKit sends `EveryMonth(…).first(.friday).at(…)`.
    case dateRule(DateRule)
}

/// What a preview found: occurrences, or the news that the rule can never fire.
public enum RulePreviewResult: Hashable, Sendable {
    case occurrences([Date])
    /// The rule has no occurrence at all (e.g. February 31).
    case neverFires
    /// The occurrences found before a search ran out of its ``SearchBudget``: chimed would not follow
    /// the rule that far.
    case searchExhausted([Date])
}

/// Computes upcoming occurrences of a written rule without a daemon: pure, `now` and zone passed in.
public enum RulePreview {
    /// The first `count` occurrences strictly after `after`, in wall-clock time of `timeZone`.
    ///
    /// RRULE expands on wall-clock time from DTSTART (default: `after`, to the second), and each local
    /// occurrence becomes an instant by the default DST policy (a time in a spring-forward gap fires at
    /// the end of the gap; in a fall-back overlap, once, at the first occurrence). OnCalendar follows
    /// systemd's own rules. Phrases resolve relative words ("tomorrow", "in 10 minutes") and their first
    /// period ("every week" starts with the week containing it) against `now`: `chime next --after T`
    /// passes `T`, so every frequency lists its first occurrence after `T`.
    /// `phraseDefaults` gives the times a phrase's parts of the day (and a phrase without a time) mean.
    public static func next(
        _ rule: WrittenRule, after: Date, now: Date, timeZone: Zone, count: Int,
        phraseDefaults: PhraseDefaults = .standard
    ) throws(RuleSyntaxError) -> RulePreviewResult {
        next(
            try recurrence(rule, after: after, now: now, timeZone: timeZone, phraseDefaults: phraseDefaults),
            after: after, timeZone: timeZone, count: count)
    }

    /// The first `count` occurrences of a rule `recurrence(_:after:now:timeZone:phraseDefaults:)` read.
    /// Each occurrence is searched for within one search's ``SearchBudget``, as chimed does.
    public static func next(_ recurrence: Recurrence, after: Date, timeZone: Zone, count: Int) -> RulePreviewResult {
        var result: [Date] = []
        var cursor = after
        do {
            var budget = SearchBudget()
            if try recurrence.neverFires(systemTimeZone: timeZone, budget: &budget) { return .neverFires }
            while result.count < count {
                var budget = SearchBudget()
                guard let next = try recurrence.nextOccurrence(after: cursor, systemTimeZone: timeZone, budget: &budget)
                else { break }
                result.append(next)
                cursor = next
            }
        } catch {
            return .searchExhausted(result)
        }
        return .occurrences(result)
    }

    /// The rule as `next` reads it; `explanation(after:systemTimeZone:)` and `daylightSavingNote(for:…)`
    /// say more of it.
    public static func recurrence(
        _ rule: WrittenRule, after: Date, now: Date, timeZone: Zone, phraseDefaults: PhraseDefaults = .standard
    ) throws(RuleSyntaxError) -> Recurrence {
        // For RRULE without --dtstart, DTSTART is `after` itself (to the second), as the option documents.
        var written = rule
        if case .rrule(let text, nil) = rule {
            written = .rrule(text, dtstart: WallClock.localDateTime(for: after, in: timeZone))
        }
        return try Recurrence.parse(
            written, now: now, timeZone: .named(timeZone.identifier), systemTimeZone: timeZone,
            phraseDefaults: phraseDefaults)
    }
}
