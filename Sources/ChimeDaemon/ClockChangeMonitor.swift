import CLinux
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Calls a handler whenever the system wall clock (`CLOCK_REALTIME`) is set: an NTP step, `date -s`,
/// the jump the kernel reports when the machine resumes from suspend.
///
/// The monitor owns a timerfd on `CLOCK_REALTIME` armed at the end of time with `TFD_TIMER_ABSTIME |
/// TFD_TIMER_CANCEL_ON_SET`. The timer never expires; instead, when the clock is set, the kernel
/// cancels it and a read fails with `ECANCELED`. The monitor then arms the timer again and calls the
/// handler. Gradual NTP slewing does not set the clock and is not reported (nor does it need to be:
/// wall-clock deadlines stay right as the clock is slewed).
///
/// Time-zone changes are not clock sets: watch `/etc/localtime` with a `FileWatcher` for those.
public final class ClockChangeMonitor: @unchecked Sendable {
    // @unchecked Sendable: the one stored property is set in init and never changed; the only call
    // made on it from outside, `cancel()`, is thread-safe in libdispatch (any thread, any number of times).
    private let source: any DispatchSourceRead

    /// Starts monitoring. `handler` runs on `queue`, once per clock set (sets that follow each other
    /// closely may be reported once).
    ///
    /// Throws when the timerfd cannot be created or armed.
    public init(queue: DispatchQueue, handler: @escaping @Sendable () -> Void) throws(SystemCallError) {
        let fd = try Linux.timerfdCreate(clock: CLOCK_REALTIME, flags: CLinux_TFD_CLOEXEC | CLinux_TFD_NONBLOCK)
        do {
            try ClockChangeMonitor.arm(fd)
        } catch {
            try? Linux.close(fd)
            throw error
        }
        // The handlers capture the descriptor, not the monitor, so that dropping the monitor ends it.
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            guard ClockChangeMonitor.clockWasSet(fd) else { return }
            // timerfd_create(2) does not promise that a cancelled timer stays armed (Linux keeps it):
            // arm it again, before the handler runs, so that a set during the handler is reported
            // too. Arming this descriptor the same way succeeded in init; nothing is left to fail.
            try? ClockChangeMonitor.arm(fd)
            handler()
        }
        // Dispatch may still watch the descriptor until the source is cancelled: close it only then.
        source.setCancelHandler { try? Linux.close(fd) }
        source.resume()
        self.source = source
    }

    /// Stops monitoring and closes the timerfd; safe to call more than once. A handler call already
    /// under way on the queue finishes; none starts after `cancel()` has run on the queue.
    public func cancel() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }

    /// Arms the timer at the largest representable time, so it can only end by being cancelled.
    private static func arm(_ fd: Int32) throws(SystemCallError) {
        var value = itimerspec()
        value.it_value.tv_sec = time_t.max
        try Linux.timerfdSetTime(fd, flags: CLinux_TFD_TIMER_ABSTIME | CLinux_TFD_TIMER_CANCEL_ON_SET, value)
    }

    /// Reads the timerfd: `ECANCELED` means the clock was set. A successful read (an expiry) can
    /// only mean the clock was set past the end of time, which is a clock set too; `EAGAIN` is a
    /// wake-up with nothing to read.
    private static func clockWasSet(_ fd: Int32) -> Bool {
        var expirations: UInt64 = 0
        do {
            let count = try withUnsafeMutableBytes(of: &expirations) { (buffer) throws(SystemCallError) in
                try Linux.read(fd, into: buffer)
            }
            return count == MemoryLayout<UInt64>.size
        } catch {
            return error.errno == ECANCELED
        }
    }
}
