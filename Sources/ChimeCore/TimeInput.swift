import Foundation

/// Parses the time and duration words of the command line: `--at 2026-12-01T09:00:00`, `--at 09:00`,
/// `--in 1h30m`. Pure: `now` and the zone are passed in.
public enum TimeInput {
    /// A duration such as `90s`, `10m`, `1h30m`, `2d`, `1w` (units s, m, h, d, w; at least one part).
    public static func parseDuration(_ text: String) throws(TimeInputError) -> TimeInterval {
        let units: [Character: TimeInterval] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        var total: TimeInterval = 0
        var digits = ""
        var seenUnits = Set<Character>()
        let expected = "a duration such as 90s, 10m, 1h30m or 2d (units s, m, h, d, w)"
        for (offset, c) in text.enumerated() {
            if c.isASCII, c.isNumber {
                digits.append(c)
                continue
            }
            guard let unit = units[Character(c.lowercased())] else {
                throw TimeInputError(input: text, offset: offset, expected: expected)
            }
            guard let n = Int(digits), !seenUnits.contains(Character(c.lowercased())) else {
                throw TimeInputError(input: text, offset: offset, expected: expected)
            }
            seenUnits.insert(Character(c.lowercased()))
            total += TimeInterval(n) * unit
            digits = ""
        }
        guard digits.isEmpty else {
            throw TimeInputError(input: text, offset: text.count, expected: "a unit (s, m, h, d or w) after \(digits)")
        }
        guard !seenUnits.isEmpty else { throw TimeInputError(input: text, offset: 0, expected: expected) }
        guard total > 0 else { throw TimeInputError(input: text, offset: 0, expected: "a duration longer than zero") }
        return total
    }

    /// A whole number of seconds as `parseDuration` reads it back: `90` → `1m30s`, `86400` → `1d`.
    public static func formatDuration(_ seconds: TimeInterval) -> String {
        var left = Int(seconds.rounded())
        guard left > 0 else { return "0s" }
        var text = ""
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] where left >= size {
            text += "\(left / size)\(unit)"
            left %= size
        }
        return text
    }

    /// A local time: ISO 8601 `YYYY-MM-DDTHH:MM[:SS]` in `timeZone`, or `HH:MM[:SS]`, the next time the
    /// clock shows it (today, or tomorrow when it has passed).
    public static func parseTime(_ text: String, now: Date, timeZone: Zone) throws(TimeInputError) -> Date {
        let expected = "a time such as 2026-12-01T09:00:00 (local) or 09:00"
        if text.contains("T") || text.contains("-") {
            // A time that daylight saving skips is its gap's end; one it repeats is its first instant.
            guard let local = LocalDateTime(iso: text), local.isValid,
                let date = WallClock.instants(for: local, in: timeZone).first
            else {
                throw TimeInputError(input: text, offset: 0, expected: expected)
            }
            return date
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2 || parts.count == 3, parts.allSatisfy({ (1...2).contains($0.count) }),
            let hour = Int(parts[0]), let minute = Int(parts[1]), (0...23).contains(hour), (0...59).contains(minute),
            parts.count == 2 || Int(parts[2]).map({ (0...59).contains($0) }) == true
        else { throw TimeInputError(input: text, offset: 0, expected: expected) }
        let second = parts.count == 3 ? Int(parts[2]) ?? 0 : 0
        let today = WallClock.localDateTime(for: now, in: timeZone)
        for days in 0...2 {
            let local = LocalDateTime(
                daysSinceEpoch: today.daysSinceEpoch + days, secondsIntoDay: hour * 3600 + minute * 60 + second)
            if let date = WallClock.instants(for: local, in: timeZone).first, date > now { return date }
        }
        throw TimeInputError(input: text, offset: 0, expected: expected)
    }
}

/// A time or duration that could not be read, with what was expected.
public struct TimeInputError: Error, Hashable, Sendable, CustomStringConvertible {
    public var input: String
    public var offset: Int
    public var expected: String

    public var description: String {
        "cannot read \"\(input)\" (at character \(offset + 1)): expected \(expected)"
    }
}
