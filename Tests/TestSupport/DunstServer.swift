import DBusKit
import Foundation

/// dunst, a real notification server, on a test's private bus and a virtual display of its own, set up
/// so a test can drive it without a person: popups stay until closed, actions are chosen by a script
/// instead of a menu on screen, and the screen can be captured.
///
/// Its folder (inside the bus's, so it goes when the bus stops) holds the dunstrc, the menu script and
/// the files they exchange.
public final class DunstServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the processes and the bus are themselves Sendable.
    public static let busName = "org.freedesktop.Notifications"

    public let display: XvfbDisplay
    public let process: ManagedProcess
    public let directory: URL
    let bus: TestBus

    public var configFile: URL { directory.appendingPathComponent("dunstrc") }
    /// The action the menu script chooses: its key, and on a second line a notification id.
    var choiceFile: URL { directory.appendingPathComponent("menu-choice") }
    /// What dunst last wrote to the menu script.
    var menuInputFile: URL { directory.appendingPathComponent("menu-input") }
    /// The line the menu script last printed back; written last, so its presence means the script is done.
    var menuResultFile: URL { directory.appendingPathComponent("menu-result") }

    /// Starts Xvfb and dunst on `bus`, and returns once dunst owns `org.freedesktop.Notifications`.
    /// `notificationLimit` caps the popups shown at once (more wait in dunst's queue, so a burst cannot
    /// slow it down); `extraConfig` is appended to the dunstrc (e.g. rule sections).
    public static func start(
        on bus: TestBus, observer: DBusConnection, notificationLimit: Int = 20, extraConfig: String = "",
        timeout: Duration = .seconds(20)
    ) async throws -> DunstServer {
        let directory = bus.directory.appendingPathComponent("dunst-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let display = try await XvfbDisplay.start(in: directory, timeout: timeout)
        let process: ManagedProcess
        do {
            let menuScript = try writeMenuScript(in: directory)
            let configFile = directory.appendingPathComponent("dunstrc")
            try config(menuScript: menuScript, notificationLimit: notificationLimit, extraConfig: extraConfig)
                .write(to: configFile, atomically: true, encoding: .utf8)
            process = try ManagedProcess(
                "/usr/bin/dunst", ["-config", configFile.path],
                environment: bus.environment.merging(display.environment) { $1 }, directory: directory)
        } catch {
            await display.stop()
            throw error
        }
        let server = DunstServer(display: display, process: process, directory: directory, bus: bus)
        do {
            try await server.waitUntilOwned(using: observer, timeout: timeout)
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    private init(display: XvfbDisplay, process: ManagedProcess, directory: URL, bus: TestBus) {
        self.display = display
        self.process = process
        self.directory = directory
        self.bus = bus
    }

    /// The dunstrc: everything that would make a popup vanish or change on its own is off.
    static func config(menuScript: URL, notificationLimit: Int, extraConfig: String) -> String {
        """
        # dunst for one test, on a virtual display and a private bus.
        [global]
            # X11 even when the tests run inside a Wayland session.
            force_xwayland = true
            monitor = 0
            follow = none
            # Each notification is its own popup, in arrival order, with no "(N more)" slot.
            notification_limit = \(notificationLimit)
            indicate_hidden = false
            stack_duplicates = false
            sort = false
            # Nothing changes with time: no idle detection, no age line.
            idle_threshold = 0
            show_age_threshold = -1
            font = DejaVu Sans 10
            # No icon lookups in themes the machine may not have.
            icon_position = off
            # The context menu is the harness's script; a URL never starts a browser.
            dmenu = \(menuScript.path)
            browser = /bin/true

        # Popups stay until closed, unless the client asks for an expiry.
        [urgency_low]
            timeout = 0
        [urgency_normal]
            timeout = 0
        [urgency_critical]
            timeout = 0

        \(extraConfig)
        """
    }

    /// The `dmenu` of the dunstrc. dunst writes one line per action of every displayed popup to its
    /// stdin, `#LABEL (SUMMARY) [ID,KEY]`, and invokes the action of the line it prints back.
    static func writeMenuScript(in directory: URL) throws -> URL {
        let script = directory.appendingPathComponent("choose-action")
        try """
        #!/bin/sh
        # Chooses the line of the action keyed by the first line of menu-choice, of the popup whose id is
        # on its second line, else of the newest popup (the highest id) offering that key.
        dir='\(directory.path)'
        cat > "$dir/menu-input"
        key=$(sed -n 1p "$dir/menu-choice" 2>/dev/null)
        id=$(sed -n 2p "$dir/menu-choice" 2>/dev/null)
        line=$(awk -v key="$key" -v id="$id" '
            substr($0, 1, 1) == "#" && substr($0, length($0)) == "]" {
                # The bracket is the last "[" of the line: a summary may contain others.
                open = 0; rest = $0
                while ((i = index(rest, "[")) > 0) { open += i; rest = substr(rest, i + 1) }
                inner = substr($0, open + 1, length($0) - open - 1)
                comma = index(inner, ",")
                if (open == 0 || comma == 0) next
                n = substr(inner, 1, comma - 1) + 0
                if (substr(inner, comma + 1) != key || (id != "" && n != id + 0)) next
                if (chosen == "" || n > best) { best = n; chosen = $0 }
            }
            END { print chosen }' "$dir/menu-input")
        printf '%s\\n' "$line"
        printf '%s\\n' "$line" > "$dir/menu-result"

        """.write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        return script
    }

    /// Waits for dunst to own its name, or fails at once with its stderr when it exits first.
    private func waitUntilOwned(using observer: DBusConnection, timeout: Duration) async throws {
        try await process.waitUntilItOwns(Self.busName, as: "dunst", using: observer, timeout: timeout)
    }

    /// Runs `dunstctl ARGUMENTS` against this dunst and returns its stdout; throws when it fails.
    @discardableResult
    public func dunstctl(_ arguments: [String], timeout: Duration = .seconds(20)) async throws -> String {
        try await ManagedProcess.run(
            "/usr/bin/dunstctl", arguments, environment: bus.environment, directory: directory, timeout: timeout
        ).output
    }

    /// How many popups dunst shows now (`dunstctl count displayed`).
    public func displayedCount() async throws -> Int {
        let output = try await dunstctl(["count", "displayed"])
        guard let count = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw HarnessFailure("dunstctl count displayed printed \"\(output)\"")
        }
        return count
    }

    /// Waits until dunst shows at least `count` popups.
    ///
    /// dunst answers Notify before it shows the popup (it moves it from its queue to the screen on the
    /// next turn of its main loop) and signals neither, so this asks it every `interval`.
    public func waitForDisplayed(
        atLeast count: Int, timeout: Duration = .seconds(20), interval: Duration = .milliseconds(50)
    ) async throws {
        try await waitForDisplayed("at least \(count)", timeout: timeout, interval: interval) { $0 >= count }
    }

    /// Waits until dunst shows no popup (after `dunstctl close-all`), asking it as `waitForDisplayed` does.
    public func waitForNoneDisplayed(timeout: Duration = .seconds(20), interval: Duration = .milliseconds(50))
        async throws
    {
        try await waitForDisplayed("no", timeout: timeout, interval: interval) { $0 == 0 }
    }

    private func waitForDisplayed(
        _ what: String, timeout: Duration, interval: Duration, until done: (Int) -> Bool
    ) async throws {
        var shown = 0
        try await Await.polling(
            "dunst shows \(what) popups", timeout: timeout, interval: interval, describe: { "it shows \(shown)" }
        ) {
            shown = try await displayedCount()
            return done(shown)
        }
    }

    /// Invokes the action `key` as a user would through dunst's context menu: `dunstctl context` makes
    /// dunst run its menu command, the harness's script, which prints the line of that action of popup
    /// `notificationID`, or of the newest popup offering it. dunst then sends
    /// `ActionInvoked(id, key)` to the client that created the popup (to that client only).
    ///
    /// Returns the line chosen, e.g. `#Later (Hello) [2,later]`, once the script has printed it.
    @discardableResult
    public func invokeAction(key: String, notificationID: UInt32? = nil, timeout: Duration = .seconds(20))
        async throws -> String
    {
        try choose(key: key, notificationID: notificationID)
        try await dunstctl(["context"])
        // dunst runs the menu on a thread of its own, after it has answered.
        let result = menuResultFile
        do {
            try await Await.condition("dunst ran its menu script", timeout: timeout, watching: directory) {
                ((try? String(contentsOf: result, encoding: .utf8)) ?? "").hasSuffix("\n")
            }
        } catch {
            throw HarnessFailure(
                "dunst did not run its menu script within \(timeout); it runs it only when a displayed popup "
                    + "has actions or URLs (\((try? await displayedCount()) ?? 0) displayed)")
        }
        let chosen = (try String(contentsOf: result, encoding: .utf8)).trimmingCharacters(in: .newlines)
        guard !chosen.isEmpty else {
            throw HarnessFailure(
                "dunst's menu offered no action \(key)\(notificationID.map { " of popup \($0)" } ?? ""); "
                    + "it offered: \(lastMenu)")
        }
        return chosen
    }

    /// The lines dunst wrote to the menu script the last time it ran, one per action of each popup.
    public var lastMenu: [String] {
        ((try? String(contentsOf: menuInputFile, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Invokes the default action of the oldest popup shown (`dunstctl action 0`): the action keyed
    /// `default`, else the only action; with several and none of them `default`, dunst opens its menu,
    /// where the script then chooses nothing.
    ///
    /// dunst 1.9.0 takes no other position: it checks the position against the number of *waiting*
    /// notifications, so `dunstctl action 1` fails while popups are shown. Use `invokeAction(key:)`
    /// (`default` is a key like any other) to reach a popup other than the oldest.
    public func invokeDefaultAction() async throws {
        try choose(key: nil, notificationID: nil)
        try await dunstctl(["action", "0"])
    }

    /// Tells the menu script what to choose (nothing for nil), and clears what it wrote last time.
    private func choose(key: String?, notificationID: UInt32?) throws {
        try? FileManager.default.removeItem(at: menuResultFile)
        try? FileManager.default.removeItem(at: menuInputFile)
        let lines = key.map { [$0] + (notificationID.map { ["\($0)"] } ?? []) } ?? []
        try lines.map { $0 + "\n" }.joined().write(to: choiceFile, atomically: true, encoding: .utf8)
    }

    /// Captures the virtual screen, popups included, as a PNG at `url`.
    public func screenshot(to url: URL) async throws {
        try await display.screenshot(to: url)
    }

    /// Stops dunst, then Xvfb, each by its PID.
    public func stop() async {
        await process.stop()
        await display.stop()
    }
}

extension ManagedProcess {
    /// Waits until this process, a server just started, owns `name` on the bus `observer` is connected to;
    /// throws, with its stderr, when it exits first or the time runs out.
    func waitUntilItOwns(_ name: String, as what: String, using observer: DBusConnection, timeout: Duration)
        async throws
    {
        enum Startup: Sendable {
            case owned
            case exited(Int32)
        }
        let events = Recorder<Startup>()
        let watch = try await observer.watchNameOwner(name) { if $0 != nil { events.append(.owned) } }
        defer { watch.cancel() }
        let exit = Task {
            if let status = await self.waitForExit(timeout: timeout) { events.append(.exited(status)) }
        }
        defer { exit.cancel() }
        do {
            try await events.wait("\(what) owns \(name) on the test bus", timeout: timeout) { !$0.isEmpty }
        } catch {
            throw HarnessFailure("\(what) did not own \(name) within \(timeout): \(stderr.suffix(2000))")
        }
        if case .exited(let status) = events.elements.first {
            throw HarnessFailure("\(what) exited with status \(status) before owning \(name): \(stderr)")
        }
    }
}
