import ChimeKit
import DBusKit
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Everything one integration test runs: a private bus, (optionally) python-dbusmock or dunst as the
/// notification server, and chimed as a process with its own state, settings, group files, clock offset
/// and time-zone link. `stop()` stops every process it started.
final class Session: @unchecked Sendable {
    // @unchecked Sendable: used by one test task at a time.
    let bus: TestBus
    let observer: DBusConnection
    var server: MockNotificationServer?
    /// dunst as the notification server, for a test that starts it instead of the mock.
    var dunst: DunstServer?
    var chimed: ManagedProcess?
    var clients: [ChimeClient] = []
    /// Raw connections of apps (`appConnection`), closed by `stop()`.
    var connections: [DBusConnection] = []
    var extraProcesses: [ManagedProcess] = []
    /// Notification servers a test started itself (`DesktopNotificationServer`), stopped by `stop()`.
    var desktopServers: [DesktopNotificationServer] = []
    var gnomeShell: GnomeShellServer?
    /// The notifications chimed delivered: (item, notification id), in order, as its log reports them. (Its
    /// Delivered signal goes to the item's owner alone: for the user's items to a `chime` that has exited
    /// by then; HostileAppTests checks the signal itself.)
    let delivered = Recorder<(item: UInt64, notification: UInt32)>()
    /// The tasks following each chimed's log for `delivered`.
    var logFollowers: [Task<Void, Never>] = []
    /// Added to chimed's environment (e.g. DBUS_SYSTEM_BUS_ADDRESS).
    var chimedEnvironment: [String: String] = [:]
    /// A program and its arguments that chimed is started through (it must exec chimed, keeping the PID),
    /// such as `setpriv` dropping a capability; empty: chimed is started itself.
    var chimedLauncher: [String] = []
    /// The chimed executable started: the one built, or a copy (given a file capability, say).
    var chimedExecutable = Binaries.chimed
    /// Signal subscriptions of the observer (`overhearServerSignals`), cancelled by `stop()`.
    var subscriptions: [DBusSubscription] = []

    init(bus: TestBus, observer: DBusConnection) {
        self.bus = bus
        self.observer = observer
    }

    /// Runs `body` with a bus, (optionally) a notification server and chimed, and stops every process
    /// afterwards, also when `body` fails. `settings` is written to chime.toml and `groups` (file name →
    /// text) to the groups folder before chimed starts.
    static func run(
        withServer: Bool = true, capabilities: String = "actions body body-markup persistence",
        settings: String? = nil, groups: [String: String] = [:], zone: String = "Europe/Berlin",
        startChimed: Bool = true, allowOtherUsers: Bool = false, sessionLimits: Bool = false,
        _ body: (Session) async throws -> Void
    ) async throws {
        let bus = try await TestBus.start(allowOtherUsers: allowOtherUsers, sessionLimits: sessionLimits)
        let session: Session
        do {
            session = Session(bus: bus, observer: try await bus.connect())
        } catch {
            await bus.stop()
            throw error
        }
        do {
            try FileManager.default.createDirectory(atPath: session.groupsDirectory, withIntermediateDirectories: true)
            try session.link(zone: zone)
            if let settings { try settings.write(toFile: session.configFile, atomically: true, encoding: .utf8) }
            for (name, text) in groups { try session.writeGroup(name, text) }
            if withServer {
                session.server = try await MockNotificationServer.start(
                    on: bus, observer: session.observer, capabilities: capabilities)
            }
            if startChimed { session.chimed = try await session.startChimed() }
            try await body(session)
        } catch {
            await session.stop()
            throw error
        }
        await session.stop()
    }

    /// chimed's state directory: its own, or another session's to start chimed on the same state.
    var stateDirectory: String {
        get { stateDirectoryOverride ?? bus.directory.appendingPathComponent("state").path }
        set { stateDirectoryOverride = newValue }
    }
    private var stateDirectoryOverride: String?
    var configFile: String { bus.directory.appendingPathComponent("chime.toml").path }
    var groupsDirectory: String { bus.directory.appendingPathComponent("groups").path }
    var clockOffsetFile: String { bus.directory.appendingPathComponent("clock-offset").path }
    var localtime: String { bus.directory.appendingPathComponent("localtime").path }

    func startChimed(logLevel: String? = "debug") async throws -> ManagedProcess {
        let level = logLevel.map { ["--log-level", $0] } ?? []
        var environment = bus.environment
        environment["CHIMED_TEST_HOOKS"] = "1"
        environment["CHIMED_TEST_CLOCK_OFFSET_FILE"] = clockOffsetFile
        environment["CHIMED_TEST_LOCALTIME"] = localtime
        // chimed reads its zone from the link above, not from the test runner's TZ.
        environment["TZ"] = ""
        // chimed plays the sounds a server without sounds does not: a test hears them only from a
        // PulseAudio of its own (SoundTests); the others reach none, not the machine's, nor one started
        // for them (libpulse starts a server when none is named), nor a sound card through ALSA.
        environment["PULSE_SERVER"] = "unix:" + bus.directory.appendingPathComponent("no-sound-server").path
        environment["CANBERRA_DRIVER"] = "pulse"
        for (key, value) in chimedEnvironment { environment[key] = value }
        let arguments =
            level + ["--state-dir", stateDirectory, "--config", configFile, "--groups-dir", groupsDirectory]
        let chimed = try ManagedProcess(
            chimedLauncher.first ?? chimedExecutable,
            chimedLauncher.isEmpty ? arguments : chimedLauncher.dropFirst() + [chimedExecutable] + arguments,
            environment: environment, directory: bus.directory)
        for follower in logFollowers { follower.cancel() }
        logFollowers = [Self.followDeliveries(in: chimed.stderrURL, into: delivered)]
        try await bus.waitForName("io.chime.Chime1", using: observer)
        if allowTestApp {
            // The tests schedule as an app (this test process): the user allows it, as a user would.
            let allowed = try await chime(["app", "allow", Self.testAppID])
            guard allowed.status == 0 else { throw TestFailure("chime app allow failed: \(allowed.stderr)") }
        }
        return chimed
    }

    /// Whether `startChimed` allows this test process to schedule notifications.
    var allowTestApp = true

    /// The app id chimed gives this test process: its executable's name.
    static let testAppID: String = {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
        return (exe as NSString).lastPathComponent
    }()

    /// The arguments of every chime command run through `chime(_:)` or `startChime(_:)`, in order.
    var invocations: [[String]] = []

    /// Runs the chime CLI against this bus and waits for it to exit.
    func chime(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try startChime(arguments)
        let status = await process.waitForExit(timeout: .seconds(30)) ?? -1
        return (status, process.stdout, process.stderr)
    }

    /// Starts the chime CLI against this bus, for a command that runs on (`send --wait`).
    func startChime(_ arguments: [String]) throws -> ManagedProcess {
        invocations.append(arguments)
        return try ManagedProcess(Binaries.chime, arguments, environment: bus.environment, directory: bus.directory)
    }

    /// Runs `chime ARGS --json` and parses its array.
    func chimeJSON(_ arguments: [String]) async throws -> [[String: Any]] {
        let result = try await chime(arguments + ["--json"])
        guard result.status == 0 else { throw TestFailure("chime \(arguments) failed: \(result.stderr)") }
        return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] ?? []
    }

    func client() async throws -> ChimeClient {
        let client = try await ChimeClient.connect(.bus(bus.address))
        clients.append(client)
        return client
    }

    /// A client of the app `appID` (its connection owns that name), optionally allowed by the user first.
    func app(_ appID: String, allowed: Bool = true) async throws -> ChimeClient {
        if allowed {
            let result = try await chime(["app", "allow", appID])
            guard result.status == 0 else { throw TestFailure("chime app allow failed: \(result.stderr)") }
        }
        let client = try await ChimeClient.connect(.bus(bus.address), owning: appID)
        clients.append(client)
        return client
    }

    /// A raw connection of the app `appID` (it owns that name), optionally allowed by the user first: for
    /// calls with any values, which ChimeKit would not send.
    func appConnection(_ appID: String, allowed: Bool = true) async throws -> DBusConnection {
        if allowed {
            let result = try await chime(["app", "allow", appID])
            guard result.status == 0 else { throw TestFailure("chime app allow failed: \(result.stderr)") }
        }
        let connection = try await bus.connect()
        connections.append(connection)
        try await connection.requestName(appID)
        return connection
    }

    /// An app that serves io.chime.ContentProvider1 (`MakeContent` answered by `makeContent`) under its own
    /// name `appID`, allowed by the user; the caller closes it.
    func contentProvider(
        _ appID: String, _ makeContent: @escaping @Sendable (DBusMethodCall) async throws -> DBusValue
    ) async throws -> DBusConnection {
        let app = try await bus.connect()
        try app.export(
            [
                DBusInterface(
                    ContentProviderBus.interface,
                    methods: [
                        DBusMethod(
                            ContentProviderBus.makeContent, inputs: ContentProviderBus.makeContentInputs,
                            outputs: [DBusArgument("content", .dictionary(key: .string, value: .variant))]
                        ) { call in [try await makeContent(call)] }
                    ])
            ], at: ContentProviderBus.path)
        try await app.requestName(appID)
        _ = try await chime(["app", "allow", appID])
        return app
    }

    /// Has the mock notification server emit a signal, as a real server would.
    func serverEmits(_ member: String, _ signature: String, _ arguments: [DBusValue]) async throws {
        _ = try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
            [
                .string("org.freedesktop.Notifications"), .string(member), .string(signature),
                .array(element: .variant, arguments.map(DBusValue.variant)),
            ])
    }

    /// The user chooses action `key` on notification `id`.
    func choose(_ key: String, on id: UInt32) async throws {
        try await serverEmits("ActionInvoked", "us", [.uint32(id), .string(key)])
    }

    /// Writes a group file (atomically, as editors do).
    func writeGroup(_ name: String, _ text: String) throws {
        try text.write(
            toFile: (groupsDirectory as NSString).appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    /// Points the time-zone link chimed watches at `zone`, replacing it in one rename as the system does.
    func link(zone: String) throws {
        let temporary = localtime + ".new"
        try? FileManager.default.removeItem(atPath: temporary)
        try FileManager.default.createSymbolicLink(
            atPath: temporary, withDestinationPath: "/usr/share/zoneinfo/\(zone)")
        guard rename(temporary, localtime) == 0 else { throw TestFailure("cannot replace \(localtime)") }
    }

    /// Makes chimed's clock read `offset` seconds ahead of the real one, as if the clock had been set.
    func setClock(offset: TimeInterval, tellChimed: Bool = true) throws {
        try "\(offset)".write(toFile: clockOffsetFile, atomically: true, encoding: .utf8)
        if tellChimed { chimed?.kill(SIGUSR2) }
    }

    /// Waits until chimed has delivered (and so knows) notification `id`.
    func awaitDelivered(notification id: UInt32) async throws {
        try await delivered.wait("chimed delivered notification \(id)") { $0.contains { $0.notification == id } }
    }

    /// Reads chimed's log at `url` as it grows and records each delivery it reports, the line chimed writes
    /// once it has acted on the server's answer: `… chimed: delivered "SUMMARY" item=ID notification=ID`.
    static func followDeliveries(
        in url: URL, into delivered: Recorder<(item: UInt64, notification: UInt32)>
    ) -> Task<Void, Never> {
        Task.detached {
            var consumed: UInt64 = 0
            var partial = ""
            while !Task.isCancelled {
                if let handle = try? FileHandle(forReadingFrom: url) {
                    try? handle.seek(toOffset: consumed)
                    let fresh = (try? handle.readToEnd()) ?? Data()
                    try? handle.close()
                    consumed += UInt64(fresh.count)
                    var lines = (partial + String(decoding: fresh, as: UTF8.self)).split(
                        separator: "\n", omittingEmptySubsequences: false)
                    partial = String(lines.removeLast())
                    for line in lines where line.contains(" chimed: delivered ") {
                        let fields = line.split(separator: " ")
                        func number(_ key: String) -> UInt64? {
                            fields.last { $0.hasPrefix(key + "=") }.flatMap { UInt64($0.dropFirst(key.count + 1)) }
                        }
                        guard let item = number("item"), let notification = number("notification") else { continue }
                        delivered.append((item, UInt32(truncatingIfNeeded: notification)))
                    }
                }
                let seen = consumed
                try? await Await.condition("chimed logged more", timeout: .seconds(1), watching: url) {
                    ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? UInt64) ?? 0) > seen
                }
            }
        }
    }

    func stop() async {
        for follower in logFollowers { follower.cancel() }
        for subscription in subscriptions { subscription.cancel() }
        for client in clients { client.close() }
        for connection in connections { connection.close() }
        if let chimed { await chimed.stop() }
        for process in extraProcesses { await process.stop() }
        for server in desktopServers { await server.stop() }
        if let gnomeShell { await gnomeShell.stop() }
        if let server { await server.stop() }
        if let dunst { await dunst.stop() }
        observer.close()
        await bus.stop()
    }
}

/// A notification server's ActionInvoked.
struct ActionInvoked: Sendable, Equatable {
    var notification: UInt32
    var key: String
}

/// A notification server's NotificationClosed.
struct PopupClosed: Sendable, Equatable {
    var notification: UInt32
    var reason: UInt32
}

/// What the notification server told chimed about its popups, overheard by the test: servers send these
/// to the connection that called Notify (chimed), some to it alone.
struct ServerSignals: Sendable {
    let invoked = Recorder<ActionInvoked>()
    let closed = Recorder<PopupClosed>()
}

extension Session {
    /// Starts overhearing the notification server's ActionInvoked and NotificationClosed.
    func overhearServerSignals() async throws -> ServerSignals {
        let signals = ServerSignals()
        for member in ["ActionInvoked", "NotificationClosed"] {
            let rule = DBusMatchRule(
                sender: "org.freedesktop.Notifications", interface: "org.freedesktop.Notifications", member: member,
                eavesdrop: true)
            subscriptions.append(
                try await observer.subscribe(rule) { message in
                    guard message.body.count == 2, case .uint32(let notification) = message.body[0] else { return }
                    switch message.body[1] {
                    case .string(let key): signals.invoked.append(ActionInvoked(notification: notification, key: key))
                    case .uint32(let reason):
                        signals.closed.append(PopupClosed(notification: notification, reason: reason))
                    default: break
                    }
                })
        }
        return signals
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Session {
    /// Starts logind's mock on the test bus, which chimed started after this takes for the system bus.
    func startLogindMock() async throws {
        let logind = try ManagedProcess(
            "/usr/bin/python3", ["-m", "dbusmock", "--template", "logind"],
            environment: ["DBUS_SYSTEM_BUS_ADDRESS": bus.address], directory: bus.directory)
        extraProcesses.append(logind)
        try await bus.waitForName("org.freedesktop.login1", using: observer)
        chimedEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    }

    /// logind's mock says the machine is going to sleep (true) or has woken (false).
    func prepareForSleep(_ goingToSleep: Bool) async throws {
        _ = try await observer.call(
            destination: "org.freedesktop.login1", path: "/org/freedesktop/login1",
            interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
            [
                .string("org.freedesktop.login1.Manager"), .string("PrepareForSleep"), .string("b"),
                .array(element: .variant, [.variant(.boolean(goingToSleep))]),
            ])
    }
}
