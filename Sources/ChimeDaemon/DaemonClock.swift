import Dispatch
import Foundation
import Synchronization

/// The wall clock as chimed reads it: the system clock, plus an offset that only the test hook sets, so
/// that a test can make chimed live through a clock jump without moving the machine's clock.
final class DaemonClock: Sendable {
    private let offset = Mutex<TimeInterval>(0)

    func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    /// The system wall time, in seconds since the epoch, at which this clock shows `date`.
    func wallSeconds(for date: Date) -> Double { date.timeIntervalSince1970 - offset.withLock { $0 } }

    /// The system wall time at which this clock shows `date`.
    func wallTime(for date: Date) -> DispatchWallTime {
        let seconds = wallSeconds(for: date)
        let whole = seconds.rounded(.down)
        return DispatchWallTime(timespec: timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9)))
    }

    /// Reads the offset in seconds from `file` (a missing or unreadable file means 0).
    func readOffset(from file: String) {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        let seconds = TimeInterval(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        offset.withLock { $0 = seconds }
    }
}

/// The system time zone, read where the system keeps it, so a change is seen while chimed runs
/// (Foundation's `TimeZone.current` is read once per process).
enum SystemZone {
    /// `TZ` when set; else the zone `localtime` links to (`…/zoneinfo/Europe/Berlin`); else
    /// `/etc/timezone`; else Foundation's idea; else UTC.
    static func current(
        localtime: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> TimeZone {
        if let tz = environment["TZ"], !tz.isEmpty {
            let name = tz.hasPrefix(":") ? String(tz.dropFirst()) : tz
            if let zone = TimeZone(identifier: name) { return zone }
        }
        if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: localtime),
            let range = target.range(of: "zoneinfo/"),
            let zone = TimeZone(identifier: String(target[range.upperBound...]))
        {
            return zone
        }
        if localtime == "/etc/localtime",
            let name = try? String(contentsOfFile: "/etc/timezone", encoding: .utf8),
            let zone = TimeZone(identifier: name.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return zone
        }
        return TimeZone.current
    }
}
