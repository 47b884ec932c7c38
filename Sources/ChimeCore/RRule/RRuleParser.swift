extension RRule {
    /// Parses an RRULE value such as `FREQ=MONTHLY;BYDAY=-1FR;COUNT=12`, with or without an `RRULE:` prefix.
    ///
    /// Names and values are case-insensitive, as in python-dateutil's `rrulestr`. The parser accepts what
    /// dateutil accepts, except where dateutil silently accepts a rule that can never match or that it
    /// later crashes on; those are rejected here with a message saying why:
    /// a part given twice (dateutil keeps the last), COUNT together with UNTIL (dateutil only warns),
    /// out-of-range numbers (`BYMONTHDAY=0`, `BYMONTH=13`, `BYHOUR=24`, `INTERVAL=0`, `COUNT=0`),
    /// BYDAY ordinals beyond what the period can hold (`6MO` in a month), and the non-standard
    /// `BYEASTER`, `BYWEEKDAY` and `MO(+1)` spellings.
    ///
    /// - Throws: ``RuleSyntaxError`` (grammar "RRULE") naming the offending token and its 0-based offset.
    public static func parse(_ text: String) throws(RuleSyntaxError) -> RRule {
        let scanner = RRuleScanner(text)
        var start = 0
        if let colon = scanner.chars.firstIndex(of: ":") {
            let name = scanner.upper(0, colon)
            guard name == "RRULE" else {
                throw scanner.error(
                    at: 0, to: colon, expected: "a rule such as FREQ=DAILY, optionally after \"RRULE:\"")
            }
            start = colon + 1
        }
        return try scanner.parseRule(from: start, to: scanner.chars.count).rule
    }
}

/// A parsed rule plus where each of its parts was written, so that checks that need the start date
/// (made later, by ``RRuleSet``) can still point at the right token.
struct RRuleParsedRule {
    var rule: RRule
    /// Upper-cased part name → (offset of the value, value text).
    var parts: [String: (offset: Int, text: String)]
}

/// Character-level scanning shared by the RRULE and rule-set parsers. Works on `Character`s so that the
/// offsets it reports are the character offsets `RuleSyntaxError` promises.
struct RRuleScanner {
    static let grammar = "RRULE"
    let input: String
    let chars: [Character]

    init(_ input: String) {
        self.input = input
        self.chars = Array(input)
    }

    func text(_ from: Int, _ to: Int) -> String { from < to ? String(chars[from..<to]) : "" }
    func upper(_ from: Int, _ to: Int) -> String { text(from, to).uppercased() }

    func error(at from: Int, to: Int, expected: String, suggestingFrom words: [String] = []) -> RuleSyntaxError {
        RuleSyntaxError(
            grammar: RRuleScanner.grammar, input: input, offset: from, token: text(from, to), expected: expected,
            suggestion: Suggestion.nearest(to: text(from, to), in: words))
    }

    /// Splits `[from, to)` at every `separator`, returning the pieces as offset ranges.
    func split(_ from: Int, _ to: Int, on separator: Character) -> [(Int, Int)] {
        var pieces: [(Int, Int)] = []
        var pieceStart = from
        var i = from
        while i < to {
            if chars[i] == separator {
                pieces.append((pieceStart, i))
                pieceStart = i + 1
            }
            i += 1
        }
        pieces.append((pieceStart, to))
        return pieces
    }

    static let partNames = [
        "FREQ", "INTERVAL", "COUNT", "UNTIL", "BYSECOND", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYYEARDAY",
        "BYWEEKNO", "BYMONTH", "BYSETPOS", "WKST",
    ]
    static let weekdayPhrase =
        "a weekday such as MO, TU, WE, TH, FR, SA or SU, optionally with an ordinal like 2FR or -1SU"

    /// Parses `NAME=VALUE;NAME=VALUE…` in `[from, to)`.
    func parseRule(from: Int, to: Int) throws(RuleSyntaxError) -> RRuleParsedRule {
        var rule = RRule(frequency: .daily)
        var seen: [String: (offset: Int, text: String)] = [:]
        var nameOffsets: [String: Int] = [:]
        var haveFrequency = false
        var byDayOffsets: [Int] = []
        for (partStart, partEnd) in split(from, to, on: ";") {
            guard partStart < partEnd else {
                throw error(at: partStart, to: partEnd, expected: "a rule part such as FREQ=DAILY (no empty parts)")
            }
            guard let eq = chars[partStart..<partEnd].firstIndex(of: "=") else {
                throw error(at: partStart, to: partEnd, expected: "NAME=VALUE, for example FREQ=DAILY")
            }
            let name = upper(partStart, eq)
            guard RRuleScanner.partNames.contains(name) else {
                throw error(
                    at: partStart, to: eq,
                    expected: "a rule part name: " + RRuleScanner.partNames.joined(separator: ", "),
                    suggestingFrom: RRuleScanner.partNames)
            }
            if let earlier = nameOffsets[name] {
                throw error(
                    at: partStart, to: eq,
                    expected: "each rule part at most once (\(name) is already given at position \(earlier + 1))")
            }
            nameOffsets[name] = partStart
            let valueStart = eq + 1
            seen[name] = (valueStart, text(valueStart, partEnd))
            switch name {
            case "FREQ":
                guard let f = RRule.Frequency(rawValue: upper(valueStart, partEnd)) else {
                    throw error(
                        at: valueStart, to: partEnd,
                        expected: "a frequency: YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY or SECONDLY",
                        suggestingFrom: RRule.Frequency.allCases.map(\.rawValue))
                }
                rule.frequency = f
                haveFrequency = true
            case "INTERVAL":
                rule.interval = try positiveInt(valueStart, partEnd, max: 1_000_000)
            case "COUNT":
                rule.count = try positiveInt(valueStart, partEnd, max: RRule.maximumCount)
            case "UNTIL":
                guard let value = parseDateValue(valueStart, partEnd) else {
                    throw error(
                        at: valueStart, to: partEnd,
                        expected: "a date YYYYMMDD, a local time YYYYMMDDTHHMMSS or a UTC time YYYYMMDDTHHMMSSZ")
                }
                rule.until = value
            case "BYSECOND": rule.bySecond = try intList(valueStart, partEnd, 0...59, allowNegative: false)
            case "BYMINUTE": rule.byMinute = try intList(valueStart, partEnd, 0...59, allowNegative: false)
            case "BYHOUR": rule.byHour = try intList(valueStart, partEnd, 0...23, allowNegative: false)
            case "BYMONTHDAY": rule.byMonthDay = try intList(valueStart, partEnd, 1...31, allowNegative: true)
            case "BYYEARDAY": rule.byYearDay = try intList(valueStart, partEnd, 1...366, allowNegative: true)
            case "BYWEEKNO": rule.byWeekNo = try intList(valueStart, partEnd, 1...53, allowNegative: true)
            case "BYMONTH": rule.byMonth = try intList(valueStart, partEnd, 1...12, allowNegative: false)
            case "BYSETPOS": rule.bySetPos = try intList(valueStart, partEnd, 1...366, allowNegative: true)
            case "BYDAY":
                let (days, offsets) = try weekdayList(valueStart, partEnd)
                rule.byDay = days
                byDayOffsets = offsets
            case "WKST":
                guard let day = RRuleScanner.weekday(upper(valueStart, partEnd)) else {
                    throw error(at: valueStart, to: partEnd, expected: "a weekday: MO, TU, WE, TH, FR, SA or SU")
                }
                rule.weekStart = day
            default:
                break
            }
        }
        guard haveFrequency else {
            throw error(
                at: to, to: to,
                expected: "a FREQ part (FREQ=YEARLY, MONTHLY, WEEKLY, DAILY, HOURLY, MINUTELY or SECONDLY)")
        }
        if let countAt = nameOffsets["COUNT"], let untilAt = nameOffsets["UNTIL"] {
            let later = max(countAt, untilAt)
            let end = chars[later..<to].firstIndex(of: ";") ?? to
            throw error(at: later, to: end, expected: "either COUNT or UNTIL, not both (RFC 5545 section 3.3.10)")
        }
        if let limit = RRuleScanner.ordinalLimit(for: rule) {
            for (entry, offset) in zip(rule.byDay, byDayOffsets) {
                if let n = entry.ordinal, abs(n) > limit.bound {
                    let end = chars[offset..<to].firstIndex(where: { $0 == "," || $0 == ";" }) ?? to
                    throw error(
                        at: offset, to: end,
                        expected: "an ordinal from 1 to \(limit.bound) or -\(limit.bound) to -1 \(limit.reason)")
                }
            }
        }
        return RRuleParsedRule(rule: rule, parts: seen)
    }

    /// How large a BYDAY ordinal may be. A month holds at most 5 of each weekday and a year at most 53;
    /// dateutil accepts larger ordinals but never matches them (and crashes on some), so they are rejected.
    static func ordinalLimit(for rule: RRule) -> (bound: Int, reason: String)? {
        switch rule.frequency {
        case .monthly:
            return (5, "with FREQ=MONTHLY (a month has at most 5 of each weekday)")
        case .yearly where !rule.byMonth.isEmpty:
            return (5, "with FREQ=YEARLY and BYMONTH, where the ordinal counts within the month")
        default:
            return (53, "(a year has at most 53 of each weekday)")
        }
    }

    static func weekday(_ code: String) -> Weekday? {
        switch code {
        case "MO": return .monday
        case "TU": return .tuesday
        case "WE": return .wednesday
        case "TH": return .thursday
        case "FR": return .friday
        case "SA": return .saturday
        case "SU": return .sunday
        default: return nil
        }
    }

    /// `[+-]?digits` in `[from, to)`, or nil.
    func integer(_ from: Int, _ to: Int) -> Int? {
        var i = from
        var negative = false
        if i < to, chars[i] == "+" || chars[i] == "-" {
            negative = chars[i] == "-"
            i += 1
        }
        guard i < to, to - i <= 18 else { return nil }
        var value = 0
        while i < to {
            guard let digit = chars[i].rruleASCIIDigit else { return nil }
            value = value * 10 + digit
            i += 1
        }
        return negative ? -value : value
    }

    func positiveInt(_ from: Int, _ to: Int, max: Int) throws(RuleSyntaxError) -> Int {
        guard let v = integer(from, to), v >= 1, v <= max else {
            throw error(at: from, to: to, expected: "a positive integer (1 to \(max))")
        }
        return v
    }

    func intList(_ from: Int, _ to: Int, _ range: ClosedRange<Int>, allowNegative: Bool) throws(RuleSyntaxError)
        -> [Int]
    {
        var values: [Int] = []
        for (s, e) in split(from, to, on: ",") {
            let v = integer(s, e)
            let ok = v.map { range.contains($0) || (allowNegative && range.contains(-$0)) } ?? false
            guard ok, let v else {
                let what =
                    allowNegative
                    ? "an integer from \(range.lowerBound) to \(range.upperBound) "
                        + "or -\(range.upperBound) to -\(range.lowerBound)"
                    : "an integer from \(range.lowerBound) to \(range.upperBound)"
                throw error(at: s, to: e, expected: what + " (comma-separated)")
            }
            values.append(v)
        }
        return values
    }

    func weekdayList(_ from: Int, _ to: Int) throws(RuleSyntaxError) -> ([RRule.WeekdayNum], [Int]) {
        var days: [RRule.WeekdayNum] = []
        var offsets: [Int] = []
        for (s, e) in split(from, to, on: ",") {
            guard e - s >= 2, let day = RRuleScanner.weekday(upper(e - 2, e)) else {
                throw error(at: s, to: e, expected: RRuleScanner.weekdayPhrase)
            }
            var ordinal: Int?
            if e - 2 > s {
                guard let n = integer(s, e - 2), n != 0 else {
                    throw error(at: s, to: e, expected: RRuleScanner.weekdayPhrase + " (the ordinal cannot be 0)")
                }
                ordinal = n
            }
            days.append(RRule.WeekdayNum(day, ordinal: ordinal))
            offsets.append(s)
        }
        return (days, offsets)
    }

    /// `YYYYMMDD`, `YYYYMMDDTHHMMSS` or `YYYYMMDDTHHMMSSZ` (case-insensitive `T`/`Z`), with real dates only.
    func parseDateValue(_ from: Int, _ to: Int) -> RRule.Until? {
        func digits(_ at: Int, _ n: Int) -> Int? {
            guard at + n <= to else { return nil }
            var v = 0
            for i in at..<(at + n) {
                guard let d = chars[i].rruleASCIIDigit else { return nil }
                v = v * 10 + d
            }
            return v
        }
        guard to - from >= 8, let y = digits(from, 4), let mo = digits(from + 4, 2), let d = digits(from + 6, 2),
            (1...9999).contains(y), (1...12).contains(mo),
            (1...LocalDateTime.daysInMonth(year: y, month: mo)).contains(d)
        else { return nil }
        if to - from == 8 { return .date(year: y, month: mo, day: d) }
        let length = to - from
        guard length == 15 || length == 16, chars[from + 8] == "T" || chars[from + 8] == "t",
            let h = digits(from + 9, 2), let mi = digits(from + 11, 2), let s = digits(from + 13, 2),
            h < 24, mi < 60, s < 60
        else { return nil }
        let time = LocalDateTime(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
        if length == 15 { return .local(time) }
        guard chars[from + 15] == "Z" || chars[from + 15] == "z" else { return nil }
        return .utc(time)
    }
}

extension Character {
    /// 0…9 for an ASCII digit, nil otherwise (unlike `wholeNumberValue`, which also accepts other scripts).
    var rruleASCIIDigit: Int? {
        guard let ascii = asciiValue, ascii >= 48, ascii <= 57 else { return nil }
        return Int(ascii) - 48
    }
}
