import Foundation

/// C's `struct tm`, with the same field conventions (months 0–11, years since 1900, Sunday = 0 weekday,
/// `isDaylight` -1/0/1), because systemd's search pokes at out-of-range fields and lets `mktime` normalise
/// them; reproducing that faithfully needs the same representation.
struct OnCalendarBrokenDownTime: Equatable, Sendable {
    var second = 0
    var minute = 0
    var hour = 0
    var dayOfMonth = 1
    var month = 0
    var year = 70
    var weekday = 0
    var dayOfYear = 0
    var isDaylight = -1
}

/// glibc 2.36's `localtime_r`/`mktime` (or `gmtime_r`/`timegm`) for one zone, rebuilt on the zone's rules
/// from the system's tz database (`WallClock.localTimeType`), the same data glibc reads.
///
/// Why not just ask Foundation for "the instant of this wall-clock time"? Because systemd's answer in
/// daylight-saving gaps and overlaps is whatever glibc's `mktime` picks, and `mktime` keeps a hidden,
/// mutable guess of the last UTC offset that decides which of two repeated times it returns and where a
/// skipped time lands. This type ports `__mktime_internal` line by line, guess included, so a search that
/// makes the same calls in the same order gets the same answers.
struct OnCalendarZoneArithmetic {
    /// nil: UTC (gmtime/timegm).
    let zone: Zone?
    /// glibc's `static mktime_offset_t localtime_offset`: UTC minus local time of the previous result.
    var offsetGuess = 0

    init(zone: Zone?) {
        self.zone = zone
    }

    private static let monthStartDay: [[Int]] = [
        [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365],
        [0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366],
    ]

    /// `localtime_r` (or `gmtime_r` for UTC). Instants are whole seconds since 1970.
    func convert(_ t: Int) -> OnCalendarBrokenDownTime? {
        // Far outside anything a calendar spec can reach; glibc would report EOVERFLOW near here too.
        guard t > -(1 << 40) && t < (1 << 40) else { return nil }
        var offset = 0
        var daylight = 0
        if let zone {
            let type = WallClock.localTimeType(at: Date(timeIntervalSince1970: TimeInterval(t)), in: zone)
            offset = type.utcOffset
            daylight = type.isDaylightSaving ? 1 : 0
        }
        let local = t + offset
        let days = Self.floorDivide(local, 86_400)
        let secondsIntoDay = local - days * 86_400
        let (y, m, d) = LocalDateTime.civil(fromDays: days)
        var tm = OnCalendarBrokenDownTime()
        tm.year = y - 1900
        tm.month = m - 1
        tm.dayOfMonth = d
        tm.hour = secondsIntoDay / 3600
        tm.minute = secondsIntoDay / 60 % 60
        tm.second = secondsIntoDay % 60
        tm.weekday = ((days + 4) % 7 + 7) % 7  // 1970-01-01 was a Thursday
        tm.dayOfYear = days - LocalDateTime.days(fromCivil: y, 1, 1)
        tm.isDaylight = daylight
        return tm
    }

    /// glibc `mktime` (or `timegm`): normalises `tm` in place and returns the instant, or -1 on failure
    /// (leaving `tm` untouched), exactly as `__mktime_internal` does.
    mutating func makeTime(_ tm: inout OnCalendarBrokenDownTime) -> Int {
        if zone == nil { tm.isDaylight = 0 }  // timegm() clears tm_isdst before probing
        var remainingProbes = 6
        var sec = tm.second
        let min = tm.minute
        let hour = tm.hour
        let mday = tm.dayOfMonth
        let mon = tm.month
        let isdst = tm.isDaylight
        var dst2 = 0

        let monRemainder = mon % 12
        let negativeMonRemainder = monRemainder < 0 ? 1 : 0
        let monYears = mon / 12 - negativeMonRemainder
        let year = tm.year + monYears
        let monYday = Self.monthStartDay[Self.isLeap(year) ? 1 : 0][monRemainder + 12 * negativeMonRemainder] - 1
        let yday = monYday + mday

        let off = offsetGuess
        let secRequested = sec
        if sec < 0 { sec = 0 }
        if sec > 59 { sec = 59 }

        let negativeOffsetGuess = 0 &- off
        let t0 = Self.ydhmsDiff(year, yday, hour, min, sec, 70, 0, 0, 0, negativeOffsetGuess)
        var t = t0
        var t1 = t0
        var t2 = t0
        var probe = OnCalendarBrokenDownTime()
        var found = false

        while true {
            guard let converted = convert(t) else { return -1 }
            probe = converted
            let dt = Self.tmDiff(year, yday, hour, min, sec, probe)
            if dt == 0 { break }
            if t == t1 && t != t2
                && (probe.isDaylight < 0
                    || (isdst < 0
                        ? dst2 <= (probe.isDaylight != 0 ? 1 : 0)
                        : (isdst != 0) != (probe.isDaylight != 0)))
            {
                // Oscillating across a spring-forward gap: glibc settles here.
                found = true
                break
            }
            remainingProbes -= 1
            if remainingProbes == 0 { return -1 }
            t1 = t2
            t2 = t
            t += dt
            dst2 = probe.isDaylight != 0 ? 1 : 0
        }

        if !found && Self.isDaylightDifferent(isdst, probe.isDaylight) {
            // The wall-clock time exists but with the other tm_isdst: borrow the offset of the nearest
            // instant that has the requested flag.
            let stride = 601_200
            let durationMax = 536_454_000
            let deltaBound = durationMax / 2 + stride
            var delta = stride
            search: while delta < deltaBound {
                for direction in [-1, 1] {
                    let ot = t + delta * direction
                    guard let otm = convert(ot) else { return -1 }
                    if !Self.isDaylightDifferent(isdst, otm.isDaylight) {
                        let gt = ot + Self.tmDiff(year, yday, hour, min, sec, otm)
                        guard let gtm = convert(gt) else { return -1 }
                        probe = gtm
                        t = gt
                        found = true
                        break search
                    }
                }
                delta += stride
            }
            if !found { return -1 }
        }

        offsetGuess = t &- t0 &- negativeOffsetGuess

        if secRequested != probe.second {
            var adjustment = (sec == 0 && probe.second == 60) ? 1 : 0
            adjustment -= sec
            adjustment += secRequested
            t += adjustment
            guard let converted = convert(t) else { return -1 }
            probe = converted
        }
        tm = probe
        return t
    }

    static func floorDivide(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// glibc's leapyear() on a tm_year value (years since 1900).
    static func isLeap(_ year: Int) -> Bool {
        (year & 3) == 0 && (year % 100 != 0 || ((year / 100) & 3) == ((-(1900 / 100)) & 3))
    }

    static func isDaylightDifferent(_ a: Int, _ b: Int) -> Bool {
        ((a == 0) != (b == 0)) && a >= 0 && b >= 0
    }

    private static func shiftRight(_ a: Int, _ b: Int) -> Int { a >> b }

    /// (year1-yday1 hour1:min1:sec1) − (year0-yday0 hour0:min0:sec0) in seconds, as glibc computes it.
    static func ydhmsDiff(
        _ year1: Int, _ yday1: Int, _ hour1: Int, _ min1: Int, _ sec1: Int,
        _ year0: Int, _ yday0: Int, _ hour0: Int, _ min0: Int, _ sec0: Int
    ) -> Int {
        let a4 = shiftRight(year1, 2) + shiftRight(1900, 2) - ((year1 & 3) == 0 ? 1 : 0)
        let b4 = shiftRight(year0, 2) + shiftRight(1900, 2) - ((year0 & 3) == 0 ? 1 : 0)
        let a100 = (a4 + (a4 < 0 ? 1 : 0)) / 25 - (a4 < 0 ? 1 : 0)
        let b100 = (b4 + (b4 < 0 ? 1 : 0)) / 25 - (b4 < 0 ? 1 : 0)
        let a400 = shiftRight(a100, 2)
        let b400 = shiftRight(b100, 2)
        let interveningLeapDays = (a4 - b4) - (a100 - b100) + (a400 - b400)
        let years = year1 - year0
        let days = 365 * years + yday1 - yday0 + interveningLeapDays
        let hours = 24 * days + hour1 - hour0
        let minutes = 60 * hours + min1 - min0
        return 60 * minutes + sec1 - sec0
    }

    static func tmDiff(
        _ year: Int, _ yday: Int, _ hour: Int, _ min: Int, _ sec: Int, _ tm: OnCalendarBrokenDownTime
    ) -> Int {
        ydhmsDiff(year, yday, hour, min, sec, tm.year, tm.dayOfYear, tm.hour, tm.minute, tm.second)
    }
}
