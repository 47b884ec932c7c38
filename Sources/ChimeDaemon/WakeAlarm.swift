import CLinux
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Wakes the machine from suspend for the earliest occurrence of an item that asks to (`wake = true`): a
/// `CLOCK_REALTIME_ALARM` timerfd armed with an absolute wall-clock time. Waking is its only job; the
/// scheduling timer (`DeadlineTimer`) delivers the occurrence once the machine runs again.
///
/// Nothing reads the descriptor: an expiration only leaves it readable, and arming it again resets it.
/// `timerfd_settime` returns at once, so arming on the daemon's queue never waits.
final class WakeAlarm: Sendable {
    private let fd: Int32

    /// Creates the timer, disarmed. Without `CAP_WAKE_ALARM` the kernel refuses with `EPERM`.
    init() throws(SystemCallError) {
        fd = try Linux.timerfdCreate(clock: CLOCK_REALTIME_ALARM, flags: CLinux_TFD_CLOEXEC | CLinux_TFD_NONBLOCK)
    }

    deinit { try? Linux.close(fd) }

    /// Wakes the machine at the wall time `wallSeconds` (seconds since the epoch); nil disarms.
    func arm(wallSeconds: Double?) throws(SystemCallError) {
        var value = itimerspec()
        if let wallSeconds {
            let whole = wallSeconds.rounded(.down)
            // 0 would disarm: a time at or before the epoch (never asked for: only future ones) fires at once.
            value.it_value.tv_sec = max(Int(whole), 0)
            value.it_value.tv_nsec = max(Int((wallSeconds - whole) * 1e9), wallSeconds > 0 ? 0 : 1)
        }
        try Linux.timerfdSetTime(fd, flags: CLinux_TFD_TIMER_ABSTIME, value)
    }

    /// Why the alarm cannot be had, as `chime status` and the log say it: a missing capability names the
    /// capability and the page that says how to grant it.
    static func problem(_ error: SystemCallError) -> String {
        if error.errno == EPERM {
            return "chimed lacks the capability CAP_WAKE_ALARM, so it cannot wake the machine from suspend "
                + "(see docs/wake.md: setcap cap_wake_alarm+ep on chimed)"
        }
        return "the kernel has no wake alarm for chimed (\(error)); the machine needs an RTC that can wake it"
    }
}

/// What `Status` says about waking the machine.
struct WakeStatus: Sendable, Equatable {
    /// How many pending items ask to wake the machine.
    var items = 0
    /// When the alarm is set to wake it; nil when it is not armed.
    var armedFor: Date?
    /// Why there is no alarm; nil when chimed has one.
    var problem: String?
}
