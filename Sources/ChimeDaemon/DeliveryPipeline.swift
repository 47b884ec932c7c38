import ChimeCore
import ChimeStore
import Foundation

/// Delivery: the outbox drained through the gate to the notification server, in order, one Notify at a
/// time for each app (several apps' may be in flight at once, up to `inFlightLimit`). Pure: no bus, no timers, no store, no clock (`now` comes with each event); a part of
/// `DeliveryCore`, which feeds it events and passes its actions on, in their order.
///
/// State: the outbox (due rows not yet shown, in arrival order), the rows whose content is being made,
/// the gate (quiet hours and flood control) and its plan (the notifications still to send, in order), the
/// notification in flight, the gate's deadline, the retry deadline after a server that did not answer,
/// and the server's readiness as `ServerPresence` gives it.
///
/// Whether the next notification goes is one decision (`hold`): nothing goes while the server is not
/// ready, before the retry deadline, or while `inFlightLimit` Notifies await their answers; otherwise the
/// plan's next notification of an app that has none in flight goes (a new plan is made when the last
/// one is spent). One app's Notify awaiting its answer therefore never holds another app's back: the
/// server gets the other's at once, instead of after the first answer has come back through the bus
/// and the relay. Each Notify is known by the number it was sent under (`Sending.number`); its answer
/// or failure names it.
///
/// Events: rows arrived; content resolved or declined (the app chose not to present it); Notify answered
/// with an id; Notify failed (`SendFailure`: no server, the server changed, no reply, refused); the gate's
/// deadline or the retry deadline reached; the clock set; the server's readiness; a new server appeared;
/// the gate's settings changed; `poll` (look again).
///
/// Actions: resolve a row's content; report a row kept while there is no server; a Notify is sent (its
/// answer is due), mark rows as being sent, send a notification; the answer was settled; record a
/// delivery, a failure or a suppression; arm the gate's timer or the retry timer; the status changed.
struct DeliveryPipeline {
    /// How long delivery waits before it sends again to a server that did not answer.
    static let retryDelay: TimeInterval = 1

    /// One Notify: a row on its own, or a digest standing for several.
    enum Notification: Hashable, Sendable {
        /// A row, with the content as it is sent (actions of its category added) and what was left out.
        case single(OutboxRecord, NotificationContent, note: String?)
        case digest(Digest, [OutboxRecord])

        /// The outbox rows this notification stands for.
        var rows: [OutboxRecord] {
            switch self {
            case .single(let row, _, _): [row]
            case .digest(_, let rows): rows
            }
        }

        /// The content the server gets.
        var content: NotificationContent {
            switch self {
            case .single(_, let content, _): content
            case .digest(let digest, _): digest.content
            }
        }

        /// The notification it replaces (0: none).
        var replacesID: UInt32 {
            switch self {
            case .single(let row, _, _): row.replacesID ?? 0
            case .digest: 0
            }
        }
    }

    /// Why a Notify failed, as far as delivery is concerned.
    enum SendFailure: Hashable, Sendable {
        /// There is no server on the bus: everything is kept, in order, until one appears.
        case noServer(reason: String)
        /// The server went before it answered and another owns the name now: send to it.
        case serverChanged
        /// The server did not answer: send again a moment later (or to its successor when it appears).
        case noReply
        /// The server refused the notification itself: its rows are dropped and the failure recorded.
        case refused(reason: String)
    }

    /// How many Notifies may await their answers at once, of different apps. A server answers each in
    /// turn; more in flight would only queue at the server.
    static let inFlightLimit = 4

    /// A Notify awaiting its answer.
    struct Sending: Hashable, Sendable {
        /// The number it was sent under (`notifySent`), counted from 1.
        let number: UInt64
        let notification: Notification
    }

    enum Event: Sendable {
        case rowsArrived([OutboxRecord])
        case contentResolved(seq: UInt64, NotificationContent)
        /// The app answered that this occurrence is not to be shown.
        case contentDeclined(seq: UInt64)
        /// The server answered the Notify sent as `sent` (nil: the oldest in flight) with its id.
        case notifyAnswered(notificationID: UInt32, sent: UInt64? = nil)
        /// The Notify sent as `sent` (nil: the oldest in flight) failed.
        case notifyFailed(SendFailure, sent: UInt64? = nil)
        case gateDeadlineReached
        case retryDeadlineReached(Date)
        /// The wall clock was set: the gate's deadline is armed again from the new clock.
        case clockChanged
        case serverReadiness(ServerPresence.Readiness)
        /// A new server owns the name: a retry for the one before ends.
        case serverAppeared
        case settingsChanged(quietHours: QuietHours?, flood: FloodControl)
        /// Look again whether something can be sent.
        case poll
    }

    enum Action: Hashable, Sendable {
        /// Make the content of a row that has none (a command, or the owning app).
        case resolveContent(OutboxRecord)
        /// Say that `row` waits for a server; `waiting` rows are in the outbox.
        case reportKept(OutboxRecord, reason: String, waiting: Int)
        /// A Notify goes out as number `sent`: its answer is due.
        case notifySent(UInt64)
        /// Mark the rows as being sent (so the history can say a row sent again may show twice).
        case markSending([OutboxRecord])
        case send(Notification)
        /// The answer to the Notify sent as this number was acted on (its id is known, or the call failed).
        case notifySettled(UInt64)
        /// The server showed `notification` as `notificationID`; its rows left the outbox.
        case recordDelivered(Notification, notificationID: UInt32)
        /// The server refused these rows; they left the outbox.
        case recordFailed([OutboxRecord], reason: String)
        /// The app chose not to present this row; it left the outbox.
        case recordSuppressed(OutboxRecord)
        case armGate(at: Date)
        case armRetry(at: Date)
        case statusChanged
    }

    /// Why the next notification does not go now.
    enum Hold: Hashable, Sendable {
        /// Notifies await their answers: `inFlightLimit` of them, or one of each app whose notification
        /// would go next (an app's go one at a time, in order).
        case answerAwaited
        /// The server is not ready (`ServerPresence.readiness`).
        case server(ServerPresence.Readiness)
        /// The server did not answer; nothing goes before this instant unless a new server appears.
        case retry(until: Date)
    }

    /// What the pipeline needs from outside for one event.
    struct Context {
        var now: Date
        /// The wall clock quiet hours are read on.
        var timeZone: Zone
        /// The content a row is sent with for the present server, and what had to be left out.
        var present: (OutboxRecord) -> (content: NotificationContent, note: String?)

        init(
            now: Date, timeZone: Zone,
            present: @escaping (OutboxRecord) -> (content: NotificationContent, note: String?) = {
                ($0.content ?? NotificationContent(summary: ""), nil)
            }
        ) {
            self.now = now
            self.timeZone = timeZone
            self.present = present
        }
    }

    /// Due occurrences not yet shown, in arrival order; also on disk.
    var outbox: ArraySlice<OutboxRecord> { stored[head...] }
    /// The outbox is `stored` from `head` on: rows delivered from the front only move `head`, and are
    /// dropped now and then, so that a long outbox costs nothing per notification sent.
    private var stored: [OutboxRecord] = []
    private var head = 0
    /// Whether a row may be waiting for its content to be asked for (after an arrival, and at start).
    private var contentWanted = false
    /// Rows whose content a command or the owning app is making now.
    private(set) var resolving: Set<UInt64> = []
    /// Quiet hours and flood control.
    private(set) var gate: DeliveryGate
    /// The notifications of the current plan still to send, the next one last.
    private var upcoming = Plan()
    /// The Notifies awaiting their answers, in the order they were sent.
    private(set) var inFlight: [Sending] = []
    /// The number the last Notify was sent under.
    private var sentCount: UInt64 = 0
    /// When the gate's timer fires (quiet hours end, or the flood-control bucket refills).
    private(set) var gateDeadline: Date?
    /// Set after the server did not answer: nothing is sent before then, unless a new server appears.
    private(set) var retryAt: Date?
    /// Whether the server may be sent to.
    private(set) var server: ServerPresence.Readiness = .waiting
    /// Whether the outbox was reported kept since the server was last ready (a Notify found none).
    private var keptReported = false

    init(quietHours: QuietHours?, flood: FloodControl, now: Date) {
        gate = DeliveryGate(quietHours: quietHours, flood: flood, now: now)
    }

    /// The outbox as stored, read at start (before any event).
    mutating func restore(_ rows: [OutboxRecord]) {
        stored = rows
        head = 0
        contentWanted = true
    }

    /// Rows an earlier chimed's relay saw shown: they leave the outbox without being sent (at start).
    mutating func forget(_ seqs: Set<UInt64>) {
        removeFromOutbox(seqs)
    }

    /// Takes the rows `seqs` out of the outbox.
    private mutating func removeFromOutbox(_ seqs: Set<UInt64>) {
        var front = head
        while front < stored.count, seqs.contains(stored[front].seq) { front += 1 }
        if front - head == seqs.count {
            // The usual case: the oldest rows, sent in order.
            head = front
        } else {
            stored.removeSubrange(..<head)
            head = 0
            stored.removeAll { seqs.contains($0.seq) }
        }
        if head > 0, head * 2 >= stored.count {
            stored.removeSubrange(..<head)
            head = 0
        }
    }

    /// Why the next notification does not go now; nil: it goes.
    var hold: Hold? { next.hold }

    /// Why the next notification does not go now, or where it is in `upcoming`: the decision and the one
    /// scan of the plan it needs (a plan of thousands of one app's notifications, all waiting for that
    /// app's answer, is scanned once an event, not once a question).
    private var next: (hold: Hold?, index: Int?) {
        if inFlight.count >= Self.inFlightLimit { return (.answerAwaited, nil) }
        if server != .ready { return (.server(server), nil) }
        if let retryAt { return (.retry(until: retryAt), nil) }
        // The plan is in order, the next last: the last one of an app with nothing in flight.
        let busy = busyOwners
        // Every app of the plan has a Notify in flight (one app's long backlog waits for its answer): no
        // notification of it can go, and the plan is not scanned.
        let blocked = !busy.isEmpty && upcoming.owners.keys.allSatisfy { busy.contains($0) }
        guard !blocked, let index = upcoming.notifications.lastIndex(where: { Self.isFree($0, busy) }) else {
            return (inFlight.isEmpty ? nil : .answerAwaited, nil)
        }
        return (nil, index)
    }

    /// The apps with a Notify in flight.
    private var busyOwners: Set<String> { Set(inFlight.flatMap { $0.notification.rows.map(\.owner) }) }

    /// Whether `notification` may go now as far as its apps are concerned: none of them is `busy`.
    private static func isFree(_ notification: Notification, _ busy: Set<String>) -> Bool {
        if busy.isEmpty { return true }
        switch notification {
        case .single(let row, _, _): return !busy.contains(row.owner)
        case .digest(_, let rows): return !rows.contains { busy.contains($0.owner) }
        }
    }

    /// Takes the Notify sent as `number` (nil: the oldest) out of flight.
    private mutating func settle(_ number: UInt64?) -> (UInt64, Notification)? {
        guard
            let index = number.map({ number in inFlight.firstIndex { $0.number == number } }) ?? inFlight.indices.first
        else { return nil }
        let sending = inFlight.remove(at: index)
        return (sending.number, sending.notification)
    }

    mutating func handle(_ event: Event, _ context: Context) -> [Action] {
        var actions: [Action] = []
        switch event {
        case .rowsArrived(let rows):
            stored += rows
            contentWanted = true
            replanForNewOwners(of: rows.filter { $0.content != nil }, context)
            if server == .missing {
                for row in rows {
                    actions.append(
                        .reportKept(row, reason: "no notification server on the bus", waiting: outbox.count))
                }
            }
        case .contentResolved(let seq, let content):
            resolving.remove(seq)
            if let index = outbox.firstIndex(where: { $0.seq == seq }) {
                stored[index].content = content
                replanForNewOwners(of: [stored[index]], context)
            }
        case .contentDeclined(let seq):
            resolving.remove(seq)
            if let index = outbox.firstIndex(where: { $0.seq == seq }) {
                let row = stored[index]
                removeFromOutbox([seq])
                actions.append(.recordSuppressed(row))
            }
        case .notifyAnswered(let id, let number):
            guard let (sent, notification) = settle(number) else { return [] }
            // The server's id is recorded before anything else happens.
            actions.append(.recordDelivered(notification, notificationID: id))
            removeFromOutbox(Set(notification.rows.map(\.seq)))
            actions += [.notifySettled(sent), .statusChanged]
        case .notifyFailed(let failure, let number):
            guard let (sent, notification) = settle(number) else { return [] }
            actions.append(.notifySettled(sent))
            switch failure {
            case .noServer(let reason):
                // Keep everything, in order, until a server appears: nothing is lost.
                upcoming = Plan()
                server = .missing
                // Another Notify in flight found no server first: everything is reported already.
                guard !keptReported else { return actions }
                keptReported = true
                for row in outbox { actions.append(.reportKept(row, reason: reason, waiting: outbox.count)) }
                actions.append(.statusChanged)
                return actions
            case .serverChanged:
                upcoming = Plan()
            case .noReply:
                upcoming = Plan()
                // Other Notifies in flight to the same server time out with it: one retry for all.
                guard retryAt == nil else { return actions }
                let deadline = context.now.addingTimeInterval(Self.retryDelay)
                retryAt = deadline
                actions.append(.armRetry(at: deadline))
                return actions
            case .refused(let reason):
                // The rest of the plan goes on.
                let rows = notification.rows
                removeFromOutbox(Set(rows.map(\.seq)))
                actions.append(.recordFailed(rows, reason: reason))
            }
        case .gateDeadlineReached, .clockChanged:
            gateDeadline = nil
        case .retryDeadlineReached(let deadline):
            guard retryAt == deadline else { return [] }
            retryAt = nil
        case .serverReadiness(let readiness):
            // Content is asked for whatever the server's readiness; only sending waits for it.
            server = readiness
            if readiness == .ready { keptReported = false }
        case .serverAppeared:
            retryAt = nil
            return []
        case .settingsChanged(let quietHours, let flood):
            gate.quietHours = quietHours
            gate.flood = flood
        case .poll:
            break
        }
        return actions + pump(context)
    }

    /// Sends what can be sent now: resolves pending content, plans with the gate, sends the plan's next
    /// notification.
    private mutating func pump(_ context: Context) -> [Action] {
        var actions: [Action] = []
        if contentWanted {
            contentWanted = false
            for row in outbox where row.content == nil && !resolving.contains(row.seq) {
                resolving.insert(row.seq)
                actions.append(.resolveContent(row))
            }
        }
        guard server == .ready, inFlight.count < Self.inFlightLimit else { return actions }
        // During a retry the plan is made (and the gate's timer armed) meanwhile; it goes when the retry
        // is due.
        actions += planIfSpent(context)
        // The plan's next notification of an app with nothing in flight, while `hold` lets one go.
        while case (nil, let index?) = self.next {
            let next = upcoming.remove(at: index)
            sentCount += 1
            inFlight.append(Sending(number: sentCount, notification: next))
            actions += [.notifySent(sentCount), .markSending(next.rows), .send(next)]
        }
        return actions
    }

    /// Drops the current plan when `rows` ready to send belong to an owner that has nothing in it: the gate
    /// plans again at once with them, so that one owner's long plan (a burst of 200) never keeps another
    /// owner's notification waiting behind all of it, and that owner gets its turn. The plan's tokens go
    /// back to the gate; nothing of it was sent.
    private mutating func replanForNewOwners(of rows: [OutboxRecord], _ context: Context) {
        guard !upcoming.isEmpty, !rows.isEmpty else { return }
        guard rows.contains(where: { upcoming.owners[$0.owner] == nil }) else { return }
        gate.giveBack(upcoming.count, now: context.now)
        upcoming = Plan()
    }

    /// A new plan from the gate when the last one is spent, of the rows not in flight.
    private mutating func planIfSpent(_ context: Context) -> [Action] {
        guard upcoming.isEmpty else { return [] }
        let sending = Set(inFlight.flatMap { $0.notification.rows.map(\.seq) })
        let ready = outbox.compactMap { row -> OutboxEntry? in
            guard let content = row.content, !sending.contains(row.seq) else { return nil }
            return OutboxEntry(
                seq: row.seq, itemID: row.itemID, owner: row.owner, groupID: row.group?.id,
                occurrence: row.occurrence, content: content)
        }
        guard !ready.isEmpty else { return [] }
        let planned = gate.plan(ready, now: context.now, timeZone: context.timeZone)
        let rows = Dictionary(outbox.map { ($0.seq, $0) }, uniquingKeysWith: { a, _ in a })
        let plan: [Notification] =
            planned.send.compactMap { entry in
                rows[entry.seq].map { row in
                    let (content, note) = context.present(row)
                    return Notification.single(row, content, note: note)
                }
            }
            + planned.digests.map { digest in .digest(digest, digest.entries.compactMap { rows[$0.seq] }) }
        upcoming = Plan(plan.reversed())
        guard let deadline = planned.wakeAt else { return [] }
        if let current = gateDeadline, current <= deadline, current > context.now { return [] }
        gateDeadline = deadline
        return [.armGate(at: deadline)]
    }
}

extension DeliveryPipeline {
    /// A plan's notifications still to send, the next one last, and how many of them each app has a row
    /// in: whether the plan holds anything an app with nothing in flight may send is answered per app,
    /// not per notification.
    struct Plan {
        private(set) var notifications: [Notification] = []
        private(set) var owners: [String: Int] = [:]

        init(_ notifications: [Notification] = []) {
            self.notifications = notifications
            for notification in notifications {
                for owner in notification.owners { owners[owner, default: 0] += 1 }
            }
        }

        var isEmpty: Bool { notifications.isEmpty }
        var count: Int { notifications.count }

        mutating func remove(at index: Int) -> Notification {
            let notification = notifications.remove(at: index)
            for owner in notification.owners {
                if let count = owners[owner], count > 1 { owners[owner] = count - 1 } else { owners[owner] = nil }
            }
            return notification
        }
    }
}

extension DeliveryPipeline.Notification {
    /// The apps with a row in this notification, each once.
    var owners: Set<String> {
        switch self {
        case .single(let row, _, _): [row.owner]
        case .digest(_, let rows): Set(rows.map(\.owner))
        }
    }
}
