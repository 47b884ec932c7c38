import ChimeCore
import ChimeStore
import Foundation

/// Escalation: an occurrence shown again while nobody reacts to it.
///
/// Each showing of an escalating occurrence schedules the next as a one-off item of its own (a
/// re-notification), stored like any item: it replaces the popup it follows, one urgency higher, and
/// carries its `EscalationStep`, so a restart goes on where chimed stopped. An action chosen on the popup,
/// or its closing for any reason but expiry, cancels the re-notification waiting for it.
extension Daemon {
    /// The escalation step of the occurrence of `item` now due: the re-notification's own, or step 0 when
    /// its entry escalates; nil otherwise.
    static func escalation(of item: ScheduledItem, entry: TimelineEntry) -> EscalationStep? {
        if let step = entry.escalationStep { return step }
        guard let escalation = entry.escalation else { return nil }
        return EscalationStep(
            of: item.id, step: 0, escalation: escalation, group: item.groupID,
            entry: item.groupID == nil ? nil : item.entryID)
    }

    /// The group an occurrence of `item` is shown for: a re-notification's is the escalated entry's, so
    /// that its group's actions and settings apply.
    static func group(of item: ScheduledItem, _ escalation: EscalationStep?) -> GroupKey? {
        guard let escalation, escalation.step > 0 else { return item.groupKey }
        return escalation.group.map { GroupKey(owner: item.owner, id: $0) }
    }

    /// What listings say of an entry's escalation: its policy, or which showing a re-notification is.
    static func escalationWords(_ entry: TimelineEntry) -> String? {
        if let step = entry.escalationStep {
            return "shows item \(step.of) again (\(step.step) of \(step.escalation.times)) unless acknowledged"
        }
        return entry.escalation?.summary
    }

    /// Finds, at start, the re-notifications waiting for popups that are still shown: pending, or due
    /// and in the outbox.
    func restoreEscalations(_ items: [ScheduledItem], outbox: [OutboxRecord]) {
        for row in outbox where (row.escalation?.step ?? 0) > 0 {
            if let replaced = row.replacesID { delivery.escalations[replaced] = row.itemID }
        }
        let candidates = items.filter { $0.replacesID != nil && $0.snoozeOf != nil && $0.finished == nil }
        guard !candidates.isEmpty else { return }
        let replaced = Dictionary(uniqueKeysWithValues: candidates.map { ($0.id, $0.replacesID!) })
        // At start, before chimed takes calls: read here, in one go.
        for (id, entry) in Self.definitions(of: candidates, from: store, logger: logger)
        where entry.escalationStep != nil {
            if let popup = replaced[id] { delivery.escalations[popup] = id }
        }
    }

    /// An escalating occurrence reached the server as `shown`: the history says so for a re-notification,
    /// and the next one is scheduled, unless this was the last.
    func escalationShown(_ step: EscalationStep, as shown: ShownNotification, row: OutboxRecord, now: Date) {
        if step.step > 0 {
            guard let replaced = row.replacesID, delivery.escalations[replaced] == row.itemID else {
                // Acknowledged, or its item cancelled, while it waited to be shown (quiet hours, flood
                // control, no server): the showing went out all the same, so it is taken back, and the
                // escalation ends there.
                logger.info(
                    "closing a re-notification answered while it waited", metadata: ["item": "\(step.of)"])
                closeNotification(shown.notificationID)
                return
            }
            delivery.escalations.removeValue(forKey: replaced)
        } else {
            // A new occurrence starts its own escalation: the one of the item's earlier occurrence ends, so
            // an item has at most one re-notification waiting.
            endEscalations(of: [step.of], because: "a newer occurrence was shown")
        }
        let times = step.escalation.times
        var content = shown.content ?? NotificationContent(summary: "")
        if step.step > 0 {
            let urgency = content.urgency.map { "\($0)" } ?? "normal"
            let last = step.next == nil ? "; the last" : ""
            recordEscalation(
                of: step.of,
                "shown again (\(step.step) of \(times)) as notification \(shown.notificationID), urgency \(urgency)\(last)",
                now: now)
        }
        guard let next = step.next else { return }
        let fireDate = now.addingTimeInterval(step.escalation.every)
        if let end = row.endDate, end <= fireDate { return }
        content.urgency = Escalation.raised(content.urgency)
        let id = scheduler.allocateID()
        var item = ScheduledItem(id: id, content: content, fireDate: fireDate, owner: shown.owner, endDate: row.endDate)
        item.entry.category = shown.category
        item.entry.escalationStep = next
        item.snoozeOf = step.of
        item.replacesID = shown.notificationID
        let followUp = item
        delivery.escalations[shown.notificationID] = id
        persist({ try $0.insert(followUp, now: now) }) { daemon, result in
            switch result {
            case .success:
                // Acknowledged while it was being stored.
                guard daemon.delivery.escalations[shown.notificationID] == id else {
                    daemon.persist({ _ = try $0.cancel(id, now: daemon.clock.now()) }) { _, _ in }
                    return
                }
                daemon.perform(daemon.scheduler.add(followUp, now: daemon.clock.now()))
            case .failure(let error):
                daemon.delivery.escalations.removeValue(forKey: shown.notificationID)
                daemon.logger.error("cannot store the next showing of an escalating notification: \(error)")
            }
        }
    }

    /// Someone reacted to notification `id` (`how`): the re-notification waiting for it is cancelled, and
    /// the escalated item's history says why it stopped.
    func escalationAcknowledged(notificationID id: UInt32, how: String) {
        guard let followUp = delivery.escalations.removeValue(forKey: id) else { return }
        let now = clock.now()
        let (cancelled, step) = scheduler.cancel(followUp, now: now)
        perform(step)
        guard let item = cancelled else {
            // Due already, waiting to be shown (quiet hours, flood control, no server): it is taken back as
            // soon as it is shown (`escalationShown`).
            logger.info("escalation stopped: \(how); its next showing, due already, is taken back when shown")
            return
        }
        recordStopped(item, reason: how, now: now)
    }

    /// A re-notification `item`, taken from the scheduler: its row goes, and the escalated item's history
    /// says why the escalation stopped.
    private func recordStopped(_ item: ScheduledItem, reason: String, now: Date) {
        let original = item.snoozeOf ?? item.id
        logger.info("escalation stopped: \(reason)", metadata: ["item": "\(original)"])
        persist({ store in
            _ = try store.cancel(item.id, now: now)
            try store.recordHistory(.escalated, itemID: original, detail: "stopped: \(reason)", now: now)
        }) { daemon, result in
            if case .failure(let error) = result {
                daemon.logger.error("cannot record the end of an escalation: \(error)")
            }
        }
    }

    /// Ends the escalations of `items` (cancelled, removed, turned off, or shown anew) and of
    /// re-notifications among them: the re-notifications waiting are cancelled.
    func endEscalations(of items: Set<UInt64>, because reason: String) {
        guard !items.isEmpty, !delivery.escalations.isEmpty else { return }
        let now = clock.now()
        for (notificationID, followUp) in delivery.escalations {
            let escalated = scheduler.item(followUp)?.snoozeOf
            guard items.contains(followUp) || escalated.map(items.contains) == true else { continue }
            delivery.escalations.removeValue(forKey: notificationID)
            guard let item = scheduler.cancel(followUp, now: now).item else { continue }
            recordStopped(item, reason: reason, now: now)
        }
        arm(scheduler.nextDeadline)
    }

    /// A re-notification went out inside a digest (quiet hours, flood control): the escalation ends there.
    func escalationDigested(_ rows: [OutboxRecord]) {
        for row in rows where (row.escalation?.step ?? 0) > 0 {
            if let replaced = row.replacesID, delivery.escalations[replaced] == row.itemID {
                delivery.escalations.removeValue(forKey: replaced)
            }
        }
    }

    private func recordEscalation(of itemID: UInt64, _ detail: String, now: Date) {
        persist({ try $0.recordHistory(.escalated, itemID: itemID, detail: detail, now: now) }) { _, _ in }
    }
}
