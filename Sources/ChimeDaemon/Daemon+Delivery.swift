import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging

/// What delivery keeps between calls (on `queue`).
struct DeliveryState {
    /// Due occurrences not yet shown, in arrival order; also on disk.
    var outbox: [OutboxRecord] = []
    /// Rows whose content a command or the owning app is making now.
    var resolving: Set<UInt64> = []
    /// Quiet hours and flood control.
    var gate: DeliveryGate
    /// The notifications of the current plan still to send, in order.
    var plan: [Notification] = []
    /// A Notify call is under way: the server gets one at a time, in order.
    var sending = false
    var gateTimer: DispatchSourceTimer?
    var gateDeadline: Date?
    /// The notifications shown lately, by id, so that an action chosen on one or its closing is
    /// recorded and acted on; the oldest are forgotten beyond `ScheduleStore.shownLimit`, as on disk.
    var shown: [UInt32: ShownNotification] = [:]
    var shownOrder: [UInt32] = []
    /// Set after the server did not answer: nothing is sent before then, unless a new server appears.
    var retryAt: Date?

    mutating func remember(_ notification: ShownNotification) {
        if shown.updateValue(notification, forKey: notification.notificationID) == nil {
            shownOrder.append(notification.notificationID)
        }
        if shownOrder.count > ScheduleStore.shownLimit {
            let oldest = shownOrder.removeFirst()
            if shown[oldest]?.until == nil { shown.removeValue(forKey: oldest) }
        }
    }

    /// One Notify: a row on its own, or a digest standing for several.
    enum Notification {
        /// A row, with the content as it is sent (actions of its category added) and what was left out.
        case single(OutboxRecord, NotificationContent, String?)
        case digest(Digest, [OutboxRecord])

        /// The outbox rows this notification stands for.
        var rows: [OutboxRecord] {
            switch self {
            case .single(let row, _, _): [row]
            case .digest(_, let rows): rows
            }
        }
    }

    init(settings: DaemonSettings, now: Date) {
        gate = DeliveryGate(quietHours: settings.quietHours, flood: settings.flood, now: now)
    }
}

/// Delivery: the outbox drained through the gate to the notification server, one Notify at a time.
extension Daemon {
    /// New due occurrences, stored: queue them and deliver what the gate lets through.
    func outboxArrived(_ rows: [OutboxRecord]) {
        delivery.outbox += rows
        if serverMissing {
            for row in rows { reportKept(row, reason: "no notification server on the bus") }
        }
        pump()
    }

    /// Sends what can be sent now: resolves pending content, plans with the gate, sends the plan's next
    /// notification. Called again after each Notify, on every arrival, and when the gate says to.
    func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        for row in delivery.outbox where row.content == nil && !delivery.resolving.contains(row.seq) {
            resolveContent(of: row)
        }
        guard !delivery.sending, !serverMissing, let server, serverOwnerKnown,
            serverOwner == nil || serverInfoOwner == serverOwner
        else { return }
        if delivery.plan.isEmpty {
            let ready = delivery.outbox.compactMap { row -> OutboxEntry? in
                guard let content = row.content else { return nil }
                return OutboxEntry(
                    seq: row.seq, itemID: row.itemID, groupID: row.group?.id, occurrence: row.occurrence,
                    content: content)
            }
            guard !ready.isEmpty else { return }
            let plan = delivery.gate.plan(ready, now: clock.now(), timeZone: scheduler.systemTimeZone)
            let rows = Dictionary(delivery.outbox.map { ($0.seq, $0) }, uniquingKeysWith: { a, _ in a })
            delivery.plan =
                plan.send.compactMap { entry in
                    rows[entry.seq].map { row in
                        let (content, note) = presented(row)
                        return DeliveryState.Notification.single(row, content, note)
                    }
                }
                + plan.digests.map { digest in .digest(digest, digest.entries.compactMap { rows[$0.seq] }) }
            armGate(plan.wakeAt)
        }
        guard !delivery.plan.isEmpty, delivery.retryAt == nil else { return }
        let next = delivery.plan.removeFirst()
        delivery.sending = true
        let content: NotificationContent
        let replacesID: UInt32
        switch next {
        case .single(let row, let presented, _):
            content = presented
            replacesID = row.replacesID ?? 0
        case .digest(let digest, _):
            content = digest.content
            replacesID = 0
        }
        let now = clock.now()
        let owner = serverOwner
        notifySent()
        // Marked as being handed to the relay; not waited for, since the relay's receipt, not the mark, is
        // what tells the next start that the server has it. The mark only lets the history say that a row
        // sent again without an answer may show twice.
        persist({ try $0.sending(next.rows, now: now) }) { [weak self] result in
            if case .failure(let error) = result {
                self?.logger.error("cannot mark a notification as being sent: \(error)")
            }
        }
        server.notify(content, replacesID: replacesID, rows: next.rows.map(\.seq)) { [weak self] result in
            guard let self else { return }
            self.queue.async {
                switch result {
                case .success(let id): self.sent(next, notificationID: id)
                case .failure(let error): self.sendFailed(next, error: error, sentTo: owner)
                }
            }
        }
    }

    private func sent(_ notification: DeliveryState.Notification, notificationID: UInt32) {
        delivery.sending = false
        let now = clock.now()
        let rows = notification.rows
        let digestName: String?
        var shown: ShownNotification?
        var note: String?
        switch notification {
        case .single(let row, _, let leftOut):
            digestName = nil
            note = leftOut
            if row.kind == .occurrence {
                shown = shownRecord(of: row, as: notificationID, now: now)
            }
        case .digest(let digest, _):
            digestName =
                switch digest.kind {
                case .quietHours: "quiet-hours digest"
                case .flood: "flood digest"
                case .missed: "missed digest"
                }
        }
        // The server's id is stored before anything else happens, so that the window in which a crash
        // leaves the row marked as being sent is as short as it can be.
        let record = shown
        let leftOut = note
        persist({
            try $0.delivered(
                rows, notificationID: notificationID, digest: digestName, shown: record, note: leftOut, now: now)
        }) { [weak self] result in
            if case .failure(let error) = result {
                // The popup is shown; at worst it is shown once more after a restart.
                self?.logger.error("cannot record a delivery: \(error)")
            }
        }
        switch notification {
        case .single(let row, let content, _):
            let again = row.sentBeforeRestart ? " again (chimed had stopped while sending it)" : ""
            logger.info(
                "delivered \"\(content.summary)\"\(again)",
                metadata: ["item": "\(row.itemID)", "notification": "\(notificationID)"])
            if let record {
                delivery.remember(record)
                if let until = record.until {
                    scheduler.trackPopup(ShownPopup(notificationID: notificationID, itemID: row.itemID, until: until))
                    arm(scheduler.nextDeadline)
                }
                emit("Delivered", [.uint64(row.itemID), .uint32(notificationID)], to: row.owner)
            }
            announceBadge(of: content, owner: row.owner)
        case .digest(_, let digested):
            logger.info(
                "delivered a \(digestName ?? "digest") of \(digested.count) notifications",
                metadata: ["notification": "\(notificationID)"])
        }
        let delivered = Set(rows.map(\.seq))
        delivery.outbox.removeAll { delivered.contains($0.seq) }
        answerHandled()
        statusChanged()
        pump()
    }

    /// What is remembered of an occurrence shown as notification `id`, for its actions, its closing and
    /// its end date. Its content is the row's, before its category's actions were added for the server
    /// of the moment: a snooze shows it again with its category, perhaps to another server.
    func shownRecord(of row: OutboxRecord, as id: UInt32, now: Date) -> ShownNotification {
        let item = scheduler.item(row.itemID)
        return ShownNotification(
            notificationID: id, itemID: row.itemID, owner: row.owner, group: row.group?.id,
            entryID: item?.groupID == nil ? nil : item?.entry.id, category: actionCategory(of: row)?.id,
            content: row.content,
            occurrence: row.occurrence, until: row.endDate.flatMap { $0 > now ? $0 : nil }, shownAt: now)
    }

    /// How long chimed waits before it sends again to a server that did not answer.
    static let retryDelay: TimeInterval = 1

    /// A Notify failed. Nothing is dropped unless the server refused the notification itself: without a
    /// server everything waits for one; a server that did not answer (it hung, or stopped while it had
    /// the call) gets the notification again a moment later, or its successor gets it when it appears.
    private func sendFailed(_ notification: DeliveryState.Notification, error: DBusError, sentTo owner: String?) {
        delivery.sending = false
        answerHandled()
        if NotificationServer.meansNoServer(error) {
            // The bus told chimed that the server went before it answered this call, so a server owning
            // the name now is a new one: send to it. (Not when chimed's own connection is closed.)
            guard serverOwner == nil || error.is(.disconnected) else {
                delivery.plan = []
                pump()
                return
            }
            // Keep everything, in order, until a server appears: nothing is lost.
            serverMissing = true
            delivery.plan = []
            for row in delivery.outbox { reportKept(row, reason: "no notification server on the bus (\(error.name))") }
            statusChanged()
            return
        }
        if error.is(.noReply) {
            delivery.plan = []
            if serverOwner != nil, serverOwner == owner {
                logger.warning(
                    "the notification server did not answer (\(error.message)); trying again in \(Int(Self.retryDelay)) s"
                )
                holdDelivery(until: clock.now().addingTimeInterval(Self.retryDelay))
            } else {
                logger.warning(
                    "the notification server went before it answered (\(error.message)); keeping the notification")
                pump()
            }
            return
        }
        let rows = notification.rows
        logger.error("the notification server refused a notification: \(error)")
        let dropped = Set(rows.map(\.seq))
        delivery.outbox.removeAll { dropped.contains($0.seq) }
        let now = clock.now()
        persist({ store in for row in rows { try store.failed(row, reason: error.description, now: now) } }) { _ in }
        pump()
    }

    /// Sends nothing until `deadline` (or until a new server appears).
    private func holdDelivery(until deadline: Date) {
        delivery.retryAt = deadline
        queue.asyncAfter(wallDeadline: clock.wallTime(for: deadline)) { [weak self] in
            guard let self, self.delivery.retryAt == deadline else { return }
            self.delivery.retryAt = nil
            self.pump()
        }
    }

    /// Arms the gate's timer: plan again when quiet hours end or the flood-control bucket refills.
    private func armGate(_ deadline: Date?) {
        guard let deadline else { return }
        if let current = delivery.gateDeadline, current <= deadline, current > clock.now() { return }
        delivery.gateDeadline = deadline
        let timer = delivery.gateTimer ?? DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        if delivery.gateTimer == nil {
            timer.setEventHandler { [weak self] in
                self?.delivery.gateDeadline = nil
                self?.pump()
            }
            timer.resume()
            delivery.gateTimer = timer
        }
        timer.schedule(wallDeadline: clock.wallTime(for: deadline), leeway: .milliseconds(1))
    }

    // MARK: - Content made when it fires

    /// Runs the command, or asks the owning app, for a row's content; falls back to the entry's base
    /// content when that fails or takes too long.
    private func resolveContent(of row: OutboxRecord) {
        delivery.resolving.insert(row.seq)
        // Only the user's group files may have chimed run a program; a command stored from the bus by an
        // earlier version is not run.
        let mayRun = row.group.map { groupSources[$0] == .config } ?? false
        let entryID = scheduler.item(row.itemID)?.entry.id ?? ""
        let connection = self.connection
        let logger = self.logger
        Task {
            let content: NotificationContent
            switch row.source {
            case .callback(let callback)?:
                guard
                    let made = await Self.askApp(
                        callback, row: row, entryID: entryID, connection: connection, logger: logger)
                else {
                    queue.async { self.contentDeclined(row) }
                    return
                }
                content = made
            case .command(let command)? where !mayRun:
                logger.warning(
                    "not running the content command of a group that is not a group file; showing the fallback",
                    metadata: ["item": "\(row.itemID)"])
                content = command.base
            case .command(let command)?:
                switch await CommandRunner.run(command.arguments, timeout: command.timeout) {
                case .success(let output):
                    content = command.content(fromOutput: output) ?? command.base
                case .failure(let failure):
                    logger.warning(
                        "the content command \(command.arguments[0]) failed: \(failure); showing the fallback",
                        metadata: ["item": "\(row.itemID)"])
                    content = command.base
                }
            case let other?:
                content = other.base
            case nil:
                content = NotificationContent(summary: "?")
            }
            queue.async { self.contentResolved(seq: row.seq, content: content) }
        }
    }

    /// The app answered that this occurrence is not to be shown (its `willPresent` said so).
    private func contentDeclined(_ row: OutboxRecord) {
        delivery.resolving.remove(row.seq)
        delivery.outbox.removeAll { $0.seq == row.seq }
        let now = clock.now()
        persist({ store in try store.suppressed(row, reason: "the app chose not to present it", now: now) }) { _ in }
        pump()
    }

    private func contentResolved(seq: UInt64, content: NotificationContent) {
        delivery.resolving.remove(seq)
        if let index = delivery.outbox.firstIndex(where: { $0.seq == seq }) { delivery.outbox[index].content = content }
        pump()
    }

    /// `io.chime.ContentProvider1.MakeContent(group, entry, fire_time, number) → a{sv}` on the app; nil when
    /// the app answered `present` false (this occurrence is not to be shown).
    private static func askApp(
        _ callback: CallbackSource, row: OutboxRecord, entryID: String, connection: DBusConnection?, logger: Logger
    ) async -> NotificationContent? {
        guard let connection else { return callback.fallback }
        do {
            let reply = try await connection.call(
                destination: callback.busName, path: ContentProviderBus.path, interface: ContentProviderBus.interface,
                member: ContentProviderBus.makeContent,
                [
                    .string(row.group?.id ?? ""), .string(entryID), .int64(WireTime.microseconds(row.occurrence)),
                    .uint32(UInt32(clamping: row.number)),
                ], timeout: .milliseconds(Int64(callback.timeout * 1000)))
            guard var value = reply.first else { return callback.fallback }
            if case .dictionary(let key, let type, var entries) = value,
                let index = entries.firstIndex(where: { $0.key == .string("present") })
            {
                guard case .variant(.boolean(let present)) = entries[index].value else {
                    throw DBusError(.invalidArgs, "the key \"present\" must be a boolean")
                }
                if !present { return nil }
                entries.remove(at: index)
                if entries.isEmpty { return callback.fallback }
                value = .dictionary(key: key, value: type, entries)
            }
            var content = try ContentWire.decode(value, what: "content from \(callback.busName)")
            if content.appName.isEmpty { content.appName = callback.fallback.appName }
            return content
        } catch {
            logger.warning(
                "\(callback.busName) did not make the content (\(error)); showing the fallback",
                metadata: ["item": "\(row.itemID)"])
            return callback.fallback
        }
    }

    // MARK: - Popups

    /// Closes popups whose item's end date came.
    func closePopups(_ popups: [ShownPopup]) {
        guard !popups.isEmpty, server != nil else { return }
        let now = clock.now()
        for popup in popups {
            logger.info(
                "closing notification \(popup.notificationID): its end date passed",
                metadata: ["item": "\(popup.itemID)"])
            closeNotification(popup.notificationID)
            delivery.shown.removeValue(forKey: popup.notificationID)
        }
        persist({ store in
            for popup in popups { try store.closed(notificationID: popup.notificationID, reason: "end date", now: now) }
        }) { _ in }
    }

    /// The server's NotificationClosed: recorded in the item's history, and a popup chimed would close at
    /// its end date is forgotten.
    func popupClosed(_ shown: ShownNotification, reason: UInt32) {
        let notificationID = shown.notificationID
        delivery.shown.removeValue(forKey: notificationID)
        scheduler.popupClosed(notificationID: notificationID)
        let now = clock.now()
        let why = NotificationServer.closeReason(reason)
        logger.debug("notification \(notificationID) closed by the server: \(why)")
        emit(
            "NotificationClosed",
            [.uint64(shown.itemID), .string(shown.group ?? ""), .string(shown.entryID ?? ""), .string(why)],
            to: shown.owner)
        persist({ try $0.closed(notificationID: notificationID, reason: why, now: now) }) { _ in }
    }

    /// Emits one of chimed's signals about an item to the connections of the item's owner alone (the
    /// user's items: to the user's `chime` connections), never to every client: another app must not
    /// learn of it. On `queue`.
    func emit(_ member: String, _ body: [DBusValue], to owner: String) {
        for target in (interaction.appConnections[owner] ?? []).sorted() {
            try? connection?.emitSignal(
                path: ChimeBus.path, interface: ChimeBus.interface, member: member, body, destination: target)
        }
    }

    // MARK: - The server comes and goes

    func serverOwnerChanged(_ owner: String?) {
        serverOwner = owner
        serverOwnerKnown = true
        if let owner {
            serverMissing = false
            delivery.retryAt = nil
            logger.info("notification server present", metadata: ["owner": "\(owner)"])
            learnAboutServer()
            pump()
        } else {
            logger.info("no notification server on the bus")
            serverPausedState = nil
            announceServerProperties()
            // Without an owner a Notify either finds none (and everything is kept) or starts one.
            pump()
        }
    }

    private func reportKept(_ row: OutboxRecord, reason: String) {
        let summary = row.content?.summary ?? row.source?.base.summary ?? ""
        let line =
            "chimed: \(reason); keeping \"\(summary)\" (item \(row.itemID), due \(Time.iso(row.occurrence))) "
            + "until one appears; \(delivery.outbox.count) waiting\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

extension Daemon {
    /// The category of actions a row's notification gets: its entry's `category`, or when it has none the
    /// content's `category` (also sent as the hint), when either names one of the owner's categories: those
    /// the app registered, or for the user's items those the group files declare. Either way its actions,
    /// default action, built-in verbs and snoozes work alike.
    func actionCategory(of row: OutboxRecord) -> ActionCategory? {
        guard let owned = categories[row.owner] else { return nil }
        guard let id = row.category ?? row.content?.category else { return nil }
        return owned.first { $0.id == id }
    }

    /// The content as the server gets it, and what had to be left out for this server (for the history).
    ///
    /// The row's content gets the actions of its category: destructive ones last (no server marks them,
    /// so they at least stand apart), a text-input action as KDE's inline reply where the server has it.
    /// A server without action buttons gets the default action only, with the choices named in the body.
    func presented(_ row: OutboxRecord) -> (content: NotificationContent, note: String?) {
        var content = row.content ?? NotificationContent(summary: "")
        var notes: [String] = []
        let capabilities = serverInfo.capabilities
        let known = !capabilities.isEmpty
        if let category = actionCategory(of: row) {
            let present = Set(content.actions.map(\.key))
            let shown = category.shownActions(fewButtons: settings.maximumActions.map { $0 <= 2 } ?? false)
            let ordered =
                shown.filter { !$0.options.contains(.destructive) } + shown.filter { $0.options.contains(.destructive) }
            for action in ordered where !present.contains(action.id) {
                if action.options.contains(.textInput) {
                    if known, !capabilities.contains("inline-reply") {
                        notes.append("\(action.title): the server takes no typed reply")
                        continue
                    }
                    content.actions.append(NotificationAction(key: "inline-reply", label: action.title))
                    content.hints["x-kde-reply-placeholder-text"] = .string(action.title)
                    continue
                }
                content.actions.append(NotificationAction(key: action.id, label: action.title))
            }
            // The specification's "default" action is a click on the notification itself; chimed maps it
            // to the category's default action when one comes in.
            if let key = category.defaultAction, !content.actions.contains(where: { $0.key == "default" }) {
                let title = category.actions.first { $0.id == key }?.title ?? "Open"
                content.actions.insert(NotificationAction(key: "default", label: title), at: 0)
            }
        }
        let choices = content.actions.filter { $0.key != "default" }
        if known, !capabilities.contains("actions"), !choices.isEmpty {
            content.actions.removeAll { $0.key != "default" }
            let names = choices.map(\.label).joined(separator: ", ")
            content.body +=
                (content.body.isEmpty ? "" : "\n\n") + "Choices (this notification server shows no buttons): \(names)"
            notes.append("no action buttons on this server; the choices are named in the body")
        }
        return (content, notes.isEmpty ? nil : notes.joined(separator: "; "))
    }
}
