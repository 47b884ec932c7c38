import Dispatch
import TestSupport
import Testing

@testable import ChimeDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// Sets CLOCK_REALTIME to the time it reads, which moves the clock back by the nanoseconds between
/// the two calls and is, to the kernel, a clock set like any other. Returns 0 or the errno.
func setClockToItsOwnTime() -> Int32 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return clock_settime(CLOCK_REALTIME, &now) == 0 ? 0 : errno
}

enum ClockSetting {
    /// Whether this process may set the clock. Setting it needs CAP_SYS_TIME: root on this project's
    /// machines has it, an ordinary user or a container without the capability gets EPERM, and the
    /// test that needs it is skipped there. The probe is itself a (harmless) set to the current time.
    static let isPermitted = setClockToItsOwnTime() == 0
}

@Suite struct ClockChangeMonitorTests {
    @Test(.enabled(if: ClockSetting.isPermitted, "setting CLOCK_REALTIME needs CAP_SYS_TIME"))
    func settingTheClockToItsOwnTimeCallsTheHandlerEachTime() async throws {
        let calls = Recorder<Int>()
        let monitor = try ClockChangeMonitor(queue: DispatchQueue(label: "test.clock-change")) { calls.append(1) }
        defer { monitor.cancel() }

        try #require(setClockToItsOwnTime() == 0)
        try await calls.wait("the first clock set was reported") { $0.count >= 1 }
        // The monitor goes on watching after a set: the next one is reported too.
        try #require(setClockToItsOwnTime() == 0)
        try await calls.wait("the second clock set was reported") { $0.count >= 2 }
    }
}
