/// Prints a `CalendarSpec` the way systemd's `calendar_spec_to_string()` does, byte for byte, so the
/// normalised form Chime shows is the one `systemd-analyze calendar` shows.
enum OnCalendarFormatter {
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let microsecondsPerSecond = 1_000_000

    /// `exact` spells out a seconds list that systemd would abbreviate to `*` because one element covers
    /// every whole second (`0/1,0.5` prints as `*` yet also fires at half seconds), so the text parses back
    /// to the identical value; it is what Codable stores.
    static func format(_ spec: CalendarSpec, exact: Bool = false) -> String {
        var out = ""
        if spec.weekdayBits > 0 && spec.weekdayBits <= 127 {
            out += weekdays(spec.weekdayBits)
            out += " "
        }
        out += chain(spec.year, width: 4, seconds: false)
        out += "-"
        out += chain(spec.month, width: 2, seconds: false)
        out += spec.endOfMonth ? "~" : "-"
        out += chain(spec.day, width: 2, seconds: false)
        out += " "
        out += chain(spec.hour, width: 2, seconds: false)
        out += ":"
        out += chain(spec.minute, width: 2, seconds: false)
        out += ":"
        out += chain(spec.microsecond, width: 2, seconds: true, exact: exact)
        if spec.isUTC {
            out += " UTC"
        } else if let zone = spec.timeZoneName {
            out += " " + zone
        } else if spec.daylightFlag >= 0, let abbreviation = spec.localZoneAbbreviation, !abbreviation.isEmpty {
            out += " " + abbreviation
        }
        return out
    }

    /// Runs of three or more days print as `A..B`, pairs as `A,B` (systemd's format_weekdays()).
    static func weekdays(_ bits: Int) -> String {
        var out = ""
        var runStart = -1
        var needComma = false
        var x = 0
        while x < 7 {
            if bits & (1 << x) != 0 {
                if runStart < 0 {
                    if needComma { out += "," } else { needComma = true }
                    out += weekdayNames[x]
                    runStart = x
                }
            } else if runStart >= 0 {
                if x > runStart + 1 {
                    out += x > runStart + 2 ? ".." : ","
                    out += weekdayNames[x - 1]
                }
                runStart = -1
            }
            x += 1
        }
        if runStart >= 0 && x > runStart + 1 {
            out += x > runStart + 2 ? ".." : ","
            out += weekdayNames[x - 1]
        }
        return out
    }

    /// One field; mirrors format_chain(), including its quirks (`/1` dropped only after a range, the
    /// fraction of a repetition printed even when the whole part was not).
    static func chain(_ components: [OnCalendarComponent]?, width: Int, seconds: Bool, exact: Bool = false) -> String {
        guard let components, !components.isEmpty else { return "*" }
        let unit = seconds ? microsecondsPerSecond : 1
        // chain_is_star(): any element covering every second makes the whole list print as '*'.
        let coversEverySecond = { (c: OnCalendarComponent) in c.start == 0 && c.stop < 0 && c.repetition == unit }
        if seconds
            && (exact
                ? components.count == 1 && coversEverySecond(components[0])
                : components.contains(where: coversEverySecond))
        {
            return "*"
        }
        var parts: [String] = []
        for c in components {
            var s = padded(c.start / unit, width: width)
            if c.start % unit > 0 { s += "." + padded(c.start % unit, width: 6) }
            if c.stop > 0 { s += ".." + padded(c.stop / unit, width: width) }
            if c.stop % unit > 0 { s += "." + padded(c.stop % unit, width: 6) }
            if c.repetition > 0 && !(c.stop > 0 && c.repetition == unit) { s += "/" + String(c.repetition / unit) }
            if c.repetition % unit > 0 { s += "." + padded(c.repetition % unit, width: 6) }
            parts.append(s)
        }
        return parts.joined(separator: ",")
    }

    /// printf's `%0*i`.
    static func padded(_ value: Int, width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
