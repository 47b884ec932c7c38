import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// A notification with a badge sets the count on the app's launcher icon: chimed emits Unity's
/// LauncherEntry Update signal, which docks follow, when it is delivered.
@Suite(.serialized) struct LauncherEntryTests {
    struct Update: Sendable, Equatable {
        var path: String
        var appURI: String
        var count: Int64?
        var visible: Bool?
    }

    /// Every LauncherEntry Update on the bus, as a dock hears it.
    static func listen(_ s: Session) async throws -> (Recorder<Update>, DBusSubscription) {
        let updates = Recorder<Update>()
        let subscription = try await s.observer.subscribe(
            DBusMatchRule(interface: "com.canonical.Unity.LauncherEntry", member: "Update")
        ) { message in
            guard message.body.count == 2, case .string(let uri) = message.body[0] else { return }
            let properties = BusAPITests.fields(message.body[1])
            var count: Int64?
            if case .int64(let n)? = properties["count"] { count = n }
            var visible: Bool?
            if case .boolean(let b)? = properties["count-visible"] { visible = b }
            updates.append(Update(path: message.path?.description ?? "", appURI: uri, count: count, visible: visible))
        }
        return (updates, subscription)
    }

    @Test func aBadgeIsAnnouncedForTheDesktopEntryOrTheAppWhenDelivered() async throws {
        try await Session.run { s in
            let (updates, subscription) = try await Self.listen(s)
            defer { subscription.cancel() }
            let app = try await s.app("org.example.Mail")
            var content = ChimeCore.NotificationContent(summary: "3 new")
            content.badge = 3
            // A desktop file of the app's own: its id and a dot first (docs/security.md).
            content.desktopEntry = "org.example.Mail.Client"
            _ = try await app.schedule(content)
            try await updates.wait("the first badge") { $0.count == 1 }
            #expect(
                updates.elements[0]
                    == Update(
                        path: "/io/chime/Chime1/LauncherEntry", appURI: "application://org.example.Mail.Client.desktop",
                        count: 3, visible: true))

            // Without a desktop entry: the app id; 0 clears the count.
            var cleared = ChimeCore.NotificationContent(summary: "All read")
            cleared.badge = 0
            _ = try await app.schedule(cleared)
            try await updates.wait("the cleared badge") { $0.count == 2 }
            #expect(updates.elements[1].appURI == "application://org.example.Mail.desktop")
            #expect(updates.elements[1].count == 0 && updates.elements[1].visible == false)

            // No badge: nothing. The user's item without a desktop entry: nowhere to show it, nothing.
            _ = try await app.schedule(ChimeCore.NotificationContent(summary: "No badge"))
            let mine = try await s.chime(["send", "Mine"])
            #expect(mine.status == 0, "\(mine)")
            var withBadge = ChimeCore.NotificationContent(summary: "Last")
            withBadge.badge = 1
            _ = try await app.schedule(withBadge)
            try await s.awaitDelivered(notification: 5)
            try await updates.wait("the last badge") { $0.count >= 3 }
            #expect(updates.elements.count == 3)
            #expect(updates.elements[2].count == 1 && updates.elements[2].visible == true)
        }
    }

    @Test func aBadgeOnTheWireIsAnUnsignedCount() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.Raw")
            do {
                _ = try await app.call(
                    destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                    member: "Schedule",
                    [BusAPITests.record(["summary": .string("x"), "badge": .int32(-1)]), BusAPITests.record([:])])
                Issue.record("a badge of type i was taken")
            } catch let error as DBusError {
                #expect(error.name == "io.chime.Chime1.Error.InvalidArgument")
                #expect(error.message.contains("\"badge\""))
            }
            let client = try await s.app("org.example.Kit")
            var content = ChimeCore.NotificationContent(summary: "Later")
            content.badge = 7
            _ = try await client.schedule(content, at: Date(timeIntervalSince1970: 4_102_444_800))
            #expect(try await client.pending(content: true).first?.content?.badge == 7)
        }
    }
}
