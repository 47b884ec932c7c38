import ChimeCore
import Dispatch
import Foundation
import Synchronization

/// Where chimed reads the time. Every part of the daemon reads it here and nowhere else, so that a test
/// can give chimed another clock without moving the machine's.
public protocol DaemonClock: Sendable {
    /// The time now.
    func now() -> Date
    /// The system wall time, in seconds since the epoch, at which this clock shows `date` (what a timer
    /// armed on the system's wall clock must be given).
    func wallSeconds(for date: Date) -> Double
}

extension DaemonClock {
    /// The system wall time at which this clock shows `date`.
    func wallTime(for date: Date) -> DispatchWallTime {
        let seconds = wallSeconds(for: date)
        let whole = seconds.rounded(.down)
        return DispatchWallTime(timespec: timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9)))
    }
}

/// The system's wall clock: what chimed reads outside tests.
public struct SystemClock: DaemonClock {
    public init() {}
    public func now() -> Date { Date() }
    public func wallSeconds(for date: Date) -> Double { date.timeIntervalSince1970 }
}

#if CHIME_TEST_HOOKS
    /// The system clock plus an offset read from a file, so that an integration test can make a running
    /// chimed live through a clock jump. Compiled into debug builds only; a release chimed has no such
    /// clock and no way to be told one.
    public final class OffsetClock: DaemonClock {
        private let offset = Mutex<TimeInterval>(0)
        /// The file holding the offset in seconds (a missing or unreadable file means 0).
        public let file: String

        public init(file: String) {
            self.file = file
            readOffset()
        }

        public func now() -> Date { Date().addingTimeInterval(offset.withLock { $0 }) }
        public func wallSeconds(for date: Date) -> Double { date.timeIntervalSince1970 - offset.withLock { $0 } }

        /// Reads the offset from `file` again.
        public func readOffset() {
            let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
            let seconds = TimeInterval(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
            offset.withLock { $0 = seconds }
        }
    }
#endif

/// The kernel's clocks that tell the machine's sleeps: CLOCK_BOOTTIME runs on while the machine is
/// suspended, CLOCK_MONOTONIC does not.
enum SleepClock {
    private static func seconds(_ id: clockid_t) -> Double {
        var time = timespec()
        guard clock_gettime(id, &time) == 0 else { return 0 }
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Seconds since the machine started, its sleeps included.
    static func secondsSinceBoot() -> Double { seconds(CLOCK_BOOTTIME) }

    /// Seconds the machine has spent asleep since it started.
    static func secondsAsleep() -> Double { max(0, seconds(CLOCK_BOOTTIME) - seconds(CLOCK_MONOTONIC)) }
}
