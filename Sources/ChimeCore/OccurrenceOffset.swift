import Foundation

/// How long before (negative) or after each occurrence of its rule an entry fires: a calendar's alarm
/// "15 minutes before" every event of a series. Days are calendar days (the same wall-clock time, one
/// day earlier, across a daylight-saving change), hours, minutes and seconds exact, as RFC 5545 reads
/// an alarm's `TRIGGER:-P1DT15M`.
///
/// Written as a signed duration: `-15m`, `-1d`, `+2h`, `-1w2d` (units w, d, h, m, s); at most a year
/// either way.
public struct OccurrenceOffset: Codable, Hashable, Sendable, CustomStringConvertible {
    public var days: Int
    public var seconds: Int

    public init(days: Int = 0, seconds: Int = 0) {
        self.days = days
        self.seconds = seconds
    }

    public static let limitDays = 366

    public var isZero: Bool { days == 0 && seconds == 0 }

    /// Why it cannot be used, or nil.
    public var problem: String? {
        guard abs(days) <= Self.limitDays, abs(seconds) <= Self.limitDays * 86_400,
            abs(days * 86_400 + seconds) <= Self.limitDays * 86_400
        else { return "an offset is at most a year (\(Self.limitDays)d) either way" }
        return nil
    }

    /// Reads `-15m`, `+1d`, `-1d2h30m`, `2h`; a sign holds for the parts after it, up to the next sign
    /// (`+1d-15m`: a day later, then 15 minutes earlier, as an alarm 15 minutes before an all-day event's end).
    public static func parse(_ text: String) throws(TimeInputError) -> OccurrenceOffset {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var sign = 1
        let expected = "a signed duration such as -15m, -1d or +2h (units w, d, h, m, s)"
        var offset = OccurrenceOffset()
        var number: Int?
        var parts = 0
        var signPending = false
        for (index, character) in trimmed.enumerated() {
            if character == "-" || character == "+", number == nil, !signPending {
                sign = character == "-" ? -1 : 1
                signPending = true
                continue
            }
            if let digit = character.wholeNumberValue, character.isASCII {
                number = (number ?? 0) * 10 + digit
                guard number! <= 10_000_000 else {
                    throw TimeInputError(input: text, offset: index, expected: expected)
                }
                continue
            }
            guard let n = number else { throw TimeInputError(input: text, offset: index, expected: expected) }
            switch character {
            case "w": offset.days += sign * 7 * n
            case "d": offset.days += sign * n
            case "h": offset.seconds += sign * 3600 * n
            case "m": offset.seconds += sign * 60 * n
            case "s": offset.seconds += sign * n
            default: throw TimeInputError(input: text, offset: index, expected: expected)
            }
            number = nil
            parts += 1
            signPending = false
        }
        guard parts > 0, number == nil, !signPending else {
            throw TimeInputError(input: text, offset: trimmed.count, expected: expected)
        }
        if offset.problem != nil {
            throw TimeInputError(input: text, offset: 0, expected: "an offset of at most a year (366d) either way")
        }
        return offset
    }

    /// `-15m`, `+1d`, `-1d2h`, `+1d-15m` (days and seconds of opposite signs); `0s` for none. `parse`
    /// reads it back as the same offset.
    public var description: String {
        func part(_ days: Int, _ seconds: Int) -> String {
            var text = ""
            let (d, s) = (abs(days), abs(seconds))
            if d > 0 { text += d % 7 == 0 ? "\(d / 7)w" : "\(d)d" }
            if s / 3600 > 0 { text += "\(s / 3600)h" }
            if s % 3600 / 60 > 0 { text += "\(s % 3600 / 60)m" }
            if s % 60 > 0 { text += "\(s % 60)s" }
            return text
        }
        if isZero { return "0s" }
        if days != 0, seconds != 0, (days < 0) != (seconds < 0) {
            return "\(days < 0 ? "-" : "+")\(part(days, 0))\(seconds < 0 ? "-" : "+")\(part(0, seconds))"
        }
        return (days < 0 || seconds < 0 ? "-" : "+") + part(days, seconds)
    }

    /// In words: `15 minutes before`, `1 day after`.
    public var words: String {
        func amount(_ days: Int, _ seconds: Int) -> String {
            var pieces: [String] = []
            let (d, s) = (abs(days), abs(seconds))
            func add(_ n: Int, _ unit: String) { if n > 0 { pieces.append("\(n) \(unit)\(n == 1 ? "" : "s")") } }
            if d % 7 == 0 { add(d / 7, "week") } else { add(d, "day") }
            add(s / 3600, "hour")
            add(s % 3600 / 60, "minute")
            add(s % 60, "second")
            return pieces.joined(separator: " ")
        }
        if isZero { return "at the time" }
        if days != 0, seconds != 0, (days < 0) != (seconds < 0) {
            return "\(amount(days, 0)) \(days < 0 ? "before" : "after"), then \(amount(0, seconds)) "
                + (seconds < 0 ? "earlier" : "later")
        }
        return amount(days, seconds) + (days < 0 || seconds < 0 ? " before" : " after")
    }

    /// `instant` moved by the offset: days on the wall clock of `zone` (a time a daylight-saving gap
    /// skips becomes the gap's end, one that occurs twice the first), then the seconds.
    public func apply(to instant: Date, in zone: Zone) -> Date {
        var moved = instant
        if days != 0 {
            let local = WallClock.localDateTime(for: instant, in: zone).adding(days: days)
            moved = WallClock.instants(for: local, in: zone).first ?? instant.addingTimeInterval(Double(days) * 86_400)
            moved += instant.timeIntervalSince1970 - instant.timeIntervalSince1970.rounded(.down)
        }
        return moved.addingTimeInterval(Double(seconds))
    }

    /// The most a day-offset's exact length is taken to differ from 24 hours × days: the daylight-saving
    /// changes within the span (an hour, two at most in any zone today). Used to start the search for the
    /// first occurrence whose moved time is after a given instant. (A zone's move across the date line,
    /// as Samoa's in 2011, can move one occurrence by the day it skipped.)
    static let daySlack: TimeInterval = 3 * 3600
}

extension Recurrence {
    /// The zone whose wall clock a day-offset moves occurrences on.
    func offsetZone(systemTimeZone: Zone) -> Zone {
        switch self {
        case .rrule(_, let zone): zone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
        case .onCalendar(let spec): spec.timeZoneIdentifier.flatMap { Zone(identifier: $0) } ?? systemTimeZone
        case .dateRule(let rule): rule.timeZone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
        case .shifted(let base, _): base.offsetZone(systemTimeZone: systemTimeZone)
        }
    }

    /// The rule with every occurrence moved by `offset` (none when it is zero).
    public func shifted(by offset: OccurrenceOffset?) -> Recurrence {
        guard let offset, !offset.isZero else { return self }
        return .shifted(self, by: offset)
    }
}
