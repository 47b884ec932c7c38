import DBusKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// GNOME Shell as the notification server of a test's private bus: `gnome-shell --headless` (mutter's
/// own virtual monitor, no display server needed) with `--unsafe-mode`, so that the test reads the shell's
/// notifications from its own objects (`org.gnome.Shell.Eval`), captures its screen
/// (`org.gnome.Shell.Screenshot`) and clicks a banner's button with a virtual pointer. The shell needs logind on a system bus: it gets a bus of its own
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

    /// The shell's own banner, as drawn: its notification's title, its body as the label shows it (markup
    /// rendered, so without tags it read), its icon (a file's path or a themed icon's name), and where it
    /// is on the screen.
    public struct Banner: Sendable, Equatable, Decodable {
        public var title: String
        public var body: String
        /// The body's markup as the label was given it (after the shell escaped what it does not read).
        public var markup: String
        public var icon: String
        public var x: Int
        public var y: Int
        public var width: Int
        public var height: Int

        public var region: ScreenRegion { ScreenRegion(x: x, y: y, width: width, height: height) }
    }

    /// The shell's home, `XDG_CONFIG_HOME` and `XDG_DATA_HOME`, which chimed gets too where it must read
    /// what the shell reads (GNOME's settings, the apps' desktop files).
    public let home: URL
    public var environment: [String: String] {
        [
            "XDG_CONFIG_HOME": home.appendingPathComponent(".config").path,
            "XDG_DATA_HOME": home.appendingPathComponent(".local/share").path, "XDG_DATA_DIRS": "/usr/share",
        ]
    }

    /// Starts the shell on `bus` and returns once it owns `org.freedesktop.Notifications`, with no
    /// notification of its own left (the banners shown are the test's).
    ///
    /// `settings` are GNOME settings in dconf's keyfile form (`[org/gnome/…]` groups of `key=value`): the
    /// shell then reads them from a dconf database in its home (`dconf compile`), as on a desktop,
    /// instead of from memory. `applications` are desktop files (name: contents) put in its
    /// `XDG_DATA_HOME`, where it finds apps.
    ///
    /// A shell that is not ready within `timeout` is stopped and started again, once: GNOME Shell 43 starts
    /// `ibus-daemon` with a JavaScript function to run in the forked child before it executes, and now and
    /// then (about one start in fifteen here, more under load) that child hangs on a lock another thread
    /// of the shell held when it forked, and the shell's main loop waits for it for good (seen in its
    /// stacks: `g_spawn_async` reading the child's pipe; the child in `g_type_get_qdata`).
    public static func start(
        on bus: TestBus, observer: DBusConnection, settings: String? = nil, applications: [String: String] = [:],
        timeout: Duration = .seconds(20)
    ) async throws -> GnomeShellServer {
        do {
            return try await startOnce(
                on: bus, observer: observer, settings: settings, applications: applications, timeout: timeout)
        } catch let failure as NotReady {
            print("gnome-shell was not ready in \(timeout), started again: \(failure.description.prefix(200))")
            return try await startOnce(
                on: bus, observer: observer, settings: settings, applications: applications, timeout: timeout)
        }
    }

    /// The shell started but did not become ready.
    struct NotReady: Error, CustomStringConvertible {
        var description: String
    }

    private static func startOnce(
        on bus: TestBus, observer: DBusConnection, settings: String?, applications: [String: String],
        timeout: Duration
    ) async throws -> GnomeShellServer {
        let directory = bus.directory.appendingPathComponent("gnome-shell-\(UUID().uuidString.prefix(8))")
        let runtime = directory.appendingPathComponent("runtime")
        let home = directory.appendingPathComponent("home")
        for folder in [runtime, home] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
        // Told once, at the first start, that the screen cannot be locked (there is no display manager
        // here): that banner would stay, since a shell whose user is idle keeps a banner until the user
        // is active, which a headless shell's never is. Marked as told.
        let shellData = home.appendingPathComponent(".local/share/gnome-shell")
        try FileManager.default.createDirectory(at: shellData, withIntermediateDirectories: true)
        try Data().write(to: shellData.appendingPathComponent("lock-warning-shown"))
        let desktopFiles = home.appendingPathComponent(".local/share/applications")
        try FileManager.default.createDirectory(at: desktopFiles, withIntermediateDirectories: true)
        for (name, contents) in applications {
            try contents.write(to: desktopFiles.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        if let settings {
            let keyfiles = directory.appendingPathComponent("dconf-keyfiles")
            try FileManager.default.createDirectory(at: keyfiles, withIntermediateDirectories: true)
            try settings.write(to: keyfiles.appendingPathComponent("00-test"), atomically: true, encoding: .utf8)
            let database = home.appendingPathComponent(".config/dconf")
            try FileManager.default.createDirectory(at: database, withIntermediateDirectories: true)
            _ = try await ManagedProcess.run(
                "/usr/bin/dconf", ["compile", database.appendingPathComponent("user").path, keyfiles.path],
                directory: directory)
            try "user-db:user\n".write(
                to: directory.appendingPathComponent("dconf-profile"), atomically: true, encoding: .utf8)
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
            // Settings in memory: nothing of the machine's, nothing written; or the test's in dconf.
            "GSETTINGS_BACKEND": settings == nil ? "memory" : "dconf",
            "DCONF_PROFILE": directory.appendingPathComponent("dconf-profile").path,
            "XDG_DATA_DIRS": "/usr/share",
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
            // Its home's files too: it writes its caches and screenshots there.
            if let files = FileManager.default.enumerator(atPath: home.path) {
                for case let file as String in files {
                    try FileManager.default.setAttributes(
                        [.ownerAccountID: 65534, .groupOwnerAccountID: 65534],
                        ofItemAtPath: home.appendingPathComponent(file).path)
                }
            }
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: home.path)
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
            process: process, systemBus: systemBus, logind: logind, directory: directory, home: home, bus: bus)
        do {
            try await process.waitUntilItOwns(Self.busName, as: "gnome-shell", using: observer, timeout: timeout)
            // The shell owns the name before its message tray is made: wait until Eval finds it.
            try await Await.polling("the shell's message tray", timeout: timeout, interval: .milliseconds(200)) {
                (try? await server.eval("Main.messageTray !== undefined && Main.messageTray !== null")) == "true"
            }
            // Any notification of its own would hold the banner (see above): none is left.
            try await Await.polling("the shell's own notifications gone", timeout: timeout) {
                try await server.eval(
                    """
                    Main.messageTray.getSources().forEach(s => s.destroy());
                    Main.messageTray._notificationState === 0 && Main.messageTray.getSources().length === 0
                    """) == "true"
            }
        } catch {
            await server.stop()
            throw NotReady(description: "\(error)\ngnome-shell said: \(process.stderr.suffix(3000))")
        }
        return server
    }

    private init(
        process: ManagedProcess, systemBus: TestBus, logind: ManagedProcess, directory: URL, home: URL, bus: TestBus
    ) {
        self.process = process
        self.systemBus = systemBus
        self.logind = logind
        self.directory = directory
        self.home = home
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

    /// The banner shown now, if any.
    public func banner() async throws -> Banner? {
        let json = try await eval(
            """
            (() => {
                const b = Main.messageTray._banner;
                if (!b || Main.messageTray._notificationState !== 2) return '';
                const [x, y] = b.get_transformed_position();
                const [width, height] = b.get_transformed_size();
                // Not laid out yet.
                if (![x, y, width, height].every(Number.isFinite)) return '';
                const gicon = b._iconBin.child?.gicon;
                return JSON.stringify({
                    title: b.notification.title ?? '', body: b.bodyLabel.clutter_text.text ?? '',
                    markup: b.bodyLabel._text ?? '',
                    icon: gicon ? gicon.to_string() : '', x: Math.round(x), y: Math.round(y),
                    width: Math.round(width), height: Math.round(height)});
            })()
            """)
        let text = try JSONDecoder().decode(String.self, from: Data(json.utf8))
        return text.isEmpty ? nil : try JSONDecoder().decode(Banner.self, from: Data(text.utf8))
    }

    /// The banner of the notification titled `title`, once the shell shows it (slid in, not moving).
    public func banner(titled title: String, timeout: Duration = .seconds(20)) async throws -> Banner {
        var shown: Banner?
        try await Await.polling("the banner of \(title)", timeout: timeout) {
            shown = try await banner()
            return shown?.title == title
        }
        return shown!
    }

    /// Captures the shell's screen (`org.gnome.Shell.Screenshot`, which `--unsafe-mode` lets anyone call)
    /// as a PNG named `name` in the shell's home, and returns its place.
    public func screenshot(named name: String) async throws -> URL {
        let file = home.appendingPathComponent(name)
        let connection = try await bus.connect()
        defer { connection.close() }
        let reply = try await connection.call(
            destination: "org.gnome.Shell.Screenshot", path: "/org/gnome/Shell/Screenshot",
            interface: "org.gnome.Shell.Screenshot", member: "Screenshot",
            [.boolean(false), .boolean(false), .string(file.path)], timeout: .seconds(20))
        guard reply.first == .boolean(true) else { throw Failure("Screenshot answered \(reply)") }
        return file
    }

    /// How many pixels of `region` of the image at `url` meet `condition` (an ImageMagick `-fx`
    /// expression of `r`, `g`, `b` from 0 to 1).
    public static func count(_ condition: String, in region: ScreenRegion, of url: URL) async throws -> Int {
        let matches = try await GrayImage.read(url, after: ["-crop", "\(region)", "+repage", "-fx", condition])
        return matches.count { $0 > 128 }
    }

    /// Clicks the button `label` of the banner of the notification titled `title` with a pointer: a
    /// virtual pointer device of the shell's (Clutter's, as remote desktop tools drive it) moves onto the
    /// banner, which expands and shows its buttons, and presses and releases its primary button on the
    /// button's middle. The events go through the shell's input handling as a mouse's would.
    public func click(_ label: String, onBannerTitled title: String, timeout: Duration = .seconds(20)) async throws {
        let banner = try await banner(titled: title, timeout: timeout)
        // Onto the banner from elsewhere: the pointer may still be where an earlier banner was, and a
        // banner expands when the pointer enters it.
        try await movePointer(to: Self.awayFromBanners)
        try await movePointer(to: banner.region.center)
        var last: ScreenRegion?
        var button: ScreenRegion?
        // Found once it is shown and stays where it is (the banner expands with an animation).
        try await Await.polling("the button \(label) shown", timeout: timeout) {
            let json = try await eval(
                """
                (() => {
                    const b = Main.messageTray._banner;
                    if (!b || !b.expanded || !b._buttonBox) return '';
                    const c = b._buttonBox.get_children().find(c => c.label === \(Self.quoted(label)) && c.mapped);
                    if (!c) return '';
                    const [x, y] = c.get_transformed_position();
                    const [width, height] = c.get_transformed_size();
                    if (![x, y, width, height].every(Number.isFinite)) return '';
                    return JSON.stringify({x: Math.round(x), y: Math.round(y),
                        width: Math.round(width), height: Math.round(height)});
                })()
                """)
            let text = try JSONDecoder().decode(String.self, from: Data(json.utf8))
            guard !text.isEmpty else { return false }
            struct Frame: Decodable { var x, y, width, height: Int }
            let frame = try JSONDecoder().decode(Frame.self, from: Data(text.utf8))
            let region = ScreenRegion(x: frame.x, y: frame.y, width: frame.width, height: frame.height)
            defer { last = region }
            if region == last { button = region }
            return button != nil
        }
        try await movePointer(to: button!.center, click: true)
    }

    /// Clicks the banner of the notification titled `title` (not a button of it) with the virtual pointer.
    public func click(onBannerTitled title: String, timeout: Duration = .seconds(20)) async throws {
        let banner = try await banner(titled: title, timeout: timeout)
        try await movePointer(to: banner.region.center, click: true)
    }

    /// A point of the screen where no banner is, nor the top-left corner that opens the overview.
    static let awayFromBanners = (x: 0, y: 767)

    /// Moves the shell's virtual pointer to `point`, and clicks there with `click`.
    func movePointer(to point: (x: Int, y: Int), click: Bool = false) async throws {
        _ = try await eval(
            """
            (() => {
                const { Clutter, GLib } = imports.gi;
                global.testPointer ??= Clutter.get_default_backend().get_default_seat()
                    .create_virtual_device(Clutter.InputDeviceType.POINTER_DEVICE);
                const time = GLib.get_monotonic_time();
                global.testPointer.notify_absolute_motion(time, \(point.x), \(point.y));
                if (\(click)) {
                    global.testPointer.notify_button(time + 1000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.PRESSED);
                    global.testPointer.notify_button(time + 2000, Clutter.BUTTON_PRIMARY, Clutter.ButtonState.RELEASED);
                }
            })()
            """)
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
