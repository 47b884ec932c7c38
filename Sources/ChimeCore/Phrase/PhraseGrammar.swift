import Foundation

/// The recursive-descent parser behind `PhraseParser`.
struct PhraseGrammar {
    var cursor: PhraseCursor
    /// The times the parts of the day name, and the time of a repeating phrase that names none.
    let defaults: PhraseDefaults

    /// Every time of day a repeating phrase names, earliest first, when it names more than one
    /// (`every day at 9 and 17`); the schedule carries the earliest.
    var times: [TimeOfDay] = []
    /// Times written before the period (`at 8am every day`).
    var leadingTimes: [TimeOfDay]?
    /// True once a time was written without am/pm (`at 7`, `at 7:30`), which a part of the day may move
    /// to the afternoon (`every evening at 7` is 19:00).
    var sawTimeWithoutMeridiem = false
    /// The most times of day one phrase may name (a window of `every 15 minutes from 0:00 to 23:45` has 96).
    static let maximumTimesPerDay = 96

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
        /// Every time `at` listed (`at 9 and 17`), in the order written.
        var times: [TimeOfDay] = []
        /// The part of the day as written, to read a bare hour by (`every day at 7 in the evening`).
        var partWord: String?
        /// Weekdays `except` took out.
        var except: (days: [Weekday], token: PhraseToken)?
    }

    mutating func parsePhrase() throws -> DateBuilder.Schedule {
        guard let word = cursor.word else { throw cursor.error(PhraseExpected.start) }
        switch word {
        case "every", "each":
            cursor.advance()
            return try parseEvery()
        case "daily", "everyday", "weekly", "monthly", "yearly", "annually", "hourly", "biweekly", "fortnightly":
            return try parseShorthand()
        case "in":
            cursor.advance()
            return try parseIn()
        case "today", "tonight", "tomorrow":
            return try parseOnce()
        case "on":
            // "on weekdays", "on mondays", "on the 1st of every month" repeat; "on 2026-12-01" is one day.
            guard repeatsWithoutEvery(ahead: 1) else { return try parseOnce() }
            cursor.advance()
            return try parseEvery()
        case "at" where leadingTimes == nil:
            // "at 8am every day": the time first, then what repeats.
            cursor.advance()
            var list = [try parseTime(bare: true)]
            while nextIsListedTime() {
                _ = cursor.accept(",")
                _ = cursor.accept("and")
                list.append(try parseTime(bare: true))
            }
            leadingTimes = list
            let starts: Set<String> = [
                "every", "each", "daily", "everyday", "weekly", "monthly", "yearly", "annually", "biweekly",
                "fortnightly", "today", "tonight", "tomorrow", "on", "once", "twice", "thrice",
            ]
            guard let next = cursor.word, starts.contains(next) || repeatsWithoutEvery(ahead: 0) else {
                throw cursor.error("'every' and what repeats (as in 'at 8am every day') or a day such as tomorrow")
            }
            return try parsePhrase()
        case "once", "twice", "thrice":
            return try parseTimesA()
        default:
            if word.allSatisfy({ $0.isASCII && $0.isNumber }), cursor.word(ahead: 1) == "times" {
                return try parseTimesA()
            }
            if repeatsWithoutEvery(ahead: 0) { return try parseEvery() }
            throw cursor.error(PhraseExpected.start)
        }
    }

    /// True when the word `distance` ahead starts a repeating phrase without `every`: a weekday in the
    /// plural (`mondays`), `weekdays`, `workdays`, `weekends`, or a day of the month that the phrase says
    /// is of every month (`the first monday of every month`).
    func repeatsWithoutEvery(ahead distance: Int) -> Bool {
        guard let word = cursor.word(ahead: distance) else { return false }
        if ["weekdays", "workdays", "weekends"].contains(word) { return true }
        if word.hasSuffix("days"), PhraseVocabulary.weekdays[word] != nil { return true }
        guard word == "the" || PhraseVocabulary.ordinals[word] != nil || PhraseVocabulary.dayOfMonth(word) != nil
        else { return false }
        var k = distance + 1
        while let next = cursor.word(ahead: k) {
            if next == "of", let after = cursor.word(ahead: k + 1), after == "every" || after == "each" { return true }
            k += 1
        }
        return false
    }

    /// `twice a day at 9 and 21`, `3 times a day at 8, 14 and 20`, `once a week on monday`: a count of
    /// times a day that the `at` list must match; `once a` is `every`.
    mutating func parseTimesA() throws -> DateBuilder.Schedule {
        guard let countToken = cursor.current else { throw cursor.error(PhraseExpected.start) }
        let n: Int
        if cursor.accept("once") {
            n = 1
        } else if cursor.accept("twice") {
            n = 2
        } else if cursor.accept("thrice") {
            n = 3
        } else {
            n = try parseCount()
            try cursor.expect("times", "'times' (as in 3 times a day)")
        }
        guard cursor.accept("a", "per") else { throw cursor.error("'a day' (as in twice a day at 9 and 21)") }
        if n == 1, let unit = cursor.word.flatMap({ PhraseVocabulary.calendarUnits[$0] }) {
            cursor.advance()
            return try parseCalendarUnit(unit, stride: 1)
        }
        try cursor.expect(
            "day", "'day' (as in twice a day at 9 and 21; for twice a week name the days: every monday and thursday)")
        let schedule = try parseRepeating(base: .days(stride: 1))
        guard max(times.count, 1) == n else {
            throw cursor.error(
                at: countToken, "as many times after 'at' as '\(countToken.text)' says (as in twice a day at 9 and 21)")
        }
        return schedule
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
        let modifiers = try parseModifiers(allowing: leadingTimes == nil ? [.time, .partOfDay, .zone] : [.zone])
        if let leadingTimes, leadingTimes.count > 1 {
            throw cursor.error("one time: a phrase for one day fires once (write 'every day at …' to repeat)")
        }
        guard modifiers.times.count <= 1 else {
            throw cursor.error("one time: a phrase for one day fires once (write 'every day at …' to repeat)")
        }
        let leading = leadingTimes?.first.map { DateRule.Time.fixed($0) }
        guard
            let time = leading ?? adjusted(modifiers).first.map({ .fixed($0) }) ?? modifiers.time
                ?? (modifiers.partOfDay ?? preset).map({ .fixed($0) })
        else {
            throw cursor.error(PhraseExpected.at)
        }
        var value = DateBuilder.Moment(day: day, time: time)
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
        var value = DateBuilder.Moment.now
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
            return try parseClock(seconds: 3600)
        case "fortnightly":
            return try parseRepeating(base: try parseWeeks(stride: 2))
        case "biweekly":
            guard defaults.biweekly == .twiceAWeek else { return try parseRepeating(base: try parseWeeks(stride: 2)) }
            let on = cursor.current
            guard cursor.accept("on") else {
                throw cursor.error(
                    "'on' and two days, as in 'biweekly on monday and thursday' (chime.toml reads biweekly as twice a week)"
                )
            }
            let days = try parseWeekDays()
            guard days.count == 2 else {
                throw cursor.error(
                    at: on ?? PhraseToken(text: "", word: "", offset: 0),
                    "two days, as in 'biweekly on monday and thursday' (chime.toml reads biweekly as twice a week)")
            }
            return try parseRepeating(base: .weeks(stride: 1, selectors: days))
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
        guard var token = cursor.current else { throw cursor.error(PhraseExpected.everyWhat) }
        // "every half hour", "every quarter hour", "every quarter" (three months).
        if token.word == "half" || token.word == "quarter" {
            let half = token.word == "half"
            cursor.advance()
            if cursor.word == "an" || cursor.word == "a", cursor.word(ahead: 1) == "hour" { cursor.advance() }
            if cursor.accept("hour") {
                return try parseClock(seconds: DateBuilderMath.times(stride, half ? 1800 : 900))
            }
            guard !half else { throw cursor.error("'hour' (as in every half hour)") }
            return try parseRepeating(base: try parseMonths(stride: DateBuilderMath.times(stride, 3)))
        }
        // "every 2nd day", "every third week": an ordinal before a unit is a stride ("every first day of the
        // month" stays a day of the month).
        if let ordinal = PhraseVocabulary.ordinals[token.word], ordinal.rawValue > 1,
            let unitWord = cursor.word(ahead: 1), PhraseVocabulary.calendarUnits[unitWord] != nil,
            cursor.word(ahead: 2) != "of"
        {
            stride = DateBuilderMath.times(stride, ordinal.rawValue)
            cursor.advance()
            guard let unitToken = cursor.current else { throw cursor.error(PhraseExpected.everyWhat) }
            token = unitToken
        }
        let next = cursor.word(ahead: 1)
        let nextIsWeekday = next.flatMap { PhraseVocabulary.weekdays[$0] } != nil
        // "every second friday" is an ordinal weekday, and "every second to last day" a day from the end;
        // "every second" alone is a clock unit.
        let secondIsOrdinal =
            token.word == "second" && (nextIsWeekday || ["to", "last", "weekday", "workday"].contains(next ?? ""))
        if let seconds = PhraseVocabulary.clockUnits[token.word], !secondIsOrdinal {
            cursor.advance()
            return try parseClock(seconds: DateBuilderMath.times(stride, seconds))
        }
        if let unit = PhraseVocabulary.calendarUnits[token.word] {
            cursor.advance()
            return try parseCalendarUnit(unit, stride: stride)
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
            return try parseRepeating(base: .days(stride: stride), preset: part, presetWord: token.word)
        }
        if PhraseVocabulary.weekdays[token.word] != nil || isWeekdayRange(token.word) {
            return try parseRepeating(base: .weeks(stride: stride, selectors: try parseWeekDays()))
        }
        let nextIsMonth = next.flatMap { PhraseVocabulary.months[$0] } != nil
        if PhraseVocabulary.months[token.word] != nil
            || (nextIsMonth && (Int(token.word) != nil || PhraseVocabulary.dayOfMonth(token.word) != nil))
        {
            let (month, selector) = try parseYearDay()
            return try parseRepeating(base: .years(stride: stride, month: month, selector: selector))
        }
        if token.word == "the" || token.word == "penultimate" || PhraseVocabulary.ordinals[token.word] != nil
            || PhraseVocabulary.dayOfMonth(token.word) != nil || bareDay
        {
            return try parseRepeating(base: try parseDaysOfMonth(stride: stride))
        }
        throw cursor.error(PhraseExpected.everyWhat)
    }

    /// `day`, `week`, `month`, `year` after `every N`.
    mutating func parseCalendarUnit(_ unit: PhraseVocabulary.CalendarUnit, stride: Int) throws -> DateBuilder.Schedule {
        switch unit {
        case .day: return try parseRepeating(base: .days(stride: stride))
        case .week: return try parseRepeating(base: try parseWeeks(stride: stride))
        case .month: return try parseRepeating(base: try parseMonths(stride: stride))
        case .year: return try parseRepeating(base: try parseYears(stride: stride))
        }
    }

    /// After a clock unit: a window of the day (`every hour from 9am to 5pm [on weekdays]`), which repeats
    /// on the calendar at the times it lists, or an interval from now.
    mutating func parseClock(seconds: Int) throws -> DateBuilder.Schedule {
        guard let word = cursor.word, word == "from" || word == "between", startsTime(ahead: 1) else {
            return try parseInterval(seconds: seconds)
        }
        let between = word == "between"
        cursor.advance()
        let from = try parseTime(bare: true)
        guard cursor.accept("to", "till", "until", "-") || (between && cursor.accept("and")) else {
            throw cursor.error("'to' and a later time (as in every hour from 9am to 5pm)")
        }
        let toToken = cursor.current
        let to = try parseTime(bare: true)
        guard let low = from.secondsIntoDay, let high = to.secondsIntoDay, low < high else {
            throw toToken.map { cursor.error(at: $0, "a time later than \(from)") } ?? cursor.error(PhraseExpected.time)
        }
        guard seconds % 60 == 0, (high - low) / seconds < Self.maximumTimesPerDay else {
            throw cursor.error(
                "a window of at most \(Self.maximumTimesPerDay) whole-minute times a day (as in every 15 minutes from 9 to 17)"
            )
        }
        let window = Swift.stride(from: low, through: high, by: seconds).map {
            TimeOfDay(hour: $0 / 3600, minute: $0 % 3600 / 60, second: $0 % 60)
        }
        var base = PhraseBase.days(stride: 1)
        if cursor.accept("on") {
            if cursor.accept("weekdays", "weekday", "workdays", "workday") {
                base = .weeks(
                    stride: 1, selectors: [1, 2, 3, 4, 5].compactMap { Weekday(rawValue: $0) }.map { .weekday($0) })
            } else {
                base = .weeks(stride: 1, selectors: try parseWeekDays())
            }
        }
        return try parseRepeating(base: base, windowTimes: window)
    }

    /// True when the word `distance` ahead begins a time, `9` included (after `from` in a window).
    func startsTime(ahead distance: Int) -> Bool {
        guard let word = cursor.word(ahead: distance) else { return false }
        if word == "noon" || word == "midnight" || looksLikeTime(ahead: distance) { return true }
        return word.allSatisfy({ $0.isASCII && $0.isNumber }) && (Int(word) ?? 99) <= 23
    }

    /// After a time in an `at` list: `,` or `and` and another time (`at 9, 12 and 17`).
    func nextIsListedTime() -> Bool {
        var k = 0
        while let word = cursor.word(ahead: k), word == "," || word == "and" { k += 1 }
        guard k > 0 else { return false }
        return startsTime(ahead: k)
    }

    /// True for `mon-fri`.
    func isWeekdayRange(_ word: String) -> Bool {
        let parts = word.split(separator: "-").map(String.init)
        return parts.count == 2 && parts.allSatisfy { PhraseVocabulary.weekdays[$0] != nil }
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
        return .weeks(stride: stride, selectors: try parseWeekDays())
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
    mutating func parseRepeating(
        base: PhraseBase, preset: TimeOfDay? = nil, presetWord: String? = nil, windowTimes: [TimeOfDay]? = nil
    ) throws -> DateBuilder.Schedule {
        var allowed: Set<ModifierKind> = [.time, .partOfDay, .forCount, .until, .start, .zone, .except]
        if windowTimes != nil || leadingTimes != nil { allowed.subtract([.time, .partOfDay]) }
        var modifiers = try parseModifiers(allowing: allowed)
        if modifiers.partWord == nil { modifiers.partWord = presetWord }
        var base = base
        if let (days, token) = modifiers.except { base = try base.excluding(days, at: token, cursor: cursor) }
        let listed = Array(Set(windowTimes ?? leadingTimes ?? adjusted(modifiers))).sorted()
        guard listed.count <= Self.maximumTimesPerDay else {
            throw cursor.error(at: cursor.tokens[0], "at most \(Self.maximumTimesPerDay) times a day")
        }
        if listed.count > 1 { times = listed }
        let time =
            listed.first.map { .fixed($0) } ?? modifiers.time ?? .fixed(modifiers.partOfDay ?? preset ?? defaults.time)
        var start = modifiers.start ?? .today
        // chime.toml may anchor a rule of every few weeks at its first day from today on.
        if modifiers.start == nil, defaults.everyOtherWeek == .firstOccurrence,
            case .weeks(let weeks, let selectors) = base,
            weeks > 1
        {
            let days: [Weekday] = selectors.compactMap { selector in
                switch selector {
                case .weekday(let day): return day
                case .firstDay: return .monday  // phrases read ISO weeks
                default: return nil
                }
            }
            if days.count == selectors.count { start = .nextWeekday(days) }
        }
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

    /// The fixed times `at` listed, a time without am/pm read by the part of the day the phrase names:
    /// `every evening at 7` and `every evening at 7:30` are 19:00 and 19:30 (and `every night at 11`
    /// 23:00); without one it is on the 24-hour clock.
    func adjusted(_ modifiers: Modifiers) -> [TimeOfDay] {
        guard sawTimeWithoutMeridiem, let part = modifiers.partWord else { return modifiers.times }
        let later: ClosedRange<Int>
        switch part {
        case "afternoon", "evening": later = 1...11
        case "night": later = 6...11
        default: return modifiers.times
        }
        return modifiers.times.map { time in
            guard later.contains(time.hour) else { return time }
            return TimeOfDay(hour: time.hour + 12, minute: time.minute, second: time.second)
        }
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
        case time, partOfDay, forCount, until, start, zone, except
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
            case "except", "excluding": kind = .except
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
                let bare = cursor.accept("at")  // "at 9" is 09:00; "every day 9" is no time
                let first = try parseTimeSpec(bare: bare)
                modifiers.time = first
                if case .fixed(let time) = first {
                    modifiers.times = [time]
                    while nextIsListedTime() {
                        _ = cursor.accept(",")
                        _ = cursor.accept("and")
                        modifiers.times.append(try parseTime(bare: bare))
                        guard modifiers.times.count <= Self.maximumTimesPerDay else {
                            throw cursor.error("the end of the list: at most \(Self.maximumTimesPerDay) times a day")
                        }
                    }
                }
            case .partOfDay:
                if cursor.accept("in") { cursor.advance() }  // "in the evening"
                modifiers.partOfDay = cursor.word.flatMap { defaults.time(named: $0) }
                modifiers.partWord = cursor.word
                cursor.advance()
            case .except:
                cursor.advance()
                var days: [Weekday] = []
                if cursor.accept("weekend", "weekends") {  // phrases read ISO weeks: Saturday and Sunday
                    modifiers.except = ([.saturday, .sunday], token)
                    continue
                }
                for selector in try parseWeekDays() {
                    guard case .weekday(let day) = selector else {
                        throw cursor.error(at: token, "weekdays named after 'except', as in 'except friday'")
                    }
                    days.append(day)
                }
                modifiers.except = (days, token)
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
                guard Zone(identifier: zone.text) != nil else { throw cursor.error(PhraseExpected.zone) }
                cursor.advance()
                modifiers.timeZone = .named(zone.text)
            }
        }
        return modifiers
    }

    func expectedModifier(_ remaining: Set<ModifierKind>) -> String {
        let names: [(ModifierKind, String)] = [
            (.time, "'at'"), (.forCount, "'for'"), (.until, "'until'"), (.start, "'starting'"), (.zone, "'in'"),
            (.except, "'except'"),
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

    /// Weekdays separated by "," and/or "and", or by nothing (`monday wednesday friday`), each a day or a
    /// range (`mon-fri`, `monday to friday`, `monday through friday`, which may wrap: `fri-mon`).
    mutating func parseWeekDays() throws -> [DateBuilder.WeekDaySelector] {
        var result: [DateBuilder.WeekDaySelector] = []
        repeat {
            if !result.isEmpty {
                _ = cursor.accept(",")
                _ = cursor.accept("and")
            }
            if let word = cursor.word, isWeekdayRange(word) {
                let parts = word.split(separator: "-").compactMap { PhraseVocabulary.weekdays[String($0)] }
                cursor.advance()
                result += Self.range(parts[0], parts[1])
                continue
            }
            let day = try parseWeekDay()
            if case .weekday(let from) = day, let word = cursor.word, ["to", "through", "thru", "-"].contains(word),
                let to = cursor.word(ahead: 1).flatMap({ PhraseVocabulary.weekdays[$0] })
            {
                cursor.advance()
                cursor.advance()
                result += Self.range(from, to)
            } else {
                result.append(day)
            }
        } while cursor.word == "," || cursor.word == "and"
            || cursor.word.map({ PhraseVocabulary.weekdays[$0] != nil || isWeekdayRange($0) }) == true
        return result
    }

    /// The weekdays from `from` to `to`, both included, wrapping past Sunday.
    static func range(_ from: Weekday, _ to: Weekday) -> [DateBuilder.WeekDaySelector] {
        var days: [DateBuilder.WeekDaySelector] = []
        var day = from.rawValue
        while true {
            if let weekday = Weekday(rawValue: day) { days.append(.weekday(weekday)) }
            if day == to.rawValue { break }
            day = day % 7 + 1
        }
        return days
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
        if word == "penultimate" {
            cursor.advance()
            if cursor.accept("weekday", "workday") { return .weekdayOfMonth(-2) }
            try cursor.expect("day", "'day' (as in the penultimate day)")
            return .dayFromEnd(2)
        }
        // "the 3rd weekday", "the last weekday": the days Monday to Friday of the month, counted.
        let count = PhraseVocabulary.ordinals[word].map(\.rawValue) ?? PhraseVocabulary.dayOfMonth(word)
        if let count, let next = cursor.word(ahead: 1), next == "weekday" || next == "workday" {
            guard (-23...23).contains(count) else { throw cursor.error("a weekday of the month from 1st to 23rd") }
            cursor.advance()
            cursor.advance()
            return .weekdayOfMonth(count)
        }
        // "the second to last day", "the 3rd to last weekday", "the second-to-last day".
        let toLast = word.hasSuffix("-to-last") ? String(word.dropLast(8)) : nil
        if let n = (toLast ?? (cursor.word(ahead: 1) == "to" && cursor.word(ahead: 2) == "last" ? word : nil)).flatMap({
            PhraseVocabulary.ordinals[$0]?.rawValue ?? PhraseVocabulary.dayOfMonth($0)
        }), n > 0 {
            for _ in 0..<(toLast == nil ? 3 : 1) { cursor.advance() }
            if cursor.accept("weekday", "workday") {
                guard n <= 23 else { throw cursor.error("a weekday of the month from 1st to 23rd") }
                return .weekdayOfMonth(-n)
            }
            try cursor.expect("day", "'day' or 'weekday' (as in the second to last day)")
            return .dayFromEnd(n)
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

    /// `2026-12-01`, or a date in words: `november 28`, `dec 6th`, `28 november`, `the 28th of november`
    /// (the next such day from today), with a year after it (`november 28 2027`) an exact date.
    mutating func parseDate(expected: String = PhraseExpected.date) throws -> DateBuilder.Day {
        if let token = cursor.current, token.word.count == 10, let date = LocalDateTime(iso: token.word) {
            cursor.advance()
            return ExactDay(year: date.year, month: date.month, day: date.day)
        }
        let start = cursor.index
        _ = cursor.accept("the")
        var month: Int?
        var dayToken: PhraseToken?
        if let word = cursor.word, let m = PhraseVocabulary.months[word] {
            cursor.advance()
            month = m
            dayToken = cursor.current
        } else if let word = cursor.word, Int(word) != nil || PhraseVocabulary.dayOfMonth(word) != nil {
            dayToken = cursor.current
            cursor.advance()
            _ = cursor.accept("of")
            month = cursor.word.flatMap { PhraseVocabulary.months[$0] }
            if month != nil { cursor.advance() }
        }
        guard let month, let dayToken, let day = Int(dayToken.word) ?? PhraseVocabulary.dayOfMonth(dayToken.word)
        else {
            cursor.index = start
            throw cursor.error(expected + " or november 28")
        }
        try checkDay(day, exists: month, dayToken)
        if cursor.current?.offset == dayToken.offset { cursor.advance() }
        if cursor.word == ",", let year = cursor.word(ahead: 1).flatMap({ Int($0) }),
            DateBuilder.yearRange.contains(year)
        {
            cursor.advance()
        }
        if let year = cursor.word.flatMap({ Int($0) }), cursor.word?.count == 4, DateBuilder.yearRange.contains(year) {
            cursor.advance()
            guard day <= LocalDateTime.daysInMonth(year: year, month: month) else {
                throw cursor.error(at: dayToken, "a day that exists in that month")
            }
            return ExactDay(year: year, month: month, day: day)
        }
        return .nextDate(month: month, day: day)
    }

    /// A time, or `a random time between TIME and TIME`.
    mutating func parseTimeSpec(bare: Bool = false) throws -> DateRule.Time {
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
        return .fixed(try parseTime(bare: bare))
    }

    /// `9:00`, `09:00:30`, `8pm`, `8:15am`, `8 pm`, `noon`, `midnight`, `morning`, `night`; with `bare`
    /// (after `at`), an hour alone on the 24-hour clock: `9` is 09:00, `21` is 21:00. A time without am/pm
    /// before `in the afternoon`, `in the evening` or `at night` is in the afternoon (`at 7 in the evening`
    /// is 19:00); before `in the morning` it is as written.
    mutating func parseTime(bare: Bool = false) throws -> TimeOfDay {
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
            fields.dropFirst().allSatisfy({ $0.count == 2 }), fields.count > 1 || meridiem != nil || bare
        else { throw cursor.error(PhraseExpected.time) }
        if meridiem == nil { sawTimeWithoutMeridiem = true }
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
        // "at 7 in the evening", "at 11 at night", "at 6 in the morning": the part of the day reads the hour.
        var part: String?
        if meridiem == nil, cursor.word == "in", cursor.word(ahead: 1) == "the",
            let word = cursor.word(ahead: 2), defaults.time(named: word) != nil, word != "night"
        {
            part = word
        } else if meridiem == nil, cursor.word == "at", cursor.word(ahead: 1) == "night" {
            part = "night"
        }
        guard let part else { return time }
        for _ in 0..<(part == "night" ? 2 : 3) { cursor.advance() }
        let later: ClosedRange<Int>? = part == "night" ? 6...11 : part == "morning" ? nil : 1...11
        return later?.contains(hour) == true
            ? TimeOfDay(hour: hour + 12, minute: time.minute, second: time.second) : time
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

    /// The same days without the weekdays `except` named: `every weekday except friday`, `every day except
    /// sunday`.
    func excluding(_ days: [Weekday], at token: PhraseToken, cursor: PhraseCursor) throws -> PhraseBase {
        let selectors: [DateBuilder.WeekDaySelector]
        let stride: Int
        switch self {
        case .days(1):
            selectors = Weekday.allCases.map { .weekday($0) }
            stride = 1
        case .weeks(let weeks, let chosen):
            selectors = chosen
            stride = weeks
        default:
            throw cursor.error(
                at: token, "the end of the phrase: 'except' takes weekdays out of a daily or weekly rule")
        }
        var kept: [DateBuilder.WeekDaySelector] = []
        for selector in selectors {
            guard case .weekday(let day) = selector else {
                throw cursor.error(at: token, "the end of the phrase: 'except' takes weekdays out of named weekdays")
            }
            if !days.contains(day) { kept.append(selector) }
        }
        guard !kept.isEmpty else { throw cursor.error(at: token, "a day that is left after 'except'") }
        return .weeks(stride: stride, selectors: kept)
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
