import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// Tells the service manager about this process's state (sd_notify).
///
/// Outside systemd (no `NOTIFY_SOCKET`) every call is a no-op, so the same code runs by hand and as a
/// unit.
public struct ServiceNotifier: Sendable {
    public init() {}

    /// True when a service manager listens (`NOTIFY_SOCKET` is set).
    public var isSupervised: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// Sends one state string such as `READY=1\nSTATUS=…`; returns whether it was delivered.
    ///
    /// The corresponding C function is `sd_notify`.
    @discardableResult
    public func notify(_ state: String) -> Bool {
        sd_notify(0, state) > 0
    }

    /// Startup is finished; `status` becomes the unit's status line.
    @discardableResult
    public func ready(status: String? = nil) -> Bool {
        notify("READY=1" + (status.map { "\nSTATUS=" + sanitized($0) } ?? ""))
    }

    /// A free-form status line shown by `systemctl status`.
    @discardableResult
    public func status(_ text: String) -> Bool { notify("STATUS=" + sanitized(text)) }

    /// Reloading configuration. systemd 253+ wants MONOTONIC_USEC alongside; older ones ignore it.
    @discardableResult
    public func reloading() -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let usec = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return notify("RELOADING=1\nMONOTONIC_USEC=\(usec)")
    }

    /// Shutting down.
    @discardableResult
    public func stopping() -> Bool { notify("STOPPING=1") }

    /// Keeps the watchdog from firing.
    @discardableResult
    public func watchdog() -> Bool { notify("WATCHDOG=1") }

    /// The watchdog interval when the manager enabled one for this process, else nil.
    ///
    /// The corresponding C function is `sd_watchdog_enabled`.
    public var watchdogInterval: Duration? {
        var usec: UInt64 = 0
        guard sd_watchdog_enabled(0, &usec) > 0, usec > 0 else { return nil }
        return .microseconds(Int64(usec))
    }

    /// A status line may not contain a newline: it would start a new assignment.
    private func sanitized(_ text: String) -> String {
        String(text.map { $0 == "\n" ? " " : $0 })
    }
}
