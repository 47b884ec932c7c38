import DBusKit
import Foundation
import TestSupport
import Testing

/// chimed against a real notification server: dunst on a virtual X display, driven without a person.
///
/// Set CHIME_KEEP_SCREENSHOTS to a folder to keep the screenshots there; otherwise they go with the
/// test's folder.
@Suite(.serialized) struct DunstTests {
    /// Copies `screenshot` to the folder named by CHIME_KEEP_SCREENSHOTS, if set.
    static func keep(_ screenshot: URL, as name: String) throws {
        guard let folder = ProcessInfo.processInfo.environment["CHIME_KEEP_SCREENSHOTS"], !folder.isEmpty else {
            return
        }
        let destination = URL(fileURLWithPath: folder).appendingPathComponent(name)
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.copyItem(at: screenshot, to: destination)
    }

    @Test func aPopupWithActionsIsShownAndTheChosenActionComesBack() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            // dunst sends ActionInvoked to the connection that called Notify (chimed) only: the test
            // overhears it.
            let invoked = try await s.overhearServerSignals().invoked
            s.chimed = try await s.startChimed()

            let sent = try await s.chime(["send", "-A", "open=Open", "-A", "later=Later", "Hello", "from chime"])
            #expect(sent.status == 0, "chime send failed: \(sent.stderr)")
            try await s.delivered.wait(forCount: 1)
            let id = s.delivered.elements[0].notification
            try await dunst.waitForDisplayed(atLeast: 1)
            #expect(try await dunst.displayedCount() == 1)

            let screenshot = s.bus.directory.appendingPathComponent("popup.png")
            try await dunst.screenshot(to: screenshot)
            let png = try Data(contentsOf: screenshot)
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]), "not a PNG")
            #expect(try await XvfbDisplay.colorCount(ofImage: screenshot) > 1, "the screen is blank")
            try Self.keep(screenshot, as: "dunst-popup-with-actions.png")

            let chosen = try await dunst.invokeAction(key: "later")
            #expect(chosen == "#Later (Hello) [\(id),later]")
            #expect(Set(dunst.lastMenu) == ["#Open (Hello) [\(id),open]", "#Later (Hello) [\(id),later]"])
            try await invoked.wait(forCount: 1)
            #expect(invoked.elements == [ActionInvoked(notification: id, key: "later")])
        }
    }

    /// The seed's case on a real server: a repeating "Pizza Time" with Stop Repeat and Snooze buttons.
    /// Choosing Stop Repeat on the popup ends the repeats; Snooze brings the popup back after its time.
    @Test func stopRepeatAndSnoozeChosenOnRealPopups() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            s.chimed = try await s.startChimed()
            let sent = try await s.chime([
                "send", "--every", "every 2 seconds", "-A", "stop-repeat=Stop Repeat", "-A", "snooze:2s=Snooze 2 s",
                "Pizza Time",
            ])
            #expect(sent.status == 0, "chime send failed: \(sent.stderr)")
            try await s.delivered.wait(forCount: 1, timeout: .seconds(10))
            try await dunst.waitForDisplayed(atLeast: 1)
            let screenshot = s.bus.directory.appendingPathComponent("pizza.png")
            try await dunst.screenshot(to: screenshot)
            #expect(try await XvfbDisplay.colorCount(ofImage: screenshot) > 1, "the screen is blank")
            try Self.keep(screenshot, as: "dunst-pizza-time.png")

            // Snooze on the first popup: it comes back two seconds later, replacing itself.
            let first = s.delivered.elements[0]
            // Taken before the action is chosen: the popup cannot come back less than 2 s after this.
            let chosen = Date()
            try await dunst.invokeAction(key: "snooze:2s", notificationID: first.notification)
            try await s.chimed!.waitForStderr(containing: "snooze:2s: snoozed until")
            let snooze = try #require(
                try await s.chimeJSON(["pending"]).first { ($0["rule"] as? String) == nil }?["id"] as? Int)
            try await s.delivered.wait("the snooze came back", timeout: .seconds(10)) {
                $0.contains { $0.item == UInt64(snooze) }
            }
            #expect(Date().timeIntervalSince(chosen) >= 2)
            #expect(s.delivered.elements.first { $0.item == UInt64(snooze) }?.notification == first.notification)

            // Stop Repeat on the newest popup of the repeating item: no more popups.
            let latest = try #require(s.delivered.elements.last { $0.item == first.item })
            try await dunst.invokeAction(key: "stop-repeat", notificationID: latest.notification)
            try await s.chimed!.waitForStderr(containing: "stop-repeat: stopped its repeats")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            // One more period, watched: nothing new arrives.
            let count = s.delivered.elements.count
            try? await s.delivered.wait("a popup after Stop Repeat", timeout: .seconds(3)) { $0.count > count }
            #expect(s.delivered.elements.count == count)
        }
    }

    /// dunst's own pause switch (`dunstctl set-paused`) shows in `chime status` and in the `Paused`
    /// property, whose change chimed announces.
    @Test func dunstsPauseShowsInStatusAndThePausedProperty() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            s.chimed = try await s.startChimed()
            func status() async throws -> [String: Any] {
                let result = try await s.chime(["status", "--json"])
                #expect(result.status == 0, "\(result.stderr)")
                return try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] ?? [:]
            }
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            let before = try await status()
            #expect(before["server-name"] as? String == "dunst")
            #expect(before["paused"] as? Bool == false)
            #expect(try await BusAPITests.property(s, "Paused") == .boolean(false))
            let information = BusAPITests.fields(try await BusAPITests.property(s, "ServerInformation"))
            #expect(information["name"] == .string("dunst"))
            #expect(information["present"] == .boolean(true))
            let (changes, subscription) = try await BusAPITests.propertyChanges(s)
            defer { subscription.cancel() }

            try await dunst.dunstctl(["set-paused", "true"])
            try await changes.wait("chimed announced the pause") { $0.contains { $0["Paused"] == .boolean(true) } }
            #expect(try await status()["paused"] as? Bool == true)
            #expect(try await BusAPITests.property(s, "Paused") == .boolean(true))
            try await dunst.dunstctl(["set-paused", "false"])
            try await changes.wait("chimed announced the end of the pause") {
                $0.contains { $0["Paused"] == .boolean(false) }
            }
        }
    }

    /// `chime send` reads the body as markup, as notify-send users expect: dunst shows `<b>` as bold (more
    /// ink than the same words sent with `--plain`) and the rest, `<script>`, as written.
    @Test func bodyMarkupShowsBoldOnDunstAndTheRestAsWritten() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            s.chimed = try await s.startChimed()
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            #expect(s.chimed!.stderr.contains("body-markup"), "dunst reads markup")
            // Shows one notification alone; returns its screenshot's light pixels and its body as dunst keeps it.
            func show(_ arguments: [String], name: String) async throws -> (ink: Int, body: String) {
                let count = s.delivered.elements.count
                let sent = try await s.chime(["send"] + arguments)
                #expect(sent.status == 0, "\(sent.stderr)")
                try await s.delivered.wait(forCount: count + 1)
                try await dunst.waitForDisplayed(atLeast: 1)
                let screenshot = s.bus.directory.appendingPathComponent("\(name).png")
                try await dunst.screenshot(to: screenshot)
                try Self.keep(screenshot, as: "dunst-markup-\(name).png")
                let ink = try await XvfbDisplay.lightPixelCount(ofImage: screenshot)
                // Closed, it is in dunst's history.
                try await dunst.dunstctl(["close-all"])
                try await dunst.waitForNoneDisplayed()
                let history = try await dunst.dunstctl(["history"])
                // dunstctl history: {"data": [[{"id": {"data": N}, "body": {"data": "…"}, …}, …]]}.
                let json = try #require(try JSONSerialization.jsonObject(with: Data(history.utf8)) as? [String: Any])
                let entries = (json["data"] as? [[[String: Any]]])?.first ?? []
                func field(_ entry: [String: Any], _ key: String) -> Any? { (entry[key] as? [String: Any])?["data"] }
                let newest = entries.max { (field($0, "id") as? Int ?? 0) < (field($1, "id") as? Int ?? 0) }
                return (ink, newest.flatMap { field($0, "body") as? String } ?? "")
            }
            let plain = try await show(["--plain", "Pill", "take it now"], name: "plain")
            let bold = try await show(["Pill", "<b>take it now</b>"], name: "bold")
            #expect(plain.ink > 0)
            #expect(Double(bold.ink) > Double(plain.ink) * 1.1, "bold \(bold.ink) vs plain \(plain.ink) light pixels")
            let script = try await show(["Pill", "<b>take it now</b> <script>"], name: "script")
            #expect(script.body == "<b>take it now</b> &lt;script&gt;")
            #expect(script.ink > bold.ink, "<script> is shown as text")
        }
    }
}
