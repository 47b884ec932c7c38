import Foundation

extension WallClock {
    /// ISO 8601 with the local offset, e.g. `2026-12-04T20:15:00+01:00`: what `chime next` prints.
    ///
    /// Offsets with seconds (local mean time before 1900) are written `+00:53:28`; fractions of a
    /// second are dropped.
    public static func iso8601(_ instant: Date, in zone: Zone) -> String {
        let local = localDateTime(for: instant, in: zone)
        return local.description + offsetString(utcOffset(at: instant, in: zone))
    }

    /// ISO 8601 as Foundation's `ISO8601FormatStyle` writes it by default, `Z` for a zero offset and the
    /// offset's hours and minutes without a colon: `2026-12-04T19:15:00Z` in UTC, `2026-12-04T20:15:00+0100`
    /// in Berlin. What logs, history records and chime's listings show.
    public static func timestamp(_ instant: Date, in zone: Zone = .utc) -> String {
        let offset = utcOffset(at: instant, in: zone)
        let local = localDateTime(for: instant, in: zone).description
        guard offset != 0 else { return local + "Z" }
        return local + offsetString(offset).filter { $0 != ":" }
    }

    /// `+01:00`, `-03:30`, `+05:45`, `+00:00`.
    public static func offsetString(_ offsetSeconds: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let sign = offsetSeconds < 0 ? "-" : "+"
        let magnitude = abs(offsetSeconds)
        var text = "\(sign)\(two(magnitude / 3600)):\(two(magnitude / 60 % 60))"
        if magnitude % 60 != 0 { text += ":\(two(magnitude % 60))" }
        return text
    }
}
