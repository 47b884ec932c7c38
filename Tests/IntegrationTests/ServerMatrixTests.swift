import DBusKit
import Foundation
import TestSupport
import Testing

/// chimed against the notification servers people run, each started for real on the test's bus
/// (dunst has DunstTests): what each reports, that a popup with actions and markup is shown (captured),
/// that replacing keeps its id, that closing by id is reported, that a popup with an expiry time closes
/// then, that actions chosen on a popup as a user would reach chimed and are carried out, and how bold
/// markup renders. docs/servers.md holds the same table.
@Suite(.serialized) struct ServerMatrixTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var kind: DesktopNotificationServer.Kind
        var name: String
        var capabilities: Set<String>
        /// The reason the server gives when it closes a popup itself once an action is chosen on it; nil
        /// when it leaves the popup open, and chimed closes it (reason 3). chimed records the server's
        /// closing as dismissed by the user, Plasma's reason 3 too.
        var closesAfterAction: UInt32?
        /// Whether a popup closed by CloseNotification goes from the screen, not only from the server's list.
        var closeRemovesPopup: Bool
        /// Whether a Notify that replaces a popup closed already (a snooze coming back) gets its id again.
        var replacingAClosedPopupKeepsItsID: Bool
        /// Whether dismissing a popup as a user would (`dismiss`) also sends ActionInvoked "default", even
        /// when the popup has no such action.
        var dismissInvokesDefault: Bool
        var testDescription: String { kind.rawValue }
    }

    static let servers = [
        Expected(
            kind: .xfce4Notifyd, name: "Xfce Notify Daemon",
            capabilities: ["actions", "body", "body-markup", "body-hyperlinks", "icon-static", "action-icons"],
            closesAfterAction: 2, closeRemovesPopup: true, replacingAClosedPopupKeepsItsID: true,
            dismissInvokesDefault: false),
        Expected(
            kind: .notificationDaemon, name: "Notification Daemon",
            capabilities: ["actions", "body", "body-markup", "body-hyperlinks", "icon-static", "persistence", "sound"],
            closesAfterAction: 2, closeRemovesPopup: false, replacingAClosedPopupKeepsItsID: false,
            dismissInvokesDefault: true),
        Expected(
            kind: .mako, name: "mako", capabilities: ["actions", "body", "body-markup", "icon-static"],
            closesAfterAction: nil, closeRemovesPopup: true, replacingAClosedPopupKeepsItsID: false,
            dismissInvokesDefault: false),
        Expected(
            kind: .plasma, name: "Plasma",
            capabilities: [
                "actions", "body", "body-markup", "body-hyperlinks", "body-images", "icon-static", "persistence",
                "inline-reply",
            ],
            closesAfterAction: 3, closeRemovesPopup: true, replacingAClosedPopupKeepsItsID: true,
            dismissInvokesDefault: false),
    ]

    /// Runs `body` with the server of `expected` on the test's bus, chimed talking to it, and the
    /// server's signals overheard.
    static func withServer(
        _ expected: Expected, _ body: (Session, DesktopNotificationServer, ServerSignals) async throws -> Void
    ) async throws {
        try await Session.run(withServer: false, startChimed: false, allowOtherUsers: expected.kind.needsOtherUsers) {
            s in
            let server = try await DesktopNotificationServer.start(expected.kind, on: s.bus, observer: s.observer)
            s.desktopServers.append(server)
            let signals = try await s.overhearServerSignals()
            s.chimed = try await s.startChimed()
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            try await body(s, server, signals)
        }
    }

    @Test(arguments: servers)
    func chimedWorksWith(_ expected: Expected) async throws {
        try await Self.withServer(expected) { s, server, signals in
            let status = try await s.chime(["status", "--json"])
            let fields = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(fields["server-name"] as? String == expected.name)
            let capabilities = Set(fields["capabilities"] as? [String] ?? [])
            #expect(expected.capabilities.isSubset(of: capabilities), "\(capabilities.sorted())")

            // A popup with actions and markup.
            let sent = try await s.chime([
                // It never expires on its own (-t 0): only the close below ends it.
                "send", "-t", "0", "-A", "open=Open", "-A", "later=Later", "Matrix", "<b>bold</b> & <i>it</i>",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            try await s.delivered.wait(forCount: 1)
            let id = s.delivered.elements[0].notification
            // The server signals nothing when it has drawn: the screen is captured until the popup is.
            let screenshot = s.bus.directory.appendingPathComponent("\(expected.kind).png")
            let look = try await server.capture(try await server.waitForPopup(of: id), to: screenshot).look
            #expect(look.textPixels > 0, "the popup shows no text")
            let png = try Data(contentsOf: screenshot)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
            try DunstTests.keep(screenshot, as: "\(expected.kind)-popup.png")

            // Replacing keeps the id.
            let replaced = try await s.chime(["send", "-t", "0", "-r", "\(id)", "Matrix", "replaced"])
            #expect(replaced.status == 0, "\(replaced.stderr)")
            try await s.delivered.wait(forCount: 2)
            #expect(s.delivered.elements[1].notification == id)

            // Closed by id: the server reports it (reason 3), and the popup goes from the screen, but on
            // notification-daemon, which leaves it drawn.
            let close = try await s.chime(["close", "\(id)"])
            #expect(close.status == 0, "\(close.stderr)")
            try await signals.closed.wait("\(expected.kind) reported the close") {
                $0.contains { $0.notification == id }
            }
            #expect(signals.closed.elements.first { $0.notification == id }?.reason == 3)
            if expected.closeRemovesPopup {
                try await server.waitForPopups("no popup") { $0.isEmpty }
            } else {
                // Watched for a while: it stays.
                _ = try? await server.waitForPopups("no popup", timeout: .seconds(3)) { $0.isEmpty }
                #expect(try await !server.popups().isEmpty, "the closed popup went from the screen")
            }

            // An expiry time: the popup closes then, by the server or, for one that ignores it, by chimed.
            // Recorded as an expiry either way; chimed stepped in for notification-daemon alone.
            _ = try await Self.sendExpiring(s, signals, as: 3)
            #expect(
                s.chimed!.stderr.contains("which the server does not keep")
                    == (expected.kind == .notificationDaemon))
        }
    }

    /// Sends a popup that expires after a second, as the `count`th notification delivered, and returns
    /// its id once it is reported closed and its item's history records the expiry.
    static func sendExpiring(_ s: Session, _ signals: ServerSignals, as count: Int) async throws -> UInt32 {
        let expiring = try await s.chime(["send", "-t", "1000", "-p", "Expiring"])
        #expect(expiring.status == 0, "\(expiring.stderr)")
        let item = expiring.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try await s.delivered.wait(forCount: count)
        let id = s.delivered.elements[count - 1].notification
        try await signals.closed.wait("the expiring popup closed", timeout: .seconds(15)) {
            $0.contains { $0.notification == id }
        }
        try await InteractionTests.awaitListing(s, ["history", "--item", item], "the expiry") {
            $0.contains { $0["event"] as? String == "closed" && $0["detail"] as? String == "expired" }
        }
        return id
    }

    /// The seed's case, with actions chosen as a user would (a click on the button on X, `makoctl invoke`
    /// on mako): ActionInvoked comes back with the key, chimed carries the action out (Stop Repeat ends
    /// the repeats, Snooze brings the popup back after its time), and the popup goes: closed by the server
    /// or, where the server leaves it open, by chimed.
    @Test(arguments: servers)
    func actionsChosenOnThePopupAreCarriedOut(_ expected: Expected) async throws {
        try await Self.withServer(expected) { s, server, signals in
            let keys = ["snooze:2s", "stop-repeat"]
            let actions = ["-t", "0", "-A", "snooze:2s=Snooze 2 s", "-A", "stop-repeat=Stop Repeat", "Pizza Time"]
            // Every minute from three seconds on: the second occurrence would come after the test.
            let start = GroupTests.local(Date().addingTimeInterval(3), zone: TimeZone(identifier: "Europe/Berlin")!)
            let repeating = try await s.chime(["send", "--rrule", "FREQ=MINUTELY", "--dtstart", start] + actions)
            #expect(repeating.status == 0, "\(repeating.stderr)")
            let first = try await s.delivered.element(0, timeout: .seconds(70))
            let screenshot = s.bus.directory.appendingPathComponent("pizza.png")
            _ = try await server.capture(try await server.waitForPopup(of: first.notification), to: screenshot)
            try DunstTests.keep(screenshot, as: "\(expected.kind)-pizza-time.png")

            // Stop Repeat, the second button: nothing is left pending.
            let stopped = try await server.chooseAction("stop-repeat", among: keys, on: first.notification)
            try await signals.invoked.wait(forCount: 1)
            #expect(signals.invoked.elements == [ActionInvoked(notification: first.notification, key: "stop-repeat")])
            try await Self.popupGoes(stopped, of: first.notification, after: 0, expected, server, signals)
            try await s.chimed!.waitForStderr(containing: "stop-repeat: stopped its repeats")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            // Recorded as the user's doing where the server closed it (Plasma says reason 3), else chimed's.
            let closing =
                expected.closesAfterAction == nil ? "closed by a call to CloseNotification" : "dismissed by the user"
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(first.item)"], closing) {
                $0.contains { $0["event"] as? String == "closed" && $0["detail"] as? String == closing }
            }

            // Snooze, the first button, on a popup shown now: it comes back two seconds later.
            let once = try await s.chime(["send"] + actions)
            #expect(once.status == 0, "\(once.stderr)")
            let second = try await s.delivered.element(1)
            let closedBefore = signals.closed.elements.count
            // Taken before the action is chosen: the popup cannot come back less than 2 s after this.
            let chosen = Date()
            let snoozed = try await server.chooseAction("snooze:2s", among: keys, on: second.notification)
            try await signals.invoked.wait(forCount: 2)
            #expect(signals.invoked.elements.last == ActionInvoked(notification: second.notification, key: "snooze:2s"))
            try await Self.popupGoes(snoozed, of: second.notification, after: closedBefore, expected, server, signals)
            try await s.chimed!.waitForStderr(containing: "snooze:2s: snoozed until")
            // The snooze is an item of its own (not read from the listing: on a busy machine it may have fired
            // by then).
            let back = try await s.delivered.element(2, timeout: .seconds(10))
            #expect(back.item != second.item)
            // It replaces the closed popup: with the same id, or a new one.
            #expect((back.notification == second.notification) == expected.replacingAClosedPopupKeepsItsID)
            #expect(Date().timeIntervalSince(chosen) >= 2)
            _ = try await server.waitForPopup(of: back.notification)
        }
    }

    /// After an action was chosen on `popup` of `notification`, it is reported closed (after the first
    /// `earlier` closes), by the server with its reason or by chimed with 3, and goes from the screen.
    static func popupGoes(
        _ popup: DesktopNotificationServer.Popup, of notification: UInt32, after earlier: Int, _ expected: Expected,
        _ server: DesktopNotificationServer, _ signals: ServerSignals
    ) async throws {
        try await signals.closed.wait("\(popup) reported closed after the action") {
            $0.dropFirst(earlier).contains { $0.notification == notification }
        }
        let closed = signals.closed.elements.dropFirst(earlier).first { $0.notification == notification }
        #expect(closed?.reason == expected.closesAfterAction ?? 3)
        try await server.waitForPopups("\(popup) gone after the action") { !$0.contains(popup) }
    }

    /// Shows one notification alone (sent with `arguments`), captures it to `name`.png (kept), dismisses
    /// it as a user would (notification-daemon leaves a popup closed by a call on screen), and returns its
    /// popup as captured, its look, and the screenshot.
    static func showAlone(
        _ arguments: [String], name: String, _ expected: Expected, _ s: Session, _ server: DesktopNotificationServer,
        _ signals: ServerSignals
    ) async throws -> (popup: DesktopNotificationServer.Popup, look: DesktopNotificationServer.Look, screenshot: URL) {
        let count = s.delivered.elements.count
        let sent = try await s.chime(["send", "-t", "0"] + arguments)
        #expect(sent.status == 0, "\(sent.stderr)")
        let id = try await s.delivered.element(count).notification
        let screenshot = s.bus.directory.appendingPathComponent("\(name).png")
        let (popup, look) = try await server.capture(try await server.waitForPopup(of: id), to: screenshot)
        try DunstTests.keep(screenshot, as: "\(expected.kind)-\(name).png")
        try await server.dismiss(popup)
        try await server.waitForPopups("no popup") { $0.isEmpty }
        try await signals.closed.wait("\(popup) reported dismissed") { $0.contains { $0.notification == id } }
        #expect(signals.closed.elements.last { $0.notification == id }?.reason == 2)
        let defaults = signals.invoked.elements.filter { $0 == ActionInvoked(notification: id, key: "default") }
        #expect(defaults.count == (expected.dismissInvokesDefault ? 1 : 0))
        return (popup, look, screenshot)
    }

    /// `<b>` in a body shows bold: the body has more text pixels than the same words sent with `--plain`,
    /// and than the tags shown as written (each popup shown alone, then dismissed as a user would).
    @Test(arguments: servers)
    func boldMarkupShowsBolderThanPlainText(_ expected: Expected) async throws {
        try await Self.withServer(expected) { s, server, signals in
            // The text pixels of one notification's popup, shown alone.
            func show(_ arguments: [String], name: String) async throws -> Int {
                try await Self.showAlone(arguments, name: "markup-\(name)", expected, s, server, signals).look
                    .textPixels
            }
            // The body's share: the popup's text pixels less those of the summary alone (and of the
            // popup's own marks: notification-daemon's close button and rounded corners).
            let summary = try await show(["Pill"], name: "summary")
            // On one line on each server (notification-daemon wraps a longer bold line).
            let words = "take it now with water"
            let plain = try await show(["--plain", "Pill", words], name: "plain") - summary
            let bold = try await show(["Pill", "<b>\(words)</b>"], name: "bold") - summary
            // The tags shown as written would add text pixels too, fewer than bold does.
            let tags = try await show(["--plain", "Pill", "<b>\(words)</b>"], name: "tags") - summary
            #expect(plain > 0)
            #expect(Double(bold) > Double(plain) * 1.2, "bold \(bold) vs plain \(plain) text pixels of the body")
            #expect(Double(bold) > Double(tags) * 1.05, "bold \(bold) vs the tags as written \(tags)")
        }
    }

    /// Whether each server draws an image sent with a popup (the `image-path` hint, a 48×48 red PNG): the
    /// popup has hundreds of strongly red pixels with it, next to none without. And whether it draws a
    /// themed icon (`-i dialog-information`): the saturated and text pixels it adds (Breeze's blue icon on
    /// Plasma; the GTK servers' grey light bulb adds almost none), printed as measured, not asserted
    /// (docs/servers.md records them).
    @Test(arguments: servers)
    func imagesAndIconsShow(_ expected: Expected) async throws {
        try await Self.withServer(expected) { s, server, signals in
            let image = s.bus.directory.appendingPathComponent("red.png")
            _ = try await ManagedProcess.run(
                "/usr/bin/convert", ["-size", "48x48", "xc:red", image.path], directory: s.bus.directory)
            let red = "r > 0.8 && g < 0.25 && b < 0.25"
            let saturated = "max(r, max(g, b)) - min(r, min(g, b)) > 0.3"
            // The red, the saturated and the text pixels (dark on X, light on mako) of one notification's
            // popup, shown alone, all with the same text.
            func count(_ arguments: [String], name: String) async throws -> (red: Int, saturated: Int, text: Int) {
                let shown = try await Self.showAlone(
                    arguments + ["Picture", "a picture"], name: name, expected, s, server, signals)
                return (
                    try await server.count(red, of: shown.popup, in: shown.screenshot),
                    try await server.count(saturated, of: shown.popup, in: shown.screenshot), shown.look.textPixels
                )
            }
            let without = try await count([], name: "no-image")
            let with = try await count(["-h", "string:image-path:\(image.path)"], name: "image")
            #expect(without.red < 20, "\(without.red) red pixels in a popup without the image")
            #expect(with.red > 400, "\(with.red) red pixels in a popup with the 48×48 red image")
            let icon = try await count(["-i", "dialog-information"], name: "icon")
            print(
                "\(expected.kind): image \(with.red) red pixels (\(without.red) without); icon: \(icon.saturated - without.saturated) more saturated, \(icon.text - without.text) more text pixels"
            )
        }
    }
}
