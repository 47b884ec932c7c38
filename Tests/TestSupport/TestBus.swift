import DBusKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A private session bus for one test: its own dbus-daemon whose only service directory is the
/// test's own (empty) folder, so nothing is auto-started and a missing name answers ServiceUnknown.
public final class TestBus: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `daemon` is itself Sendable.
    public let address: String
    public let directory: URL
    let daemon: ManagedProcess

    /// `allowOtherUsers` lets processes of any user connect (to test that chimed refuses them).
    /// A bus with its own config. With `sessionLimits`, the bus takes Debian's `session.conf` limits (messages
    /// up to 1,000,000,000 bytes, as far as the protocol's 128 MiB lets libdbus carry them), as the session
    /// bus a hostile app meets on a desktop; without, dbus-daemon's compiled-in ones (32 MiB messages).
    /// With `system`, a system bus (its own, like the rest): a system bus denies what its policy does not
    /// allow, so this one allows sending to and receiving from anyone.
    public static func start(allowOtherUsers: Bool = false, sessionLimits: Bool = false, system: Bool = false)
        async throws -> TestBus
    {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("chime-test-\(UUID().uuidString)")
        let services = directory.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>\(system ? "system" : "session")</type>
          <listen>unix:dir=\(directory.path)</listen>
          <servicedir>\(services.path)</servicedir>
          \(sessionLimits ? Self.sessionLimits : "")
          <policy context="default">
            \(allowOtherUsers ? "<allow user=\"*\"/>" : "")
            \(system ? "<allow send_destination=\"*\"/><allow receive_sender=\"*\"/>" : "")
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        let daemon = try ManagedProcess(
            "/usr/bin/dbus-daemon", ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
            directory: directory)
        try await Await.condition("dbus-daemon printed its address", timeout: .seconds(20), watching: daemon.stdoutURL)
        {
            daemon.stdout.contains("\n")
        }
        let address = daemon.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return TestBus(address: address, directory: directory, daemon: daemon)
    }

    /// The memory limits of Debian's /usr/share/dbus-1/session.conf.
    static let sessionLimits = """
        <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_connections_per_user">100000</limit>
        """

    private init(address: String, directory: URL, daemon: ManagedProcess) {
        self.address = address
        self.directory = directory
        self.daemon = daemon
    }

    /// The environment a child process needs to use this bus as its session bus.
    public var environment: [String: String] { ["DBUS_SESSION_BUS_ADDRESS": address] }

    /// A new connection to this bus.
    public func connect(limits: DBusConnection.IncomingLimits = .init()) async throws -> DBusConnection {
        try await DBusConnection.connect(.bus(address), limits: limits)
    }

    /// Waits until `name` has an owner on this bus (via NameOwnerChanged, not polling).
    public func waitForName(_ name: String, using connection: DBusConnection, timeout: Duration = .seconds(20))
        async throws
    {
        let owners = Recorder<String?>()
        let watch = try await connection.watchNameOwner(name) { owners.append($0) }
        defer { watch.cancel() }
        try await owners.wait("\(name) appeared on the bus", timeout: timeout) { $0.contains { $0 != nil } }
    }

    /// Kills the bus daemon (SIGKILL), as if the bus went away, and waits until it is gone; its folder
    /// stays until `stop()`.
    public func kill() async {
        daemon.kill(SIGKILL)
        _ = await daemon.waitForExit()
    }

    /// Stops the bus daemon and removes its folder.
    public func stop() async {
        await daemon.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// python-dbusmock's notification_daemon template on a test bus: records every Notify with the time
/// the test received the MethodCalled signal.
public final class MockNotificationServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init.
    public struct Call: Sendable {
        public var received: Date
        public var arguments: [DBusValue]

        public var appName: String? { string(0) }
        public var summary: String? { string(3) }
        public var body: String? { string(4) }
        public var replacesID: UInt32? {
            if case .uint32(let v)? = arguments.count > 1 ? arguments[1].unwrappingVariant : nil { return v }
            return nil
        }
        public var actions: [String] {
            guard arguments.count > 5, case .array(_, let items) = arguments[5].unwrappingVariant else { return [] }
            return items.compactMap { if case .string(let s) = $0.unwrappingVariant { s } else { nil } }
        }
        public var hints: [String: DBusValue] {
            guard arguments.count > 6, case .dictionary(_, _, let entries) = arguments[6].unwrappingVariant else {
                return [:]
            }
            var result: [String: DBusValue] = [:]
            for e in entries {
                if case .string(let k) = e.key { result[k] = e.value.unwrappingVariant }
            }
            return result
        }
        public var expireTimeout: Int32? {
            if case .int32(let v)? = arguments.count > 7 ? arguments[7].unwrappingVariant : nil { return v }
            return nil
        }
        func string(_ i: Int) -> String? {
            if i < arguments.count, case .string(let s) = arguments[i].unwrappingVariant { return s }
            return nil
        }
    }

    public let process: ManagedProcess
    let subscription: DBusSubscription

    /// Starts the mock on `bus`, waits for its name, and subscribes to its MethodCalled signal.
    public static func start(
        on bus: TestBus, observer: DBusConnection, capabilities: String? = "actions body body-markup persistence"
    ) async throws -> MockNotificationServer {
        let calls = Recorder<Call>()
        let closes = Recorder<UInt32>()
        let subscription = try await observer.subscribe(
            DBusMatchRule(
                sender: "org.freedesktop.Notifications", interface: "org.freedesktop.DBus.Mock", member: "MethodCalled")
        ) { message in
            guard message.body.count == 2, case .string(let method) = message.body[0],
                case .array(_, let args) = message.body[1]
            else { return }
            switch method {
            case "Notify":
                calls.append(Call(received: Date(), arguments: args))
            case "CloseNotification":
                // The mock declares the id as i, the specification as u.
                switch args.first?.unwrappingVariant {
                case .uint32(let id)?: closes.append(id)
                case .int32(let id)?: closes.append(UInt32(bitPattern: id))
                default: break
                }
            default:
                break
            }
        }
        var arguments = ["-m", "dbusmock", "--template", "notification_daemon"]
        if let capabilities { arguments += ["-p", "{\"capabilities\": \"\(capabilities)\"}"] }
        let process = try ManagedProcess(
            "/usr/bin/python3", arguments, environment: bus.environment, directory: bus.directory)
        try await bus.waitForName("org.freedesktop.Notifications", using: observer)
        return MockNotificationServer(process: process, calls: calls, closes: closes, subscription: subscription)
    }

    private init(
        process: ManagedProcess, calls: Recorder<Call>, closes: Recorder<UInt32>, subscription: DBusSubscription
    ) {
        self.process = process
        self.subscription = subscription
        self.closeCalls = closes
        // Share the recorder that the subscription fills.
        self.callsBox = calls
    }

    private let callsBox: Recorder<Call>
    public var notifyCalls: Recorder<Call> { callsBox }
    /// The ids every CloseNotification call asked to close.
    public let closeCalls: Recorder<UInt32>

    public func stop() async {
        subscription.cancel()
        await process.stop()
    }
}
