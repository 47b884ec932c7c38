import DBusKit
import TestSupport
import Testing

@testable import ChimeDaemon

/// SleepMonitor against python-dbusmock's logind template, on a private bus that stands in for the
/// system bus.
@Suite struct SleepMonitorTests {
    /// Runs `body` with a test bus, logind's mock on it, and a connection to it; stops all three
    /// afterwards, also when `body` fails.
    static func withLogind(_ body: (TestBus, DBusConnection) async throws -> Void) async throws {
        let bus = try await TestBus.start()
        var logind: ManagedProcess?
        var connection: DBusConnection?
        func stop() async {
            connection?.close()
            if let logind {
                await logind.stop()
                logind.removeFiles()
            }
            await bus.stop()
        }
        do {
            let observer = try await bus.connect()
            connection = observer
            // The template puts itself on the system bus, which DBUS_SYSTEM_BUS_ADDRESS points at.
            logind = try ManagedProcess(
                "/usr/bin/python3", ["-m", "dbusmock", "--template", "logind"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], directory: bus.directory)
            try await bus.waitForName(SleepMonitor.busName, using: observer)
            try await body(bus, observer)
        } catch {
            await stop()
            throw error
        }
        await stop()
    }

    /// Has the mock emit `PrepareForSleep(goingToSleep)` as logind would.
    static func emitPrepareForSleep(_ goingToSleep: Bool, using connection: DBusConnection) async throws {
        _ = try await connection.call(
            destination: SleepMonitor.busName, path: SleepMonitor.objectPath, interface: "org.freedesktop.DBus.Mock",
            member: "EmitSignal",
            [
                .string(SleepMonitor.interface), .string("PrepareForSleep"), .string("b"),
                .array(element: .variant, [.variant(.boolean(goingToSleep))]),
            ])
    }

    @Test func logindsPrepareForSleepReachesTheHandlerBeforeSleepAndAfterResume() async throws {
        try await Self.withLogind { _, connection in
            let calls = Recorder<Bool>()
            let monitor = try await SleepMonitor(connection: connection) { calls.append($0) }
            defer { monitor.cancel() }

            try await Self.emitPrepareForSleep(true, using: connection)
            try await calls.wait("PrepareForSleep(true) was reported") { $0 == [true] }
            try await Self.emitPrepareForSleep(false, using: connection)
            try await calls.wait("PrepareForSleep(false) was reported") { $0 == [true, false] }
        }
    }

    @Test func aMonitorOnItsOwnConnectionReportsOnlyLogindsSignals() async throws {
        try await Self.withLogind { bus, connection in
            let calls = Recorder<Bool>()
            let monitor = try #require(await SleepMonitor.connect(.bus(bus.address)) { calls.append($0) })
            defer { monitor.cancel() }

            // A PrepareForSleep from anyone but logind is ignored. It reaches the monitor's connection
            // before the mock's signal (the bus routes this connection's messages in order), so once
            // logind's signal is reported the other one has been seen and dropped.
            try connection.emitSignal(
                path: SleepMonitor.objectPath, interface: SleepMonitor.interface, member: "PrepareForSleep",
                [.boolean(true)])
            try await Self.emitPrepareForSleep(false, using: connection)
            try await calls.wait("logind's PrepareForSleep(false) was reported") { !$0.isEmpty }
            #expect(calls.elements == [false])
        }
    }

    @Test func withoutABusThereIsNoMonitorAndNoError() async {
        let monitor = await SleepMonitor.connect(.bus("unix:path=/nonexistent/chime-system-bus")) { _ in }
        #expect(monitor == nil)
    }
}
