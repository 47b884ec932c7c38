import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation

/// What chimed keeps about apps and their answers.
struct InteractionState {
    /// Each app's consent, and each group's authorization, as stored.
    var consents: [String: AppConsent] = [:]
    var groupAuthorizations = GroupAuthorizations()
    /// The new group authorizations of each app being stored (by group id, with the number of calls
    /// storing each): they count towards the app's `[limits] groups-per-app` before they are stored.
    var authorizationsBeingStored: [String: [String: Int]] = [:]
    /// The groups whose own app turned them off: the app, not only the user, may turn them on again.
    var groupsTurnedOffByTheirApp: Set<GroupKey> = []
    /// The open questions' answers, by notification id: called once, when the router answers.
    var questionAnswers: [UInt32: @Sendable (Bool?) -> Void] = [:]
    /// The calls waiting for their turn with a question, by call number, and the last number given.
    var questionTurns: [Int: CheckedContinuation<InteractionRouter.QuestionTurn, Never>] = [:]
    var questionCalls = 0
    /// What each app keeps besides its items, for `[limits] bytes-per-app`.
    var storage = AppStorage()
    /// Questions waiting for flood control.
    var questions = QuestionQueue()
}

/// Actions chosen on notifications: the built-in verbs chimed carries out itself, commands, and events
/// for the owning app, kept for it while it is not running.
extension Daemon {
    /// The server's signals about shown notifications, on chimed's own connection. Those a server sends
    /// only to the connection that called Notify reach the relay, which passes them on to `serverSignal`.
    nonisolated func subscribeToServerSignals(on connection: DBusConnection) async throws {
        for member in ["ActionInvoked", "ActivationToken", "NotificationReplied", "NotificationClosed"] {
            let rule = DBusMatchRule(
                sender: NotificationServer.name, interface: NotificationServer.interface, member: member,
                path: NotificationServer.path)
            _ = try await connection.subscribe(rule) { [weak self] message in
                self?.onQueue { $0.serverSignal(message) }
            }
        }
    }

    /// One of the server's signals about a shown notification: the core routes it (`InteractionRouter`).
    func serverSignal(_ message: DBusMessage) {
        guard let signal = InteractionRouter.Signal(member: message.member, body: message.body) else { return }
        handle(.serverSignal(signal))
    }

    /// Stop Repeat, Snooze, Skip Next, Dismiss: carried out with no app running. The core closes the popup
    /// for Dismiss, and for any verb on a server that leaves it open.
    func carryOut(_ verb: BuiltInVerb, key: String, on shown: ShownNotification) {
        let now = clock.now()
        // A snooze acts on the item it brings back, also once the snooze itself is over.
        let target = shown.snoozeOf ?? scheduler.item(shown.itemID)?.snoozeOf ?? shown.itemID
        var outcome: String
        switch verb {
        case .stopRepeat:
            // Pending snoozes of the item go too: stopped means no more of it.
            let snoozes = scheduler.pendingUnordered.filter { $0.snoozeOf == target }.map(\.id)
            for snooze in snoozes {
                if let step = scheduler.stop(snooze, now: now) { perform(step) }
            }
            if let step = scheduler.stop(target, now: now) {
                perform(step)
                outcome = "stopped its repeats"
            } else {
                outcome = "nothing left to stop"
            }
        case .snooze(let seconds):
            let until = now.addingTimeInterval(seconds)
            outcome = "snoozed until \(Time.iso(until))"
            snooze(shown, until: until, target: target)
        case .skipNext:
            if let step = scheduler.skipNext(target, now: now) {
                outcome = "skipped the next occurrence"
                perform(step)
            } else {
                outcome = "nothing pending to skip"
            }
        case .dismiss:
            outcome = "dismissed"
        }
        logger.info("\(key): \(outcome)", metadata: ["item": "\(target)"])
        let recorded = outcome
        persist({ try $0.recordAction(itemID: target, key: key, outcome: recorded, now: now) }) { _, _ in }
    }

    /// Brings a shown notification back at `until`, with the same actions (its category's too),
    /// replacing its own popup. The content of one shown without its own is its item's, read from the
    /// store in the job that stores the snooze.
    func snooze(_ shown: ShownNotification, until: Date, target: UInt64) {
        let item = shown.content == nil ? scheduler.item(shown.itemID) : nil
        // An alarm that wakes the machine wakes it again when snoozed (when its item is still known).
        let wakes = scheduler.item(target)?.definition.wakes ?? false
        let id = scheduler.allocateID()
        let now = clock.now()
        let logger = self.logger
        persist({ store in
            let content =
                shown.content ?? item.flatMap { Self.definitions(of: [$0], from: store, logger: logger)[$0.id] }?
                .content.base ?? NotificationContent(summary: "")
            var snooze = ScheduledItem(id: id, content: content, fireDate: until, owner: shown.owner)
            snooze.entry.category = shown.category
            snooze.entry.wake = wakes
            snooze.snoozeOf = target
            snooze.replacesID = shown.notificationID
            try store.insert(snooze, now: now)
            return snooze
        }) { daemon, result in
            switch result {
            case .success(let item): daemon.perform(daemon.scheduler.add(item, now: daemon.clock.now()))
            case .failure(let error): daemon.logger.error("cannot store the snooze of item \(target): \(error)")
            }
        }
    }

    /// Asks the server to close a popup; the core remembers that chimed did.
    func closeNotification(_ id: UInt32) {
        guard server != nil else { return }
        handle(.closeRequested(id))
    }

    /// `CloseNotification` on the server (`DeliveryCore`'s `closePopup`).
    func closePopup(_ id: UInt32) {
        guard let server else { return }
        let quirks = core.presence.quirks
        let logger = self.logger
        Task {
            do {
                try await server.close(notificationID: id, asInt32: quirks.closeTakesInt32)
            } catch {
                logger.warning("the server did not close notification \(id): \(error)")
            }
        }
    }

    /// Snoozes an item's latest notification (or, if none is shown, its content) from the CLI or D-Bus;
    /// returns the snooze's item id once it is stored.
    public func snooze(itemID: UInt64, seconds: TimeInterval, caller: Caller) async throws -> UInt64 {
        let latest = shown.all.filter { $0.itemID == itemID }.max {
            $0.notificationID < $1.notificationID
        }
        // A one-off that fired is known only by its popup; a pending item by the scheduler.
        let item = scheduler.item(itemID)
        let itemEntry: TimelineEntry?
        if let item, latest?.content == nil || latest?.category == nil {
            itemEntry = await definitions(of: [item])[itemID]
        } else {
            itemEntry = nil
        }
        // Another app's item reads as one that does not exist.
        guard let content = latest?.content ?? itemEntry?.content.base, let owner = item?.owner ?? latest?.owner,
            caller.owns(owner)
        else {
            throw DBusError(
                name: ChimeBus.ErrorName.notFound,
                message: "no item \(itemID) pending or shown lately; list them with `chime pending` or `chime history`")
        }
        var snooze = ScheduledItem(
            id: scheduler.allocateID(), content: content, fireDate: clock.now().addingTimeInterval(seconds),
            owner: owner)
        snooze.entry.category = latest?.category ?? itemEntry?.category
        snooze.entry.wake = item?.definition.wakes ?? false
        snooze.snoozeOf = item?.snoozeOf ?? itemID
        snooze.replacesID = latest?.notificationID
        // A snooze is one more item of the app's: within its limits like any other.
        try checkQuota(caller, adding: 1, addingBytes: snooze.storedBytes)
        let now = clock.now()
        let stored = snooze
        try await persisted { try $0.insert(stored, now: now) }
        try await persisted {
            try $0.recordAction(
                itemID: stored.snoozeOf ?? itemID, key: "snooze",
                outcome: "snoozed until \(Time.iso(stored.fireDate)) (item \(stored.id))", now: now)
        }
        perform(scheduler.add(snooze, now: clock.now()))
        if let latest { closeNotification(latest.notificationID) }
        return snooze.id
    }

    /// A command configured for the action in a group file.
    func runActionCommand(_ command: [String], key: String, shown: ShownNotification) {
        let logger = self.logger
        let now = clock.now()
        Task {
            let result = await CommandRunner.run(command, timeout: 30)
            let outcome: String
            switch result {
            case .success: outcome = "ran \(command[0])"
            case .failure(let failure): outcome = "\(command[0]) failed: \(failure)"
            }
            logger.info("\(key): \(outcome)", metadata: ["item": "\(shown.itemID)"])
            self.persist({ try $0.recordAction(itemID: shown.itemID, key: key, outcome: outcome, now: now) }) { _, _ in
            }
        }
    }

    /// An app's own action: sent to the app as ActionInvoked when it is connected; a foreground action
    /// activates an app that is not running; otherwise kept until the app asks (TakeActions).
    func forward(key: String, shown: ShownNotification, extra: [String: String], foreground: Bool) {
        var userInfo = shown.content?.userInfo ?? [:]
        for (k, v) in extra { userInfo[k] = .string(v) }
        let now = clock.now()
        let targets = callers.connections(of: shown.owner)
        let outcome: String
        if !targets.isEmpty || shown.owner.isEmpty {
            // To the owner's own connections (the user's: those of `chime`), no one else's.
            emit(
                "ActionInvoked",
                [
                    .uint64(shown.itemID), .string(shown.group ?? ""), .string(shown.entryID ?? ""), .string(key),
                    UserInfoWire.encode(userInfo),
                ], to: shown.owner)
            outcome =
                (shown.owner.isEmpty ? "announced" : "sent to \(shown.owner)")
                + (extra["activation-token"] == nil ? "" : " with an activation token")
        } else if foreground, let desktopEntry = shown.content?.desktopEntry,
            OwnNames.isOwn(desktopEntry: desktopEntry, appID: shown.owner), let connection
        {
            outcome = "activated \(desktopEntry)"
            let token = extra["activation-token"]
            Task {
                do {
                    try await Self.activate(
                        desktopEntry: desktopEntry, action: key, itemID: shown.itemID, token: token,
                        connection: connection)
                } catch {
                    self.logger.warning("cannot activate \(desktopEntry) for action \(key): \(error)")
                    self.keep(key: key, shown: shown, userInfo: userInfo, now: now)
                }
            }
        } else {
            outcome = "kept for \(shown.owner) until it asks"
            // Kept first: the store's queue runs in order, so the app that starts finds it.
            keep(key: key, shown: shown, userInfo: userInfo, now: now)
            startApp(shown.owner, for: key, itemID: shown.itemID)
        }
        persist({ try $0.recordAction(itemID: shown.itemID, key: key, outcome: outcome, now: now) }) { _, _ in }
    }

    /// Asks the bus to start the app `owner` (D-Bus activation of its name, which its `.service` file,
    /// or Flatpak's export of it, starts), so that it takes the action kept for it, as an iOS app is
    /// launched to handle a response. An owner that is no bus name, or a name nothing starts, is left
    /// alone: the action waits until the app runs.
    private func startApp(_ owner: String, for key: String, itemID: UInt64) {
        guard !owner.isEmpty, !owner.hasPrefix(":"), DBusNames.isValidBusName(owner), let connection else { return }
        let logger = self.logger
        Task {
            do {
                let reply = try await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "StartServiceByName", [.string(owner), .uint32(0)])
                // 1: started; 2: it runs already (it takes the action when it asks).
                if reply.first == .uint32(1) {
                    logger.info("started \(owner) for its action \(key)", metadata: ["item": "\(itemID)"])
                }
            } catch {
                logger.debug(
                    "\(owner) cannot be started for its action \(key) (\(error)); it gets it when it runs",
                    metadata: ["item": "\(itemID)"])
            }
        }
    }

    /// Keeps an action for an app that is away, within its byte quota: the oldest kept actions go when
    /// the app's items, categories and kept actions would take more (`ScheduleStore.queue`).
    private func keep(key: String, shown: ShownNotification, userInfo: [String: UserInfoValue], now: Date) {
        let owner = shown.owner
        let action = PendingAction(
            owner: owner, itemID: shown.itemID, group: shown.group, entryID: shown.entryID, key: key,
            userInfo: userInfo, date: now)
        let room =
            owner.isEmpty
            ? Int.max
            : max(
                0,
                settings.bytesPerApp - scheduler.bytes(owner: owner) - interaction.storage.bytes(ofCategoriesOf: owner))
        persist({ try $0.queue(action, maximumBytes: room) }) { daemon, result in
            if case .success(let kept) = result { daemon.interaction.storage.keptActionBytes[owner] = kept.keptBytes }
        }
    }

    /// `org.freedesktop.Application.ActivateAction` on the app's desktop id, which D-Bus activation starts.
    static func activate(
        desktopEntry: String, action: String, itemID: UInt64, token: String?, connection: DBusConnection
    ) async throws {
        // The specification's path: the id with dots as slashes, and dashes as underscores.
        let path = try DBusObjectPath(
            "/" + desktopEntry.replacingOccurrences(of: ".", with: "/").replacingOccurrences(of: "-", with: "_"))
        var platform: [DBusDictEntry] = []
        if let token { platform.append(DBusDictEntry(.string("activation-token"), .variant(.string(token)))) }
        _ = try await connection.call(
            destination: desktopEntry, path: path, interface: "org.freedesktop.Application", member: "ActivateAction",
            [
                .string(action), .array(element: .variant, [.variant(.uint64(itemID))]),
                .dictionary(key: .string, value: .variant, platform),
            ])
    }

    // MARK: - Callers

    /// The caller of a method call, within its app's call rate. Callers are told apart by the bus's part
    /// (`CallerDirectory`), never on the daemon's queue, and the rate is checked behind a lock of its own (`CallRates`): a call
    /// refused for its rate never reaches the daemon's queue, and its refusal is sent when the app's next
    /// call would be allowed (at most a second later), so a loop of refused calls runs at the app's rate.
    nonisolated func admit(_ call: DBusMethodCall) async throws -> Caller {
        let caller = try await callers.admit(call.sender)
        if let refusal = rates.check(caller, now: clock.now()) {
            if refusal.delay > 0 { try? await Task.sleep(for: .seconds(refusal.delay)) }
            throw refusal.error
        }
        return caller
    }
}
