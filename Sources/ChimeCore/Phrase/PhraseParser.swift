import Foundation

/// Parses human schedule phrases ("every month on the first friday at 20:15", "tomorrow at 8pm",
/// "every 2 hours") into the same values the DateBuilder DSL builds. The grammar is in
/// docs/rule-phrases.md.
///
/// Parsing never reads the clock: relative words stay relative in the returned `Schedule` and are
/// fixed when it is resolved with `rule(now:systemTimeZone:)`. A random time's seed is derived from
/// the phrase text, so re-parsing the same phrase (e.g. from a config file after a restart) yields the
/// same times.
public enum PhraseParser {
    /// The grammar name used in `RuleSyntaxError`.
    public static let grammar = "phrase"

    /// Parses `text`; throws `RuleSyntaxError` naming the offending word, its offset and what was
    /// expected there.
    /// `defaults` gives the times of `morning`, `afternoon`, `evening` and `night`, and the time of a
    /// repeating phrase that names none. A phrase with several times a day (`every day at 9 and 17`) is
    /// read, but a `Schedule` holds one time, the earliest: `recurrence` keeps them all.
    public static func parse(_ text: String, defaults: PhraseDefaults = .standard) throws -> DateBuilder.Schedule {
        var parser = PhraseGrammar(input: text, defaults: defaults)
        return try parser.parsePhrase()
    }

    /// Parses `text` and resolves it against `now`. Throws when the phrase is invalid, names no date at
    /// all, or names several times a day (a `DateRule` has one; `recurrence` reads those).
    public static func rule(
        _ text: String, now: Date, systemTimeZone: Zone, defaults: PhraseDefaults = .standard
    ) throws -> DateRule {
        var parser = PhraseGrammar(input: text, defaults: defaults)
        let schedule = try parser.parsePhrase()
        guard parser.times.count <= 1 else {
            throw RuleSyntaxError(
                grammar: grammar, input: text, offset: 0, token: text,
                expected: "one time of day (a DateRule has one; PhraseParser.recurrence reads several)")
        }
        guard let rule = schedule.rule(now: now, systemTimeZone: systemTimeZone) else {
            throw RuleSyntaxError(
                grammar: grammar, input: text, offset: 0, token: text,
                expected: "a phrase that names an existing date and time")
        }
        return rule
    }

    /// Parses `text` and resolves it against `now` into the rule chimed keeps. A phrase with one time of
    /// day is a DateBuilder rule; one with several (`every day at 9 and 17`, `every hour from 9am to 5pm`)
    /// is one RRULE set whose BYHOUR lists the hours (one RRULE line for each minute the times have).
    /// `timeZone` is the zone the caller asked for; a phrase's own `in ZONE` wins over it.
    public static func recurrence(
        _ text: String, now: Date, timeZone: RuleTimeZone = .floating, systemTimeZone: Zone,
        defaults: PhraseDefaults = .standard
    ) throws -> Recurrence {
        var parser = PhraseGrammar(input: text, defaults: defaults)
        let schedule = try parser.parsePhrase()
        guard var rule = schedule.rule(now: now, systemTimeZone: systemTimeZone) else {
            throw RuleSyntaxError(
                grammar: grammar, input: text, offset: 0, token: text,
                expected: "a phrase that names an existing date and time")
        }
        if case .named = timeZone, rule.timeZone == .floating { rule.timeZone = timeZone }
        let times = parser.times
        guard times.count > 1, let earliest = times.first, let latest = times.last else { return .dateRule(rule) }
        rule.time = .fixed(earliest)
        var last = rule
        last.time = .fixed(latest)
        let equivalent = rule.rruleEquivalent(systemTimeZone: systemTimeZone)
        guard case .rrule(var set) = equivalent,
            case .rrule(let lastSet) = last.rruleEquivalent(systemTimeZone: systemTimeZone)
        else {
            throw RuleSyntaxError(
                grammar: grammar, input: text, offset: 0, token: text,
                expected: "one time of day: several times a day need a rule RRULE can say, and this one cannot ("
                    + (equivalent.reason ?? "it never fires") + ")")
        }
        // BYHOUR and BYMINUTE multiply, so each minute of the day the times have is a rule of its own.
        var byMinute: [TimeOfDay: [Int]] = [:]
        for time in times {
            byMinute[TimeOfDay(hour: 0, minute: time.minute, second: time.second), default: []].append(time.hour)
        }
        let until = lastSet.rules.first?.until
        var rules: [RRule] = []
        for base in set.rules {
            for minute in byMinute.keys.sorted() {
                var line = base
                line.byHour = (byMinute[minute] ?? []).sorted()
                line.byMinute = [minute.minute]
                line.bySecond = [minute.second]
                line.until = until
                rules.append(line)
            }
        }
        set.rules = rules
        return .rrule(set, timeZone: rule.timeZone)
    }

    /// The seed for "a random time": FNV-1a of the lower-cased phrase, stable across runs and
    /// platforms (unlike `Hasher`).
    static func seed(for text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in text.lowercased().utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        return hash
    }
}

/// Where the parser is in the token list, and how it reports errors.
struct PhraseCursor {
    let input: String
    let tokens: [PhraseToken]
    var index = 0

    init(input: String) {
        self.input = input
        self.tokens = PhraseLexer.tokens(input)
    }

    var current: PhraseToken? { index < tokens.count ? tokens[index] : nil }
    var word: String? { current?.word }
    var isAtEnd: Bool { index >= tokens.count }

    func word(ahead distance: Int) -> String? {
        index + distance < tokens.count ? tokens[index + distance].word : nil
    }

    mutating func advance() { index += 1 }

    /// Consumes the current word when it is one of `words`.
    mutating func accept(_ words: String...) -> Bool {
        guard let word, words.contains(word) else { return false }
        advance()
        return true
    }

    mutating func expect(_ word: String, _ expected: String) throws {
        guard accept(word) else { throw error(expected) }
    }

    /// An error at the current token (or at the end of input).
    func error(_ expected: String) -> RuleSyntaxError {
        if let current { return error(at: current, expected) }
        return RuleSyntaxError(
            grammar: PhraseParser.grammar, input: input, offset: input.count, token: "", expected: expected)
    }

    /// An error at `token`, with the known word it is probably a slip for, or the chime spelling of a
    /// word another app uses (`bimonthly`).
    func error(at token: PhraseToken, _ expected: String) -> RuleSyntaxError {
        RuleSyntaxError(
            grammar: PhraseParser.grammar, input: input, offset: token.offset, token: token.text, expected: expected,
            suggestion: PhraseVocabulary.otherSpellings[token.word]
                ?? Suggestion.nearest(to: token.word, in: PhraseVocabulary.allWords))
    }
}

/// Expected-token descriptions, shared so errors read the same everywhere.
enum PhraseExpected {
    static let start =
        "'every', 'daily', 'weekly', 'monthly', 'yearly', 'hourly', 'weekdays', 'twice a day', 'at', 'today', "
        + "'tomorrow', 'on' or 'in' (e.g. 'every day at 9:00')"
    static let time = "a time such as 9:00 or 8pm"
    static let at = "'at' and a time such as 9:00 or 8pm, or morning, afternoon, evening or night"
    static let weekday = "a weekday such as friday"
    static let date = "a date such as 2026-12-01"
    static let count = "a number such as 2"
    static let everyWhat =
        "a unit such as day, week, month, year or hours, a weekday such as friday, a day of the month such as "
        + "the 15th or the last friday, or a date such as january 27"
    static let modifier = "'for', 'until', 'starting', 'except', 'in' or the end of the phrase"
    static let weekDay = "a day of the week such as monday, the first day or the weekend start day"
    static let monthDay = "a day of the month such as the 15th, the first friday or the last day"
    static let month = "a month such as march"
    static let zone = "an IANA time zone such as Europe/Berlin"
}
