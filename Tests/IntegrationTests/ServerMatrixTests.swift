import DBusKit
import Foundation
import TestSupport
import Testing

/// chimed against the notification servers people run, each started for real on the test's bus
/// (dunst has DunstTests): what each reports, that a popup with actions and markup is shown (captured on
/// X), that replacing keeps its id, that closing by id is reported, and that a popup with an expiry time
/// closes then. docs/servers.md holds the same table.
@Suite(.serialized) struct ServerMatrixTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var kind: DesktopNotificationServer.Kind
        var name: String
        var capabilities: Set<String>
        var testDescription: String { kind.rawValue }
    }

    static let servers = [
        Expected(
            kind: .xfce4Notifyd, name: "Xfce Notify Daemon",
            capabilities: ["actions", "body", "body-markup", "body-hyperlinks", "icon-static", "action-icons"]),
        Expected(
            kind: .notificationDaemon, name: "Notification Daemon",
            capabilities: ["actions", "body", "body-markup", "body-hyperlinks", "icon-static", "persistence", "sound"]),
        Expected(kind: .mako, name: "mako", capabilities: ["actions", "body", "body-markup", "icon-static"]),
    ]

    @Test(arguments: servers)
    func chimedWorksWith(_ expected: Expected) async throws {
        try await Session.run(withServer: false, startChimed: false, allowOtherUsers: expected.kind.needsOtherUsers) {
            s in
            let server = try await DesktopNotificationServer.start(expected.kind, on: s.bus, observer: s.observer)
            s.desktopServers.append(server)
            // The server's NotificationClosed goes to chimed's connection; the test overhears it.
            let closed = Recorder<(id: UInt32, reason: UInt32)>()
            let subscription = try await s.observer.subscribe(
                DBusMatchRule(interface: "org.freedesktop.Notifications", member: "NotificationClosed", eavesdrop: true)
            ) { message in
                guard message.body.count == 2, case .uint32(let id) = message.body[0],
                    case .uint32(let reason) = message.body[1]
                else { return }
                closed.append((id, reason))
            }
            defer { subscription.cancel() }
            s.chimed = try await s.startChimed()
            try await s.chimed!.waitForStderr(containing: "capabilities:")

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
            if expected.kind.onX {
                // The server signals nothing when it has drawn: the screen is captured until it is not blank.
                let screenshot = s.bus.directory.appendingPathComponent("\(expected.kind).png")
                let deadline = ContinuousClock.now + .seconds(20)
                var colors = 0
                repeat {
                    try await server.screenshot(to: screenshot)
                    colors = try await XvfbDisplay.colorCount(ofImage: screenshot)
                } while colors <= 1 && ContinuousClock.now < deadline
                #expect(colors > 1, "the screen is blank")
                try DunstTests.keep(screenshot, as: "\(expected.kind)-popup.png")
            }

            // Replacing keeps the id.
            let replaced = try await s.chime(["send", "-t", "0", "-r", "\(id)", "Matrix", "replaced"])
            #expect(replaced.status == 0, "\(replaced.stderr)")
            try await s.delivered.wait(forCount: 2)
            #expect(s.delivered.elements[1].notification == id)

            // Closed by id: the server reports it (reason 3).
            let close = try await s.chime(["close", "\(id)"])
            #expect(close.status == 0, "\(close.stderr)")
            try await closed.wait("\(expected.kind) reported the close") { $0.contains { $0.id == id } }
            #expect(closed.elements.first { $0.id == id }?.reason == 3)

            // An expiry time: the popup closes then, by the server or, for one that ignores it, by chimed.
            let expiring = try await s.chime(["send", "-t", "1000", "-p", "Expiring"])
            #expect(expiring.status == 0, "\(expiring.stderr)")
            let item = expiring.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            try await s.delivered.wait(forCount: 3)
            let third = s.delivered.elements[2].notification
            try await closed.wait("the expiring popup closed", timeout: .seconds(15)) { $0.contains { $0.id == third } }
            // Recorded as an expiry either way; chimed stepped in for notification-daemon alone.
            try await InteractionTests.awaitListing(s, ["history", "--item", item], "the expiry") {
                $0.contains { $0["event"] as? String == "closed" && $0["detail"] as? String == "expired" }
            }
            #expect(
                s.chimed!.stderr.contains("which the server does not keep")
                    == (expected.kind == .notificationDaemon))
        }
    }
}
