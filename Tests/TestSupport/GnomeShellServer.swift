import DBusKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// GNOME Shell as the notification server of a test's private bus: `gnome-shell --headless` (mutter's
/// own virtual monitor, no display server needed) with `--unsafe-mode`, so that the test reads the shell's
/// notifications and chooses their actions through the shell's own objects (`org.gnome.Shell.Eval`), as a
/// click on the banner's button would. The shell needs logind on a system bus: it gets a bus of its own
/// with python-dbusmock's `logind` template. Under root it runs as `nobody` (setpriv), so the session
/// bus must let another user connect (`TestBus.start(allowOtherUsers: true)`).
public final class GnomeShellServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the processes are themselves Sendable.
    public let process: ManagedProcess
    let systemBus: TestBus
    let logind: ManagedProcess
    let directory: URL
    let bus: TestBus

    public static let busName = "org.freedesktop.Notifications"

    /// What went wrong talking to the shell.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        init(_ description: String) { self.description = description }
    }

    /// One of the shell's notifications, as its message tray holds it.
    public struct Notification: Sendable, Equatable, Decodable {
        public var title: String
        public var body: String
        /// The labels of its buttons, in order.
        public var actions: [String]
        /// The app the shell filed it under (its source's title).
        public var source: String
    }

    /// Starts the shell on `bus` and returns once it owns `org.freedesktop.Notifications`.
    public static func start(on bus: TestBus, observer: DBusConnection, timeout: Duration = .seconds(30)) async throws
        -> GnomeShellServer
    {
        let directory = bus.directory.appendingPathComponent("gnome-shell-\(UUID().uuidString.prefix(8))")
        let runtime = directory.appendingPathComponent("runtime")
        let home = directory.appendingPathComponent("home")
        for folder in [runtime, home] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // The system bus: its own dbus-daemon, with logind's stand-in on it.
        let systemBus = try await TestBus.start(allowOtherUsers: true, system: true)
        let systemAddress = systemBus.address
        let logind: ManagedProcess
        do {
            logind = try ManagedProcess(
                "/usr/bin/python3", ["-m", "dbusmock", "--system", "--template", "logind"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": systemAddress], directory: directory)
            let system = try await systemBus.connect()
            defer { system.close() }
            try await logind.waitUntilItOwns(
                "org.freedesktop.login1", as: "logind's stand-in", using: system, timeout: timeout)
        } catch {
            await systemBus.stop()
            throw error
        }
        // The shell's freedesktop notifications are a service of their own (gjs), which the bus starts on
        // the first call to org.freedesktop.Notifications: the test's bus gets its service file.
        let service = "org.gnome.Shell.Notifications.service"
        try? FileManager.default.removeItem(at: bus.directory.appendingPathComponent("services/\(service)"))
        try FileManager.default.copyItem(
            atPath: "/usr/share/dbus-1/services/\(service)",
            toPath: bus.directory.appendingPathComponent("services/\(service)").path)
        var environment = [
            "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path, "PATH": "/usr/bin:/bin",
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "DBUS_SYSTEM_BUS_ADDRESS": systemAddress,
            // Settings in memory: nothing of the machine's, nothing written.
            "GSETTINGS_BACKEND": "memory",
        ]
        var argv = ["/usr/bin/gnome-shell", "--headless", "--virtual-monitor", "1024x768", "--unsafe-mode"]
        if getuid() == 0 {
            // nobody must reach its folders and the buses' sockets.
            for path in [bus.directory.path, directory.path] {
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            }
            for folder in [runtime, home] {
                try FileManager.default.setAttributes(
                    [.posixPermissions: 0o700, .ownerAccountID: 65534, .groupOwnerAccountID: 65534],
                    ofItemAtPath: folder.path)
            }
            let exports = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            argv =
                ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i"]
                + exports + argv
            environment = [:]
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        }
        let process: ManagedProcess
        do {
            process = try ManagedProcess(
                argv[0], Array(argv.dropFirst()), environment: environment, directory: directory)
        } catch {
            _ = await logind.stop()
            await systemBus.stop()
            throw error
        }
        let server = GnomeShellServer(
            process: process, systemBus: systemBus, logind: logind, directory: directory, bus: bus)
        do {
            try await process.waitUntilItOwns(Self.busName, as: "gnome-shell", using: observer, timeout: timeout)
            // The shell owns the name before its message tray is made: wait until Eval finds it.
            try await Await.polling("the shell's message tray", timeout: timeout, interval: .milliseconds(200)) {
                (try? await server.eval("Main.messageTray !== undefined && Main.messageTray !== null")) == "true"
            }
        } catch {
            await server.stop()
            throw GnomeShellServer.Failure("\(error)\ngnome-shell said: \(process.stderr.suffix(3000))")
        }
        return server
    }

    private init(
        process: ManagedProcess, systemBus: TestBus, logind: ManagedProcess, directory: URL, bus: TestBus
    ) {
        self.process = process
        self.systemBus = systemBus
        self.logind = logind
        self.directory = directory
        self.bus = bus
    }

    /// Runs `script` in the shell (`org.gnome.Shell.Eval`) and returns its result as the shell gives it
    /// (JSON of the last expression's value).
    public func eval(_ script: String) async throws -> String {
        let connection = try await bus.connect()
        defer { connection.close() }
        let reply = try await connection.call(
            destination: "org.gnome.Shell", path: "/org/gnome/Shell", interface: "org.gnome.Shell", member: "Eval",
            [.string(script)], timeout: .seconds(10))
        guard reply.count == 2, case .boolean(let ok) = reply[0], case .string(let result) = reply[1] else {
            throw GnomeShellServer.Failure("Eval answered \(reply)")
        }
        guard ok else { throw GnomeShellServer.Failure("Eval failed: \(result)") }
        return result
    }

    /// The notifications in the shell's message tray, oldest first.
    public func notifications() async throws -> [Notification] {
        let json = try await eval(
            """
            JSON.stringify(Main.messageTray.getSources().flatMap(s => s.notifications.map(n => ({
                title: n.title ?? '', body: n.bannerBodyText ?? '', source: s.title ?? '',
                actions: (n.actions ?? []).map(a => a.label)}))))
            """)
        // Eval gives the value as JSON: here a JSON string holding the JSON list.
        let text = try JSONDecoder().decode(String.self, from: Data(json.utf8))
        return try JSONDecoder().decode([Notification].self, from: Data(text.utf8))
    }

    /// Chooses the button `label` of the notification titled `title`, as a click on it would.
    public func chooseAction(_ label: String, onNotificationTitled title: String) async throws {
        let result = try await eval(
            """
            (() => {
                for (const s of Main.messageTray.getSources())
                    for (const n of s.notifications)
                        if (n.title === \(Self.quoted(title)))
                            for (const a of n.actions ?? [])
                                if (a.label === \(Self.quoted(label))) { a.callback(); return 'chosen'; }
                return 'not found';
            })()
            """)
        guard result == "\"chosen\"" else {
            throw GnomeShellServer.Failure("no button \(label) on a notification titled \(title): \(result)")
        }
    }

    /// `text` as a JavaScript string literal.
    static func quoted(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Stops the shell, logind's stand-in and the system bus, by PID, and whatever the shell left running.
    public func stop() async {
        _ = await process.stop()
        _ = await logind.stop()
        await systemBus.stop()
        await DesktopNotificationServer.stopLeftovers(of: directory)
    }
}
