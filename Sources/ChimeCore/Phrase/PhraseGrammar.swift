import Foundation

/// The recursive-descent parser behind `PhraseParser`.
struct PhraseGrammar {
    var cursor: PhraseCursor
    /// The times the parts of the day name, and the time of a repeating phrase that names none.
    let defaults: PhraseDefaults

    init(input: String, defaults: PhraseDefaults = .standard) {
        cursor = PhraseCursor(input: input)
        self.defaults = defaults
    }

    /// What the modifiers after the period said.
    struct Modifiers {
        var time: DateRule.Time?
        /// A part of the day written as a word (`every monday morning`); `at TIME` wins over it.
        var partOfDay: TimeOfDay?
        var forCount: (Int, PhraseToken)?
        var until: DateBuilder.Day?
        var start: DateBuilder.Day?
        var timeZone: RuleTimeZone?
    }

    mutating func parsePhrase() throws -> DateBuilder.Schedule {
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.start) }
        switch word {
        case "every", "each":
            cursor.advance()
            return try parseEvery()
        case "daily", "everyday", "weekly", "monthly", "yearly", "annually", "hourly":
            return try parseShorthand()
        case "in":
            cursor.advance()
            return try parseIn()
        case "today", "tonight", "tomorrow", "on":
            return try parseOnce()
        default:
            throw cursor.error(PhraseExpected.start)
        }
    }

    // MARK: - One-off phrases

    /// `today at 9:00`, `tomorrow at 8pm`, `tomorrow morning`, `tonight`, `on 2026-12-01 at 9:00`.
    mutating func parseOnce() throws -> DateBuilder.Schedule {
        let day: DateBuilder.Day
        var preset: TimeOfDay?
        if cursor.accept("today") {
            day = .today
        } else if cursor.accept("tonight") {
            day = .today
            preset = defaults.night
        } else if cursor.accept("tomorrow") {
            day = .tomorrow
        } else {
            try cursor.expect("on", PhraseExpected.start)
            day = try parseDate()
        }
        let modifiers = try parseModifiers(allowing: [.time, .partOfDay, .zone])
        guard let time = modifiers.time ?? (modifiers.partOfDay ?? preset).map({ .fixed($0) }) else {
            throw cursor.error(PhraseExpected.at)
        }
        var value = DateBuilder.ResolvedDate(day: day, time: time)
        if let zone = modifiers.timeZone { value = value.in(timeZone: zone) }
        return .once(value)
    }

    /// `in 10 minutes`, `in 2 hours`, `in 3 days`.
    mutating func parseIn() throws -> DateBuilder.Schedule {
        let amount: Int
        if cursor.accept("a", "an") {
            amount = 1
        } else {
            amount = try parseCount()
        }
        guard let token = cursor.current else { throw cursor.error("a unit such as minutes, hours or days") }
        var value = DateBuilder.ResolvedDate.now
        if let seconds = PhraseVocabulary.clockUnits[token.word] {
            value = value.addingSeconds(DateBuilderMath.times(amount, seconds))
        } else if let unit = PhraseVocabulary.calendarUnits[token.word] {
            switch unit {
            case .day: value = value.addingDays(amount)
            case .week: value = value.addingWeeks(amount)
            case .month: value = value.addingMonths(amount)
            case .year: value = value.addingYears(amount)
            }
        } else {
            throw cursor.error("a unit such as minutes, hours or days")
        }
        cursor.advance()
        let modifiers = try parseModifiers(allowing: [.zone])
        if let zone = modifiers.timeZone { value = value.in(timeZone: zone) }
        return .once(value)
    }

    // MARK: - Repeating phrases

    /// `daily`, `weekly [on DAYS]`, `monthly [on DAYS]`, `yearly [on DAY]`, `hourly`: the same as
    /// `every day`, `every week`, `every month`, `every year` and `every hour`.
    mutating func parseShorthand() throws -> DateBuilder.Schedule {
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.start) }
        cursor.advance()
        switch word {
        case "hourly":
            return try parseInterval(seconds: 3600)
        case "weekly":
            return try parseRepeating(base: try parseWeeks(stride: 1))
        case "monthly":
            return try parseRepeating(base: try parseMonths(stride: 1))
        case "yearly", "annually":
            return try parseRepeating(base: try parseYears(stride: 1))
        default:
            return try parseRepeating(base: .days(stride: 1))
        }
    }

    mutating func parseEvery() throws -> DateBuilder.Schedule {
        var stride = 1
        // A number before a month name is a day ("every 24 december"), and so is a number the phrase
        // goes on from as it would after a period ("every 27", "every 1 and 15 at 9:00"): not a stride.
        let strideBeforeMonth = cursor.word(ahead: 1).flatMap { PhraseVocabulary.months[$0] } != nil
        let bareDay = isBareDayOfMonth()
        if let word = cursor.word,
            word == "other" || (word.allSatisfy({ $0.isASCII && $0.isNumber }) && !strideBeforeMonth && !bareDay)
        {
            stride = try parseCount()
        }
        guard let token = cursor.current else { throw cursor.error(PhraseExpected.everyWhat) }
        let next = cursor.word(ahead: 1)
        let nextIsWeekday = next.flatMap { PhraseVocabulary.weekdays[$0] } != nil
        // "every second friday" is an ordinal weekday; "every second" alone is a clock unit.
        if let seconds = PhraseVocabulary.clockUnits[token.word], !(token.word == "second" && nextIsWeekday) {
            cursor.advance()
            return try parseInterval(seconds: DateBuilderMath.times(stride, seconds))
        }
        if let unit = PhraseVocabulary.calendarUnits[token.word] {
            cursor.advance()
            switch unit {
            case .day: return try parseRepeating(base: .days(stride: stride))
            case .week: return try parseRepeating(base: try parseWeeks(stride: stride))
            case .month: return try parseRepeating(base: try parseMonths(stride: stride))
            case .year: return try parseRepeating(base: try parseYears(stride: stride))
            }
        }
        if PhraseVocabulary.workdays.contains(token.word) {
            cursor.advance()
            let days: [Weekday] = [.monday, .tuesday, .wednesday, .thursday, .friday]
            return try parseRepeating(base: .weeks(stride: stride, selectors: days.map { .weekday($0) }))
        }
        if token.word == "weekend" || token.word == "weekends" {
            cursor.advance()
            _ = cursor.accept("day", "days")  // "every weekend day"
            return try parseRepeating(base: .weeks(stride: stride, selectors: [.weekendStartDay, .weekendEndDay]))
        }
        if let part = defaults.time(named: token.word) {
            cursor.advance()
            return try parseRepeating(base: .days(stride: stride), preset: part)
        }
        if PhraseVocabulary.weekdays[token.word] != nil {
            return try parseRepeating(
                base: .weeks(stride: stride, selectors: try parseList { try $0.parseWeekDay() }))
        }
        let nextIsMonth = next.flatMap { PhraseVocabulary.months[$0] } != nil
        if PhraseVocabulary.months[token.word] != nil
            || (nextIsMonth && (Int(token.word) != nil || PhraseVocabulary.dayOfMonth(token.word) != nil))
        {
            let (month, selector) = try parseYearDay()
            return try parseRepeating(base: .years(stride: stride, month: month, selector: selector))
        }
        if token.word == "the" || PhraseVocabulary.ordinals[token.word] != nil
            || PhraseVocabulary.dayOfMonth(token.word) != nil || bareDay
        {
            return try parseRepeating(base: try parseDaysOfMonth(stride: stride))
        }
        throw cursor.error(PhraseExpected.everyWhat)
    }

    /// True when the current word is a number from 1 to 31 followed by what may follow a period: the end,
    /// a list separator, a modifier, a part of the day or a time.
    func isBareDayOfMonth() -> Bool {
        guard let word = cursor.word, word.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(word),
            (1...31).contains(n)
        else { return false }
        guard let next = cursor.word(ahead: 1) else { return true }
        let follows: Set<String> = [",", "and", "at", "for", "until", "starting", "from", "in"]
        return follows.contains(next) || defaults.time(named: next) != nil || looksLikeTime(ahead: 1)
    }

    /// True when the word `distance` ahead reads as a time without `at`: `7am`, `7 am`, `19:30`.
    func looksLikeTime(ahead distance: Int) -> Bool {
        guard let word = cursor.word(ahead: distance), let first = word.first, first.isASCII, first.isNumber else {
            return false
        }
        if word.contains(":") || word.hasSuffix("am") || word.hasSuffix("pm") { return true }
        let next = cursor.word(ahead: distance + 1)
        return word.allSatisfy({ $0.isASCII && $0.isNumber }) && (next == "am" || next == "pm")
    }

    /// After `week`: `on DAYS`, or nothing (the first day of the week).
    mutating func parseWeeks(stride: Int) throws -> PhraseBase {
        guard cursor.accept("on") else { return .weeks(stride: stride, selectors: [.firstDay]) }
        return .weeks(stride: stride, selectors: try parseList { try $0.parseWeekDay() })
    }

    /// After `month`: `on DAYS`, or nothing (the first day of the month).
    mutating func parseMonths(stride: Int) throws -> PhraseBase {
        guard cursor.accept("on") else { return .months(stride: stride, selectors: [.firstDay]) }
        return .months(stride: stride, selectors: try parseMonthDayList())
    }

    /// After `year`: `on DAY`, or nothing (january 1).
    mutating func parseYears(stride: Int) throws -> PhraseBase {
        guard cursor.accept("on") else { return .years(stride: stride, month: 1, selector: .firstDay) }
        let (month, selector) = try parseYearDay()
        return .years(stride: stride, month: month, selector: selector)
    }

    /// `every 27th`, `every 1st and 15th`, `every last friday [of the month]`, `every 3rd friday of march`.
    mutating func parseDaysOfMonth(stride: Int) throws -> PhraseBase {
        let dayToken = cursor.current
        let selectors = try parseMonthDayList()
        guard let of = cursor.current, of.word == "of" else { return .months(stride: stride, selectors: selectors) }
        let after = cursor.word(ahead: 1)
        if after == "month" || (["the", "every", "each"].contains(after) && cursor.word(ahead: 2) == "month") {
            cursor.advance()
            _ = cursor.accept("the", "every", "each")
            cursor.advance()
            return .months(stride: stride, selectors: selectors)
        }
        guard selectors.count == 1 else {
            throw cursor.error(at: of, "'of the month' (a date of the year takes one day, as in the 24th of december)")
        }
        cursor.advance()
        let (month, selector) = try finishYearDay(
            selectors[0], dayToken: dayToken, expected: "'the month', 'the year' or " + PhraseExpected.month)
        return .years(stride: stride, month: month, selector: selector)
    }

    /// The modifiers after a period, and the rule they make. `preset` is the part of the day the period
    /// named (`every morning`); without `at TIME` or a part of the day the phrase fires at the default time.
    mutating func parseRepeating(base: PhraseBase, preset: TimeOfDay? = nil) throws -> DateBuilder.Schedule {
        let modifiers = try parseModifiers(allowing: [.time, .partOfDay, .forCount, .until, .start, .zone])
        let time = modifiers.time ?? .fixed(modifiers.partOfDay ?? preset ?? defaults.time)
        let start = modifiers.start ?? .today
        var count: Int?
        if let (amount, unitToken) = modifiers.forCount {
            count = try base.periods(for: amount, unit: unitToken, cursor: cursor)
        }
        let days = base.days(start: start, count: count)
        var value = DateBuilder.ResolvedDates(days: days, time: time)
        if let until = modifiers.until { value = value.until(until) }
        if let first = modifiers.start { value = value.starting(first) }
        if let zone = modifiers.timeZone { value = value.in(timeZone: zone) }
        return .repeating(value)
    }

    /// `every 2 hours [for 1 day] [until 2026-12-31]`: absolute instants from `now`.
    mutating func parseInterval(seconds: Int) throws -> DateBuilder.Schedule {
        let modifiers = try parseModifiers(allowing: [.forCount, .until, .zone])
        var value = DateBuilder.Interval(everySeconds: seconds)
        if let (amount, unitToken) = modifiers.forCount {
            let unitSeconds: Int
            if let clock = PhraseVocabulary.clockUnits[unitToken.word] {
                unitSeconds = clock
            } else if let calendar = PhraseVocabulary.calendarUnits[unitToken.word],
                calendar == .day || calendar == .week
            {
                unitSeconds = calendar == .day ? 86_400 : 604_800
            } else {
                throw cursor.error(at: unitToken, "a unit of fixed length: seconds, minutes, hours, days or weeks")
            }
            value.count = DateBuilderMath.times(amount, unitSeconds) / max(1, seconds)
        }
        if let until = modifiers.until { value = value.until(until) }
        if let zone = modifiers.timeZone { value = value.in(timeZone: zone) }
        return .interval(value)
    }

    // MARK: - Modifiers

    enum ModifierKind: Hashable {
        case time, partOfDay, forCount, until, start, zone
    }

    /// `at TIME`, a part of the day (`morning`, `in the evening`), `for N UNITS`, `until DATE`,
    /// `starting DAY`, `in ZONE`, in any order, each once.
    mutating func parseModifiers(allowing allowed: Set<ModifierKind>) throws -> Modifiers {
        var modifiers = Modifiers()
        var seen: Set<ModifierKind> = []
        while let token = cursor.current {
            if token.word == "," {
                cursor.advance()
                continue
            }
            let kind: ModifierKind
            switch token.word {
            case "at": kind = .time
            case "for": kind = .forCount
            case "until": kind = .until
            case "starting", "from": kind = .start
            case "in":
                let inThePart =
                    cursor.word(ahead: 1) == "the" && cursor.word(ahead: 2).flatMap({ defaults.time(named: $0) }) != nil
                kind = inThePart ? .partOfDay : .zone
            default:
                if defaults.time(named: token.word) != nil {
                    kind = .partOfDay
                } else if looksLikeTime(ahead: 0) {
                    kind = .time  // "every 14 days 7am": a time without "at"
                } else {
                    throw cursor.error(expectedModifier(allowed.subtracting(seen)))
                }
            }
            guard allowed.contains(kind), !seen.contains(kind) else {
                throw cursor.error(expectedModifier(allowed.subtracting(seen)))
            }
            seen.insert(kind)
            switch kind {
            case .time:
                _ = cursor.accept("at")
                modifiers.time = try parseTimeSpec()
            case .partOfDay:
                if cursor.accept("in") { cursor.advance() }  // "in the evening"
                modifiers.partOfDay = cursor.word.flatMap { defaults.time(named: $0) }
                cursor.advance()
            case .forCount:
                cursor.advance()
                let amount = try parseCount()
                guard let unit = cursor.current,
                    PhraseVocabulary.calendarUnits[unit.word] != nil || PhraseVocabulary.clockUnits[unit.word] != nil
                else { throw cursor.error("a unit such as days, weeks, months or years") }
                cursor.advance()
                modifiers.forCount = (amount, unit)
            case .until:
                cursor.advance()
                modifiers.until = try parseDate()
            case .start:
                cursor.advance()
                modifiers.start = try parseStart()
            case .zone:
                cursor.advance()
                guard let zone = cursor.current else { throw cursor.error(PhraseExpected.zone) }
                guard TimeZone(identifier: zone.text) != nil else { throw cursor.error(PhraseExpected.zone) }
                cursor.advance()
                modifiers.timeZone = .named(zone.text)
            }
        }
        return modifiers
    }

    func expectedModifier(_ remaining: Set<ModifierKind>) -> String {
        let names: [(ModifierKind, String)] = [
            (.time, "'at'"), (.forCount, "'for'"), (.until, "'until'"), (.start, "'starting'"), (.zone, "'in'"),
        ]
        let words = names.filter { remaining.contains($0.0) }.map(\.1)
        return words.isEmpty ? "the end of the phrase" : words.joined(separator: ", ") + " or the end of the phrase"
    }

    /// `today`, `tomorrow`, `this|next week|month|year`, or a date.
    mutating func parseStart() throws -> DateBuilder.Day {
        if cursor.accept("today") { return .today }
        if cursor.accept("tomorrow") { return .tomorrow }
        if let word = cursor.word, word == "this" || word == "next" {
            let next = word == "next"
            cursor.advance()
            let offset = next ? 1 : 0
            switch cursor.word {
            case "week":
                cursor.advance()
                return ThisWeek().addingWeeks(offset).firstDay
            case "month":
                cursor.advance()
                return ThisMonth().addingMonths(offset).firstDay
            case "year":
                cursor.advance()
                return ThisYear().addingYears(offset).firstMonth.firstDay
            default: throw cursor.error("week, month or year")
            }
        }
        return try parseDate(expected: "today, tomorrow, next week, next month or " + PhraseExpected.date)
    }

    // MARK: - Days within periods

    /// Items separated by "," and/or "and".
    mutating func parseList<Item>(_ item: (inout PhraseGrammar) throws -> Item) throws -> [Item] {
        var items = [try item(&self)]
        while cursor.word == "," || cursor.word == "and" {
            _ = cursor.accept(",")
            _ = cursor.accept("and")
            items.append(try item(&self))
        }
        return items
    }

    /// `monday`, `the first day`, `the last day`, `the weekend start day`, `the weekend end day`.
    mutating func parseWeekDay() throws -> DateBuilder.WeekDaySelector {
        _ = cursor.accept("the")
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.weekDay) }
        if let weekday = PhraseVocabulary.weekdays[word] {
            cursor.advance()
            return .weekday(weekday)
        }
        if word == "first" || word == "last" {
            cursor.advance()
            try cursor.expect("day", "'day' (as in 'the \(word) day')")
            return word == "first" ? .firstDay : .lastDay
        }
        if word == "weekend" {
            cursor.advance()
            let start: Bool
            if cursor.accept("start") {
                start = true
            } else if cursor.accept("end") {
                start = false
            } else {
                throw cursor.error("'start' or 'end' (as in 'the weekend start day')")
            }
            try cursor.expect("day", "'day'")
            return start ? .weekendStartDay : .weekendEndDay
        }
        throw cursor.error(PhraseExpected.weekDay)
    }

    /// Days of the month separated by "," and/or "and". An ordinal written bare before an ordinal
    /// weekday takes that weekday: `the 2nd and 4th tuesday` is the second and the fourth tuesday.
    mutating func parseMonthDayList() throws -> [DateBuilder.MonthDaySelector] {
        var items: [(selector: DateBuilder.MonthDaySelector?, ordinal: DateBuilder.Ordinal?, token: PhraseToken?)] = []
        repeat {
            if !items.isEmpty {
                _ = cursor.accept(",")
                _ = cursor.accept("and")
            }
            _ = cursor.accept("the")
            let token = cursor.current
            let isSeparator = cursor.word(ahead: 1) == "," || cursor.word(ahead: 1) == "and"
            if let word = cursor.word, isSeparator, let ordinal = PhraseVocabulary.ordinals[word] {
                cursor.advance()
                items.append((nil, ordinal, token))
            } else {
                items.append((try parseMonthDay(), nil, token))
            }
        } while cursor.word == "," || cursor.word == "and"
        var weekday: Weekday?
        if case .weekday(_, let last)? = items.last?.selector { weekday = last }
        let allOrdinals = items.allSatisfy { item in
            if item.selector == nil { return true }
            if case .weekday? = item.selector { return true }
            return false
        }
        return try items.map { item in
            if let selector = item.selector { return selector }
            let word = item.token?.word ?? ""
            if let weekday, allOrdinals, let ordinal = item.ordinal { return .weekday(ordinal, weekday) }
            if let n = PhraseVocabulary.dayOfMonth(word) { return .day(n) }
            throw item.token.map { cursor.error(at: $0, PhraseExpected.monthDay) }
                ?? cursor.error(PhraseExpected.monthDay)
        }
    }

    /// `the 15th`, `day 15`, `the first friday`, `the last friday`, `the first day`, `the last day`.
    mutating func parseMonthDay() throws -> DateBuilder.MonthDaySelector {
        _ = cursor.accept("the")
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.monthDay) }
        if let n = Int(word), word.allSatisfy({ $0.isASCII && $0.isNumber }), (1...31).contains(n) {
            cursor.advance()
            return .day(n)  // "every 27", "every month on 15"
        }
        if word == "day" {
            cursor.advance()
            guard let n = cursor.word.flatMap({ Int($0) }), (1...31).contains(n) else {
                throw cursor.error("a day of the month from 1 to 31")
            }
            cursor.advance()
            return .day(n)
        }
        if let ordinal = PhraseVocabulary.ordinals[word] {
            // "the 1st friday" is an ordinal; "the 1st" alone is a day of the month.
            let next = cursor.word(ahead: 1)
            if let next, let weekday = PhraseVocabulary.weekdays[next] {
                cursor.advance()
                cursor.advance()
                return .weekday(ordinal, weekday)
            }
            if next == "day", ordinal == .first || ordinal == .last {
                cursor.advance()
                cursor.advance()
                return ordinal == .first ? .firstDay : .lastDay
            }
            if let n = PhraseVocabulary.dayOfMonth(word) {
                cursor.advance()
                return .day(n)
            }
            cursor.advance()
            throw cursor.error(PhraseExpected.weekday + " or 'day'")
        }
        if let n = PhraseVocabulary.dayOfMonth(word) {
            cursor.advance()
            return .day(n)
        }
        throw cursor.error(PhraseExpected.monthDay)
    }

    /// `the first day`, `the last day` (of the year), `december 24`, `24 december`, `the 24th of
    /// december`, `the first friday of march`, `the last day of february`.
    mutating func parseYearDay() throws -> (month: Int, selector: DateBuilder.MonthDaySelector) {
        if let word = cursor.word, let month = PhraseVocabulary.months[word] {
            cursor.advance()
            guard let token = cursor.current, let n = Int(token.word) ?? PhraseVocabulary.dayOfMonth(token.word) else {
                throw cursor.error("a day of the month such as 24")
            }
            try checkDay(n, exists: month, token)
            cursor.advance()
            return (month, .day(n))
        }
        if let token = cursor.current, let n = Int(token.word) ?? PhraseVocabulary.dayOfMonth(token.word),
            let month = cursor.word(ahead: 1).flatMap({ PhraseVocabulary.months[$0] })
        {
            try checkDay(n, exists: month, token)
            cursor.advance()
            cursor.advance()
            return (month, .day(n))
        }
        let dayToken = cursor.current
        let selector = try parseMonthDay()
        if cursor.accept("of") {
            return try finishYearDay(selector, dayToken: dayToken, expected: PhraseExpected.month)
        }
        switch selector {
        case .firstDay: return (1, .firstDay)
        case .lastDay: return (12, .lastDay)
        default: throw cursor.error("'of' and " + PhraseExpected.month)
        }
    }

    /// After `DAY of`: `[the] year` (for the first or last day) or a month name.
    mutating func finishYearDay(
        _ selector: DateBuilder.MonthDaySelector, dayToken: PhraseToken?, expected: String
    ) throws -> (month: Int, selector: DateBuilder.MonthDaySelector) {
        _ = cursor.accept("the")
        if cursor.accept("year") {
            switch selector {
            case .firstDay: return (1, .firstDay)
            case .lastDay: return (12, .lastDay)
            default: throw cursor.error(PhraseExpected.month)
            }
        }
        guard let word = cursor.word, let month = PhraseVocabulary.months[word] else {
            throw cursor.error(expected)
        }
        if case .day(let n) = selector, let dayToken { try checkDay(n, exists: month, dayToken) }
        cursor.advance()
        return (month, selector)
    }

    func checkDay(_ day: Int, exists month: Int, _ token: PhraseToken) throws {
        let longest = LocalDateTime.daysInMonth(year: 2000, month: month)  // leap year: Feb 29 exists
        guard (1...longest).contains(day) else {
            throw cursor.error(at: token, "a day that exists in that month (1–\(longest))")
        }
    }

    // MARK: - Leaves

    mutating func parseCount() throws -> Int {
        guard let word = cursor.word, let n = PhraseVocabulary.count(word), n <= DateBuilder.maxMagnitude else {
            throw cursor.error(PhraseExpected.count)
        }
        cursor.advance()
        return n
    }

    mutating func parseDate(expected: String = PhraseExpected.date) throws -> DateBuilder.Day {
        guard let token = cursor.current, token.word.count == 10, let date = LocalDateTime(iso: token.word) else {
            throw cursor.error(expected)
        }
        cursor.advance()
        return ExactDay(year: date.year, month: date.month, day: date.day)
    }

    /// A time, or `a random time between TIME and TIME`.
    mutating func parseTimeSpec() throws -> DateRule.Time {
        if cursor.word == "a" || cursor.word == "random" {
            _ = cursor.accept("a")
            try cursor.expect("random", "'random time between'")
            try cursor.expect("time", "'time between'")
            try cursor.expect("between", "'between'")
            let from = try parseTime()
            try cursor.expect("and", "'and' and a later time")
            let toToken = cursor.current
            let to = try parseTime()
            guard from < to else {
                throw toToken.map { cursor.error(at: $0, "a time later than \(from)") }
                    ?? cursor.error(PhraseExpected.time)
            }
            return .random(from: from, to: to, seed: PhraseParser.seed(for: cursor.input))
        }
        return .fixed(try parseTime())
    }

    /// `9:00`, `09:00:30`, `8pm`, `8:15am`, `8 pm`, `noon`, `midnight`, `morning`, `night`.
    mutating func parseTime() throws -> TimeOfDay {
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.time) }
        if word == "noon" || word == "midnight" {
            cursor.advance()
            return TimeOfDay(hour: word == "noon" ? 12 : 0, minute: 0)
        }
        if let part = defaults.time(named: word) {  // "at night"
            cursor.advance()
            return part
        }
        var text = word
        var meridiem: String?
        for suffix in ["am", "pm"] where text.hasSuffix(suffix) {
            meridiem = suffix
            text.removeLast(2)
        }
        if meridiem == nil, let next = cursor.word(ahead: 1), next == "am" || next == "pm" {
            meridiem = next
        }
        let fields = text.split(separator: ":", omittingEmptySubsequences: false)
        let numbers = fields.map { field in field.count <= 2 && field.allSatisfy(\.isASCII) ? Int(field) : nil }
        guard (1...3).contains(fields.count), numbers.allSatisfy({ $0 != nil }),
            fields.dropFirst().allSatisfy({ $0.count == 2 }), fields.count > 1 || meridiem != nil
        else { throw cursor.error(PhraseExpected.time) }
        var hour = numbers[0] ?? -1
        let minute = fields.count > 1 ? numbers[1] ?? -1 : 0
        let second = fields.count > 2 ? numbers[2] ?? -1 : 0
        if let meridiem {
            guard (1...12).contains(hour) else { throw cursor.error("an hour from 1 to 12 before am/pm") }
            hour = hour % 12 + (meridiem == "pm" ? 12 : 0)
        }
        let time = TimeOfDay(hour: hour, minute: minute, second: second)
        guard time.secondsIntoDay != nil else { throw cursor.error(PhraseExpected.time) }
        cursor.advance()
        if meridiem != nil, !word.hasSuffix("am"), !word.hasSuffix("pm") { cursor.advance() }
        return time
    }
}

/// The period a repeating phrase is built on, before its end and start are known.
enum PhraseBase {
    case days(stride: Int)
    case weeks(stride: Int, selectors: [DateBuilder.WeekDaySelector])
    case months(stride: Int, selectors: [DateBuilder.MonthDaySelector])
    case years(stride: Int, month: Int, selector: DateBuilder.MonthDaySelector)

    func days(start: DateBuilder.Day, count: Int?) -> DateBuilder.Days {
        switch self {
        case .days(let stride):
            return EveryDay(forDays: count, starting: start, stride: stride)
        case .weeks(let stride, let selectors):
            return EveryWeek(forWeeks: count, starting: WeekOf(start), stride: stride).pick(selectors)
        case .months(let stride, let selectors):
            return EveryMonth(forMonths: count, starting: MonthOf(start), stride: stride).pick(selectors)
        case .years(let stride, let month, let selector):
            return EveryYear(forYears: count, starting: YearOf(start), stride: stride).month(month).pick([selector])
        }
    }

    /// Periods covering "for `amount` `unit`": days and weeks for day-based rules, months and years for
    /// month-based ones, rounded up to whole periods.
    func periods(for amount: Int, unit: PhraseToken, cursor: PhraseCursor) throws -> Int {
        let calendarUnit = PhraseVocabulary.calendarUnits[unit.word]
        let total: Int
        let length: Int
        switch self {
        case .days, .weeks:
            switch calendarUnit {
            case .day: total = amount
            case .week: total = DateBuilderMath.times(amount, 7)
            default: throw cursor.error(at: unit, "days or weeks (this rule repeats by days and weeks)")
            }
            if case .days(let stride) = self {
                length = stride
            } else if case .weeks(let stride, _) = self {
                length = DateBuilderMath.times(stride, 7)
            } else {
                length = 1
            }
        case .months(let stride, _), .years(let stride, _, _):
            switch calendarUnit {
            case .month: total = amount
            case .year: total = DateBuilderMath.times(amount, 12)
            default: throw cursor.error(at: unit, "months or years (this rule repeats by months and years)")
            }
            if case .years = self { length = DateBuilderMath.times(stride, 12) } else { length = stride }
        }
        guard length > 0, DateBuilderMath.isSafe(total) else { throw cursor.error(at: unit, "a shorter duration") }
        return (total + length - 1) / length
    }
}
