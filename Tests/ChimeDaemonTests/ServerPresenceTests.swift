import ChimeCore
import DBusKit
import Testing

@testable import ChimeDaemon

/// The notification server's presence as a state machine: owner answers, information and failures in,
/// readiness and actions out; no bus.
@Suite struct ServerPresenceTests {
    typealias Readiness = ServerPresence.Readiness

    static func info(_ name: String, _ capabilities: [String] = [], paused: Bool? = nil, for owner: String?)
        -> ServerPresence.Event
    {
        .infoArrived(
            owner: owner, capabilities: capabilities, identity: (name, "vendor", "1.0", "1.2"), paused: paused)
    }

    /// A presence that followed `events`.
    static func presence(_ events: [ServerPresence.Event]) -> ServerPresence {
        var presence = ServerPresence()
        for event in events { _ = presence.handle(event) }
        return presence
    }

    struct ReadinessCase: Sendable, CustomTestStringConvertible {
        var what: String
        var events: [ServerPresence.Event]
        var expected: Readiness
        init(_ what: String, _ events: [ServerPresence.Event], _ expected: Readiness) {
            self.what = what
            self.events = events
            self.expected = expected
        }
        var testDescription: String { what }
    }

    static let readinessCases: [ReadinessCase] = [
        ReadinessCase("before the first answer about the owner", [], .waiting),
        ReadinessCase("no one owns the name: a Notify finds none or starts one", [.ownerChanged(nil)], .ready),
        ReadinessCase("a server appeared, its information not yet known", [.ownerChanged(":1.5")], .waiting),
        ReadinessCase("the server's information came", [.ownerChanged(":1.5"), info("dunst", for: ":1.5")], .ready),
        ReadinessCase(
            "the old owner's information does not make the new owner ready",
            [.ownerChanged(":1.5"), .ownerChanged(":1.6"), info("dunst", for: ":1.5")], .waiting
        ),
        ReadinessCase(
            "the new owner's information does",
            [.ownerChanged(":1.5"), .ownerChanged(":1.6"), info("dunst", for: ":1.5"), info("mako", for: ":1.6")],
            .ready
        ),
        ReadinessCase("Notify found no server", [.ownerChanged(nil), .notifyFoundNoServer], .missing),
        ReadinessCase(
            "the name's owner going does not end missing",
            [.ownerChanged(nil), .notifyFoundNoServer, .ownerChanged(nil)], .missing
        ),
        ReadinessCase(
            "a new server ends missing, and is waited for",
            [.ownerChanged(nil), .notifyFoundNoServer, .ownerChanged(":1.7")], .waiting
        ),
        ReadinessCase(
            "a new server ends missing once its information came",
            [.ownerChanged(nil), .notifyFoundNoServer, .ownerChanged(":1.7"), info("dunst", for: ":1.7")], .ready
        ),
        ReadinessCase(
            "the server going after it was known: the next Notify finds none or starts one",
            [.ownerChanged(":1.5"), info("dunst", for: ":1.5"), .ownerChanged(nil)], .ready
        ),
        ReadinessCase(
            "a pause does not stop delivery (the server holds the popups)",
            [.ownerChanged(":1.5"), info("dunst", paused: true, for: ":1.5"), .pausedChanged(true)], .ready
        ),
    ]

    @Test(arguments: readinessCases)
    func readiness(_ c: ReadinessCase) {
        #expect(Self.presence(c.events).readiness == c.expected)
    }

    @Test func aNewServerIsAnnouncedAskedAndWaitedFor() {
        var presence = ServerPresence()
        #expect(
            presence.handle(.ownerChanged(":1.5")) == [
                .serverAppeared(":1.5"), .learn(owner: ":1.5"), .readiness(.waiting),
            ])
        #expect(presence.present)
        #expect(
            presence.handle(Self.info("dunst", ["actions", "body-markup"], for: ":1.5")) == [
                .learned, .announceProperties, .readiness(.ready),
            ])
        #expect(presence.info.name == "dunst" && presence.info.capabilities == ["actions", "body-markup"])
    }

    @Test func informationOfAServerThatWentChangesNothing() {
        var presence = Self.presence([.ownerChanged(":1.5"), Self.info("dunst", ["body-markup"], for: ":1.5")])
        _ = presence.handle(.ownerChanged(":1.6"))
        #expect(presence.handle(Self.info("late", [], paused: true, for: ":1.5")) == [])
        #expect(presence.info.name == "dunst")
        #expect(presence.paused == nil)
    }

    @Test func theServerGoingIsAnnouncedAndForgetsItsPause() {
        var presence = Self.presence([.ownerChanged(":1.5"), Self.info("dunst", paused: true, for: ":1.5")])
        #expect(presence.pausedProperty)
        #expect(presence.handle(.ownerChanged(nil)) == [.serverGone, .announceProperties, .readiness(.ready)])
        #expect(!presence.present)
        #expect(presence.paused == nil && !presence.pausedProperty)
    }

    @Test func thePauseSwitchIsFollowedAndAnnounced() {
        var presence = Self.presence([.ownerChanged(":1.5"), Self.info("dunst", for: ":1.5")])
        #expect(!presence.pausedProperty)
        #expect(presence.handle(.pausedChanged(true)) == [.announcePaused])
        #expect(presence.pausedProperty)
        #expect(presence.handle(.pausedChanged(false)) == [.announcePaused])
        #expect(!presence.pausedProperty)
    }

    @Test func bodyMarkupAndQuirksFollowTheServersInformation() {
        var presence = Self.presence([.ownerChanged(":1.5"), Self.info("dunst", ["body", "body-markup"], for: ":1.5")])
        #expect(presence.bodyMarkup)
        #expect(presence.quirks.keepsPopupAfterAction && !presence.quirks.closeTakesInt32)
        _ = presence.handle(.ownerChanged(":1.6"))
        _ = presence.handle(Self.info("mock-notify", ["body"], for: ":1.6"))
        #expect(!presence.bodyMarkup)
        #expect(presence.quirks.closeTakesInt32 && presence.quirks.reportsCallCloseAsExpired)
        #expect(!presence.quirks.keepsPopupAfterAction)
    }

    @Test func gnomeShellGetsTheMarkupItReadsAndItsExpiriesKeptByChimed() {
        let presence = Self.presence([
            .ownerChanged(":1.5"), Self.info("gnome-shell", ["actions", "body", "body-markup"], for: ":1.5"),
        ])
        #expect(presence.bodyFormat == .basicMarkup)
        #expect(presence.quirks.ignoresExpireTimeout && presence.quirks.appliesGNOMEAppSettings)
        var content = NotificationContent(summary: "s", body: "<b>a</b> <a href=\"https://example.org/\">b</a>")
        content.markup = true
        #expect(NotificationServer.body(of: content, for: .basicMarkup) == "<b>a</b> b")
        #expect(NotificationServer.body(of: content, for: .markup) == "<b>a</b> <a href=\"https://example.org/\">b</a>")
    }

    @Test func aServerThatDoesNotSayWhatItIsKeepsTheCapabilitiesItGave() {
        var presence = Self.presence([.ownerChanged(":1.5")])
        _ = presence.handle(.infoArrived(owner: ":1.5", capabilities: ["actions"], identity: nil, paused: nil))
        #expect(presence.readiness == .ready)
        #expect(presence.info.capabilities == ["actions"] && presence.info.name.isEmpty)
    }

    @Test func aServerThatDoesNotAnswerGetCapabilitiesGetsBodiesEscaped() {
        var presence = Self.presence([.ownerChanged(":1.5")])
        _ = presence.handle(.infoArrived(owner: ":1.5", capabilities: nil, identity: nil, paused: nil))
        #expect(presence.readiness == .ready)
        #expect(presence.bodyFormat == .unknown)
        var content = NotificationContent(summary: "s", body: "&lt;a href=\"x\"&gt;y&lt;/a&gt;")
        content.markup = true
        // Escaped, never decoded: a server that reads markup after all shows the text, not a link.
        #expect(
            NotificationServer.body(of: content, for: .unknown) == "&lt;a href=\"x\"&gt;y&lt;/a&gt;")
        #expect(NotificationServer.body(of: content, for: .plain) == "<a href=\"x\">y</a>")
        _ = presence.handle(.infoArrived(owner: ":1.5", capabilities: ["body-markup"], identity: nil, paused: nil))
        #expect(presence.bodyFormat == .markup)
    }

    @Test func notifyFindingNoServerIsWaitedOutUntilOneAppears() {
        var presence = Self.presence([.ownerChanged(nil)])
        #expect(presence.handle(.notifyFoundNoServer) == [.readiness(.missing)])
        #expect(presence.missing)
        _ = presence.handle(.ownerChanged(":1.9"))
        #expect(!presence.missing)
    }

    // MARK: - What a failed Notify means

    struct FailureCase: Sendable, CustomTestStringConvertible {
        var error: DBusError
        var sentTo: String?
        var ownerNow: String?
        var expected: DeliveryPipeline.SendFailure
        init(_ error: DBusError, _ sentTo: String?, _ ownerNow: String?, _ expected: DeliveryPipeline.SendFailure) {
            self.error = error
            self.sentTo = sentTo
            self.ownerNow = ownerNow
            self.expected = expected
        }
        var testDescription: String { "\(error.name) sent to \(sentTo ?? "none"), owner now \(ownerNow ?? "none")" }
    }

    static let failures: [FailureCase] = [
        FailureCase(
            DBusError(.serviceUnknown, "no one"), nil, nil,
            .noServer(reason: "no notification server on the bus (org.freedesktop.DBus.Error.ServiceUnknown)")
        ),
        FailureCase(
            DBusError(.nameHasNoOwner, "no one"), ":1.5", nil,
            .noServer(reason: "no notification server on the bus (org.freedesktop.DBus.Error.NameHasNoOwner)")
        ),
        FailureCase(
            DBusError(name: "org.freedesktop.DBus.Error.Spawn.ChildExited", message: "dunst exited"), nil, nil,
            .noServer(reason: "no notification server on the bus (org.freedesktop.DBus.Error.Spawn.ChildExited)")
        ),
        // The bus says the server went before it answered, and a server owns the name now: a new one.
        FailureCase(DBusError(.serviceUnknown, "gone"), ":1.5", ":1.6", .serverChanged),
        // chimed's own connection closed: no server can be reached, whoever owns the name.
        FailureCase(
            DBusError(.disconnected, "closed"), ":1.5", ":1.5",
            .noServer(reason: "no notification server on the bus (org.freedesktop.DBus.Error.Disconnected)")
        ),
        FailureCase(DBusError(.noReply, "timeout"), ":1.5", ":1.5", .noReply),
        FailureCase(DBusError(.noReply, "timeout"), ":1.5", ":1.6", .serverChanged),
        FailureCase(DBusError(.noReply, "timeout"), ":1.5", nil, .serverChanged),
        FailureCase(DBusError(.noReply, "timeout"), nil, nil, .serverChanged),
        FailureCase(
            DBusError(.invalidArgs, "bad hint"), ":1.5", ":1.5",
            .refused(reason: "org.freedesktop.DBus.Error.InvalidArgs: bad hint")
        ),
        FailureCase(
            DBusError(.failed, "no"), ":1.5", ":1.5",
            .refused(reason: "org.freedesktop.DBus.Error.Failed: no")
        ),
    ]

    @Test(arguments: failures)
    func classifiesAFailedNotify(_ c: FailureCase) {
        var events: [ServerPresence.Event] = [.ownerChanged(c.ownerNow)]
        if let ownerNow = c.ownerNow { events.append(Self.info("dunst", for: ownerNow)) }
        #expect(Self.presence(events).classify(c.error, sentTo: c.sentTo) == c.expected)
    }
}
