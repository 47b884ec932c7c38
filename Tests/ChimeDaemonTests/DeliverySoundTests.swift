import ChimeCore
import ChimeStore
import Testing

@testable import ChimeDaemon

/// Which sound chimed plays itself for a notification just shown, and when the core says to play it.
@Suite struct DeliverySoundTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var content: NotificationContent
        var capabilities: [String] = ["actions", "body"]
        var paused: Bool? = nil
        var sound: DeliverySound?
        var testDescription: String { name }
    }

    static func content(
        sound: String? = nil, urgency: Urgency? = nil, hints: [String: NotificationHint] = [:]
    ) -> NotificationContent {
        NotificationContent(summary: "Tea", sound: sound, urgency: urgency, hints: hints)
    }

    static let cases: [Case] = [
        Case(
            name: "a theme sound on a server without sounds", content: content(sound: "message-new-instant"),
            sound: DeliverySound(source: .themed("message-new-instant"), critical: false)),
        Case(
            name: "a critical one is marked critical",
            content: content(sound: "alarm-clock-elapsed", urgency: .critical),
            sound: DeliverySound(source: .themed("alarm-clock-elapsed"), critical: true)),
        Case(name: "no sound, nothing", content: content(), sound: nil),
        Case(
            name: "a server with the sound capability plays it itself", content: content(sound: "bell"),
            capabilities: ["actions", "body", "sound"], sound: nil),
        Case(
            name: "suppress-sound wins over a sound",
            content: content(sound: "bell", hints: ["suppress-sound": .boolean(true)]), sound: nil),
        Case(
            name: "suppress-sound false changes nothing",
            content: content(sound: "bell", hints: ["suppress-sound": .boolean(false)]),
            sound: DeliverySound(source: .themed("bell"), critical: false)),
        Case(
            name: "sound-file wins over a theme name",
            content: content(sound: "bell", hints: ["sound-file": .string("/usr/share/sounds/x.oga")]),
            sound: DeliverySound(source: .file("/usr/share/sounds/x.oga"), critical: false)),
        Case(
            name: "a relative sound-file is not played; the theme name is",
            content: content(sound: "bell", hints: ["sound-file": .string("x.oga")]),
            sound: DeliverySound(source: .themed("bell"), critical: false)),
        Case(
            name: "a name that would leave the theme's folders is not played",
            content: content(sound: "../../../../tmp/x"), sound: nil),
        Case(name: "a hidden name is not played", content: content(sound: ".x"), sound: nil),
        Case(
            name: "a paused server (do not disturb): nothing for a normal notification",
            content: content(sound: "bell"), paused: true, sound: nil),
        Case(
            name: "a paused server: a critical notification is still heard",
            content: content(sound: "alarm-clock-elapsed", urgency: .critical), paused: true,
            sound: DeliverySound(source: .themed("alarm-clock-elapsed"), critical: true)),
        Case(
            name: "a server not paused", content: content(sound: "bell"), paused: false,
            sound: DeliverySound(source: .themed("bell"), critical: false)),
        Case(
            name: "a server that did not say what it can: chimed plays it (an alarm unheard is worse than twice)",
            content: content(sound: "bell"), capabilities: [],
            sound: DeliverySound(source: .themed("bell"), critical: false)),
        Case(
            name: "a critical sound asked for at half volume",
            content: content(
                sound: "alarm-clock-elapsed", urgency: .critical, hints: ["x-chime-sound-volume": .double(0.5)]),
            sound: DeliverySound(source: .themed("alarm-clock-elapsed"), critical: true, volume: 0.5)),
        Case(
            name: "a sound asked for at volume 0 is not played",
            content: content(sound: "bell", hints: ["x-chime-sound-volume": .double(0)]), sound: nil),
        Case(
            name: "a volume of 1 or more is the full volume",
            content: content(sound: "bell", hints: ["x-chime-sound-volume": .double(1.5)]),
            sound: DeliverySound(source: .themed("bell"), critical: false)),
    ]

    @Test func aVolumeIsPlayedAsDecibelsBelowTheEventSoundsVolume() {
        #expect(DeliverySound.decibels(0.5) == "-6.02")
        #expect(DeliverySound.decibels(0.1) == "-20.0")
        #expect(DeliverySound.decibels(nil) == nil && DeliverySound.decibels(1) == nil)
        #expect(
            DeliverySound(source: .themed("no-such"), critical: true, volume: 0.5).fallback?.volume == 0.5,
            "the theme's own sound, played instead, keeps the volume")
    }

    @Test(arguments: cases)
    func chosen(_ c: Case) {
        #expect(DeliverySound.for(c.content, serverCapabilities: c.capabilities, serverPaused: c.paused) == c.sound)
    }

    @Test func theFallbackIsTheThemesOwnForItsUrgency() {
        #expect(
            DeliverySound(source: .themed("no-such"), critical: false).fallback
                == DeliverySound(source: .themed("message-new-instant"), critical: false))
        #expect(
            DeliverySound(source: .file("/x.oga"), critical: true).fallback
                == DeliverySound(source: .themed("alarm-clock-elapsed"), critical: true))
        #expect(DeliverySound(source: .themed("message-new-instant"), critical: false).fallback == nil)
    }

    // MARK: - The core

    typealias Core = DeliveryCoreTests

    static func row(sound: String?, urgency: Urgency? = nil) -> OutboxRecord {
        var row = Core.r1
        row.content = NotificationContent(summary: "row 1", sound: sound, urgency: urgency)
        return row
    }

    static func server(capabilities: [String], paused: Bool? = nil) -> [DeliveryCore.Event] {
        [
            .busConnected(id: Core.busID), .serverOwnerChanged(":1.5"),
            .serverInfoArrived(
                owner: ":1.5", capabilities: capabilities, identity: ("mock-notify", "example", "1.0", "1.2"),
                paused: paused),
        ]
    }

    static func sounds(_ actions: [DeliveryCore.Action]) -> [DeliverySound] {
        actions.compactMap { if case .playSound(let sound) = $0 { sound } else { nil } }
    }

    /// The actions of a row's Notify answered, on `server`.
    static func answered(_ row: OutboxRecord, on server: [DeliveryCore.Event]) -> [DeliveryCore.Action] {
        var h = Core.Harness()
        _ = h.handle(server + [.rowsArrived([row])])
        return Core.effects(h.handle(.notifyAnswered(notificationID: 1)))
    }

    @Test func theSoundPlaysRightAfterTheDeliveryIsRecorded() {
        let row = Self.row(sound: "message-new-instant")
        let actions = Self.answered(row, on: Self.server(capabilities: ["actions", "body"]))
        let delivered = actions.firstIndex {
            if case .recordDelivered = $0 { true } else { false }
        }
        let sound = DeliverySound(source: .themed("message-new-instant"), critical: false)
        #expect(delivered.map { actions[$0 + 1] } == .playSound(sound))
        #expect(Self.sounds(actions) == [sound])
    }

    @Test func nothingPlaysWhereTheServerPlaysSounds() {
        let row = Self.row(sound: "message-new-instant")
        #expect(Self.sounds(Self.answered(row, on: Self.server(capabilities: ["actions", "body", "sound"]))) == [])
    }

    @Test func nothingPlaysForANotificationWithoutSound() {
        #expect(Self.sounds(Self.answered(Self.row(sound: nil), on: Self.server(capabilities: ["actions"]))) == [])
    }

    @Test func aPausedServerSilencesAllButCriticalOnes() {
        let paused = Self.server(capabilities: ["actions"], paused: true)
        #expect(Self.sounds(Self.answered(Self.row(sound: "bell"), on: paused)) == [])
        #expect(
            Self.sounds(Self.answered(Self.row(sound: "bell", urgency: .critical), on: paused))
                == [DeliverySound(source: .themed("bell"), critical: true)])
        // Paused later, by the server's own switch.
        var h = Core.Harness()
        _ = h.handle(
            Self.server(capabilities: ["actions"]) + [
                .serverPausedChanged(true), .rowsArrived([Self.row(sound: "bell")]),
            ])
        #expect(Self.sounds(h.handle(.notifyAnswered(notificationID: 1))) == [])
    }
}
