import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging

/// What the daemon keeps for delivery beside the core: the timers the core's actions arm, and what
/// depends on the scheduler's items.
struct DeliveryState {
    /// The gate's timer; armed by the core's `armGate`.
    var gateTimer: DispatchSourceTimer?
    /// The re-notifications of escalating occurrences, by the notification each waits to replace.
    var escalations: [UInt32: UInt64] = [:]
    /// Fire when a Notify has gone unanswered for the server timeout (`answerOverdue`), by the number it
    /// was sent under.
    var overdueTimers: [UInt64: DispatchSourceTimer] = [:]
    /// Items whose `replacesID` is of an earlier server's popup: they show anew (`replacement`).
    var staleReplacing: Set<UInt64> = []
}

/// Delivery, the server's presence and the interaction: the daemon's side of `DeliveryCore`. Callbacks
/// become events; the actions that come out are carried out here: D-Bus calls, store writes, timers,
/// log lines and signals.
extension Daemon {
    /// Due occurrences not yet shown, in arrival order; also on disk.
    var outbox: ArraySlice<OutboxRecord> { core.outbox }
    /// The notifications shown lately.
    var shown: ShownNotifications { core.shown }

    /// New due occurrences, stored: queue them and deliver what the gate lets through.
    func outboxArrived(_ rows: [OutboxRecord]) {
        handle(.rowsArrived(rows))
    }

    /// Feeds `event` to the core and carries out the actions it returns, in order.
    func handle(_ event: DeliveryCore.Event) {
        let context = DeliveryCore.Context(
            now: clock.now(), timeZone: scheduler.systemTimeZone, categories: categories,
            groupFileCategories: configCategories,
            present: { [unowned self] row, capabilities in self.presented(row, for: capabilities) },
            shownRecord: { [unowned self] row, id, now in self.shownRecord(of: row, as: id, now: now) })
        for action in core.handle(event, context: context) { carryOut(action) }
    }

    /// Carries out one of the core's actions.
    private func carryOut(_ action: DeliveryCore.Action) {
        switch action {
        case .resolveContent(let row):
            resolveContent(of: row)
        case .reportKept(let row, let reason, let waiting):
            reportKept(row, reason: reason, waiting: waiting)
        case .markSending(let rows):
            let now = clock.now()
            // Marked as being handed to the relay; not waited for, since the relay's receipt, not the mark,
            // is what tells the next start that the server has it. The mark only lets the history say that a
            // row sent again without an answer may show twice.
            persist({ try $0.sending(rows, now: now) }) { daemon, result in
                if case .failure(let error) = result {
                    daemon.logger.error("cannot mark a notification as being sent: \(error)")
                }
            }
        case .send(let notification, let sent):
            send(notification, as: sent)
        case .answerSettled(let sent):
            delivery.overdueTimers.removeValue(forKey: sent)?.cancel()
        case .warnAnswerOverdue:
            warnAnswerOverdue()
        case .recordDelivered(let notification, let id, let shown):
            recordDelivered(notification, notificationID: id, shown: shown)
        case .playSound(let sound):
            soundPlayer.play(sound)
        case .recordFailed(let rows, let reason):
            let now = clock.now()
            persist({ store in for row in rows { try store.failed(row, reason: reason, now: now) } }) { _, _ in }
        case .recordSuppressed(let row):
            let now = clock.now()
            persist({ store in try store.suppressed(row, reason: "the app chose not to present it", now: now) }) {
                _, _ in
            }
        case .armGate(let deadline):
            armGate(deadline)
        case .armRetry(let deadline):
            queue.asyncAfter(wallDeadline: clock.wallTime(for: deadline)) { [weak self] in
                self?.assumeIsolated { $0.handle(.retryDeadlineReached(deadline)) }
            }
        case .statusChanged:
            statusChanged()
        case .forgetPopups(let ids, let fingerprint, let replacing):
            forgetPopups(ids, server: fingerprint, replacingItems: replacing)
        case .askServer(let owner):
            learnAboutServer(owner: owner)
        case .useBodyFormat(let format):
            server?.bodyFormat = format
        case .announceProperties:
            announceServerProperties()
        case .announcePaused:
            announce(["Paused": .boolean(pausedProperty)])
        case .questionTurn(let call, let turn):
            interaction.questionTurns.removeValue(forKey: call)?.resume(returning: turn)
        case .answerQuestion(let id, let answer):
            interaction.questionAnswers.removeValue(forKey: id)?(answer)
        case .carryOut(let verb, let key, let shown):
            escalationAcknowledged(notificationID: shown.notificationID, how: "action \(key) chosen")
            carryOut(verb, key: key, on: shown)
        case .runCommand(let command, let key, let shown):
            escalationAcknowledged(notificationID: shown.notificationID, how: "action \(key) chosen")
            runActionCommand(command, key: key, shown: shown)
        case .forward(let key, let shown, let extra, let foreground):
            escalationAcknowledged(notificationID: shown.notificationID, how: "action \(key) chosen")
            forward(key: key, shown: shown, extra: extra, foreground: foreground)
        case .recordWaiting(let itemID, let key, let now):
            persist({
                try $0.recordAction(
                    itemID: itemID, key: key, outcome: "waiting for the session to be unlocked", now: now)
            }) { _, _ in }
        case .popupClosed(let shown, let reason):
            popupClosed(shown, reason: reason)
        case .closePopup(let id):
            closePopup(id)
        case .recordClosedAtEnd(let ids):
            let now = clock.now()
            persist({ store in
                for id in ids { try store.closed(notificationID: id, reason: "end date", now: now) }
            }) { _, _ in }
        case .log(let level, let message, let metadata):
            logger.log(
                level: level, "\(message)", metadata: metadata.isEmpty ? nil : metadata.mapValues { .string($0) })
        }
    }

    /// One Notify, sent as number `sent`; its answer or failure goes back to the core on the daemon's
    /// queue.
    private func send(_ notification: DeliveryPipeline.Notification, as sent: UInt64) {
        // There is a server from `start()` on, before the first answer about its owner, which the pipeline
        // waits for.
        guard let server else { return }
        armOverdue(sent, after: server.callTimeout)
        let answered: @Sendable (Result<UInt32, DBusError>) -> Void = { [weak self] result in
            self?.onQueue { daemon in
                switch result {
                case .success(let id): daemon.handle(.notifyAnswered(notificationID: id, sent: sent))
                case .failure(let error): daemon.handle(.notifyFailed(error, sent: sent))
                }
            }
        }
        let replacesID = notification.rows.first.map(replacement(for:)) ?? 0
        // Made ready before it was due (`prepareCalls`), unless what is sent changed since.
        if case .single(let row, let content, _) = notification, let ready = preparedCalls.removeValue(forKey: row.seq),
            ready.matches(content, replacesID: replacesID, on: server)
        {
            server.notify(ready, completion: answered)
            return
        }
        server.notify(
            notification.content, replacesID: replacesID, rows: notification.rows.map(\.seq), completion: answered)
    }

    /// The popup a row's notification replaces as sent (0: none): never one of an earlier server, whose
    /// ids start again at 1 and would name another popup on the present one; the notification shows anew.
    func replacement(for row: OutboxRecord) -> UInt32 {
        guard let id = row.replacesID, !delivery.staleReplacing.contains(row.itemID) else { return 0 }
        return id
    }

    /// A server other than the one the remembered popups are of (`DeliveryCore`'s `forgetPopups`): the
    /// scheduler forgets their end dates, the store their ids, and what waits to replace one of them
    /// shows anew.
    private func forgetPopups(_ ids: [UInt32], server fingerprint: Int64, replacingItems: [UInt64]) {
        for id in ids { scheduler.popupClosed(notificationID: id) }
        if !ids.isEmpty {
            logger.info(
                "a new notification server: the \(ids.count) popups chimed knew of the one before are forgotten")
        }
        // What waits to replace a popup waits for one of the server before: it shows anew.
        delivery.staleReplacing.formUnion(scheduler.pending.lazy.filter { $0.replacesID != nil }.map(\.id))
        delivery.staleReplacing.formUnion(replacingItems)
        persist({ try $0.forgetShown(server: fingerprint) }) { daemon, result in
            if case .failure(let error) = result {
                daemon.logger.error("cannot forget the popups of the previous notification server: \(error)")
            }
        }
    }

    /// Arms the timer that says the Notify sent as `sent` is late; the core's `answerSettled` disarms it.
    private func armOverdue(_ sent: UInt64, after timeout: Duration) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in
            self?.assumeIsolated { daemon in
                daemon.delivery.overdueTimers.removeValue(forKey: sent)?.cancel()
                daemon.handle(.answerOverdue(sent: sent))
            }
        }
        timer.schedule(deadline: .now() + timeout.dispatchInterval, leeway: .milliseconds(100))
        timer.resume()
        delivery.overdueTimers[sent] = timer
    }

    /// A Notify went unanswered for the server timeout. It is not sent again while the server may still
    /// have it (a stopped or busy server answers, and shows, every call it got once it goes on); it is
    /// sent again only when the server goes, refuses it, or has not answered for `notifyTimeout`.
    private func warnAnswerOverdue() {
        guard let server else { return }
        logger.warning(
            """
            the notification server has not answered a Notify for \(server.callTimeout); waiting for it (a stopped \
            or busy server shows the notification once it goes on), at most \(server.notifyTimeout) in all
            """)
    }

    /// The server answered a Notify after its timeout, when chimed had given up on it and sent the
    /// notification again (or will): the popup it made is an extra one, and is closed (`DeliveryCore`).
    func lateAnswer(notificationID id: UInt32) {
        handle(.lateAnswer(notificationID: id))
    }

    /// The server showed `notification` as `notificationID`; `record` is what the core remembers of it.
    private func recordDelivered(
        _ notification: DeliveryPipeline.Notification, notificationID: UInt32, shown record: ShownNotification?
    ) {
        let now = clock.now()
        let rows = notification.rows
        let digestName: String?
        var note: String?
        switch notification {
        case .single(_, let content, let leftOut):
            digestName = nil
            note = leftOut
            if let off = turnedOffOnServer(content) { note = [leftOut, off].compactMap { $0 }.joined(separator: "; ") }
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
        let leftOut = note
        persist({
            try $0.delivered(
                rows, notificationID: notificationID, digest: digestName, shown: record, note: leftOut, now: now)
        }) { daemon, result in
            if case .failure(let error) = result {
                // The popup is shown; at worst it is shown once more after a restart.
                daemon.logger.error("cannot record a delivery: \(error)")
            }
        }
        switch notification {
        case .single(let row, let content, _):
            let again = row.sentBeforeRestart ? " again (chimed had stopped while sending it)" : ""
            logger.info(
                "delivered \"\(content.summary)\"\(again)",
                metadata: ["item": "\(row.itemID)", "notification": "\(notificationID)"])
            if let record {
                // A server that does not expire popups: chimed closes this one at its expiry time, unless
                // its end date comes first.
                let expiry =
                    core.presence.quirks.ignoresExpireTimeout && content.expireTimeout > 0
                    ? now.addingTimeInterval(Double(content.expireTimeout) / 1000) : nil
                if let expiry, record.until.map({ expiry < $0 }) ?? true {
                    scheduler.trackPopup(
                        ShownPopup(notificationID: notificationID, itemID: row.itemID, until: expiry, expires: true))
                    arm(scheduler.nextDeadline)
                } else if let until = record.until {
                    scheduler.trackPopup(ShownPopup(notificationID: notificationID, itemID: row.itemID, until: until))
                    arm(scheduler.nextDeadline)
                }
                emit("Delivered", [.uint64(row.itemID), .uint32(notificationID)], to: row.owner)
                if let step = row.escalation { escalationShown(step, as: record, row: row, now: now) }
            }
            announceBadge(of: content, owner: row.owner)
        case .digest(_, let digested):
            escalationDigested(digested)
            // Each owner hears of its items that went out in the digest (one owner's items only), under
            // the digest's id: what happened to each is never left untold.
            for row in digested where row.kind == .occurrence {
                emit("Delivered", [.uint64(row.itemID), .uint32(notificationID)], to: row.owner)
            }
            logger.info(
                "delivered a \(digestName ?? "digest") of \(digested.count) notifications",
                metadata: ["notification": "\(notificationID)"])
        }
    }

    /// What is remembered of an occurrence shown as notification `id`, for its actions, its closing and
    /// its end date. Its content is the row's, before its category's actions were added for the server
    /// of the moment: a snooze shows it again with its category, perhaps to another server.
    func shownRecord(of row: OutboxRecord, as id: UInt32, now: Date) -> ShownNotification {
        let item = scheduler.item(row.itemID)
        // A re-notification stands for the entry it escalates: actions, signals and history name that item.
        let escalated = row.escalation.flatMap { $0.step > 0 ? $0 : nil }
        return ShownNotification(
            notificationID: id, itemID: escalated?.of ?? row.itemID, owner: row.owner, group: row.group?.id,
            entryID: escalated?.entry ?? (item?.groupID == nil ? nil : item?.entryID),
            category: actionCategory(of: row)?.id,
            content: row.content,
            occurrence: row.occurrence, until: row.endDate.flatMap { $0 > now ? $0 : nil }, shownAt: now,
            snoozeOf: escalated == nil ? row.snoozeOf : nil)
    }

    /// Arms the gate's timer: plan again when quiet hours end or the flood-control bucket refills.
    private func armGate(_ deadline: Date) {
        let timer = delivery.gateTimer ?? DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        if delivery.gateTimer == nil {
            timer.setEventHandler { [weak self] in self?.assumeIsolated { $0.handle(.gateDeadlineReached) } }
            timer.resume()
            delivery.gateTimer = timer
        }
        timer.schedule(wallDeadline: clock.wallTime(for: deadline), leeway: .milliseconds(1))
    }

    // MARK: - Content made when it fires

    /// Runs the command, or asks the owning app, for a row's content; falls back to the entry's base
    /// content when that fails or takes too long.
    /// The answer goes back to the pipeline: `contentResolved`, or `contentDeclined` when the app
    /// answered that this occurrence is not to be shown (its `willPresent` said so).
    private func resolveContent(of row: OutboxRecord) {
        // Only the user's group files may have chimed run a program; a command stored from the bus by an
        // earlier version is not run.
        let mayRun = row.group.map { groupSources[$0] == .config } ?? false
        let entryID = scheduler.item(row.itemID)?.entryID ?? ""
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
                    handle(.contentDeclined(seq: row.seq))
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
            handle(.contentResolved(seq: row.seq, content))
        }
    }

    /// `io.chime.ContentProvider1.MakeContent(group, entry, fire_time, number) → a{sv}` on the app; nil when
    /// the app answered `present` false (this occurrence is not to be shown).
    private static func askApp(
        _ callback: CallbackSource, row: OutboxRecord, entryID: String, connection: DBusConnection?, logger: Logger
    ) async -> NotificationContent? {
        guard let connection else { return callback.fallback }
        do {
            var message = DBusMessage.methodCall(
                destination: callback.busName, path: ContentProviderBus.path, interface: ContentProviderBus.interface,
                member: ContentProviderBus.makeContent,
                body: [
                    .string(row.group?.id ?? ""), .string(entryID), .int64(WireTime.microseconds(row.occurrence)),
                    .uint32(UInt32(clamping: row.number)),
                ])
            // Asked only of an app that runs: the bus is not to start it for each occurrence (an app that is
            // not running gets the fallback shown, as iOS does not launch an app to ask `willPresent`).
            message.autoStart = false
            let reply = try await connection.call(
                message, timeout: .milliseconds(Int64(callback.timeout * 1000)),
                maximumReplyBytes: ChimeBus.maximumContentReplyBytes
            ).body
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
        } catch let error as DBusError where error.is(.nameHasNoOwner) || error.is(.serviceUnknown) {
            logger.debug(
                "\(callback.busName) is not running to make the content; showing the fallback",
                metadata: ["item": "\(row.itemID)"])
            return callback.fallback
        } catch {
            logger.warning(
                "\(callback.busName) did not make the content (\(error)); showing the fallback",
                metadata: ["item": "\(row.itemID)"])
            return callback.fallback
        }
    }

    // MARK: - Popups

    /// Closes popups whose item's end date came, or whose expiry time the server does not keep
    /// (`DeliveryCore`'s `popupsEnded`).
    func closePopups(_ popups: [ShownPopup]) {
        guard !popups.isEmpty, server != nil else { return }
        handle(.popupsEnded(popups))
    }

    /// The server's NotificationClosed (the core forgot the popup): recorded in the item's history, and a
    /// popup chimed would close at its end date is forgotten.
    private func popupClosed(_ shown: ShownNotification, reason: UInt32) {
        let notificationID = shown.notificationID
        scheduler.popupClosed(notificationID: notificationID)
        let now = clock.now()
        let why = NotificationServer.closeReason(reason)
        // Expired unseen is no reaction: an escalation goes on.
        if reason != 1 { escalationAcknowledged(notificationID: notificationID, how: why) }
        logger.debug("notification \(notificationID) closed by the server: \(why)")
        emit(
            "NotificationClosed",
            [.uint64(shown.itemID), .string(shown.group ?? ""), .string(shown.entryID ?? ""), .string(why)],
            to: shown.owner)
        persist({ try $0.closed(notificationID: notificationID, reason: why, now: now) }) { _, _ in }
    }

    /// Emits one of chimed's signals about an item to the connections of the item's owner alone (the
    /// user's items: to the user's `chime` connections), never to every client: another app must not
    /// learn of it.
    func emit(_ member: String, _ body: [DBusValue], to owner: String) {
        for target in callers.connections(of: owner) {
            try? connection?.emitSignal(
                path: ChimeBus.path, interface: ChimeBus.interface, member: member, body, destination: target)
        }
    }

    private func reportKept(_ row: OutboxRecord, reason: String, waiting: Int) {
        let summary = row.content?.summary ?? row.source?.base.summary ?? ""
        let line =
            "chimed: \(reason); keeping \"\(summary)\" (item \(row.itemID), due \(Time.iso(row.occurrence))) "
            + "until one appears; \(waiting) waiting\n"
        FileHandle.standardError.write(Data(line.utf8))
    }
}

extension Daemon {
    /// What the history says of a notification the server keeps out of sight because the user turned its
    /// app's notifications off in the desktop's settings (GNOME Shell's per-app `enable`); nil otherwise.
    func turnedOffOnServer(_ content: NotificationContent) -> String? {
        guard core.presence.quirks.appliesGNOMEAppSettings, let entry = content.desktopEntry,
            gnomeSettings?.turnedOff(desktopEntry: entry) == true
        else { return nil }
        let note = "not shown: \(entry)'s notifications are turned off in GNOME's settings"
        logger.info("\(note)")
        return note
    }

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
    /// `capabilities` are the server's (the core passes those it knows: the daemon's state is not read while
    /// the core decides).
    func presented(_ row: OutboxRecord, for capabilities: [String]) -> (content: NotificationContent, note: String?) {
        var content = OwnNames.bound(row.content ?? NotificationContent(summary: ""), owner: row.owner)
        var notes: [String] = []
        let known = !capabilities.isEmpty
        if let category = actionCategory(of: row) {
            let present = Set(content.actions.map(\.key))
            let shown = category.shownActions(fewButtons: settings.maximumActions.map { $0 <= 2 } ?? false)
            let ordered =
                shown.filter { !$0.options.contains(.destructive) } + shown.filter { $0.options.contains(.destructive) }
            // Icons in place of titles only where every button has one: a row of icons and words is no row.
            let buttons = ordered.filter { !present.contains($0.id) && !$0.options.contains(.textInput) }
            let icons =
                capabilities.contains("action-icons") && !buttons.isEmpty && buttons.allSatisfy { $0.icon != nil }
            if icons { content.hints["action-icons"] = .boolean(true) }
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
                // With `action-icons` the server reads the key as the icon's name; the router maps it back.
                let key = icons ? action.icon ?? action.id : action.id
                content.actions.append(NotificationAction(key: key, label: action.title))
            }
            // The specification's "default" action is a click on the notification itself; chimed maps it
            // to the category's default action when one comes in.
            if let key = category.defaultAction, !content.actions.contains(where: { $0.key == "default" }) {
                let title = category.actions.first { $0.id == key }?.title ?? "Open"
                content.actions.insert(NotificationAction(key: "default", label: title), at: 0)
            }
        }
        // The app's own desktop entry, so that the desktop's per-app settings and grouping apply to it
        // (GNOME's and KDE's look the app up by it): its id, when a desktop file of that id is installed (an
        // id taken from a process's name names none).
        if content.desktopEntry == nil, let id = DesktopFileID.parse(row.owner),
            gnomeSettings?.hasDesktopFile(id) == true
        {
            content.desktopEntry = id
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
