import ChimeCore
import ChimeStore
import DBusKit
import Foundation
import Logging

/// Delivery, the notification server's presence and the interaction with the user, composed in one pure
/// machine: everything that happens to them goes in as one `Event`, and what chimed must do comes out as
/// `Action`s, for the daemon to carry out in their order. No clock (`now` comes with each event), no bus,
/// no store, no timers.
///
/// Its parts are the three machines that used to be wired to each other in the daemon:
/// - `DeliveryPipeline`: the outbox, the gate, the notification in flight, the retry;
/// - `ServerPresence`: the server's owner, what it is, whether it is paused, so whether it may be sent to;
/// - `InteractionRouter`: where the server's signals go, the questions, the lock and the choices waiting
///   for it;
///
/// and the notifications shown lately (`ShownNotifications`), which all three need: delivery adds to them,
/// a new server empties them, the router looks signals up in them.
///
/// Every hand-off between the parts happens in `handle`, in this order:
/// 1. Presence before delivery: an event about the server is the presence's first; its `serverAppeared`
///    forgets the popups of an earlier server and ends delivery's retry, its readiness then goes to the
///    pipeline, which sends what waited. A failed Notify is classified by the presence (the owner it was
///    sent to, the owner now); "no server" makes the presence `missing` before the pipeline hears of the
///    failure, so the pipeline keeps everything instead of sending again.
/// 2. Delivery before interaction: a Notify sent makes an answer due in the router (so a signal about an
///    id chimed does not know yet waits); its answer first records the notification as shown, then
///    settles the answer, and only then does the router handle the signals that came early, in the order
///    they came, before the pipeline's next Notify is sent.
/// 3. The router's follow-ups inside the same event: an early signal released, or a choice that waited
///    for the unlock, is routed at once, each after what the core decided for the one before (a popup it
///    forgot, a close it asked for), so none is ever routed twice or against a stale list.
struct DeliveryCore {
    enum Event: Sendable {
        // MARK: Delivery
        /// Due rows, stored, join the outbox.
        case rowsArrived([OutboxRecord])
        case contentResolved(seq: UInt64, NotificationContent)
        /// The app answered that this occurrence is not to be shown.
        case contentDeclined(seq: UInt64)
        /// The server answered the Notify sent as `sent` (nil: the oldest in flight) with its id.
        case notifyAnswered(notificationID: UInt32, sent: UInt64? = nil)
        /// The Notify sent as `sent` (nil: the oldest in flight) failed.
        case notifyFailed(DBusError, sent: UInt64? = nil)
        /// The Notify sent as `sent` has gone unanswered for the server timeout.
        case answerOverdue(sent: UInt64)
        case gateDeadlineReached
        case retryDeadlineReached(Date)
        /// The wall clock was set.
        case clockChanged
        case settingsChanged(quietHours: QuietHours?, flood: FloodControl)

        // MARK: The server
        /// chimed's bus and its id (`org.freedesktop.DBus.GetId`), which with a connection's unique name
        /// tells one server from the next.
        case busConnected(id: String)
        /// The bus's answer about who owns the server's name (nil: no one).
        case serverOwnerChanged(String?)
        /// What `owner` said of itself when asked (`ServerPresence.Event.infoArrived`).
        case serverInfoArrived(
            owner: String?, capabilities: [String]?, identity: ServerPresence.Identity?, paused: Bool?)
        case serverPausedChanged(Bool)
        /// The server answered a Notify after chimed had given up on it (the relay's late answer).
        case lateAnswer(notificationID: UInt32)

        // MARK: Interaction
        case serverSignal(InteractionRouter.Signal)
        /// chimed asks the server to close popup `id` (its app asked, a snooze replaces it, ...).
        case closeRequested(UInt32)
        /// The scheduler's popups whose end date or expiry time came.
        case popupsEnded([ShownPopup])
        /// Call `call` of `app` needs `question` answered.
        case questionNeeded(PermissionQuestion, app: String, call: Int)
        /// Call `call`, which asked `app`'s open question, has its answer.
        case questionAnswered(Bool?, app: String, call: Int)
        /// A question's Notify goes out: its answer is due.
        case questionSent
        /// A question's Notify failed.
        case questionNotShown
        /// A question was shown as notification `id`.
        case questionShown(UInt32)
        /// Question `id` had no answer in time.
        case questionExpired(UInt32)
        /// Whether the session is locked, as first read.
        case sessionLockRead(locked: Bool)
        case sessionLockChanged(locked: Bool)
    }

    enum Action: Hashable, Sendable {
        // MARK: Delivery
        /// Make the content of a row that has none (a command, or the owning app).
        case resolveContent(OutboxRecord)
        /// Say that `row` waits for a server; `waiting` rows are in the outbox.
        case reportKept(OutboxRecord, reason: String, waiting: Int)
        /// Mark the rows as being sent (so the history can say a row sent again may show twice).
        case markSending([OutboxRecord])
        /// Call Notify; its answer or failure comes back as `notifyAnswered` or `notifyFailed` naming
        /// `sent`. Arm the timer that says it is late (`answerOverdue`).
        case send(DeliveryPipeline.Notification, sent: UInt64)
        /// The answer to the Notify sent as `sent` was acted on: disarm the timer that says it is late.
        case answerSettled(sent: UInt64)
        /// Say that the server is late with its answer; nothing else is sent meanwhile.
        case warnAnswerOverdue
        /// Store the delivery: the server showed `notification` as `notificationID`; `shown` is what is
        /// remembered of it (an occurrence shown on its own).
        case recordDelivered(DeliveryPipeline.Notification, notificationID: UInt32, shown: ShownNotification?)
        /// Play the sound of a notification just shown, which the server does not play (`DeliverySound`).
        case playSound(DeliverySound)
        /// The server refused these rows; they left the outbox.
        case recordFailed([OutboxRecord], reason: String)
        /// The app chose not to present this row; it left the outbox.
        case recordSuppressed(OutboxRecord)
        case armGate(at: Date)
        case armRetry(at: Date)
        case statusChanged

        // MARK: The server
        /// A server other than the one the remembered popups are of: their ids are forgotten (on disk, and
        /// by the scheduler's end dates), and the outbox's rows of `replacingItems` show anew.
        case forgetPopups([UInt32], server: Int64, replacingItems: [UInt64])
        /// Ask `owner` its capabilities, identity and pause state (`serverInfoArrived`).
        case askServer(owner: String?)
        /// Send bodies as the server reads them.
        case useBodyFormat(NotificationServer.BodyFormat)
        /// Emit PropertiesChanged for the server properties, or for `Paused` alone.
        case announceProperties
        case announcePaused

        // MARK: Interaction
        /// Call `call`, which needs a question, goes on.
        case questionTurn(call: Int, InteractionRouter.QuestionTurn)
        /// The user's answer to an open question (nil: none).
        case answerQuestion(UInt32, Bool?)
        /// A built-in verb chosen as `key` on `shown`.
        case carryOut(BuiltInVerb, key: String, ShownNotification)
        /// A group file's command for the action `key`.
        case runCommand([String], key: String, ShownNotification)
        /// The app's own action, with `extra` user info (`activation-token`, `reply`).
        case forward(key: String, ShownNotification, extra: [String: String], foreground: Bool)
        /// The item's history: the action `key` waits for the session to be unlocked.
        case recordWaiting(itemID: UInt64, key: String, at: Date)
        /// A shown notification was closed, for `reason` (the specification's code); it is forgotten.
        case popupClosed(ShownNotification, reason: UInt32)
        /// Ask the server to close popup `id`.
        case closePopup(UInt32)
        /// Store that these popups were closed at their end date.
        case recordClosedAtEnd([UInt32])

        case log(Logger.Level, String, metadata: [String: String] = [:])
    }

    /// What the core needs from the rest of chimed for one event. Its functions are called while the core
    /// changes, so they must not read the core (what they need of it is passed in, as `capabilities` is).
    struct Context {
        var now: Date
        /// The wall clock quiet hours are read on.
        var timeZone: Zone
        /// The categories of actions, by owner, and those each group file declared.
        var categories: [String: [ActionCategory]]
        var groupFileCategories: [String: [ActionCategory]]
        /// The content a row is sent with to a server of `capabilities`, and what had to be left out.
        var present: (_ row: OutboxRecord, _ capabilities: [String]) -> (content: NotificationContent, note: String?)
        /// What is remembered of an occurrence row shown as notification `id` at `now`.
        var shownRecord: (_ row: OutboxRecord, _ id: UInt32, _ now: Date) -> ShownNotification

        init(
            now: Date, timeZone: Zone, categories: [String: [ActionCategory]] = [:],
            groupFileCategories: [String: [ActionCategory]] = [:],
            present: @escaping (OutboxRecord, [String]) -> (content: NotificationContent, note: String?) = {
                row, _ in (row.content ?? NotificationContent(summary: ""), nil)
            },
            shownRecord: @escaping (OutboxRecord, UInt32, Date) -> ShownNotification = { row, id, now in
                ShownNotification(
                    notificationID: id, itemID: row.itemID, owner: row.owner, group: row.group?.id,
                    category: row.category, content: row.content, occurrence: row.occurrence, shownAt: now)
            }
        ) {
            self.now = now
            self.timeZone = timeZone
            self.categories = categories
            self.groupFileCategories = groupFileCategories
            self.present = present
            self.shownRecord = shownRecord
        }
    }

    private(set) var pipeline: DeliveryPipeline
    private(set) var presence = ServerPresence()
    private(set) var router = InteractionRouter()
    /// The notifications shown lately, by id.
    private(set) var shown = ShownNotifications()
    /// The server that the ids of `shown` are of (`serverFingerprint`); nil: none recorded.
    private(set) var shownServer: Int64?
    /// The bus's id (`busConnected`).
    private(set) var busID = ""
    /// The server's owner each Notify in flight was sent to, by the number it was sent under: what its
    /// failure means depends on it.
    private var sentTo: [UInt64: String?] = [:]
    /// The present server is being asked again what it can (it did not say when it appeared).
    private var askingCapabilitiesAgain = false

    init(quietHours: QuietHours?, flood: FloodControl, now: Date) {
        pipeline = DeliveryPipeline(quietHours: quietHours, flood: flood, now: now)
    }

    /// Due occurrences not yet shown, in arrival order; also on disk.
    var outbox: ArraySlice<OutboxRecord> { pipeline.outbox }

    // MARK: - At start, before any event

    /// The notifications shown before chimed started, and the server their ids are of.
    mutating func restore(shown notifications: [ShownNotification], server: Int64?) {
        for notification in notifications { shown.remember(notification) }
        shownServer = server
    }

    /// The outbox as stored.
    mutating func restore(outbox rows: [OutboxRecord]) {
        pipeline.restore(rows)
    }

    /// Rows an earlier chimed's relay saw shown, as one notification remembered as `notification` (an
    /// occurrence on its own): they leave the outbox without being sent.
    mutating func shownBeforeStart(_ seqs: Set<UInt64>, as notification: ShownNotification?) {
        if let notification { shown.remember(notification) }
        pipeline.forget(seqs)
    }

    // MARK: - Events

    mutating func handle(_ event: Event, context: Context) -> [Action] {
        switch event {
        case .rowsArrived(let rows): return deliver(.rowsArrived(rows), context)
        case .contentResolved(let seq, let content): return deliver(.contentResolved(seq: seq, content), context)
        case .contentDeclined(let seq): return deliver(.contentDeclined(seq: seq), context)
        case .notifyAnswered(let id, let sent): return deliver(.notifyAnswered(notificationID: id, sent: sent), context)
        case .notifyFailed(let error, let sent): return notifyFailed(error, sent: sent, context)
        case .answerOverdue(let sent):
            return pipeline.inFlight.contains { $0.number == sent } ? [.warnAnswerOverdue] : []
        case .gateDeadlineReached: return deliver(.gateDeadlineReached, context)
        case .retryDeadlineReached(let deadline): return deliver(.retryDeadlineReached(deadline), context)
        case .clockChanged: return deliver(.clockChanged, context)
        case .settingsChanged(let quietHours, let flood):
            return deliver(.settingsChanged(quietHours: quietHours, flood: flood), context)

        case .busConnected(let id):
            busID = id
            return []
        case .serverOwnerChanged(let owner): return server(.ownerChanged(owner), context)
        case .serverInfoArrived(let owner, let capabilities, let identity, let paused):
            return server(
                .infoArrived(owner: owner, capabilities: capabilities, identity: identity, paused: paused), context)
        case .serverPausedChanged(let paused): return server(.pausedChanged(paused), context)
        case .lateAnswer(let id):
            // A popup chimed knows under that id (a replacement keeps its id) stays.
            guard shown[id] == nil else { return [] }
            return [
                .log(
                    .notice,
                    "the notification server answered a Notify late, as notification \(id); chimed had sent it again, so it closes that popup"
                )
            ] + closeRequested(id)

        case .serverSignal(let signal):
            return follow(router.signal(signal, lookup: lookup(context), now: context.now), context)
        case .closeRequested(let id): return closeRequested(id)
        case .popupsEnded(let popups): return popupsEnded(popups)
        case .questionNeeded(let question, let app, let call):
            return follow(router.questionNeeded(question, app: app, call: call), context)
        case .questionAnswered(let answer, let app, let call):
            return follow(router.questionAnswered(answer, app: app, call: call), context)
        case .questionSent:
            router.notifySent()
            return []
        case .questionNotShown: return follow(router.answerHandled(), context)
        case .questionShown(let id): return follow(router.questionAsked(id), context)
        case .questionExpired(let id): return follow(router.questionExpired(id), context)
        case .sessionLockRead(let locked):
            router.sessionLockRead(locked: locked)
            return []
        case .sessionLockChanged(let locked): return follow(router.sessionLockChanged(locked: locked), context)
        }
    }

    // MARK: - Delivery

    /// Feeds the pipeline; its Notify sent and settled go to the router, its delivery to `shown`.
    private mutating func deliver(_ event: DeliveryPipeline.Event, _ context: Context) -> [Action] {
        // The present server's capabilities, as the presence knows them, decide how a row is presented.
        let capabilities = presence.info.capabilities
        let present = context.present
        let pipelineContext = DeliveryPipeline.Context(now: context.now, timeZone: context.timeZone) { row in
            present(row, capabilities)
        }
        var actions: [Action] = []
        // The number of the Notify the next `send` is: the pipeline says `notifySent` just before it.
        var sending: UInt64 = 0
        for action in pipeline.handle(event, pipelineContext) {
            switch action {
            case .resolveContent(let row): actions.append(.resolveContent(row))
            case .reportKept(let row, let reason, let waiting):
                actions.append(.reportKept(row, reason: reason, waiting: waiting))
            case .notifySent(let sent):
                router.notifySent()
                sentTo[sent] = presence.owner
                sending = sent
            case .markSending(let rows): actions.append(.markSending(rows))
            case .send(let notification): actions.append(.send(notification, sent: sending))
            case .notifySettled(let sent):
                sentTo.removeValue(forKey: sent)
                actions.append(.answerSettled(sent: sent))
                actions += follow(router.answerHandled(), context)
            case .recordDelivered(let notification, let id):
                actions += delivered(notification, as: id, context)
            case .recordFailed(let rows, let reason): actions.append(.recordFailed(rows, reason: reason))
            case .recordSuppressed(let row): actions.append(.recordSuppressed(row))
            case .armGate(let deadline): actions.append(.armGate(at: deadline))
            case .armRetry(let deadline): actions.append(.armRetry(at: deadline))
            case .statusChanged: actions.append(.statusChanged)
            }
        }
        return actions
    }

    /// The server showed `notification` as `id`: an occurrence on its own is remembered before anything
    /// else is routed (a signal about it may be waiting).
    private mutating func delivered(
        _ notification: DeliveryPipeline.Notification, as id: UInt32, _ context: Context
    ) -> [Action] {
        // Heard once it is shown, as a server with sounds plays it; a digest has none.
        let sound = DeliverySound.for(
            notification.content, serverCapabilities: presence.info.capabilities, serverPaused: presence.paused
        ).map { Action.playSound($0) }
        guard case .single(let row, _, _) = notification else {
            return [.recordDelivered(notification, notificationID: id, shown: nil)] + (sound.map { [$0] } ?? [])
        }
        var record: ShownNotification?
        if row.kind == .occurrence {
            let made = context.shownRecord(row, id, context.now)
            shown.remember(made)
            record = made
        }
        var actions: [Action] = [.recordDelivered(notification, notificationID: id, shown: record)]
        if let sound { actions.append(sound) }
        // A server that did not say what it can when it appeared is asked again once it answers a Notify.
        if !presence.capabilitiesKnown, !askingCapabilitiesAgain {
            askingCapabilitiesAgain = true
            actions.append(.askServer(owner: presence.owner))
        }
        return actions
    }

    /// A Notify failed: the presence says what that means, and learns first when there is no server.
    private mutating func notifyFailed(_ error: DBusError, sent: UInt64?, _ context: Context) -> [Action] {
        // Nothing was in flight (a late failure after a restart of the relay, say): nothing to classify.
        guard
            let sending = sent.map({ sent in pipeline.inFlight.first { $0.number == sent } }) ?? pipeline.inFlight.first
        else { return [] }
        let failure = presence.classify(error, sentTo: sentTo[sending.number] ?? nil)
        var actions: [Action] = []
        switch failure {
        case .noServer:
            actions += server(.notifyFoundNoServer, context)
        case .serverChanged where error.is(.noReply):
            actions.append(
                .log(
                    .warning,
                    "the notification server went before it answered (\(error.message)); keeping the notification"))
        case .serverChanged:
            break
        case .noReply:
            actions.append(
                .log(
                    .warning,
                    "the notification server did not answer (\(error.message)); trying again in \(Int(DeliveryPipeline.retryDelay)) s"
                ))
        case .refused:
            actions.append(.log(.error, "the notification server refused a notification: \(error)"))
        }
        return actions + deliver(.notifyFailed(failure, sent: sending.number), context)
    }

    // MARK: - The server

    /// Feeds the presence; a new server and the readiness go on to delivery.
    private mutating func server(_ event: ServerPresence.Event, _ context: Context) -> [Action] {
        var actions: [Action] = []
        for action in presence.handle(event) {
            switch action {
            case .serverAppeared(let owner):
                actions += serverInstanceAppeared(owner)
                actions += deliver(.serverAppeared, context)
                actions.append(.log(.info, "notification server present", metadata: ["owner": owner]))
            case .serverGone:
                actions.append(.log(.info, "no notification server on the bus"))
            case .learn(let owner):
                actions.append(.askServer(owner: owner))
            case .learned:
                askingCapabilitiesAgain = false
                actions.append(.useBodyFormat(presence.bodyFormat))
                if !presence.capabilitiesKnown {
                    actions.append(
                        .log(
                            .warning,
                            """
                            the notification server did not say what it can (GetCapabilities): bodies are sent \
                            escaped until it does
                            """))
                }
                let info = presence.info
                actions.append(
                    .log(
                        .info,
                        "notification server: \(info.name) \(info.version), capabilities: \(info.capabilities.joined(separator: " "))"
                    ))
            case .announceProperties: actions.append(.announceProperties)
            case .announcePaused: actions.append(.announcePaused)
            case .readiness(let readiness): actions += deliver(.serverReadiness(readiness), context)
            }
        }
        return actions
    }

    /// A server appeared. When it is not the one the remembered popups' ids are of, those ids are
    /// forgotten: their actions, closings and end dates would reach this server's popups of the same ids.
    private mutating func serverInstanceAppeared(_ owner: String) -> [Action] {
        let fingerprint = Self.serverFingerprint(busID: busID, owner: owner)
        guard fingerprint != shownServer else { return [] }
        shownServer = fingerprint
        let forgotten = shown.ids.sorted()
        shown.removeAll()
        // What waits in the outbox to replace a popup waits for one of the server before: it shows anew.
        let replacing = outbox.filter { $0.replacesID != nil }.map(\.itemID)
        return [.forgetPopups(forgotten, server: fingerprint, replacingItems: replacing)]
    }

    /// A server's fingerprint: FNV-1a of the bus's id and the unique name of the server's connection.
    static func serverFingerprint(busID: String, owner: String) -> Int64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in (busID + "/" + owner).utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return Int64(bitPattern: hash)
    }

    // MARK: - Interaction

    /// What the router needs to know, as the core knows it now.
    private func lookup(_ context: Context) -> InteractionRouter.Lookup {
        InteractionRouter.Lookup(
            shown: shown.byID, categories: context.categories, groupFileCategories: context.groupFileCategories,
            quirks: presence.quirks)
    }

    /// The router's actions: its follow-ups (an early signal, a choice that waited for the unlock) are
    /// routed here and now, each after what the core decided for the ones before it.
    private mutating func follow(_ routed: [InteractionRouter.Action], _ context: Context) -> [Action] {
        var actions: [Action] = []
        for action in routed {
            switch action {
            case .questionTurn(let call, let turn): actions.append(.questionTurn(call: call, turn))
            case .answerQuestion(let id, let answer): actions.append(.answerQuestion(id, answer))
            case .carryOut(let verb, let key, let notification):
                actions.append(.carryOut(verb, key: key, notification))
                // Dismiss closes the popup; so does any verb on a server that leaves it open after an action.
                if verb == .dismiss || presence.quirks.keepsPopupAfterAction {
                    actions += closeRequested(notification.notificationID)
                }
            case .runCommand(let command, let key, let notification):
                actions.append(.runCommand(command, key: key, notification))
            case .forward(let key, let notification, let extra, let foreground):
                actions.append(.forward(key: key, notification, extra: extra, foreground: foreground))
            case .recordWaiting(let itemID, let key, let at):
                actions.append(.recordWaiting(itemID: itemID, key: key, at: at))
            case .popupClosed(let notification, let reason):
                shown.remove(notification.notificationID)
                actions.append(.popupClosed(notification, reason: reason))
            case .handleAgain(let signal):
                actions += follow(router.signal(signal, lookup: lookup(context), now: context.now), context)
            case .chooseAgain(let choice):
                actions += follow(router.choose(choice, lookup: lookup(context), now: context.now), context)
            case .log(let level, let message, let item):
                actions.append(.log(level, message, metadata: item.map { ["item": "\($0)"] } ?? [:]))
            }
        }
        return actions
    }

    /// chimed asks the server to close popup `id`: its NotificationClosed says so.
    private mutating func closeRequested(_ id: UInt32) -> [Action] {
        router.closeRequested(id)
        return [.closePopup(id)]
    }

    /// Popups whose item's end date came are closed and forgotten; those past an expiry time the server
    /// does not keep are closed in its stead, and their NotificationClosed records them as expired.
    private mutating func popupsEnded(_ popups: [ShownPopup]) -> [Action] {
        var actions: [Action] = []
        for popup in popups where popup.expires {
            actions.append(
                .log(
                    .info,
                    "closing notification \(popup.notificationID): its expiry time passed, which the server does not keep",
                    metadata: ["item": "\(popup.itemID)"]))
            router.expiryRequested(popup.notificationID)
            actions += closeRequested(popup.notificationID)
        }
        let ended = popups.filter { !$0.expires }
        guard !ended.isEmpty else { return actions }
        for popup in ended {
            actions.append(
                .log(
                    .info, "closing notification \(popup.notificationID): its end date passed",
                    metadata: ["item": "\(popup.itemID)"]))
            actions += closeRequested(popup.notificationID)
            shown.remove(popup.notificationID)
        }
        actions.append(.recordClosedAtEnd(ended.map(\.notificationID)))
        return actions
    }
}

/// The notifications chimed showed lately, by id, so that an action chosen on one or its closing is
/// recorded and acted on; the oldest are forgotten beyond `ScheduleStore.shownLimit`, as on disk.
struct ShownNotifications: Sendable {
    private(set) var byID: [UInt32: ShownNotification] = [:]
    private var order: [UInt32] = []

    subscript(id: UInt32) -> ShownNotification? { byID[id] }
    var all: Dictionary<UInt32, ShownNotification>.Values { byID.values }
    var ids: Dictionary<UInt32, ShownNotification>.Keys { byID.keys }
    var isEmpty: Bool { byID.isEmpty }

    mutating func remember(_ notification: ShownNotification) {
        if byID.updateValue(notification, forKey: notification.notificationID) == nil {
            order.append(notification.notificationID)
        }
        if order.count > ScheduleStore.shownLimit {
            let oldest = order.removeFirst()
            // One whose end date is still to come stays, to be closed then.
            if byID[oldest]?.until == nil { byID.removeValue(forKey: oldest) }
        }
    }

    mutating func remove(_ id: UInt32) {
        byID.removeValue(forKey: id)
    }

    mutating func removeAll() {
        byID = [:]
        order = []
    }
}
