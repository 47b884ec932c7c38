import Foundation

/// One element of a comma-separated list in a calendar field, exactly as systemd stores it.
///
/// `start` alone is a single value; `start/repetition` matches `start`, `start + repetition`, … up to the
/// field's end; `start..stop` (optionally `/repetition`) is bounded. Seconds are kept in microseconds, as
/// systemd does, so fractional seconds compare and print exactly like `systemd-analyze`.
struct OnCalendarComponent: Hashable, Sendable {
    /// First matching value (for `~` days: how many days before the month's end, 1 being the last day).
    var start: Int
    /// Last matching value, or -1 when the element is unbounded.
    var stop: Int
    /// Step between matches, or 0 for a single value.
    var repetition: Int

    /// systemd sorts each list by (start, stop, repeat) and drops duplicates; this is that order.
    static func precedes(_ a: OnCalendarComponent, _ b: OnCalendarComponent) -> Bool {
        (a.start, a.stop, a.repetition) < (b.start, b.stop, b.repetition)
    }
}

/// A systemd calendar event (`OnCalendar=` in timer units, see systemd.time(7)), such as
/// `Mon..Fri *-*-* 09:00` or `*-02~03 Europe/Berlin`.
///
/// The value mirrors systemd 252's `CalendarSpec` after normalisation, and `nextElapse(after:defaultTimeZone:)`
/// follows systemd's search step by step — including how glibc's `mktime` resolves wall-clock times that a
/// daylight-saving change skips or repeats — so that Chime fires exactly when `systemd-analyze calendar`
/// says a timer would.
///
/// Equality and hashing compare the normalised event, so `mon,fri 10:00` equals `Mon,Fri *-*-* 10:00:00`.
public struct CalendarSpec: Hashable, Sendable, CustomStringConvertible {
    /// Bit 0 is Monday … bit 6 Sunday; -1 means any weekday (systemd's `weekdays_bits`).
    var weekdayBits: Int = -1
    /// The day field counts back from the month's end (`~`).
    var endOfMonth = false
    /// The expression ends in `UTC` (or is an `@timestamp`), so it is evaluated in UTC.
    var isUTC = false
    /// -1 normally; 0 or 1 when the expression named the local zone's standard or daylight abbreviation,
    /// which makes systemd call `mktime` with `tm_isdst` forced to that value.
    var daylightFlag = -1
    /// The local abbreviation written at the end (for example `CET`), kept for printing.
    var localZoneAbbreviation: String?
    /// IANA time zone named at the end of the expression, as written.
    var timeZoneName: String?

    /// nil means `*` (any value).
    var year: [OnCalendarComponent]?
    var month: [OnCalendarComponent]?
    var day: [OnCalendarComponent]?
    var hour: [OnCalendarComponent]?
    var minute: [OnCalendarComponent]?
    /// Seconds in microseconds.
    var microsecond: [OnCalendarComponent]?

    init() {}

    /// The weekdays the event is restricted to, or nil when any weekday matches.
    public var weekdays: Set<Weekday>? {
        guard weekdayBits > 0 else { return nil }
        return Set(Weekday.allCases.filter { weekdayBits & (1 << ($0.rawValue - 1)) != 0 })
    }

    /// The IANA time zone the expression names (`UTC` included), or nil when it follows the system zone.
    public var timeZoneIdentifier: String? {
        if isUTC { return "UTC" }
        return timeZoneName
    }

    /// systemd's "Normalized form", as `systemd-analyze calendar` prints it.
    public var description: String { OnCalendarFormatter.format(self) }

    /// Whether the event carries its own zone (so `defaultTimeZone` is ignored when computing elapses).
    public var hasOwnTimeZone: Bool { isUTC || timeZoneName != nil }
}
