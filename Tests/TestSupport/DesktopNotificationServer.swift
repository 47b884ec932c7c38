import DBusKit
import Foundation

/// One of the notification servers people run, on a test's private bus: xfce4-notifyd and GNOME's
/// notification-daemon on a virtual X display, mako under sway's headless backend. (dunst has its own
/// harness, `DunstServer`, which also drives its menu.)
///
/// sway refuses to run as root, so under root it runs as `nobody` (setpriv), which the bus must allow
/// (`TestBus.start(allowOtherUsers: true)`).
public final class DesktopNotificationServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the processes are themselves Sendable.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case xfce4Notifyd = "xfce4-notifyd"
        case notificationDaemon = "notification-daemon"
        case mako

        public var description: String { rawValue }
        /// Whether it draws on X (and can be captured with `screenshot`).
        public var onX: Bool { self != .mako }
        /// Whether its bus must let another user connect (sway as `nobody` under root).
        public var needsOtherUsers: Bool { self == .mako && getuid() == 0 }
    }

    public let kind: Kind
    public let display: XvfbDisplay?
    public let process: ManagedProcess

    public static let busName = "org.freedesktop.Notifications"

    /// Starts the server on `bus` and returns once it owns `org.freedesktop.Notifications`.
    public static func start(
        _ kind: Kind, on bus: TestBus, observer: DBusConnection, timeout: Duration = .seconds(20)
    ) async throws -> DesktopNotificationServer {
        let directory = bus.directory.appendingPathComponent("\(kind.rawValue)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var display: XvfbDisplay?
        let process: ManagedProcess
        do {
            switch kind {
            case .xfce4Notifyd, .notificationDaemon:
                let x = try await XvfbDisplay.start(in: directory, timeout: timeout)
                display = x
                let binary =
                    kind == .xfce4Notifyd
                    ? "/usr/lib/x86_64-linux-gnu/xfce4/notifyd/xfce4-notifyd"
                    : "/usr/lib/notification-daemon/notification-daemon"
                // notification-daemon's -r replaces a server that owns the name already (none here).
                process = try ManagedProcess(
                    binary, kind == .notificationDaemon ? ["-r"] : [],
                    environment: bus.environment.merging(x.environment) { $1 }.merging(["HOME": directory.path]) {
                        $1
                    }, directory: directory)
            case .mako:
                process = try startMakoInSway(in: directory, bus: bus)
            }
        } catch {
            await display?.stop()
            throw error
        }
        let server = DesktopNotificationServer(kind: kind, display: display, process: process)
        do {
            try await server.waitUntilOwned(using: observer, timeout: timeout)
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    /// sway, headless, whose configuration starts mako; as `nobody` when the tests run as root.
    private static func startMakoInSway(in directory: URL, bus: TestBus) throws -> ManagedProcess {
        let runtime = directory.appendingPathComponent("runtime")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("sway.config")
        try "exec /usr/bin/mako\n".write(to: config, atomically: true, encoding: .utf8)
        var environment = [
            "HOME": directory.path, "XDG_RUNTIME_DIR": runtime.path, "WLR_BACKENDS": "headless",
            "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman", "PATH": "/usr/bin:/bin",
        ]
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.environment["DBUS_SESSION_BUS_ADDRESS"]
        guard getuid() == 0 else {
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
            return try ManagedProcess(
                "/usr/bin/sway", ["-c", config.path], environment: environment, directory: directory)
        }
        // nobody must reach its runtime folder, the configuration, and the bus's socket.
        for path in [bus.directory.path, directory.path] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        try FileManager.default.setAttributes(
            [.posixPermissions: 0o700, .ownerAccountID: 65534, .groupOwnerAccountID: 65534], ofItemAtPath: runtime.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config.path)
        let exports = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return try ManagedProcess(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i"] + exports + [
                "/usr/bin/sway", "-c", config.path,
            ], directory: directory)
    }

    private init(kind: Kind, display: XvfbDisplay?, process: ManagedProcess) {
        self.kind = kind
        self.display = display
        self.process = process
    }

    private func waitUntilOwned(using observer: DBusConnection, timeout: Duration) async throws {
        try await process.waitUntilItOwns(Self.busName, as: kind.rawValue, using: observer, timeout: timeout)
    }

    /// Captures the virtual screen, popups included (X servers only).
    public func screenshot(to url: URL) async throws {
        guard let display else { throw HarnessFailure("\(kind) does not draw on X") }
        try await display.screenshot(to: url)
    }

    /// Stops the server (sway takes mako with it), then Xvfb, each by its PID.
    public func stop() async {
        await process.stop()
        await display?.stop()
    }
}
