import Foundation

/// A DATE or DATE-TIME value with the zone it is written in.
public enum ICalendarTime: Hashable, Sendable {
    /// `VALUE=DATE`: a day (its midnight, on the reader's clock).
    case date(LocalDateTime)
    /// A local time without a zone: the same wall clock wherever the reader is.
    case floating(LocalDateTime)
    /// A time ending in `Z`.
    case utc(LocalDateTime)
    /// A local time in the zone `TZID=` names.
    case zoned(LocalDateTime, tzid: String)

    /// The wall-clock time as written.
    public var local: LocalDateTime {
        switch self {
        case .date(let t), .floating(let t), .utc(let t), .zoned(let t, _): t
        }
    }

    public var isDate: Bool {
        if case .date = self { return true }
        return false
    }

    /// The values of a DTSTART, DUE, RECURRENCE-ID, EXDATE or RDATE property (comma-separated; a PERIOD
    /// `start/end` counts by its start).
    public static func values(of property: ICalendarProperty) throws(ICalendarError) -> [ICalendarTime] {
        let isDate = property.parameter("VALUE")?.uppercased() == "DATE"
        let tzid = property.parameter("TZID")
        var result: [ICalendarTime] = []
        for piece in property.value.split(separator: ",") {
            let text = piece.split(separator: "/").first.map(String.init) ?? ""
            guard let time = parse(text.trimmingCharacters(in: .whitespaces), isDate: isDate, tzid: tzid) else {
                throw ICalendarError(
                    line: property.line,
                    "\(property.name) \"\(text)\" is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS, "
                        + "with Z for UTC)")
            }
            result.append(time)
            guard result.count <= 10_000 else {
                throw ICalendarError(line: property.line, "\(property.name) lists more than 10000 dates")
            }
        }
        guard !result.isEmpty else { throw ICalendarError(line: property.line, "\(property.name) is empty") }
        return result
    }

    /// The one value of a property that has one.
    public static func value(of property: ICalendarProperty) throws(ICalendarError) -> ICalendarTime {
        let all = try values(of: property)
        return all[0]
    }

    static func parse(_ text: String, isDate: Bool, tzid: String?) -> ICalendarTime? {
        let bytes = Array(text.utf8)
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= bytes.count else { return nil }
            var value = 0
            for b in bytes[from..<(from + count)] {
                guard b >= 0x30 && b <= 0x39 else { return nil }
                value = value * 10 + Int(b - 0x30)
            }
            return value
        }
        guard let year = number(0, 4), let month = number(4, 2), let day = number(6, 2), (1...12).contains(month),
            year >= 1, day >= 1, day <= LocalDateTime.daysInMonth(year: year, month: month)
        else { return nil }
        if bytes.count == 8 { return .date(LocalDateTime(year: year, month: month, day: day)) }
        guard !isDate, bytes.count == 15 || (bytes.count == 16 && (bytes[15] == 0x5A || bytes[15] == 0x7A)),
            bytes[8] == 0x54 || bytes[8] == 0x74,
            let hour = number(9, 2), let minute = number(11, 2), let second = number(13, 2), hour < 24, minute < 60,
            second <= 60
        else { return nil }
        let local = LocalDateTime(
            year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
        if bytes.count == 16 { return .utc(local) }
        if let tzid { return .zoned(local, tzid: tzid) }
        return .floating(local)
    }

    /// `20261204T201500`, `20261204T201500Z` or `20261204`.
    public var text: String {
        let t = local
        let date = String(format: "%04d%02d%02d", t.year, t.month, t.day)
        switch self {
        case .date: return date
        case .utc: return date + String(format: "T%02d%02d%02dZ", t.hour, t.minute, t.second)
        case .floating, .zoned: return date + String(format: "T%02d%02d%02d", t.hour, t.minute, t.second)
        }
    }

    /// A property holding this value, with `TZID` or `VALUE=DATE` as it needs.
    public func property(_ name: String) -> ICalendarProperty {
        switch self {
        case .date: ICalendarProperty(name, text, parameters: ["VALUE": ["DATE"]])
        case .zoned(_, let tzid): ICalendarProperty(name, text, parameters: ["TZID": [tzid]])
        case .floating, .utc: ICalendarProperty(name, text)
        }
    }
}

/// A DURATION value: `-P1D`, `PT15M`, `P1W`, `-P0DT0H30M0S`. Weeks and days are nominal (calendar days,
/// the same wall-clock time), hours, minutes and seconds exact, as RFC 5545 defines them. Read leniently
/// where a calendar program writes it wrongly (`-P300S`, without the `T`).
public struct ICalendarDuration: Hashable, Sendable, CustomStringConvertible {
    /// Signed: weeks × 7 + days.
    public var days: Int
    /// Signed: hours, minutes and seconds.
    public var seconds: Int

    public init(days: Int = 0, seconds: Int = 0) {
        self.days = days
        self.seconds = seconds
    }

    /// At most this many days either way (a century), so that sums cannot overflow.
    static let limitDays = 36_600

    public static func parse(_ text: String) -> ICalendarDuration? {
        var bytes = Array(text.trimmingCharacters(in: .whitespaces).uppercased().utf8)[...]
        var sign = 1
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") {
            if bytes.first == UInt8(ascii: "-") { sign = -1 }
            bytes = bytes.dropFirst()
        }
        guard bytes.first == UInt8(ascii: "P") else { return nil }
        bytes = bytes.dropFirst()
        var days = 0
        var seconds = 0
        var inTime = false
        var sawUnit = false
        var number: Int?
        for b in bytes {
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let value = (number ?? 0) * 10 + Int(b - 0x30)
                guard value <= limitDays * 86_400 else { return nil }
                number = value
            case UInt8(ascii: "T"):
                guard !inTime, number == nil else { return nil }
                inTime = true
            default:
                guard let n = number else { return nil }
                // Hours, minutes and seconds are read without the `T` too (calcurse writes `-P300S`):
                // durations have no months, so `M` can only mean minutes.
                switch (b, inTime) {
                case (UInt8(ascii: "W"), false): days += n * 7
                case (UInt8(ascii: "D"), false): days += n
                case (UInt8(ascii: "H"), _): seconds += n * 3600
                case (UInt8(ascii: "M"), _): seconds += n * 60
                case (UInt8(ascii: "S"), _): seconds += n
                default: return nil
                }
                guard days <= limitDays, seconds <= limitDays * 86_400 else { return nil }
                number = nil
                sawUnit = true
            }
        }
        guard sawUnit, number == nil else { return nil }
        return ICalendarDuration(days: sign * days, seconds: sign * seconds)
    }

    /// `-P1DT15M`, `PT0S`; weeks are written as days.
    /// A duration whose days and seconds have opposite signs (an alarm related to an event's end) cannot be
    /// written in RFC 5545; its days are then written as 24 hours each.
    public var description: String {
        var (days, seconds) = (days, seconds)
        if (days < 0 && seconds > 0) || (days > 0 && seconds < 0) { (days, seconds) = (0, seconds + days * 86_400) }
        let negative = days < 0 || seconds < 0
        let (d, s) = (abs(days), abs(seconds))
        var text = negative ? "-P" : "P"
        if d > 0 { text += "\(d)D" }
        if s > 0 || d == 0 {
            text += "T"
            let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60)
            if h > 0 { text += "\(h)H" }
            if m > 0 { text += "\(m)M" }
            if sec > 0 || (h == 0 && m == 0) { text += "\(sec)S" }
        }
        return text
    }
}
