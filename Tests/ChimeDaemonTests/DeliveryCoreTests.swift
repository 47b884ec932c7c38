import ChimeCore
import ChimeStore
import DBusKit
import Foundation
import Logging
import Testing

@testable import ChimeDaemon

/// The composed core, driven as chimed drives it: events in, actions out, on a manual clock. Each case
/// is a sequence of events and the exact actions the last of them (`when`) must produce, log lines aside
/// (`logLines` checks those); the events before (`given`) set the scene.
@Suite struct DeliveryCoreTests {
    typealias Event = DeliveryCore.Event
    typealias Action = DeliveryCore.Action

    /// 2027-01-15 08:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let utc = Zone(identifier: "UTC")!
    /// Wide enough that flood control never steps in.
    static let noFlood = FloodControl(rate: 1000, burst: 10_000)
    static let app = "org.example.App"
    static let busID = "bus-1"

    static let reminder = ActionCategory(
        id: "reminder",
        actions: [
            CategoryAction(id: "open", title: "Open", options: [.foreground]),
            CategoryAction(id: "pay", title: "Pay", options: [.authenticationRequired]),
            CategoryAction(id: "unlock-door", title: "Unlock", options: [.authenticationRequired, .foreground]),
            CategoryAction(id: "snooze:10m", title: "Later"),
        ], defaultAction: "open")

    // MARK: - Fixtures

    static func row(_ seq: UInt64, replaces: UInt32? = nil) -> OutboxRecord {
        OutboxRecord(
            seq: seq, itemID: 100 + seq, owner: app, group: nil, occurrence: t0, number: 1, late: false,
            content: NotificationContent(summary: "row \(seq)"), category: "reminder", replacesID: replaces)
    }
    static let r1 = row(1)
    static let r2 = row(2)
    static let r3 = row(3)

    static func notification(_ row: OutboxRecord) -> DeliveryPipeline.Notification {
        .single(row, row.content!, note: nil)
    }

    /// What the core remembers of `row` shown as `id` (the context's default record).
    static func shown(_ row: OutboxRecord, as id: UInt32) -> ShownNotification {
        ShownNotification(
            notificationID: id, itemID: row.itemID, owner: app, category: "reminder", content: row.content,
            occurrence: t0, shownAt: t0)
    }
    static let s1 = shown(r1, as: 1)
    static let s2 = shown(r2, as: 2)

    static func fingerprint(_ owner: String) -> Int64 { DeliveryCore.serverFingerprint(busID: busID, owner: owner) }

    static func info(_ owner: String, name: String = "mock-notify", capabilities: [String]? = ["actions", "body"])
        -> Event
    {
        .serverInfoArrived(
            owner: owner, capabilities: capabilities, identity: (name, "example", "1.0", "1.2"), paused: nil)
    }

    /// A server that owns the name and said what it is.
    static func ready(_ owner: String = ":1.5", name: String = "mock-notify") -> [Event] {
        [.busConnected(id: busID), .serverOwnerChanged(owner), info(owner, name: name)]
    }

    /// The popup for `rows`, the first sent at once, shown as 1, 2, ... in turn.
    static func shownRows(_ rows: [OutboxRecord], on server: [Event] = ready()) -> [Event] {
        server + [.rowsArrived(rows)] + rows.indices.map { .notifyAnswered(notificationID: UInt32($0 + 1)) }
    }

    /// `row` sent as the Notify numbered `number` (counted from 1 in each case).
    static func sent(_ row: OutboxRecord, as number: UInt64 = 1) -> [Action] {
        [.markSending([row]), .send(notification(row), sent: number)]
    }

    static func delivered(_ row: OutboxRecord, as id: UInt32) -> Action {
        .recordDelivered(notification(row), notificationID: id, shown: shown(row, as: id))
    }

    static let noServer = "no notification server on the bus (org.freedesktop.DBus.Error.ServiceUnknown)"

    // MARK: - The harness

    struct Harness {
        var core = DeliveryCore(quietHours: nil, flood: DeliveryCoreTests.noFlood, now: DeliveryCoreTests.t0)
        var now = DeliveryCoreTests.t0

        @discardableResult
        mutating func handle(_ event: Event) -> [Action] {
            core.handle(
                event,
                context: DeliveryCore.Context(
                    now: now, timeZone: DeliveryCoreTests.utc,
                    categories: [DeliveryCoreTests.app: [DeliveryCoreTests.reminder]]))
        }

        mutating func handle(_ events: [Event]) -> [Action] { events.flatMap { handle($0) } }
    }

    /// The actions that are not log lines.
    static func effects(_ actions: [Action]) -> [Action] {
        actions.filter {
            if case .log = $0 { return false }
            return true
        }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var given: [Event]
        var when: [Event]
        var then: [Action]
        var testDescription: String { name }
    }

    static func check(_ c: Case) {
        var h = Harness()
        _ = h.handle(c.given)
        #expect(effects(h.handle(c.when)) == c.then, "\(c.name)")
    }

    // MARK: - The server comes and goes while a Notify is in flight

    static let serverCases: [Case] = [
        Case(
            name: "the server goes while a Notify is in flight: the rows wait, in order, for the next",
            given: ready() + [.rowsArrived([r1, r2])],
            when: [
                .serverOwnerChanged(nil), .notifyFailed(DBusError(.serviceUnknown, "gone")),
                .serverOwnerChanged(":1.6"), info(":1.6"),
            ],
            then: [
                .announceProperties,
                .answerSettled(sent: 1), .reportKept(r1, reason: noServer, waiting: 2),
                .reportKept(r2, reason: noServer, waiting: 2), .statusChanged,
                .forgetPopups([], server: fingerprint(":1.6"), replacingItems: []), .askServer(owner: ":1.6"),
                .useBodyFormat(.plain), .announceProperties,
            ] + sent(r1, as: 2)),
        Case(
            name: "a server that takes the name while a Notify is in flight gets the notification again",
            given: ready() + [.rowsArrived([r1])],
            when: [.serverOwnerChanged(":1.6"), info(":1.6"), .notifyFailed(DBusError(.serviceUnknown, "gone"))],
            then: [
                .forgetPopups([], server: fingerprint(":1.6"), replacingItems: []), .askServer(owner: ":1.6"),
                .useBodyFormat(.plain), .announceProperties, .answerSettled(sent: 1),
            ] + sent(r1, as: 2)),
        Case(
            name: "a server that does not answer gets the notification again a second later",
            given: ready() + [.rowsArrived([r1])],
            when: [.notifyFailed(DBusError(.noReply, "timeout")), .retryDeadlineReached(t0 + 1)],
            then: [.answerSettled(sent: 1), .armRetry(at: t0 + 1)] + sent(r1, as: 2)),
        Case(
            name: "a new server ends the retry at once",
            given: ready() + [.rowsArrived([r1]), .notifyFailed(DBusError(.noReply, "timeout"))],
            when: [.serverOwnerChanged(":1.6"), info(":1.6")],
            then: [
                .forgetPopups([], server: fingerprint(":1.6"), replacingItems: []), .askServer(owner: ":1.6"),
                .useBodyFormat(.plain), .announceProperties,
            ] + sent(r1, as: 2)),
        Case(
            name: "the server before, answering late what it is, does not make the new one ready",
            given: ready() + [
                .rowsArrived([r1]), .notifyFailed(DBusError(.noReply, "timeout")), .serverOwnerChanged(":1.6"),
            ],
            when: [info(":1.5")],
            then: []),
        Case(
            name: "no server: what arrives is kept, and said so",
            given: [
                .busConnected(id: busID), .serverOwnerChanged(nil), .rowsArrived([r1]),
                .notifyFailed(DBusError(.serviceUnknown, "none")),
            ],
            when: [.rowsArrived([r2])],
            then: [.reportKept(r2, reason: "no notification server on the bus", waiting: 2)]),
        Case(
            name: "a Notify that found no server: told again that no one owns the name, chimed still waits",
            given: [
                .busConnected(id: busID), .serverOwnerChanged(nil), .rowsArrived([r1]),
                .notifyFailed(DBusError(.serviceUnknown, "none")),
            ],
            when: [.serverOwnerChanged(nil)],
            then: [.announceProperties]),
        Case(
            name: "a Notify late for its answer is said to be; nothing else is sent meanwhile",
            given: ready() + [.rowsArrived([r1, r2])],
            when: [.answerOverdue(sent: 1), .rowsArrived([r3])],
            then: [.warnAnswerOverdue]),
        Case(
            name: "with nothing in flight, an overdue timer says nothing",
            given: shownRows([r1]),
            when: [.answerOverdue(sent: 1)],
            then: []),
    ]

    @Test(arguments: serverCases)
    func theServerComesAndGoes(_ c: Case) { Self.check(c) }

    // MARK: - Readiness holds and releases the outbox

    static let readinessCases: [Case] = [
        Case(
            name: "nothing is sent before the first answer about the server's owner",
            given: [.busConnected(id: busID)],
            when: [.rowsArrived([r1])],
            then: []),
        Case(
            name: "nor while the new server is asked what it is",
            given: [.busConnected(id: busID), .rowsArrived([r1])],
            when: [.serverOwnerChanged(":1.5")],
            then: [.forgetPopups([], server: fingerprint(":1.5"), replacingItems: []), .askServer(owner: ":1.5")]),
        Case(
            name: "its answer releases the outbox, in order",
            given: [.busConnected(id: busID), .rowsArrived([r1, r2]), .serverOwnerChanged(":1.5")],
            when: [info(":1.5")],
            then: [.useBodyFormat(.plain), .announceProperties] + sent(r1)),
        Case(
            name: "no owner at all: a Notify may start a server, so the outbox goes",
            given: [.busConnected(id: busID), .rowsArrived([r1])],
            when: [.serverOwnerChanged(nil)],
            then: [.announceProperties] + sent(r1)),
        Case(
            name: "the server's own pause switch holds nothing",
            given: ready(),
            when: [.serverPausedChanged(true), .rowsArrived([r1])],
            then: [.announcePaused] + sent(r1)),
        Case(
            name: "a server that did not say what it can is asked again after its first answer, once",
            given: [.busConnected(id: busID), .serverOwnerChanged(":1.5"), info(":1.5", capabilities: nil)],
            when: [.rowsArrived([r1, r2]), .notifyAnswered(notificationID: 1), .notifyAnswered(notificationID: 2)],
            then: sent(r1) + [delivered(r1, as: 1), .askServer(owner: ":1.5"), .answerSettled(sent: 1), .statusChanged]
                + sent(r2, as: 2) + [delivered(r2, as: 2), .answerSettled(sent: 2), .statusChanged]),
        Case(
            name: "bodies go escaped to a server that did not say what it can",
            given: [.busConnected(id: busID), .serverOwnerChanged(":1.5")],
            when: [info(":1.5", capabilities: nil)],
            then: [.useBodyFormat(.unknown), .announceProperties]),
    ]

    @Test(arguments: readinessCases)
    func readinessHoldsAndReleasesTheOutbox(_ c: Case) { Self.check(c) }

    // MARK: - Signals that arrive before the answer that names their id

    static let earlySignalCases: [Case] = [
        Case(
            name: "an action on the notification in flight waits for its answer, and goes before the next Notify",
            given: ready() + [.rowsArrived([r1, r2])],
            when: [.serverSignal(.actionInvoked(1, key: "open")), .notifyAnswered(notificationID: 1)],
            then: [
                delivered(r1, as: 1), .answerSettled(sent: 1), .forward(key: "open", s1, extra: [:], foreground: true),
                .statusChanged,
            ] + sent(r2, as: 2)),
        Case(
            name: "a closing that came early closes the popup chimed just learnt of, which is forgotten",
            given: ready() + [.rowsArrived([r1])],
            when: [
                .serverSignal(.closed(1, reason: 2)), .notifyAnswered(notificationID: 1),
                .serverSignal(.actionInvoked(1, key: "open")),
            ],
            then: [delivered(r1, as: 1), .answerSettled(sent: 1), .popupClosed(s1, reason: 2), .statusChanged]),
        Case(
            name: "early signals are routed one after the other: a Dismiss, then the closing it caused",
            given: ready() + [.rowsArrived([r1])],
            when: [
                .serverSignal(.actionInvoked(1, key: "dismiss")), .serverSignal(.closed(1, reason: 2)),
                .notifyAnswered(notificationID: 1),
            ],
            then: [
                delivered(r1, as: 1), .answerSettled(sent: 1), .carryOut(.dismiss, key: "dismiss", s1), .closePopup(1),
                .popupClosed(s1, reason: 3), .statusChanged,
            ]),
        Case(
            name: "an activation token before the answer goes with the action that follows it",
            given: ready() + [.rowsArrived([r1])],
            when: [
                .serverSignal(.activationToken(1, token: "xdg-1")), .serverSignal(.actionInvoked(1, key: "open")),
                .notifyAnswered(notificationID: 1),
            ],
            then: [
                delivered(r1, as: 1), .answerSettled(sent: 1),
                .forward(key: "open", s1, extra: ["activation-token": "xdg-1"], foreground: true), .statusChanged,
            ]),
        Case(
            name: "an early signal goes once the answer naming its id is handled, while another answer is still due",
            given: ready() + [.rowsArrived([r1]), .questionSent, .serverSignal(.actionInvoked(1, key: "open"))],
            when: [.notifyAnswered(notificationID: 1)],
            then: [
                delivered(r1, as: 1), .answerSettled(sent: 1),
                .forward(key: "open", s1, extra: [:], foreground: true), .statusChanged,
            ]),
        Case(
            name: "a question's answer due holds an early signal about an id still unknown past another answer",
            given: ready() + [.questionSent, .serverSignal(.actionInvoked(9, key: "allow")), .rowsArrived([r1])],
            when: [.notifyAnswered(notificationID: 1), .questionShown(9)],
            then: [delivered(r1, as: 1), .answerSettled(sent: 1), .statusChanged, .answerQuestion(9, true)]),
        Case(
            name: "a signal before the answer that shows a question is the question's answer",
            given: ready() + [.questionSent, .serverSignal(.actionInvoked(9, key: "allow"))],
            when: [.questionShown(9)],
            then: [.answerQuestion(9, true)]),
        Case(
            name: "with no answer due, a signal about an unknown notification goes nowhere, and never comes back",
            given: ready(),
            when: [
                .serverSignal(.actionInvoked(1, key: "open")), .rowsArrived([r1]), .notifyAnswered(notificationID: 1),
            ],
            then: sent(r1) + [delivered(r1, as: 1), .answerSettled(sent: 1), .statusChanged]),
    ]

    @Test(arguments: earlySignalCases)
    func earlySignalsWaitForTheAnswer(_ c: Case) { Self.check(c) }

    // MARK: - Questions

    static let question = PermissionQuestion.system(app: app)
    static let otherQuestion = PermissionQuestion.group(id: "bills", PermissionPrompt())

    static let questionCases: [Case] = [
        Case(
            name: "a question answered while a delivery waits for its answer is answered at once",
            given: ready() + [.questionSent, .questionShown(9), .rowsArrived([r1])],
            when: [.serverSignal(.actionInvoked(9, key: "allow")), .notifyAnswered(notificationID: 1)],
            then: [.answerQuestion(9, true), delivered(r1, as: 1), .answerSettled(sent: 1), .statusChanged]),
        Case(
            name: "a question closed while a delivery waits has no answer",
            given: ready() + [.questionSent, .questionShown(9), .rowsArrived([r1])],
            when: [.serverSignal(.closed(9, reason: 2))],
            then: [.answerQuestion(9, nil)]),
        Case(
            name: "one question per app: the calls that need it share its answer, the others look again",
            given: [],
            when: [
                .questionNeeded(question, app: app, call: 1), .questionNeeded(question, app: app, call: 2),
                .questionNeeded(otherQuestion, app: app, call: 3), .questionNeeded(question, app: "other", call: 4),
                .questionAnswered(true, app: app, call: 1),
            ],
            then: [
                .questionTurn(call: 1, .ask), .questionTurn(call: 4, .ask), .questionTurn(call: 2, .answered(true)),
                .questionTurn(call: 3, .askAgain),
            ]),
        Case(
            name: "a question that expires has no answer, and its closing after is nothing",
            given: ready() + [.questionSent, .questionShown(9)],
            when: [.questionExpired(9), .serverSignal(.closed(9, reason: 2)), .questionExpired(9)],
            then: [.answerQuestion(9, nil)]),
    ]

    @Test(arguments: questionCases)
    func questions(_ c: Case) { Self.check(c) }

    // MARK: - The lock, and the choices that wait for it

    static let lockCases: [Case] = [
        Case(
            name: "a choice that needs the session unlocked waits for the unlock",
            given: [.sessionLockRead(locked: true)] + shownRows([r1]),
            when: [.serverSignal(.actionInvoked(1, key: "pay")), .sessionLockChanged(locked: false)],
            then: [
                .recordWaiting(itemID: 101, key: "pay", at: t0),
                .forward(key: "pay", s1, extra: [:], foreground: false),
            ]),
        Case(
            name: "the choices come back in order, with the popups as they are then",
            given: [.sessionLockRead(locked: true)] + shownRows([r1, r2]),
            when: [
                .serverSignal(.actionInvoked(1, key: "pay")), .serverSignal(.actionInvoked(2, key: "unlock-door")),
                .serverSignal(.closed(2, reason: 2)), .sessionLockChanged(locked: false),
            ],
            then: [
                .recordWaiting(itemID: 101, key: "pay", at: t0),
                .recordWaiting(itemID: 102, key: "unlock-door", at: t0),
                .popupClosed(s2, reason: 2), .forward(key: "pay", s1, extra: [:], foreground: false),
            ]),
        Case(
            name: "locked again before the unlock, they keep waiting",
            given: [.sessionLockRead(locked: false)] + shownRows([r1]) + [.sessionLockChanged(locked: true)],
            when: [
                .serverSignal(.actionInvoked(1, key: "pay")), .sessionLockChanged(locked: true),
                .sessionLockChanged(locked: false),
            ],
            then: [
                .recordWaiting(itemID: 101, key: "pay", at: t0),
                .forward(key: "pay", s1, extra: [:], foreground: false),
            ]),
        Case(
            name: "a choice that needs no authentication goes while the session is locked",
            given: [.sessionLockRead(locked: true)] + shownRows([r1]),
            when: [.serverSignal(.actionInvoked(1, key: "open"))],
            then: [.forward(key: "open", s1, extra: [:], foreground: true)]),
    ]

    @Test(arguments: lockCases)
    func theLock(_ c: Case) { Self.check(c) }

    // MARK: - Settings changed mid-burst

    /// 07:00 to 09:00 UTC: `t0` (08:00) is inside.
    static let quiet = QuietHours(start: TimeOfDay(hour: 7, minute: 0), end: TimeOfDay(hour: 9, minute: 0))

    static let settingsCases: [Case] = [
        Case(
            name: "settings changed mid-burst: the plan under way finishes, the next is made under them",
            given: ready() + [.rowsArrived([r1, r2])],
            when: [
                .settingsChanged(quietHours: quiet, flood: noFlood), .notifyAnswered(notificationID: 1),
                .notifyAnswered(notificationID: 2), .rowsArrived([r3]),
            ],
            then: [delivered(r1, as: 1), .answerSettled(sent: 1), .statusChanged] + sent(r2, as: 2)
                + [delivered(r2, as: 2), .answerSettled(sent: 2), .statusChanged, .armGate(at: t0 + 3600)]),
        Case(
            name: "settings that end quiet hours release what they held",
            given: ready() + [.settingsChanged(quietHours: quiet, flood: noFlood), .rowsArrived([r1])],
            when: [.settingsChanged(quietHours: nil, flood: noFlood)],
            then: sent(r1)),
        Case(
            name: "rows due in quiet hours before the server is ready: the gate is asked once it is",
            given: [.busConnected(id: busID), .settingsChanged(quietHours: quiet, flood: noFlood)],
            when: [.rowsArrived([r1]), .serverOwnerChanged(":1.5"), info(":1.5")],
            then: [
                .forgetPopups([], server: fingerprint(":1.5"), replacingItems: []), .askServer(owner: ":1.5"),
                .useBodyFormat(.plain), .announceProperties, .armGate(at: t0 + 3600),
            ]),
    ]

    @Test(arguments: settingsCases)
    func settingsChangedMidBurst(_ c: Case) { Self.check(c) }

    // MARK: - Popups

    static let popupCases: [Case] = [
        Case(
            name: "a new server: the popups of the one before are forgotten, and their ids go nowhere",
            given: shownRows([r1]),
            when: [.serverOwnerChanged(":1.6"), .serverSignal(.actionInvoked(1, key: "open"))],
            then: [.forgetPopups([1], server: fingerprint(":1.6"), replacingItems: []), .askServer(owner: ":1.6")]),
        Case(
            name: "what waits to replace a popup of the server before shows anew",
            given: shownRows([r1]) + [
                .serverOwnerChanged(nil), .rowsArrived([row(2, replaces: 1)]),
                .notifyFailed(DBusError(.serviceUnknown, "none")),
            ],
            when: [.serverOwnerChanged(":1.6")],
            then: [.forgetPopups([1], server: fingerprint(":1.6"), replacingItems: [102]), .askServer(owner: ":1.6")]),
        Case(
            name: "a popup at its end date is closed and forgotten: its closing is not recorded again",
            given: shownRows([r1]),
            when: [
                .popupsEnded([ShownPopup(notificationID: 1, itemID: 101, until: t0)]),
                .serverSignal(.closed(1, reason: 3)),
            ],
            then: [.closePopup(1), .recordClosedAtEnd([1])]),
        Case(
            name: "a popup past an expiry its server does not keep is closed, and recorded as expired",
            given: shownRows([r1]),
            when: [
                .popupsEnded([ShownPopup(notificationID: 1, itemID: 101, until: t0, expires: true)]),
                .serverSignal(.closed(1, reason: 3)),
            ],
            then: [.closePopup(1), .popupClosed(s1, reason: 1)]),
        Case(
            name: "a popup chimed was asked to close is closed by chimed, whatever the server says",
            given: shownRows([r1]),
            when: [.closeRequested(1), .serverSignal(.closed(1, reason: 1))],
            then: [.closePopup(1), .popupClosed(s1, reason: 3)]),
        Case(
            name: "a late answer: the extra popup is closed, one chimed knows stays",
            given: shownRows([r1]),
            when: [.lateAnswer(notificationID: 5), .lateAnswer(notificationID: 1)],
            then: [.closePopup(5)]),
        Case(
            name: "a verb on a server that keeps popups after an action closes the popup",
            given: shownRows([r1], on: ready(name: "dunst")),
            when: [.serverSignal(.actionInvoked(1, key: "snooze:10m"))],
            then: [.carryOut(.snooze(600), key: "snooze:10m", s1), .closePopup(1)]),
        Case(
            name: "on a server that closes it itself, the popup is left to it",
            given: shownRows([r1]),
            when: [.serverSignal(.actionInvoked(1, key: "snooze:10m"))],
            then: [.carryOut(.snooze(600), key: "snooze:10m", s1)]),
    ]

    @Test(arguments: popupCases)
    func popups(_ c: Case) { Self.check(c) }

    // MARK: - Not in the tables

    @Test func aRestartOnTheSameServerKeepsItsPopups() {
        var h = Harness()
        h.core.restore(shown: [Self.s1], server: Self.fingerprint(":1.5"))
        #expect(
            Self.effects(h.handle(Self.ready())) == [
                .askServer(owner: ":1.5"), .useBodyFormat(.plain), .announceProperties,
            ])
        #expect(
            Self.effects(h.handle(.serverSignal(.actionInvoked(1, key: "open"))))
                == [.forward(key: "open", Self.s1, extra: [:], foreground: true)])
    }

    @Test func rowsTheRelaySawShownLeaveTheOutboxAndTheirPopupIsKnown() {
        var h = Harness()
        h.core.restore(shown: [], server: Self.fingerprint(":1.5"))
        h.core.restore(outbox: [Self.r1, Self.r2])
        h.core.shownBeforeStart([1], as: Self.shown(Self.r1, as: 7))
        #expect(h.core.outbox.map(\.seq) == [2])
        #expect(Array(Self.effects(h.handle(Self.ready())).suffix(2)) == Self.sent(Self.r2))
        #expect(
            Self.effects(h.handle(.serverSignal(.closed(7, reason: 2))))
                == [.popupClosed(Self.shown(Self.r1, as: 7), reason: 2)])
    }

    @Test func aRowIsPresentedForTheCapabilitiesOfTheServerOfTheMoment() {
        var core = DeliveryCore(quietHours: nil, flood: Self.noFlood, now: Self.t0)
        let context = DeliveryCore.Context(now: Self.t0, timeZone: Self.utc) { row, capabilities in
            (row.content!, capabilities.joined(separator: " "))
        }
        for event in Self.ready() + [.rowsArrived([Self.r1, Self.r2])] { _ = core.handle(event, context: context) }
        for event in [Event.serverOwnerChanged(":1.6"), Self.info(":1.6", capabilities: ["body", "body-markup"])] {
            _ = core.handle(event, context: context)
        }
        let sent = core.handle(.notifyFailed(DBusError(.serviceUnknown, "gone")), context: context)
        #expect(
            Self.effects(sent) == [
                .answerSettled(sent: 1), .markSending([Self.r1]),
                .send(.single(Self.r1, Self.r1.content!, note: "body body-markup"), sent: 2),
            ])
    }

    @Test func failuresAreLoggedAsTheyAreClassified() {
        var h = Harness()
        _ = h.handle(Self.ready() + [.rowsArrived([Self.r1, Self.r2])])
        #expect(
            h.handle(.notifyFailed(DBusError(.invalidArgs, "bad hint"))) == [
                .log(
                    .error,
                    "the notification server refused a notification: org.freedesktop.DBus.Error.InvalidArgs: bad hint"),
                .answerSettled(sent: 1),
                .recordFailed([Self.r1], reason: "org.freedesktop.DBus.Error.InvalidArgs: bad hint"),
            ] + Self.sent(Self.r2, as: 2))
        #expect(
            h.handle(.notifyFailed(DBusError(.noReply, "timeout"))) == [
                .log(.warning, "the notification server did not answer (timeout); trying again in 1 s"),
                .answerSettled(sent: 2), .armRetry(at: Self.t0 + 1),
            ])
        _ = h.handle(.retryDeadlineReached(Self.t0 + 1))
        _ = h.handle(.serverOwnerChanged(":1.6"))
        #expect(
            h.handle(.notifyFailed(DBusError(.noReply, "timeout"))) == [
                .log(.warning, "the notification server went before it answered (timeout); keeping the notification"),
                .answerSettled(sent: 3),
            ])
    }

    @Test func theServerAppearingIsLoggedWithItsOwner() {
        var h = Harness()
        _ = h.handle(.busConnected(id: Self.busID))
        #expect(
            h.handle(.serverOwnerChanged(":1.5")) == [
                .forgetPopups([], server: Self.fingerprint(":1.5"), replacingItems: []),
                .log(.info, "notification server present", metadata: ["owner": ":1.5"]), .askServer(owner: ":1.5"),
            ])
    }
}
