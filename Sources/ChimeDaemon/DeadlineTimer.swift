import CLinux
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// chimed's one scheduling timer: a `CLOCK_REALTIME` timerfd with an absolute deadline, read by a
/// thread of its own that runs the handler on the daemon's queue with `queue.sync`.
///
/// A Dispatch timer wakes libdispatch's manager thread, which then wakes a worker for the queue: two
/// wake-ups, and a 99th percentile of 0.3–1 ms late on these machines. Here the kernel wakes the one
/// thread blocked in `read`, and `queue.sync` runs the handler on that thread when the queue is idle.
/// An absolute `CLOCK_REALTIME` deadline stays right when the clock is set (the kernel re-evaluates
/// it), as the wall-clock deadlines chimed keeps must.
final class DeadlineTimer: @unchecked Sendable {
    // @unchecked Sendable: `fd` never changes; `stopped` is atomic; the thread owns nothing else.
    private let fd: Int32
    private let stopped = Atomic<Bool>(false)

    /// Starts the thread; nothing fires until `arm`. `handler` runs on `queue`.
    init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) throws(SystemCallError) {
        fd = try Linux.timerfdCreate(clock: CLOCK_REALTIME, flags: CLinux_TFD_CLOEXEC)
        // The thread holds the timer until `cancel` ends it.
        let thread = Thread { [self] in
            var expirations: UInt64 = 0
            while true {
                let count = withUnsafeMutableBytes(of: &expirations) { read(fd, $0.baseAddress, $0.count) }
                if stopped.load(ordering: .acquiring) { break }
                // EINTR, or ECANCELED (not asked for): nothing expired; read again.
                guard count == MemoryLayout<UInt64>.size else { continue }
                queue.sync {
                    // Not after `cancel`, which runs on the queue too.
                    if !stopped.load(ordering: .acquiring) { handler() }
                }
            }
            close(fd)
        }
        thread.name = "chimed.timer"
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    /// Fires at the wall time `wallSeconds` (seconds since the epoch); nil disarms.
    func arm(wallSeconds: Double?) {
        var value = itimerspec()
        if let wallSeconds {
            let whole = wallSeconds.rounded(.down)
            // 0 would disarm: a deadline at or before the epoch fires at once instead.
            value.it_value.tv_sec = max(Int(whole), 0)
            value.it_value.tv_nsec = max(Int((wallSeconds - whole) * 1e9), wallSeconds > 0 ? 0 : 1)
        }
        try? Linux.timerfdSetTime(fd, flags: CLinux_TFD_TIMER_ABSTIME, value)
    }

    /// Ends the thread (it wakes once more, sees the flag and closes the descriptor).
    func cancel() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var value = itimerspec()
        value.it_value.tv_nsec = 1
        try? Linux.timerfdSetTime(fd, flags: CLinux_TFD_TIMER_ABSTIME, value)
    }
}
