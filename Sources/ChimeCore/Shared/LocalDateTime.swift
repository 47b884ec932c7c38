/// A wall-clock date and time with no time zone: what a person reads on a clock.
///
/// Calendar rules expand in local time first; turning a local time into an instant is a separate,
/// explicit step (see the DST policy), because one local time can name zero, one or two instants.
/// Dates are in the proleptic Gregorian calendar.
public struct LocalDateTime: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(year: Int, month: Int, day: Int, hour: Int = 0, minute: Int = 0, second: Int = 0) {
        self.year = year
        self.month = month
        self.day = day
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Builds the value from days since 1970-01-01 and seconds into that day.
    public init(daysSinceEpoch: Int, secondsIntoDay: Int = 0) {
        let (y, m, d) = LocalDateTime.civil(fromDays: daysSinceEpoch)
        self.init(
            year: y, month: m, day: d, hour: secondsIntoDay / 3600, minute: secondsIntoDay / 60 % 60,
            second: secondsIntoDay % 60)
    }

    /// Parses `YYYY-MM-DDTHH:MM[:SS]` or `YYYY-MM-DD` (midnight); nil when malformed or out of range.
    public init?(iso text: String) {
        let parts = text.split(separator: "T", maxSplits: 1, omittingEmptySubsequences: false)
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
            let y = Int(date[0]), let mo = Int(date[1]), let d = Int(date[2])
        else { return nil }
        var h = 0
        var mi = 0
        var s = 0
        if parts.count == 2 {
            let time = parts[1].split(separator: ":", omittingEmptySubsequences: false)
            guard time.count == 2 || time.count == 3, time.allSatisfy({ $0.count == 2 }),
                let hh = Int(time[0]), let mm = Int(time[1])
            else { return nil }
            h = hh
            mi = mm
            if time.count == 3 {
                guard let ss = Int(time[2]) else { return nil }
                s = ss
            }
        }
        guard (1...12).contains(mo), (1...LocalDateTime.daysInMonth(year: y, month: mo)).contains(d),
            (0...23).contains(h), (0...59).contains(mi), (0...59).contains(s)
        else { return nil }
        self.init(year: y, month: mo, day: d, hour: h, minute: mi, second: s)
    }

    /// Days since 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int { LocalDateTime.days(fromCivil: year, month, day) }

    /// Seconds since midnight.
    public var secondsIntoDay: Int { hour &* 3600 &+ minute &* 60 &+ second }

    /// Seconds since 1970-01-01T00:00:00 of this wall-clock time read as if it were UTC.
    public var secondsSinceEpoch: Int { daysSinceEpoch &* 86_400 &+ secondsIntoDay }

    /// ISO 8601 weekday: Monday is 1, Sunday is 7.
    public var isoWeekday: Int {
        let d = daysSinceEpoch  // 1970-01-01 was a Thursday (4)
        return ((d % 7 + 7) % 7 + 3) % 7 + 1
    }

    /// Day of the year, 1-based.
    public var dayOfYear: Int { daysSinceEpoch &- LocalDateTime.days(fromCivil: year, 1, 1) &+ 1 }

    public func adding(days: Int) -> LocalDateTime {
        LocalDateTime(daysSinceEpoch: daysSinceEpoch &+ days, secondsIntoDay: secondsIntoDay)
    }

    public func adding(seconds: Int) -> LocalDateTime {
        let total = secondsSinceEpoch &+ seconds
        let days = WallClock.floorDiv(total, 86_400)
        return LocalDateTime(daysSinceEpoch: days, secondsIntoDay: total &- days &* 86_400)
    }

    /// `YYYY-MM-DDTHH:MM:SS`.
    public var description: String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var y = String(year)
        while y.count < 4 { y = "0" + y }
        return "\(y)-\(two(month))-\(two(day))T\(two(hour)):\(two(minute)):\(two(second))"
    }

    public static func < (a: LocalDateTime, b: LocalDateTime) -> Bool {
        (a.year, a.month, a.day, a.hour, a.minute, a.second) < (b.year, b.month, b.day, b.hour, b.minute, b.second)
    }

    public static func isLeapYear(_ y: Int) -> Bool { (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 }

    public static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2: return isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days_from_civil: exact for every proleptic Gregorian date whose day count fits
    /// in an `Int` (years within about ±2.5 × 10^16). Total: values beyond that (a decoded date with
    /// `Int64` extremes) wrap around instead of trapping, and callers range-check dates before use.
    public static func days(fromCivil y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 &- 1 : y0
        let era = (y >= 0 ? y : y &- 399) / 400
        let yoe = y &- era &* 400
        let doy = (153 &* (m > 2 ? m &- 3 : m &+ 9) &+ 2) / 5 &+ d &- 1
        let doe = yoe &* 365 &+ yoe / 4 &- yoe / 100 &+ doy
        return era &* 146_097 &+ doe &- 719_468
    }

    /// The inverse of `days(fromCivil:_:_:)`; total like it.
    public static func civil(fromDays z0: Int) -> (year: Int, month: Int, day: Int) {
        let z = z0 &+ 719_468
        let era = (z >= 0 ? z : z &- 146_096) / 146_097
        let doe = z &- era &* 146_097
        let yoe = (doe &- doe / 1460 &+ doe / 36524 &- doe / 146_096) / 365
        let doy = doe &- (365 &* yoe &+ yoe / 4 &- yoe / 100)
        let mp = (5 &* doy &+ 2) / 153
        let d = doy &- (153 &* mp &+ 2) / 5 &+ 1
        let m = mp < 10 ? mp &+ 3 : mp &- 9
        return (yoe &+ era &* 400 &+ (m <= 2 ? 1 : 0), m, d)
    }

    /// Whether this is a real date and time of the years 1 to 9999 (month 1…12, a day the month has,
    /// hour 0…23, minute and second 0…59): what a rule decoded from outside must hold before use.
    public var isValid: Bool {
        (1...9999).contains(year) && (1...12).contains(month)
            && (1...LocalDateTime.daysInMonth(year: year, month: month)).contains(day) && (0...23).contains(hour)
            && (0...59).contains(minute) && (0...59).contains(second)
    }
}

/// A day of the week, numbered as ISO 8601 does (Monday 1 … Sunday 7).
public enum Weekday: Int, CaseIterable, Codable, Sendable, Comparable {
    case monday = 1, tuesday, wednesday, thursday, friday, saturday, sunday

    public static func < (a: Weekday, b: Weekday) -> Bool { a.rawValue < b.rawValue }
}
