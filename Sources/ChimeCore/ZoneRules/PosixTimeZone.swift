/// A POSIX TZ string such as `CET-1CEST,M3.5.0,M10.5.0/3` or `<+03>-3`, with RFC 8536's extensions
/// (rule times from -167 to 167 hours): the rules a TZif footer gives for instants past its table.
///
/// Offsets in the string count hours west of Greenwich (`CET-1` is an hour east); `utcOffset` values
/// here are east-positive seconds like everywhere else. A change of rule is evaluated in the local time
/// in effect before it: the start of daylight saving in standard time, its end in daylight time.
public struct PosixTimeZone: Hashable, Sendable {
    /// The day of the year a change happens on.
    public enum Day: Hashable, Sendable {
        /// `Jn`: day 1…365, February 29 never counted.
        case julian(Int)
        /// `n`: day 0…365, February 29 counted in leap years.
        case zeroBased(Int)
        /// `Mm.w.d`: weekday `d` (0 is Sunday) of week `w` (1…5, 5 the last) of month `m`.
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }

    /// A change between standard and daylight time: a day and a local time of day, in seconds
    /// (negative, or past 24 hours, counts from that day's midnight).
    public struct Change: Hashable, Sendable {
        public var day: Day
        public var time: Int
    }

    /// Standard time: the whole story when `daylight` is nil.
    public var standard: ZoneRules.LocalTimeType

    /// Daylight time and the changes into and out of it.
    public struct Daylight: Hashable, Sendable {
        public var type: ZoneRules.LocalTimeType
        /// Into daylight time, read in standard time.
        public var start: Change
        /// Back to standard time, read in daylight time.
        public var end: Change
    }

    /// Nil when the zone keeps standard time all year.
    public var daylight: Daylight?

    /// Parses `text`; `source` names it in errors.
    public init(parsing text: String, source: String = "TZ string") throws {
        var parser = Parser(bytes: Array(text.utf8), source: source, text: text)
        let standardName = try parser.name()
        let standardOffset = -(try parser.offset(hoursUpTo: 24))
        standard = ZoneRules.LocalTimeType(
            utcOffset: standardOffset, isDaylightSaving: false, abbreviation: standardName)
        guard !parser.atEnd else { return }
        let daylightName = try parser.name()
        var daylightOffset = standardOffset + 3600
        if !parser.atEnd, parser.peek != UInt8(ascii: ",") {
            daylightOffset = -(try parser.offset(hoursUpTo: 24))
        }
        let type = ZoneRules.LocalTimeType(
            utcOffset: daylightOffset, isDaylightSaving: true, abbreviation: daylightName)
        let start: Change
        let end: Change
        if parser.atEnd {
            // What glibc assumes when a string names daylight time but no rule: the United States' rules.
            start = Change(day: .monthWeekDay(month: 3, week: 2, weekday: 0), time: 7200)
            end = Change(day: .monthWeekDay(month: 11, week: 1, weekday: 0), time: 7200)
        } else {
            try parser.expect(",")
            start = try parser.change()
            try parser.expect(",")
            end = try parser.change()
        }
        guard parser.atEnd else { throw parser.failure("unexpected text after the rules") }
        daylight = Daylight(type: type, start: start, end: end)
    }

    /// The local time type at `instant` (seconds since 1970 UTC).
    public func localTimeType(at instant: Int) -> ZoneRules.LocalTimeType {
        guard let rules = daylight else { return standard }
        return isDaylight(at: instant, rules) ? rules.type : standard
    }

    /// The UTC offset at `instant`, in seconds east.
    public func utcOffset(at instant: Int) -> Int {
        guard let rules = daylight else { return standard.utcOffset }
        return isDaylight(at: instant, rules) ? rules.type.utcOffset : standard.utcOffset
    }

    /// Whether daylight time is in effect at `instant`: the last change at or before it decides, looking a
    /// year either side because a rule time may move a change by days into the neighbouring year. An end
    /// and a start at the same instant (daylight time all year) leave daylight time in effect.
    func isDaylight(at instant: Int, _ rules: Daylight) -> Bool {
        let instant = Self.clamped(instant)
        let year = LocalDateTime.civil(fromDays: WallClock.floorDiv(instant, 86_400)).year
        var latest = Int.min
        var latestIsStart = false
        for year in year - 1...year + 1 {
            let start = self.instant(of: rules.start, in: year, offset: standard.utcOffset)
            let end = self.instant(of: rules.end, in: year, offset: rules.type.utcOffset)
            if end <= instant, end > latest || (end == latest && !latestIsStart) {
                latest = end
                latestIsStart = false
            }
            if start <= instant, start >= latest {
                latest = start
                latestIsStart = true
            }
        }
        return latestIsStart
    }

    /// The instants in `low...high` at which the rules change between standard and daylight time.
    public func transitions(from low: Int, through high: Int) -> [Int] {
        guard let rules = daylight, low <= high else { return [] }
        let (low, high) = (Self.clamped(low), Self.clamped(high))
        let first = LocalDateTime.civil(fromDays: WallClock.floorDiv(low, 86_400)).year
        let last = LocalDateTime.civil(fromDays: WallClock.floorDiv(high, 86_400)).year
        // A window of more than a few years is never asked for; the bound keeps a caller's mistake cheap.
        let years = (first - 1)...min(last + 1, first + 400)
        return changes(rules, years: years).map(\.time).filter { low <= $0 && $0 <= high }.sorted()
    }

    /// Instants within ±2^52 seconds (some 140 million years), so the arithmetic on years and days
    /// cannot overflow for any `Int` a caller passes.
    static func clamped(_ instant: Int) -> Int { min(max(instant, -(1 << 52)), 1 << 52) }

    func changes(_ rules: Daylight, years: ClosedRange<Int>) -> [(time: Int, isStart: Bool)] {
        var result: [(time: Int, isStart: Bool)] = []
        for year in years {
            result.append((instant(of: rules.start, in: year, offset: standard.utcOffset), true))
            result.append((instant(of: rules.end, in: year, offset: rules.type.utcOffset), false))
        }
        return result
    }

    /// The instant of `change` in `year`, its time read on a clock `offset` seconds east of UTC.
    func instant(of change: Change, in year: Int, offset: Int) -> Int {
        let january1 = LocalDateTime.days(fromCivil: year, 1, 1)
        let day: Int
        switch change.day {
        case .julian(let n):
            day = january1 + n - 1 + (n >= 60 && LocalDateTime.isLeapYear(year) ? 1 : 0)
        case .zeroBased(let n):
            day = january1 + n
        case .monthWeekDay(let month, let week, let weekday):
            let first = LocalDateTime.days(fromCivil: year, month, 1)
            // 1970-01-01 was a Thursday (weekday 4).
            let firstWeekday = ((first + 4) % 7 + 7) % 7
            var dayOfMonth = (weekday - firstWeekday + 7) % 7 + 7 * (week - 1)
            let length = LocalDateTime.daysInMonth(year: year, month: month)
            while dayOfMonth >= length { dayOfMonth -= 7 }
            day = first + dayOfMonth
        }
        return day * 86_400 + change.time - offset
    }

    /// A cursor over the string that reports where it went wrong.
    struct Parser {
        let bytes: [UInt8]
        let source: String
        let text: String
        var position = 0

        var atEnd: Bool { position == bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }

        func failure(_ what: String) -> TZifError {
            TZifError("\(source) \"\(text)\": \(what) at character \(position + 1)")
        }

        mutating func expect(_ character: Character) throws {
            guard peek == character.asciiValue else { throw failure("expected \"\(character)\"") }
            position += 1
        }

        /// `CET`, or `<+0330>` quoted: at least three letters, or in quotes letters, digits, + and -.
        mutating func name() throws -> String {
            let start = position
            if peek == UInt8(ascii: "<") {
                position += 1
                let inner = position
                while let byte = peek, byte != UInt8(ascii: ">") {
                    guard isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
                    else { throw failure("a quoted zone abbreviation holds only letters, digits, + and -") }
                    position += 1
                }
                guard peek == UInt8(ascii: ">") else { throw failure("a quoted zone abbreviation is not closed") }
                guard position - inner >= 3 else { throw failure("a zone abbreviation needs at least 3 characters") }
                position += 1
                return String(decoding: bytes[inner..<position - 1], as: UTF8.self)
            }
            while let byte = peek, isLetter(byte) { position += 1 }
            guard position - start >= 3 else {
                throw failure("expected a zone abbreviation of at least 3 letters (or one quoted in <>)")
            }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }

        /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `hoursUpTo`.
        mutating func offset(hoursUpTo maximum: Int) throws -> Int {
            var sign = 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") {
                sign = peek == UInt8(ascii: "-") ? -1 : 1
                position += 1
            }
            let hours = try number(maxDigits: 3, "hours")
            guard hours <= maximum else { throw failure("\(hours) hours is more than \(maximum)") }
            var seconds = hours * 3600
            for unit in [60, 1] {
                guard peek == UInt8(ascii: ":") else { break }
                position += 1
                let value = try number(maxDigits: 2, unit == 60 ? "minutes" : "seconds")
                guard value <= 59 else { throw failure("\(value) is not a minute or second (0…59)") }
                seconds += value * unit
            }
            return sign * seconds
        }

        /// `Jn`, `n` or `Mm.w.d`, then an optional `/time`.
        mutating func change() throws -> Change {
            let day: Day
            if peek == UInt8(ascii: "J") {
                position += 1
                let n = try number(maxDigits: 3, "Julian day")
                guard (1...365).contains(n) else { throw failure("a Julian day is 1…365, not \(n)") }
                day = .julian(n)
            } else if peek == UInt8(ascii: "M") {
                position += 1
                let month = try number(maxDigits: 2, "month")
                try expect(".")
                let week = try number(maxDigits: 1, "week")
                try expect(".")
                let weekday = try number(maxDigits: 1, "weekday")
                guard (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday) else {
                    throw failure("Mm.w.d needs a month 1…12, a week 1…5 and a weekday 0…6")
                }
                day = .monthWeekDay(month: month, week: week, weekday: weekday)
            } else {
                let n = try number(maxDigits: 3, "day of the year")
                guard (0...365).contains(n) else { throw failure("a day of the year is 0…365, not \(n)") }
                day = .zeroBased(n)
            }
            var time = 7200
            if peek == UInt8(ascii: "/") {
                position += 1
                time = try offset(hoursUpTo: 167)
            }
            return Change(day: day, time: time)
        }

        mutating func number(maxDigits: Int, _ what: String) throws -> Int {
            let start = position
            var value = 0
            while let byte = peek, isDigit(byte), position - start < maxDigits {
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                position += 1
            }
            guard position > start else { throw failure("expected a number (\(what))") }
            return value
        }

        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
        }

        func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
    }
}
