import DBusKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One of the notification servers people run, on a test's private bus: xfce4-notifyd and GNOME's
/// notification-daemon on a virtual X display, mako under sway's headless backend. (dunst has its own
/// harness, `DunstServer`, which also drives its menu.) A test can see its popups, capture the screen,
/// measure a popup's text, and choose an action or dismiss a popup as a user would.
///
/// sway refuses to run as root, so under root it runs as `nobody` (setpriv), which the bus must allow
/// (`TestBus.start(allowOtherUsers: true)`); so does `grim`, which captures sway's screen.
public final class DesktopNotificationServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the processes are themselves Sendable.
    public enum Kind: String, Sendable, CaseIterable, CustomStringConvertible {
        case xfce4Notifyd = "xfce4-notifyd"
        case notificationDaemon = "notification-daemon"
        case mako
        /// KDE Plasma's shell, whose popups are its own windows on X.
        case plasma

        public var description: String { rawValue }
        /// Whether it draws on X (its popups are windows that `xdotool` finds and clicks).
        public var onX: Bool { self != .mako }
        /// The class of its windows on X.
        var windowClass: String { self == .plasma ? "plasmashell" : rawValue }
        /// Whether its bus must let another user connect (sway as `nobody` under root).
        public var needsOtherUsers: Bool { self == .mako && getuid() == 0 }
        /// Whether its popups show dark text on a light background (the X servers' GTK theme), rather
        /// than light on dark (mako).
        var darkText: Bool { onX }
    }

    /// A popup on screen: on X its window (id and frame); on mako, which names no surfaces to other
    /// clients, the notification it shows, drawn where mako draws by default (the top-right corner).
    public struct Popup: Sendable, Equatable, CustomStringConvertible {
        /// The X window, or mako's notification id.
        public var id: UInt32
        /// Where it is on screen; nil for mako: the top-right corner (`frame(onScreenOf:)`).
        public var frame: ScreenRegion?

        public static func == (a: Popup, b: Popup) -> Bool { a.id == b.id }
        public var description: String { frame.map { "window \(id) at \($0)" } ?? "notification \(id)" }

        /// Its frame, or for mako the top-right corner of a screen the size of `image`, where mako's
        /// popups (300 pixels wide, 10 from the edges by default) are drawn.
        func frame(onScreenOf image: GrayImage) -> ScreenRegion {
            frame ?? ScreenRegion(x: image.width - 330, y: 0, width: 330, height: 150)
        }
    }

    public let kind: Kind
    public let display: XvfbDisplay?
    public let process: ManagedProcess
    /// The folder of its files (and of the screenshots and tools it runs).
    let directory: URL
    let bus: TestBus
    /// mako's sway session.
    let compositor: Compositor?
    /// What runs beside the server and is stopped with it (Plasma's activity manager).
    let helpers: [ManagedProcess]

    public static let busName = "org.freedesktop.Notifications"

    /// Starts the server on `bus` and returns once it owns `org.freedesktop.Notifications`.
    public static func start(
        _ kind: Kind, on bus: TestBus, observer: DBusConnection, timeout: Duration = .seconds(20)
    ) async throws -> DesktopNotificationServer {
        let directory = bus.directory.appendingPathComponent("\(kind.rawValue)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var display: XvfbDisplay?
        var compositor: Compositor?
        var helpers: [ManagedProcess] = []
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
                let sway = try Compositor(in: directory, bus: bus)
                compositor = sway
                process = try sway.startSwayWithMako()
            case .plasma:
                let x = try await XvfbDisplay.start(in: directory, timeout: timeout)
                display = x
                let environment = try privateSession(in: directory).merging(bus.environment) { $1 }
                    .merging(x.environment) { $1 }.merging(["QT_QPA_PLATFORM": "xcb"]) { $1 }
                // plasmashell gives up without the activity manager, which the test's bus cannot activate.
                let activities = try ManagedProcess(
                    "/usr/lib/x86_64-linux-gnu/libexec/kactivitymanagerd", environment: environment,
                    directory: directory)
                helpers.append(activities)
                try await activities.waitUntilItOwns(
                    "org.kde.ActivityManager", as: "kactivitymanagerd", using: observer, timeout: timeout)
                process = try ManagedProcess("/usr/bin/plasmashell", environment: environment, directory: directory)
            }
        } catch {
            for helper in helpers { await helper.stop() }
            await stopLeftovers(of: directory)
            await display?.stop()
            throw error
        }
        let server = DesktopNotificationServer(
            kind: kind, display: display, process: process, directory: directory, bus: bus, compositor: compositor,
            helpers: helpers)
        do {
            try await server.waitUntilOwned(using: observer, timeout: timeout)
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    /// The environment of a desktop session of the server's own in `directory`: HOME, XDG_RUNTIME_DIR and
    /// the XDG folders (Plasma writes ~31 MB of configuration and caches there), all removed with the
    /// test's bus folder. Whatever the server starts inherits it: `stopLeftovers(of:)` finds those.
    private static func privateSession(in directory: URL) throws -> [String: String] {
        let home = directory.appendingPathComponent("home")
        let runtime = directory.appendingPathComponent("runtime")
        for folder in [home, runtime] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
        return [
            "HOME": home.path, "XDG_RUNTIME_DIR": runtime.path,
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path,
            "XDG_CACHE_HOME": home.appendingPathComponent(".cache").path,
            "XDG_STATE_HOME": home.appendingPathComponent(".local/state").path,
        ]
    }

    /// Stops, by PID, every process still running in the private session of `directory` (its
    /// XDG_RUNTIME_DIR in its environment): helpers a server started on its own (Plasma's kioslave5), which
    /// may outlive it.
    static func stopLeftovers(of directory: URL) async {
        let marker = Array("XDG_RUNTIME_DIR=\(directory.appendingPathComponent("runtime").path)".utf8) + [0]
        func leftovers() -> [Int32] {
            let own = getpid()
            return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
                guard let pid = Int32(entry), pid != own,
                    let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ")
                else { return nil }
                let bytes = [UInt8](environment)
                let found =
                    bytes.starts(with: marker)
                    || bytes.indices.contains { $0 > 0 && bytes[$0 - 1] == 0 && bytes[$0...].starts(with: marker) }
                return found ? pid : nil
            }
        }
        var found = leftovers()
        for pid in found { kill(pid, SIGTERM) }
        // Gone once their PIDs are no longer in /proc (a zombie's environ reads empty).
        try? await Await.polling("the session's leftovers stopped", timeout: .seconds(5)) {
            found = leftovers()
            return found.isEmpty
        }
        for pid in found { kill(pid, SIGKILL) }
    }

    /// sway, headless, and what runs in its session (mako, grim): as `nobody` when the tests run as root.
    struct Compositor {
        /// Its XDG_RUNTIME_DIR, where it makes its Wayland socket.
        let runtime: URL
        let directory: URL
        let environment: [String: String]

        init(in directory: URL, bus: TestBus) throws {
            self.directory = directory
            runtime = directory.appendingPathComponent("runtime")
            try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
            var environment = [
                "HOME": directory.path, "XDG_RUNTIME_DIR": runtime.path, "WLR_BACKENDS": "headless",
                "WLR_LIBINPUT_NO_DEVICES": "1", "WLR_RENDERER": "pixman", "PATH": "/usr/bin:/bin",
            ]
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus.environment["DBUS_SESSION_BUS_ADDRESS"]
            self.environment = environment
            guard getuid() == 0 else {
                try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: runtime.path)
                return
            }
            // nobody must reach its runtime folder, the configuration, and the bus's socket.
            for path in [bus.directory.path, directory.path] {
                try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
            }
            try FileManager.default.setAttributes(
                [.posixPermissions: 0o700, .ownerAccountID: 65534, .groupOwnerAccountID: 65534],
                ofItemAtPath: runtime.path)
        }

        /// sway, whose configuration starts mako.
        func startSwayWithMako() throws -> ManagedProcess {
            let config = directory.appendingPathComponent("sway.config")
            try "exec /usr/bin/mako\n".write(to: config, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: config.path)
            let (executable, arguments) = command(["/usr/bin/sway", "-c", config.path], extra: [:])
            return try ManagedProcess(executable, arguments, environment: environment, directory: directory)
        }

        /// Captures sway's screen with grim, as a PNG at `url`.
        func screenshot(to url: URL, timeout: Duration) async throws {
            // The socket is there: mako, which owns its bus name, is sway's client.
            let socket = try FileManager.default.contentsOfDirectory(atPath: runtime.path).first {
                $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock")
            }
            guard let socket else { throw HarnessFailure("sway made no Wayland socket in \(runtime.path)") }
            // grim writes to stdout: a file of the test's, which nobody could not open.
            let (executable, arguments) = command(["/usr/bin/grim", "-"], extra: ["WAYLAND_DISPLAY": socket])
            let png = try await ManagedProcess.run(
                executable, arguments, environment: environment.merging(["WAYLAND_DISPLAY": socket]) { $1 },
                directory: directory, timeout: timeout)
            try png.stdout.write(to: url)
        }

        /// `argv` as the compositor's user: itself when not root, else through setpriv as nobody, with
        /// only the session's environment (and `extra`).
        private func command(_ argv: [String], extra: [String: String]) -> (String, [String]) {
            guard getuid() == 0 else { return (argv[0], Array(argv.dropFirst())) }
            let exports = environment.merging(extra) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return (
                "/usr/bin/setpriv",
                ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/env", "-i"] + exports + argv
            )
        }
    }

    private init(
        kind: Kind, display: XvfbDisplay?, process: ManagedProcess, directory: URL, bus: TestBus,
        compositor: Compositor?, helpers: [ManagedProcess]
    ) {
        self.helpers = helpers
        self.kind = kind
        self.display = display
        self.process = process
        self.directory = directory
        self.bus = bus
        self.compositor = compositor
    }

    private func waitUntilOwned(using observer: DBusConnection, timeout: Duration) async throws {
        try await process.waitUntilItOwns(Self.busName, as: kind.rawValue, using: observer, timeout: timeout)
    }

    /// Captures the screen, popups included: Xvfb's with ImageMagick, sway's with grim.
    public func screenshot(to url: URL, timeout: Duration = .seconds(20)) async throws {
        if let display {
            try await display.screenshot(to: url, timeout: timeout)
        } else if let compositor {
            try await compositor.screenshot(to: url, timeout: timeout)
        }
    }

    // MARK: Popups

    /// The popups shown now, oldest first: the server's mapped windows on X (`xdotool`), the
    /// notifications mako lists (`makoctl list`).
    public func popups() async throws -> [Popup] {
        guard let display else {
            // busctl's JSON: {"type": "aa{sv}", "data": [[{"id": {"type": "u", "data": 1}, …}, …]]}.
            let listing = try await makoctl(["list"])
            let json = try JSONSerialization.jsonObject(with: Data(listing.utf8)) as? [String: Any]
            let notifications = (json?["data"] as? [[[String: Any]]])?.first ?? []
            return notifications.compactMap { ($0["id"] as? [String: Any])?["data"] as? Int }.sorted()
                .map { Popup(id: UInt32($0), frame: nil) }
        }
        // xdotool prints WINDOW=, X=, Y=, WIDTH=, HEIGHT=, SCREEN= for each window, and fails when none.
        let found = try await ManagedProcess.run(
            "/usr/bin/xdotool",
            ["search", "--onlyvisible", "--class", kind.windowClass, "getwindowgeometry", "--shell", "%@"],
            environment: display.environment, directory: directory, check: false)
        guard found.status == 0 else {
            if found.status == 1, found.output.isEmpty { return [] }
            throw HarnessFailure("xdotool could not list the popups (status \(found.status)): \(found.stderr)")
        }
        var popups: [Popup] = []
        var fields: [String: Int] = [:]
        for line in found.output.split(separator: "\n") {
            let pair = line.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, let value = Int(pair[1]) else { continue }
            if pair[0] == "SCREEN", let id = fields["WINDOW"], let x = fields["X"], let y = fields["Y"],
                let width = fields["WIDTH"], let height = fields["HEIGHT"]
            {
                // Not notification-daemon's 16-pixel icon of its queue, should it be mapped, nor Plasma's
                // desktop and panel, as wide as the screen.
                if width > 32, height > 32, width < 1000 {
                    popups.append(
                        Popup(id: UInt32(id), frame: ScreenRegion(x: x, y: y, width: width, height: height)))
                }
                fields = [:]
            } else {
                fields[String(pair[0])] = value
            }
        }
        // X hands out a client's window ids in increasing order.
        return popups.sorted { $0.id < $1.id }
    }

    /// Waits until the popups shown satisfy `condition`, and returns them.
    @discardableResult
    public func waitForPopups(
        _ what: String, timeout: Duration = .seconds(20), until condition: ([Popup]) -> Bool
    ) async throws -> [Popup] {
        var shown: [Popup] = []
        try await Await.polling("\(kind) shows \(what)", timeout: timeout, describe: { "it shows \(shown)" }) {
            shown = try await popups()
            return condition(shown)
        }
        return shown
    }

    /// Waits until the popup of `notification` is shown, and returns it: on mako the one of that id; on X,
    /// which tells no notification ids, the oldest popup.
    public func waitForPopup(of notification: UInt32, timeout: Duration = .seconds(20)) async throws -> Popup {
        let onX = kind.onX
        let shown = try await waitForPopups("the popup of notification \(notification)", timeout: timeout) {
            onX ? !$0.isEmpty : $0.contains { $0.id == notification }
        }
        return shown.first { onX || $0.id == notification }!
    }

    /// How a popup looks in a screenshot: whether it is drawn yet, and how many pixels of text it has
    /// (bold text has more).
    public struct Look: Sendable {
        public var drawn: Bool
        public var textPixels: Int
    }

    /// Measures `popup` on `screen`. Text is dark (below half grey) on the X servers' light popups, light
    /// (above 60 % grey, as dunst's) on mako's dark ones. A window not drawn yet shows what was under it
    /// (the black root); mako's popup not drawn yet is not there at all.
    public func look(of popup: Popup, on screen: GrayImage) -> Look {
        let region = screen.cropped(to: popup.frame(onScreenOf: screen))
        if kind.darkText {
            let light = region.count { $0 >= 128 }
            return Look(drawn: light > region.pixels.count / 2, textPixels: region.pixels.count - light)
        }
        let text = region.count { $0 > 153 }
        return Look(drawn: text > 0, textPixels: text)
    }

    /// How many pixels of `popup`, in the screenshot at `url`, are of a color: those for which
    /// `condition`, an ImageMagick `-fx` expression of the pixel's `r`, `g` and `b` (0 to 1), holds.
    public func count(_ condition: String, of popup: Popup, in url: URL) async throws -> Int {
        let frame = popup.frame(onScreenOf: try await GrayImage.read(url))
        let matches = try await GrayImage.read(url, after: ["-crop", "\(frame)", "+repage", "-fx", condition])
        return matches.count { $0 > 128 }
    }

    /// Captures the screen to `url` once `popup` is drawn (servers signal nothing when they have drawn),
    /// and returns the popup as captured (where it was then) and its look.
    public func capture(_ popup: Popup, to url: URL, timeout: Duration = .seconds(20)) async throws -> (
        popup: Popup, look: Look
    ) {
        var captured: (popup: Popup, look: Look)?
        try await Await.polling("\(kind) drew \(popup)", timeout: timeout) {
            guard let (shown, screen) = try await captureInPlace(popup, to: url) else { return false }
            captured = (shown, look(of: shown, on: screen))
            return captured!.look.drawn
        }
        return captured!
    }

    /// Captures the screen to `url`, and returns its pixels and `popup` as captured if it was shown at
    /// the same place before and after (a server may move a window once it has shown it), else nil.
    private func captureInPlace(_ popup: Popup, to url: URL) async throws -> (popup: Popup, screen: GrayImage)? {
        let before = try await popups().first { $0 == popup }
        try await screenshot(to: url)
        guard let before, let after = try await popups().first(where: { $0 == popup }), after.frame == before.frame
        else { return nil }
        return (after, try await GrayImage.read(url))
    }

    /// Chooses action `key` (one of `keys`, in the order they were sent) on the popup of `notification`,
    /// as a user would, and returns that popup. On X a click on its button: X tells no notification ids,
    /// so the popup must be the oldest one shown; its button labels are found in a screenshot, along the
    /// lowest line of text, one per action in order. On mako `makoctl invoke` (mako's way to choose any
    /// action; a click reaches the default action only).
    @discardableResult
    public func chooseAction(
        _ key: String, among keys: [String], on notification: UInt32, timeout: Duration = .seconds(20)
    ) async throws -> Popup {
        guard let index = keys.firstIndex(of: key) else { throw HarnessFailure("\(key) is not among \(keys)") }
        guard display != nil else {
            try await makoctl(["invoke", "-n", "\(notification)", key])
            return Popup(id: notification, frame: nil)
        }
        var popup = try await waitForPopup(of: notification, timeout: timeout)
        let screenshot = directory.appendingPathComponent("choose-\(key.filter(\.isLetter)).png")
        var labels: [ScreenRegion] = []
        try await Await.polling(
            "\(kind) drew \(keys.count) buttons on \(popup)", timeout: timeout,
            describe: { "labels at \(labels)" }
        ) {
            guard let (shown, screen) = try await captureInPlace(popup, to: screenshot) else { return false }
            popup = shown
            labels = screen.cropped(to: shown.frame!).lowestLineOfWords { $0 < 128 }
            return labels.count == keys.count
        }
        let (x, y) = labels[index].center
        try await click(x: popup.frame!.x + x, y: popup.frame!.y + y)
        return popup
    }

    /// Dismisses `popup` as a user would: a click on it on X (left of its middle, away from any button;
    /// on Plasma, where that chooses the default action, on its close button at the top-right corner),
    /// `makoctl dismiss` on mako.
    public func dismiss(_ popup: Popup) async throws {
        guard let frame = popup.frame else {
            try await makoctl(["dismiss", "-n", "\(popup.id)"])
            return
        }
        if kind == .plasma {
            try await click(x: frame.x + frame.width - 15, y: frame.y + 15)
        } else {
            try await click(x: frame.x + frame.width / 4, y: frame.y + frame.height / 2)
        }
    }

    /// A click at (x, y) on the screen; then the pointer goes to the top-left corner, off any popup
    /// (Plasma holds the expiry of a popup under the pointer).
    private func click(x: Int, y: Int) async throws {
        try await xdotool(["mousemove", "\(x)", "\(y)", "click", "1", "mousemove", "0", "0"])
    }

    @discardableResult
    private func makoctl(_ arguments: [String]) async throws -> String {
        // A D-Bus call to mako (busctl --user), which takes the bus from DBUS_SESSION_BUS_ADDRESS.
        try await ManagedProcess.run(
            "/usr/bin/makoctl", arguments, environment: bus.environment, directory: directory
        ).output
    }

    private func xdotool(_ arguments: [String]) async throws {
        guard let display else { throw HarnessFailure("\(kind) does not draw on X") }
        try await ManagedProcess.run(
            "/usr/bin/xdotool", arguments, environment: display.environment, directory: directory)
    }

    /// Stops the server (sway takes mako with it), its helpers, whatever else runs in its session, then
    /// Xvfb, each by its PID.
    public func stop() async {
        await process.stop()
        for helper in helpers { await helper.stop() }
        await Self.stopLeftovers(of: directory)
        await display?.stop()
    }
}
