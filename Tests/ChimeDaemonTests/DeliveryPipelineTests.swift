import ChimeCore
import ChimeStore
import DBusKit
import Foundation
import Testing

@testable import ChimeDaemon

/// The delivery pipeline driven by a manual clock: rows, answers and deadlines in, actions out; no bus,
/// no timers, no store.
@Suite struct DeliveryPipelineTests {
    typealias Action = DeliveryPipeline.Action

    /// 2027-01-15 08:00:00 UTC.
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let utc = Zone(identifier: "UTC")!
    /// Wide enough that flood control never steps in.
    static let noFlood = FloodControl(rate: 1000, burst: 10_000)

    static func row(_ seq: UInt64, _ summary: String?, at occurrence: Date = t0, replaces: UInt32? = nil)
        -> OutboxRecord
    {
        OutboxRecord(
            seq: seq, itemID: 100 + seq, group: nil, occurrence: occurrence, number: 1, late: false,
            content: summary.map { NotificationContent(summary: $0) }, replacesID: replaces)
    }

    /// A pipeline and its clock; `ready` feeds it a ready server first.
    struct Harness {
        var pipeline: DeliveryPipeline
        var now = DeliveryPipelineTests.t0

        init(ready: Bool = true, quietHours: QuietHours? = nil, flood: FloodControl = DeliveryPipelineTests.noFlood) {
            pipeline = DeliveryPipeline(quietHours: quietHours, flood: flood, now: DeliveryPipelineTests.t0)
            if ready { _ = handle(.serverReadiness(.ready)) }
        }

        @discardableResult
        mutating func handle(_ event: DeliveryPipeline.Event) -> [Action] {
            pipeline.handle(event, DeliveryPipeline.Context(now: now, timeZone: DeliveryPipelineTests.utc))
        }

        /// Answers the notification in flight with `id`; the actions that follow.
        mutating func answer(_ id: UInt32) -> [Action] { handle(.notifyAnswered(notificationID: id)) }
    }

    /// The summaries sent by `actions`, in order (a digest as "digest:<kind>:<count>").
    static func sent(_ actions: [Action]) -> [String] {
        actions.compactMap { action in
            guard case .send(let notification) = action else { return nil }
            switch notification {
            case .single(_, let content, _): return content.summary
            case .digest(let digest, let rows): return "digest:\(digest.kind):\(rows.count)"
            }
        }
    }

    static func kept(_ actions: [Action]) -> [(UInt64, String, Int)] {
        actions.compactMap { action in
            guard case .reportKept(let row, let reason, let waiting) = action else { return nil }
            return (row.seq, reason, waiting)
        }
    }

    static func delivered(_ actions: [Action]) -> [(seqs: [UInt64], id: UInt32)] {
        actions.compactMap { action in
            guard case .recordDelivered(let notification, let id) = action else { return nil }
            return (notification.rows.map(\.seq), id)
        }
    }

    static func resolving(_ actions: [Action]) -> [UInt64] {
        actions.compactMap { if case .resolveContent(let row) = $0 { row.seq } else { nil } }
    }

    // MARK: - One at a time for each app, in order

    static func row(_ seq: UInt64, of owner: String, _ summary: String) -> OutboxRecord {
        OutboxRecord(
            seq: seq, itemID: seq, owner: owner, group: nil, occurrence: t0, number: 1, late: false,
            content: NotificationContent(summary: summary))
    }

    /// One app's long plan (a burst) does not keep another app's notification waiting behind it: the plan
    /// is made again when it comes, and the other app's goes at once, while the burst's Notify in flight
    /// still awaits its answer; the burst goes on after, in order, and nothing is lost or sent twice.
    @Test func anotherAppsNotificationGoesAtOnceWhileOneAppsBurstIsInFlight() {
        var h = Harness()
        let burst = (1...20).map { Self.row(UInt64($0), of: "org.example.Loud", "burst \($0)") }
        var sent = Self.sent(h.handle(.rowsArrived(burst)))
        sent += Self.sent(h.answer(1))
        sent += Self.sent(h.answer(2))
        #expect(sent == ["burst 1", "burst 2", "burst 3"])
        let quiet = Self.row(21, of: "org.example.Quiet", "quiet")
        #expect(Self.sent(h.handle(.rowsArrived([quiet]))) == ["quiet"], "not after burst 3's answer")
        #expect(h.pipeline.inFlight.map { $0.notification.content.summary } == ["burst 3", "quiet"])
        var rest: [String] = []
        for id in 3...30 { rest += Self.sent(h.answer(UInt32(id))) }
        #expect(rest == (4...20).map { "burst \($0)" })
        #expect(h.pipeline.outbox.isEmpty && h.pipeline.inFlight.isEmpty)
    }

    /// Answers come back by the number each Notify was sent under, in any order: each is recorded for its
    /// own rows, and the app whose answer came sends its next.
    @Test func eachAnswerSettlesTheNotifyItNames() {
        var h = Harness()
        let rows = [
            Self.row(1, of: "org.example.A", "a1"), Self.row(2, of: "org.example.B", "b1"),
            Self.row(3, of: "org.example.A", "a2"), Self.row(4, of: "org.example.B", "b2"),
        ]
        let first = h.handle(.rowsArrived(rows))
        #expect(Self.sent(first) == ["a1", "b1"])
        #expect(first.filter { if case .notifySent = $0 { true } else { false } } == [.notifySent(1), .notifySent(2)])
        let answered = h.handle(.notifyAnswered(notificationID: 20, sent: 2))
        #expect(Self.delivered(answered).map(\.seqs) == [[2]])
        #expect(answered.contains(.notifySettled(2)))
        #expect(Self.sent(answered) == ["b2"])
        #expect(h.handle(.notifyAnswered(notificationID: 21, sent: 2)).isEmpty, "answered already")
        let failed = h.handle(.notifyFailed(.refused(reason: "bad"), sent: 1))
        #expect(failed.contains(.recordFailed([rows[0]], reason: "bad")))
        #expect(Self.sent(failed) == ["a2"])
        #expect(h.pipeline.outbox.map(\.seq) == [3, 4])
    }

    /// However many apps have something due, no more than `inFlightLimit` Notifies await their answers.
    @Test func noMoreThanTheLimitAreInFlight() {
        var h = Harness()
        let apps = DeliveryPipeline.inFlightLimit + 2
        let rows = (1...apps).map { Self.row(UInt64($0), of: "org.example.App\($0)", "app \($0)") }
        #expect(Self.sent(h.handle(.rowsArrived(rows))) == (1...DeliveryPipeline.inFlightLimit).map { "app \($0)" })
        #expect(h.pipeline.hold == .answerAwaited)
        #expect(Self.sent(h.answer(1)) == ["app \(DeliveryPipeline.inFlightLimit + 1)"])
    }

    /// A server that went with several apps' Notifies in flight: each fails, the outbox is reported kept
    /// once, and everything goes in order to the next server.
    @Test func severalNotifiesThatFindNoServerKeepEverythingOnce() {
        var h = Harness()
        let rows = [Self.row(1, of: "org.example.A", "a"), Self.row(2, of: "org.example.B", "b")]
        #expect(Self.sent(h.handle(.rowsArrived(rows))) == ["a", "b"])
        let first = h.handle(.notifyFailed(.noServer(reason: "gone"), sent: 1))
        #expect(Self.kept(first).map(\.0) == [1, 2])
        let second = h.handle(.notifyFailed(.noServer(reason: "gone"), sent: 2))
        #expect(second == [.notifySettled(2)])
        #expect(Self.sent(h.handle(.serverReadiness(.ready))) == ["a", "b"])
    }

    /// A server that stops answering: every Notify in flight times out, and one retry follows for all.
    @Test func severalNotifiesUnansweredMakeOneRetry() {
        var h = Harness()
        let rows = [Self.row(1, of: "org.example.A", "a"), Self.row(2, of: "org.example.B", "b")]
        h.handle(.rowsArrived(rows))
        #expect(h.handle(.notifyFailed(.noReply, sent: 1)) == [.notifySettled(1), .armRetry(at: Self.t0 + 1)])
        #expect(h.handle(.notifyFailed(.noReply, sent: 2)) == [.notifySettled(2)])
        h.now = Self.t0 + 1
        #expect(Self.sent(h.handle(.retryDeadlineReached(Self.t0 + 1))) == ["a", "b"])
    }

    /// Rows of an owner the plan holds already do not make it again (a burst's own rows keep their order).
    @Test func rowsOfAnOwnerThePlanHoldsDoNotReplanIt() {
        var h = Harness()
        func row(_ seq: UInt64) -> OutboxRecord {
            OutboxRecord(
                seq: seq, itemID: seq, owner: "org.example.Loud", group: nil, occurrence: Self.t0, number: 1,
                late: false, content: NotificationContent(summary: "\(seq)"))
        }
        var sent = Self.sent(h.handle(.rowsArrived((1...5).map(row))))
        sent += Self.sent(h.handle(.rowsArrived([row(6)])))
        for id in 1...10 { sent += Self.sent(h.answer(UInt32(id))) }
        #expect(sent == (1...6).map { "\($0)" })
    }

    @Test func sendsOneNotificationAtATimeInArrivalOrder() {
        var h = Harness()
        let first = h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b"), Self.row(3, "c")]))
        #expect(Self.sent(first) == ["a"])
        #expect(h.pipeline.hold == .answerAwaited)
        #expect(Self.sent(h.handle(.poll)) == [])
        #expect(Self.sent(h.handle(.rowsArrived([Self.row(4, "d")]))) == [])
        #expect(Self.sent(h.answer(11)) == ["b"])
        #expect(Self.sent(h.answer(12)) == ["c"])
        #expect(Self.sent(h.answer(13)) == ["d"])
        #expect(Self.sent(h.answer(14)) == [])
        #expect(h.pipeline.outbox.isEmpty)
        #expect(h.pipeline.hold == nil)
    }

    @Test func aSendMarksTheAnswerDueAndTheRowsBeingSentFirst() {
        var h = Harness()
        let row = Self.row(1, "a", replaces: 7)
        let actions = h.handle(.rowsArrived([row]))
        guard case .send(let notification) = actions.last else {
            Issue.record("nothing sent: \(actions)")
            return
        }
        #expect(Array(actions.suffix(3).dropLast()) == [.notifySent(1), .markSending([row])])
        #expect(notification.replacesID == 7)
        #expect(notification.content.summary == "a")
    }

    @Test func theServersIDIsRecordedBeforeAnythingElseHappens() {
        var h = Harness()
        h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        let actions = h.answer(41)
        guard case .recordDelivered(let notification, let id)? = actions.first else {
            Issue.record("the delivery is not recorded first: \(actions)")
            return
        }
        #expect(notification.rows.map(\.seq) == [1] && id == 41)
        #expect(Array(actions[1...2]) == [.notifySettled(1), .statusChanged])
        #expect(Self.sent(actions) == ["b"])
        #expect(h.pipeline.outbox.map(\.seq) == [2])
    }

    @Test func anAnswerWithNothingInFlightIsIgnored() {
        var h = Harness()
        #expect(h.answer(3).isEmpty)
        #expect(h.handle(.notifyFailed(.noReply)).isEmpty)
    }

    @Test func thePresentedContentIsWhatGoes() {
        var pipeline = DeliveryPipeline(quietHours: nil, flood: Self.noFlood, now: Self.t0)
        let context = DeliveryPipeline.Context(now: Self.t0, timeZone: Self.utc) { row in
            var content = row.content!
            content.summary += " (shown)"
            return (content, "no buttons")
        }
        _ = pipeline.handle(.serverReadiness(.ready), context)
        let actions = pipeline.handle(.rowsArrived([Self.row(1, "a")]), context)
        #expect(Self.sent(actions) == ["a (shown)"])
        guard case .send(.single(_, _, let note))? = actions.last else {
            Issue.record("nothing sent")
            return
        }
        #expect(note == "no buttons")
    }

    // MARK: - The server's readiness

    @Test func nothingGoesUntilTheServerIsReady() {
        var h = Harness(ready: false)
        let arrival = h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        #expect(Self.sent(arrival) == [])
        #expect(Self.kept(arrival).isEmpty)
        #expect(h.pipeline.hold == .server(.waiting))
        #expect(Self.sent(h.handle(.serverReadiness(.waiting))) == [])
        #expect(Self.sent(h.handle(.serverReadiness(.ready))) == ["a"])
    }

    @Test func anArrivalWhileTheServerIsMissingIsKeptAndReported() {
        var h = Harness(ready: false)
        h.handle(.serverReadiness(.missing))
        let actions = h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        #expect(Self.sent(actions) == [])
        let kept = Self.kept(actions)
        #expect(kept.map(\.0) == [1, 2])
        #expect(kept.allSatisfy { $0.1 == "no notification server on the bus" && $0.2 == 2 })
        #expect(Self.sent(h.handle(.serverReadiness(.ready))) == ["a"])
    }

    @Test func noServerKeepsEverythingInOrderAndReportsIt() {
        var h = Harness()
        h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b"), Self.row(3, "c")]))
        let reason = "no notification server on the bus (org.freedesktop.DBus.Error.ServiceUnknown)"
        let actions = h.handle(.notifyFailed(.noServer(reason: reason)))
        #expect(actions.first == .notifySettled(1))
        #expect(actions.last == .statusChanged)
        #expect(Self.sent(actions) == [])
        #expect(Self.kept(actions).map(\.0) == [1, 2, 3])
        #expect(Self.kept(actions).allSatisfy { $0.1 == reason && $0.2 == 3 })
        #expect(!actions.contains { if case .recordFailed = $0 { true } else { false } })
        #expect(h.pipeline.outbox.map(\.seq) == [1, 2, 3])
        // Later arrivals are reported too, and nothing is tried until a server appears.
        let later = h.handle(.rowsArrived([Self.row(4, "d")]))
        #expect(Self.kept(later).map(\.0) == [4] && Self.kept(later).first?.2 == 4)
        #expect(Self.sent(h.handle(.poll)) == [])
        h.handle(.serverAppeared)
        #expect(Self.sent(h.handle(.serverReadiness(.waiting))) == [])
        #expect(Self.sent(h.handle(.serverReadiness(.ready))) == ["a"])
        #expect(Self.sent(h.answer(1)) == ["b"])
    }

    // MARK: - A server that did not answer

    @Test func noReplyIsRetriedOneSecondLater() {
        var h = Harness()
        h.now = Self.t0 + 5
        h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        let failed = h.handle(.notifyFailed(.noReply))
        #expect(failed == [.notifySettled(1), .armRetry(at: Self.t0 + 6)])
        #expect(h.pipeline.hold == .retry(until: Self.t0 + 6))
        #expect(h.pipeline.outbox.map(\.seq) == [1, 2])
        h.now = Self.t0 + 5.5
        #expect(Self.sent(h.handle(.rowsArrived([Self.row(3, "c")]))) == [])
        h.now = Self.t0 + 6
        #expect(Self.sent(h.handle(.retryDeadlineReached(Self.t0 + 6))) == ["a"])
        #expect(Self.sent(h.answer(1)) == ["b"])
        #expect(Self.sent(h.answer(2)) == ["c"])
    }

    @Test func aNewServerEndsTheRetryAtOnce() {
        var h = Harness()
        h.handle(.rowsArrived([Self.row(1, "a")]))
        h.handle(.notifyFailed(.noReply))
        #expect(h.handle(.serverAppeared).isEmpty)
        #expect(Self.sent(h.handle(.serverReadiness(.waiting))) == [])
        h.now = Self.t0 + 0.2
        #expect(Self.sent(h.handle(.serverReadiness(.ready))) == ["a"])
    }

    @Test func aRetryDeadlineThatWasReplacedDoesNothing() {
        var h = Harness()
        h.handle(.rowsArrived([Self.row(1, "a")]))
        h.handle(.notifyFailed(.noReply))  // retry at t0 + 1
        h.handle(.serverAppeared)
        h.now = Self.t0 + 0.5
        h.handle(.serverReadiness(.ready))  // sent again to the new server
        h.handle(.notifyFailed(.noReply))  // retry at t0 + 1.5
        h.now = Self.t0 + 1
        #expect(h.handle(.retryDeadlineReached(Self.t0 + 1)).isEmpty)
        #expect(h.pipeline.hold == .retry(until: Self.t0 + 1.5))
        h.now = Self.t0 + 1.5
        #expect(Self.sent(h.handle(.retryDeadlineReached(Self.t0 + 1.5))) == ["a"])
    }

    @Test func aServerThatChangedGetsTheNotificationAtOnce() {
        var h = Harness()
        h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        let actions = h.handle(.notifyFailed(.serverChanged))
        #expect(actions.first == .notifySettled(1))
        #expect(Self.sent(actions) == ["a"])
        #expect(Self.kept(actions).isEmpty)
    }

    // MARK: - A refused notification

    @Test func aRefusedNotificationIsDroppedAndRecordedAndTheRestGoesOn() {
        var h = Harness()
        let a = Self.row(1, "a")
        h.handle(.rowsArrived([a, Self.row(2, "b")]))
        let actions = h.handle(.notifyFailed(.refused(reason: "org.freedesktop.DBus.Error.InvalidArgs: bad")))
        #expect(
            Array(actions.prefix(2)) == [
                .notifySettled(1), .recordFailed([a], reason: "org.freedesktop.DBus.Error.InvalidArgs: bad"),
            ])
        #expect(Self.sent(actions) == ["b"])
        #expect(h.pipeline.outbox.map(\.seq) == [2])
    }

    // MARK: - Content made when it fires

    @Test func contentBeingMadeHoldsOnlyItsRow() {
        var h = Harness()
        let arrival = h.handle(.rowsArrived([Self.row(1, nil), Self.row(2, "b")]))
        #expect(Self.resolving(arrival) == [1])
        #expect(Self.sent(arrival) == ["b"])
        // Asked once, however often the pipeline looks again.
        let answered = h.answer(5)
        #expect(Self.resolving(answered) == [])
        #expect(Self.sent(answered) == [])
        #expect(h.pipeline.outbox.map(\.seq) == [1])
        #expect(Self.sent(h.handle(.contentResolved(seq: 1, NotificationContent(summary: "made")))) == ["made"])
    }

    @Test func restoredRowsAreAskedForTheirContentBeforeTheServerIsReady() {
        var h = Harness(ready: false)
        h.pipeline.restore([Self.row(1, nil), Self.row(2, "b")])
        let first = h.handle(.serverReadiness(.waiting))
        #expect(Self.resolving(first) == [1])
        #expect(Self.sent(first) == [])
        let ready = h.handle(.serverReadiness(.ready))
        #expect(Self.resolving(ready) == [])
        #expect(Self.sent(ready) == ["b"])
    }

    @Test func contentTheAppDeclinedIsSuppressedNotSent() {
        var h = Harness()
        let row = Self.row(1, nil)
        h.handle(.rowsArrived([row]))
        let actions = h.handle(.contentDeclined(seq: 1))
        #expect(actions == [.recordSuppressed(row)])
        #expect(h.pipeline.outbox.isEmpty && h.pipeline.resolving.isEmpty)
    }

    @Test func aRowDeclinedInTheMiddleLeavesTheRestInOrder() {
        var h = Harness()
        #expect(Self.sent(h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, nil), Self.row(3, "c")]))) == ["a"])
        h.handle(.contentDeclined(seq: 2))
        #expect(h.pipeline.outbox.map(\.seq) == [1, 3])
        #expect(Self.sent(h.answer(1)) == ["c"])
        #expect(h.pipeline.outbox.map(\.seq) == [3])
        h.handle(.rowsArrived([Self.row(4, "d")]))
        #expect(Self.sent(h.answer(2)) == ["d"])
        #expect(h.pipeline.outbox.map(\.seq) == [4])
    }

    @Test func aLongOutboxDrainsInOrder() {
        var h = Harness()
        let rows = (1...500).map { Self.row(UInt64($0), "n\($0)") }
        var sent = Self.sent(h.handle(.rowsArrived(rows)))
        for id in 1...500 { sent += Self.sent(h.answer(UInt32(id))) }
        #expect(sent == rows.map { $0.content!.summary })
        #expect(h.pipeline.outbox.isEmpty)
    }

    // MARK: - The gate

    /// 07:30–09:00 UTC; t0 (08:00) is inside.
    static let morning = QuietHours(start: TimeOfDay(hour: 7, minute: 30), end: TimeOfDay(hour: 9, minute: 0))

    @Test func quietHoursHoldEverythingAndDigestItWhenTheyEnd() {
        var h = Harness(quietHours: Self.morning)
        let arrival = h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b"), Self.row(3, "c")]))
        #expect(Self.sent(arrival) == [])
        #expect(arrival.contains(.armGate(at: Self.t0 + 3600)))
        #expect(h.pipeline.gateDeadline == Self.t0 + 3600)
        // Looking again before the end arms nothing new.
        h.now = Self.t0 + 60
        #expect(!h.handle(.poll).contains { if case .armGate = $0 { true } else { false } })
        h.now = Self.t0 + 3600
        let end = h.handle(.gateDeadlineReached)
        #expect(Self.sent(end) == ["digest:quietHours:3"])
        let digested = Self.delivered(h.answer(9))
        #expect(digested.first?.seqs == [1, 2, 3] && digested.first?.id == 9)
        #expect(h.pipeline.outbox.isEmpty)
    }

    @Test func oneNotificationHeldInQuietHoursGoesOnItsOwn() {
        var h = Harness(quietHours: Self.morning)
        h.handle(.rowsArrived([Self.row(1, "a")]))
        h.now = Self.t0 + 3600
        #expect(Self.sent(h.handle(.gateDeadlineReached)) == ["a"])
    }

    @Test func aCriticalNotificationGoesInQuietHours() {
        var h = Harness(quietHours: Self.morning)
        var critical = Self.row(2, "fire")
        critical.content?.urgency = .critical
        #expect(Self.sent(h.handle(.rowsArrived([Self.row(1, "a"), critical]))) == ["fire"])
    }

    @Test func quietHoursSetInTheSettingsTakeEffect() {
        var h = Harness()
        h.handle(.settingsChanged(quietHours: Self.morning, flood: Self.noFlood))
        #expect(Self.sent(h.handle(.rowsArrived([Self.row(1, "a")]))) == [])
        #expect(Self.sent(h.handle(.settingsChanged(quietHours: nil, flood: Self.noFlood))) == ["a"])
    }

    @Test func aFloodBeyondTheBurstBecomesADigest() {
        var h = Harness(flood: FloodControl(rate: 1, burst: 2))
        let rows = (1...5).map { Self.row(UInt64($0), "n\($0)") }
        #expect(Self.sent(h.handle(.rowsArrived(rows))) == ["n1"])
        #expect(Self.sent(h.answer(1)) == ["digest:flood:4"])
        #expect(Self.delivered(h.answer(2)).first?.seqs == [2, 3, 4, 5])
        // The bucket is empty: the next one waits for a token, and goes when the gate's timer fires.
        let late = h.handle(.rowsArrived([Self.row(6, "n6")]))
        #expect(Self.sent(late) == [])
        #expect(late.contains(.armGate(at: Self.t0 + 1)))
        h.now = Self.t0 + 1
        #expect(Self.sent(h.handle(.gateDeadlineReached)) == ["n6"])
    }

    @Test func theClockBeingSetPlansAgainAtTheNewTime() {
        var h = Harness(quietHours: Self.morning)
        h.handle(.rowsArrived([Self.row(1, "a"), Self.row(2, "b")]))
        // The clock was set past the end of quiet hours; the gate's timer, armed on the old clock, has
        // not fired.
        h.now = Self.t0 + 7200
        #expect(Self.sent(h.handle(.clockChanged)) == ["digest:quietHours:2"])
        #expect(h.pipeline.gateDeadline == nil)
    }

    @Test func thePlanIsMadeDuringARetryAndGoesWhenItEnds() {
        var h = Harness(quietHours: Self.morning)
        var critical = Self.row(1, "fire")
        critical.content?.urgency = .critical
        h.handle(.rowsArrived([critical]))
        h.handle(.notifyFailed(.noReply))
        // Held by the retry, still planned: quiet hours arm the gate's timer meanwhile.
        let during = h.handle(.rowsArrived([Self.row(2, "a")]))
        #expect(Self.sent(during) == [])
        #expect(h.pipeline.hold == .retry(until: Self.t0 + 1))
        h.now = Self.t0 + 1
        #expect(Self.sent(h.handle(.retryDeadlineReached(Self.t0 + 1))) == ["fire"])
    }
}

/// The two machines composed in `DeliveryCore`, as chimed drives them: a server that comes, goes and
/// fails, seen from what is sent.
@Suite struct DeliveryWithServerPresenceTests {
    /// The core, what it sent and whom it asked.
    struct Scenario {
        var core = DeliveryCore(quietHours: nil, flood: DeliveryPipelineTests.noFlood, now: DeliveryPipelineTests.t0)
        var now = DeliveryPipelineTests.t0
        /// Summaries sent so far, in order.
        var sent: [String] = []
        var asked: [String] = []

        var pipeline: DeliveryPipeline { core.pipeline }
        var presence: ServerPresence { core.presence }

        mutating func handle(_ event: DeliveryCore.Event) {
            let context = DeliveryCore.Context(now: now, timeZone: DeliveryPipelineTests.utc)
            for action in core.handle(event, context: context) {
                switch action {
                case .send(let notification, _): sent.append(notification.content.summary)
                case .askServer(let owner?): asked.append(owner)
                default: break
                }
            }
        }

        func info(_ owner: String) -> DeliveryCore.Event {
            .serverInfoArrived(owner: owner, capabilities: ["body"], identity: ("mock", "v", "1", "1.2"), paused: nil)
        }
    }

    @Test func aServerThatAppearsAfterNoneWasFoundGetsEverythingInOrder() {
        var s = Scenario()
        s.handle(.serverOwnerChanged(nil))
        s.handle(.rowsArrived([DeliveryPipelineTests.row(1, "a"), DeliveryPipelineTests.row(2, "b")]))
        #expect(s.sent == ["a"])  // no owner: tried, and the bus says there is none
        s.handle(.notifyFailed(DBusError(.serviceUnknown, "none")))
        #expect(s.presence.readiness == .missing)
        s.handle(.rowsArrived([DeliveryPipelineTests.row(3, "c")]))
        #expect(s.sent == ["a"])
        s.handle(.serverOwnerChanged(":1.4"))
        #expect(s.asked == [":1.4"])
        #expect(s.sent == ["a"])  // its information is not known yet
        s.handle(s.info(":1.4"))
        #expect(s.sent == ["a", "a"])
        s.handle(.notifyAnswered(notificationID: 1))
        s.handle(.notifyAnswered(notificationID: 2))
        #expect(s.sent == ["a", "a", "b", "c"])
    }

    @Test func aServerThatHungIsReplacedWithoutWaitingForTheRetry() {
        var s = Scenario()
        s.handle(.serverOwnerChanged(":1.4"))
        s.handle(s.info(":1.4"))
        s.handle(.rowsArrived([DeliveryPipelineTests.row(1, "a")]))
        s.handle(.notifyFailed(DBusError(.noReply, "timeout")))
        #expect(s.pipeline.hold == .retry(until: s.now + 1))
        s.handle(.serverOwnerChanged(":1.5"))
        // The old server's information, arriving late, does not make the new one ready.
        s.handle(s.info(":1.4"))
        #expect(s.sent == ["a"])
        s.now += 0.3
        s.handle(s.info(":1.5"))
        #expect(s.sent == ["a", "a"])
    }

    @Test func aServerThatWentWhileItHadTheCallIsFollowedByItsSuccessor() {
        var s = Scenario()
        s.handle(.serverOwnerChanged(":1.4"))
        s.handle(s.info(":1.4"))
        s.handle(.rowsArrived([DeliveryPipelineTests.row(1, "a"), DeliveryPipelineTests.row(2, "b")]))
        s.handle(.serverOwnerChanged(":1.5"))
        s.handle(s.info(":1.5"))
        // The bus says the name had no owner when the call arrived; a new server owns it now.
        s.handle(.notifyFailed(DBusError(.serviceUnknown, "gone")))
        #expect(s.presence.readiness == .ready)
        #expect(s.sent == ["a", "a"])
        #expect(s.pipeline.retryAt == nil)
    }
}
