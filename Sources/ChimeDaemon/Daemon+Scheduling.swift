import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging
import Synchronization

/// The scheduler's steps carried out: stored, delivered, armed.
extension Daemon {
    /// Carries out a scheduler step: resolves the content of what is due (a pool moves on), stores the
    /// step and the new outbox rows in one transaction, then hands them to delivery; arms the timer and
    /// closes popups whose end date came. Then prepares the rows of the next deadline (`prepareNext`).
    ///
    /// When every row that came due was prepared, the rows go to delivery at once and the step is stored
    /// right after, on the store's queue: nothing is written between the due instant and the Notify call.
    /// Otherwise the step is stored first, on the store's queue, and its rows go to delivery once it is;
    /// the daemon's queue never waits for the store. A definition that is only in the store (neither
    /// resident nor read when prepared) is read there too, in the same job, and the content resolved
    /// there: the daemon's queue never reads the database. Steps stay in order: while one waits for its
    /// definitions, every later step goes the same way, behind it.
    /// `taken` holds occurrences that are in the outbox already (found at start), which get no row.
    func perform(_ step: SchedulerStep, taken: [UInt64: Date] = [:]) {
        defer { prepareNext() }
        arm(step.deadline)
        closePopups(step.closePopups)
        var entries: [UInt64: TimelineEntry] = [:]
        var unread: [ScheduledItem] = []
        var looked: Set<UInt64> = []
        for item in step.due.map(\.item) + step.missed.map(\.item) where looked.insert(item.id).inserted {
            if item.definition.isResident {
                entries[item.id] = item.definition.entry
            } else if let read = preparedEntries[item.id], read.fingerprint == item.definition.fingerprint {
                entries[item.id] = read.entry
            } else {
                unread.append(item)
            }
        }
        var ready: [UInt64: OutboxRecord] = [:]
        for due in step.due {
            if let row = prepared.removeValue(forKey: due.item.id) { ready[due.item.id] = row }
        }
        let context = StepContext(
            zone: scheduler.systemTimeZone, downtime: scheduler.downtime, now: clock.now(), logger: logger)
        statusChanged()
        guard !unread.isEmpty || stepsBeingRead > 0 else {
            let outcome = Self.outcome(of: step, entries: entries, taken: taken, ready: ready, context: context)
            for (id, state) in outcome.states { scheduler.updatePool(of: id, from: state) }
            store(outcome.record, now: context.now)
            return
        }
        stepsBeingRead += 1
        let known = entries
        let unreadItems = unread
        let readyRows = ready
        let states = resolvedStates
        persist({ store in
            var entries = known
            if !unreadItems.isEmpty {
                entries.merge(Self.definitions(of: unreadItems, from: store, logger: context.logger)) { old, _ in old }
                context.logger.debug("read the definitions of \(unreadItems.count) items due on the store's queue")
            }
            let outcome = Self.outcome(
                of: step, entries: entries, taken: taken, ready: readyRows, context: context,
                states: states.current)
            states.merge(outcome.states)
            return (outcome, Result { try store.commit(outcome.record, now: context.now) })
        }) { daemon, result in
            daemon.stepsBeingRead -= 1
            if daemon.stepsBeingRead == 0 { daemon.resolvedStates.clear() }
            guard case .success(let (outcome, stored)) = result else { return }
            // Only the pool's place: a later step may have moved the item on meanwhile.
            for (id, state) in outcome.states { daemon.scheduler.updatePool(of: id, from: state) }
            daemon.delivered(outcome.record, stored: stored)
        }
    }

    /// What the store job of a step needs of the daemon's state, taken when the step came.
    struct StepContext: Sendable {
        var zone: Zone
        var downtime: Downtime
        var now: Date
        var logger: Logger
    }

    /// What a step comes to: the record to store, with its outbox rows, and the items whose content moved
    /// a pool on (their states, of which the daemon takes the pool's place).
    struct StepOutcome: Sendable {
        var record: StepRecord
        var states: [UInt64: EntryState] = [:]
    }

    /// Builds the step's outbox rows from the entries of its items and says what it did in the log: on
    /// the daemon's queue, or on the store's when definitions had to be read. `states` holds the states
    /// that steps still on their way gave items.
    nonisolated static func outcome(
        of step: SchedulerStep, entries: [UInt64: TimelineEntry], taken: [UInt64: Date],
        ready: [UInt64: OutboxRecord], context: StepContext, states: [UInt64: EntryState] = [:]
    ) -> StepOutcome {
        var outcome = StepOutcome(
            record: StepRecord(updated: step.updated, finished: step.finished, missed: step.missed))
        var random = SystemRandomNumberGenerator()
        let logger = context.logger
        for due in step.due {
            if let occurrence = taken[due.item.id], occurrence == due.occurrence { continue }
            var state = due.item.state
            // A step before this one, still on its way, may have moved a pool on.
            if let moved = states[due.item.id] { state.takePool(from: moved) }
            guard let entry = entries[due.item.id] else {
                // Its row went meanwhile: it is being cancelled.
                logger.debug("not delivering a cancelled item", metadata: ["item": "\(due.item.id)"])
                continue
            }
            let resolution = entry.content.resolve(
                occurrence: due.occurrence, number: due.number, timeZone: context.zone, state: &state,
                random: &random)
            if state != due.item.state {
                outcome.states[due.item.id] = state
                for index in outcome.record.updated.indices where outcome.record.updated[index].id == due.item.id {
                    outcome.record.updated[index].state = state
                }
                for index in outcome.record.finished.indices
                where outcome.record.finished[index].id == due.item.id {
                    outcome.record.finished[index].state = state
                }
            }
            let escalation = Self.escalation(of: due.item, entry: entry)
            var row = OutboxRecord(
                itemID: due.item.id, owner: due.item.owner, group: Self.group(of: due.item, escalation),
                occurrence: due.occurrence, number: due.number,
                late: due.late, content: nil, endDate: entry.endDate, category: entry.category,
                replacesID: due.item.replacesID, escalation: escalation, snoozeOf: due.item.snoozeOf)
            switch resolution {
            case .ready(let content):
                row.content = content
                if let prepared = ready[due.item.id], prepared.occurrence == due.occurrence { row.seq = prepared.seq }
            case .runCommand, .askApp:
                row.source = entry.content
            }
            outcome.record.outbox.append(row)
            if due.late {
                let cause = context.downtime.cause(of: due.occurrence).map { ": \($0.words)" } ?? ""
                logger.info(
                    "delivering \"\(entry.content.base.summary)\" late (due \(Time.iso(due.occurrence))\(cause))",
                    metadata: ["item": "\(due.item.id)"])
            }
        }
        for (group, missed) in step.coalesced {
            outcome.record.outbox.append(
                missedDigest(group: group, missed: missed, entries: entries, zone: context.zone, now: context.now))
        }
        for missed in step.missed where missed.handling != .coalesced && missed.handling != .deliveredLate {
            let plural = missed.count == 1 ? "" : "s"
            let summary = entries[missed.item.id]?.content.base.summary ?? "an item cancelled meanwhile"
            let cause = missed.cause.map { ", \($0.words)" } ?? ""
            logger.notice(
                "missed \(missed.count) occurrence\(plural) of \"\(summary)\" (\(missed.handling.rawValue)\(cause))",
                metadata: ["item": "\(missed.item.id)"])
        }
        for item in step.finished where item.finished == .searchExhausted {
            // History records it with this reason; the log says why and what to do.
            logger.warning(
                """
                stopped following a repeating item: its rule's next occurrence cannot be found within the search \
                budget (\(SearchBudget.stepsPerSearch) steps); schedule it again with a rule of a coarser frequency
                """,
                metadata: ["item": "\(item.id)"])
        }
        return outcome
    }

    /// Stores a step built on the daemon's queue and hands its rows to delivery: at once when every row
    /// was prepared (stored already, under its seq, so the relay's receipt has a row to land on; the step
    /// is stored after, in order with every later write of the store), else once the step is stored.
    private func store(_ record: StepRecord, now: Date) {
        guard !record.isEmpty else { return }
        if record.outbox.isEmpty || record.outbox.contains(where: { $0.seq == 0 }) {
            // Stored on the store's queue, in order with every write asked for before, and sent on when it
            // is: the daemon's queue goes on meanwhile (other deliveries, calls, the next step), never
            // waiting behind a caller's write.
            persist({ try $0.commit(record, now: now) }) { daemon, result in
                daemon.delivered(record, stored: result)
            }
        } else {
            persist({ try $0.commit(record, now: now) }) { daemon, result in
                if case .failure(let error) = result {
                    daemon.logger.critical("cannot store what came due: \(error); it is being delivered")
                }
            }
            outboxArrived(record.outbox)
        }
    }

    /// A step's rows, stored (or not), go to delivery.
    private func delivered(_ record: StepRecord, stored: Result<[OutboxRecord], any Error>) {
        switch stored {
        case .success(let rows):
            outboxArrived(rows)
        case .failure(let error):
            // Showing the notifications matters more than remembering them; they are delivered now
            // and only a crash before that could lose them.
            logger.critical("cannot store what came due: \(error); delivering it anyway")
            outboxArrived(record.outbox)
        }
    }

    /// The most rows prepared for one deadline: more items due at once take the ordinary way.
    static let preparedLimit = 64

    /// Stores, ahead of time, the outbox rows of what comes due at the next deadline, so that at the due
    /// instant only the Notify call is left (`perform`). Only content known before the occurrence is
    /// prepared (fixed content and templates); a command, an app's call-back or a pool is made when due.
    /// The definitions are read on the store's queue, in the same job. A deadline that comes before its
    /// rows are stored takes the ordinary way.
    func prepareNext() {
        let deadline = scheduler.nextDeadline
        guard deadline != preparedDeadline else { return }
        preparedDeadline = deadline
        prepared = [:]
        preparedEntries = [:]
        preparedCalls = [:]
        preparation += 1
        guard let deadline, let items = scheduler.items(dueAt: deadline, limit: Self.preparedLimit) else { return }
        let zone = scheduler.systemTimeZone
        let now = clock.now()
        let generation = preparation
        let logger = self.logger
        persist({ store in
            let entries = Self.definitions(of: items, from: store, logger: logger)
            var rows: [OutboxRecord] = []
            for item in items {
                let number = item.state.occurrences + 1
                let content: NotificationContent
                guard let entry = entries[item.id] else { continue }
                switch entry.content {
                case .fixed(let fixed):
                    content = fixed
                case .template(let template):
                    content = ContentTemplate.fill(template, date: item.fireDate, timeZone: zone, occurrence: number)
                case .pool, .command, .callback:
                    continue
                }
                let escalation = Self.escalation(of: item, entry: entry)
                rows.append(
                    OutboxRecord(
                        itemID: item.id, owner: item.owner, group: Self.group(of: item, escalation),
                        occurrence: item.fireDate, number: number, late: false, content: content,
                        endDate: entry.endDate, category: entry.category, replacesID: item.replacesID,
                        escalation: escalation, snoozeOf: item.snoozeOf))
            }
            return (entries, rows.isEmpty ? [] : try store.prepare(rows, now: now))
        }) { daemon, result in
            switch result {
            case .success(let (entries, stored)):
                // Not when the deadline changed meanwhile, or came.
                guard daemon.preparation == generation else { return }
                for item in items {
                    guard let entry = entries[item.id] else { continue }
                    daemon.preparedEntries[item.id] = (item.definition.fingerprint, entry)
                }
                for row in stored { daemon.prepared[row.itemID] = row }
                daemon.prepareCalls(for: stored)
            case .failure(let error):
                daemon.logger.warning("cannot prepare the next notifications (\(error)); they are stored when due")
            }
        }
    }

    /// Makes the Notify calls of prepared rows ready, as the server present now would get them: the
    /// message built and, for the relay, serialized. `send` uses one when the notification is still the
    /// same then (the server's capabilities or the category's actions may have changed meanwhile).
    func prepareCalls(for rows: [OutboxRecord]) {
        guard let server, core.presence.readiness == .ready else { return }
        for row in rows {
            let content = presented(row, for: serverInfo.capabilities).content
            preparedCalls[row.seq] = server.prepareNotify(
                content, replacesID: replacement(for: row), rows: [row.seq])
        }
    }

    /// One notification for a group's missed occurrences under the `coalesce` policy.
    nonisolated static func missedDigest(
        group: GroupKey?, missed: [MissedOccurrences], entries: [UInt64: TimelineEntry], zone: Zone, now: Date
    ) -> OutboxRecord {
        let entries = missed.map { m in
            var content = entries[m.item.id]?.content.base ?? NotificationContent(summary: "(cancelled meanwhile)")
            if m.count > 1 { content.summary += " ×\(m.count)\(m.countIsLowerBound ? "+" : "")" }
            return OutboxEntry(
                seq: 0, itemID: m.item.id, owner: m.item.owner, groupID: group?.id, occurrence: m.last, content: content
            )
        }
        var content = Digest.content(kind: .missed(groupID: group?.id), entries: entries, timeZone: zone)
        let total = missed.reduce(0) { $0 + $1.count }
        content.summary = "\(total) reminder\(total == 1 ? "" : "s") missed" + (group.map { " in \($0.id)" } ?? "")
        return OutboxRecord(
            kind: .missedDigest, itemID: 0, group: group, occurrence: now, number: 0, late: true, content: content)
    }

    // MARK: - Definitions

    /// The entries of items: decoded from the definitions they hold, read from their rows for those the
    /// store holds (`Scheduler.definitionsInStore`), in one read, on the calling thread: the store's queue,
    /// a caller's, or the start, never the daemon's queue while it serves. An item without a row
    /// (cancelled meanwhile) has no entry; one the store cannot read shows `EntryDefinition.unreadable`.
    nonisolated static func definitions(of items: [ScheduledItem], from store: ScheduleStore, logger: Logger)
        -> [UInt64: TimelineEntry]
    {
        var result: [UInt64: TimelineEntry] = [:]
        var stored: [UInt64] = []
        for item in items where result[item.id] == nil {
            if item.definition.isResident {
                result[item.id] = item.definition.entry
            } else {
                stored.append(item.id)
            }
        }
        guard !stored.isEmpty else { return result }
        do {
            result.merge(try store.entries(of: stored)) { old, _ in old }
        } catch {
            logger.error("cannot read \(stored.count) definitions from the store: \(error)")
            for item in items where result[item.id] == nil {
                result[item.id] = EntryDefinition.unreadable(
                    id: item.entryID, endDate: item.endDate, maximumOccurrences: item.maximumOccurrences)
            }
        }
        return result
    }

    /// The entries of items, for a call: those only in the store are read on `CallerWork`, on the caller's
    /// time, never on the daemon's queue. What the daemon holds may have changed when it returns.
    func definitions(of items: [ScheduledItem]) async -> [UInt64: TimelineEntry] {
        guard items.contains(where: { !$0.definition.isResident }) else {
            return Self.definitions(of: items, from: store, logger: logger)
        }
        let store = self.store
        let logger = self.logger
        return (try? await callerWork.run { Self.definitions(of: items, from: store, logger: logger) }) ?? [:]
    }

    /// The entries of a group in `scheduler`, pending and retired, in the order they were added (by item id),
    /// read with `reader`, off the daemon's queue; an entry whose row went meanwhile is left out.
    nonisolated static func entries(ofGroup key: GroupKey, in scheduler: Scheduler, reader: EntryReader) throws
        -> [TimelineEntry]
    {
        let items = scheduler.items(of: key).sorted { $0.id < $1.id }
        let stored = try reader.entries(of: items.filter { !$0.definition.isResident }.map(\.id))
        return items.compactMap { $0.definition.isResident ? $0.definition.entry : stored[$0.id] }
    }

    /// The one timer: a wall-clock deadline, no leeway, so reminders fire at the instant they name. The
    /// scheduler part makes the timer before it restores anything that could arm it.
    func arm(_ deadline: Date?) {
        armWakeAlarm()
        guard let deadline else {
            armedDeadline = nil
            deadlineTimer?.arm(wallSeconds: nil)
            return
        }
        guard armedDeadline != deadline else { return }
        armedDeadline = deadline
        deadlineTimer?.arm(wallSeconds: clock.wallSeconds(for: deadline))
    }

    /// Makes the wake alarm, or keeps why there is none for `Status`: chimed goes on without it. The log
    /// says so once, when an item first asks to wake the machine (`armWakeAlarm`), not at every start of
    /// a chimed whose user never asks.
    func makeWakeAlarm() {
        do {
            wakeAlarm = try WakeAlarm()
        } catch {
            wake.problem = WakeAlarm.problem(error)
        }
    }

    /// Sets the wake alarm for the earliest occurrence of an item that asks to wake the machine, or
    /// disarms it when there is none. Looked for again only when such an item changed (the scheduler's
    /// `wakeGeneration`) or the time it was armed for has passed, so other steps cost a comparison.
    func armWakeAlarm() {
        let generation = scheduler.wakeGeneration
        // Nothing changed among those items: only an armed time that has passed asks for a look (the clock
        // is not read otherwise).
        if generation == wakeGenerationArmed {
            guard let armed = wake.armedFor, armed <= clock.now() else { return }
        }
        let now = clock.now()
        wakeGenerationArmed = generation
        let count = scheduler.wakeItemCount
        let earliest = count == 0 ? nil : scheduler.earliestWake(after: now)
        var status = wake
        status.items = count
        if count > 0, let problem = wake.problem, !wakeProblemLogged {
            wakeProblemLogged = true
            logger.warning("\(problem); items that ask to wake the machine are delivered when it is awake")
        }
        if let wakeAlarm {
            do {
                try wakeAlarm.arm(wallSeconds: earliest.map(clock.wallSeconds(for:)))
                status.armedFor = earliest
            } catch {
                logger.error("cannot set the wake alarm: \(error)")
                status.armedFor = nil
            }
        }
        if status != wake { wake = status }
    }

    func timerFired() {
        armedDeadline = nil
        perform(scheduler.step(now: clock.now()))
    }

    /// The wall clock was set, or the machine resumed: what passed is handled now (missed-trigger
    /// policy) and the timer is armed again on the new clock.
    func clockChanged(reason: String) {
        #if CHIME_TEST_HOOKS
            configuration.offsetClock?.readOffset()
        #endif
        noteSleep()
        logger.info("\(reason): the clock reads \(Time.iso(clock.now())); checking what is due")
        armedDeadline = nil
        perform(scheduler.step(now: clock.now()))
        handle(.clockChanged)
    }

    /// logind's PrepareForSleep: after resume, time passed that no timer saw.
    func sleepChanged(goingToSleep: Bool) {
        if goingToSleep {
            logger.info("the machine is going to sleep")
            sleepStarted = clock.now()
        } else {
            clockChanged(reason: "resumed from suspend")
        }
    }

    /// Records a sleep of the machine that ended now, so that what it missed is told by its cause: from
    /// logind's word that it was going to sleep, or from the kernel's count of time spent asleep
    /// (CLOCK_BOOTTIME runs on during a suspend, CLOCK_MONOTONIC does not), whichever says more.
    func noteSleep() {
        let now = clock.now()
        let asleep = SleepClock.secondsAsleep()
        let slept = asleep - secondsAsleepSeen
        secondsAsleepSeen = asleep
        var start = sleepStarted
        sleepStarted = nil
        if slept >= 1 { start = min(start ?? now, now.addingTimeInterval(-slept)) }
        guard let start, start < now else { return }
        scheduler.downtime.addSleep(from: start, to: now)
        logger.info("the machine slept from \(Time.iso(start)) to \(Time.iso(now))")
    }

    /// The system zone may have changed: floating rules follow the new zone. A zone known only by its
    /// file (`/etc/localtime` a copy, not a link) keeps its name when the file is replaced, so its rules
    /// are read again and repeating entries rescheduled under them.
    func timeZoneMayHaveChanged() {
        let path = configuration.localtimePath
        var zone = Zone.system(localtime: path)
        if zone.file != nil || scheduler.systemTimeZone.file != nil {
            // The file's rules read before may be the replaced file's.
            ZoneRulesStore.shared.reload()
            zone = Zone.system(localtime: path)
        }
        if zone == scheduler.systemTimeZone, zone.file != nil {
            logger.info("the system's time zone file \(path) changed; floating rules follow its rules")
            perform(scheduler.zoneRulesChanged(now: clock.now()))
            return
        }
        guard zone != scheduler.systemTimeZone else { return }
        logger.info("the time zone is now \(zone.identifier); floating rules follow it")
        published.withLock { $0.systemTimeZone = zone }
        perform(scheduler.setSystemTimeZone(zone, now: clock.now()))
    }

    // MARK: - Items on their own

    /// Schedules `content` per `trigger` and returns the new item id once it is stored. `owner` is the
    /// app it belongs to ("" for the user). The content's category, when the owner has a category of
    /// actions with that id, also gives the notification that category's actions.
    ///
    /// With `trigger.group` the item joins the owner's group of that id instead of standing on its own.
    /// With `quota`, the item must keep that caller within its limits, as stored (`checkQuota`).
    public nonisolated func schedule(
        _ content: NotificationContent, trigger: TriggerWire, owner: String = "", quota: Caller? = nil
    ) async throws -> UInt64 {
        // The rule is parsed and its first occurrences searched for here, on the caller's time, not on the
        // daemon's queue.
        let now = clock.now()
        let (zone, phrases) = published.withLock { ($0.systemTimeZone, $0.phraseDefaults) }
        let first = try await callerWork.run {
            try Self.firstOccurrence(of: trigger, now: now, systemTimeZone: zone, phraseDefaults: phrases)
        }
        return try await schedule(content, trigger: trigger, owner: owner, quota: quota, first: first, now: now)
    }

    private func schedule(
        _ content: NotificationContent, trigger: TriggerWire, owner: String, quota: Caller?,
        first: (Recurrence?, Date), now: Date
    ) async throws -> UInt64 {
        let (recurrence, fireDate) = first
        if let group = trigger.group {
            return try await add(
                content, trigger: trigger, to: GroupKey(owner: owner, id: group), now: now, quota: quota)
        }
        let id = scheduler.allocateID()
        var item = ScheduledItem(
            id: id, content: content, fireDate: fireDate, recurrence: recurrence, rule: trigger.rule,
            timeZone: trigger.timeZone, owner: owner, endDate: trigger.until, maximumOccurrences: trigger.count)
        item.entry.category = content.category
        item.entry.escalation = trigger.escalation
        item.entry.offset = trigger.offset
        item.entry.wake = trigger.wake
        item.replacesID = trigger.replacesID
        if let quota { try checkQuota(quota, adding: 1, addingBytes: item.storedBytes) }
        let stored = item
        do {
            try await storeNew(stored, now: now)
        } catch {
            logger.error("cannot store a new item: \(error)")
            throw DBusError(
                name: ChimeBus.ErrorName.storage,
                message: "chimed could not save the item: \(error); nothing was scheduled")
        }
        let kind = recurrence == nil ? "" : "repeating "
        logger.info("scheduled \(kind)\"\(content.summary)\" at \(Time.iso(fireDate))", metadata: ["item": "\(id)"])
        perform(scheduler.add(item, now: clock.now()))
        return id
    }

    /// The trigger's rule parsed and its first occurrence; refuses a rule that never fires, has no
    /// occurrence after now (up to 9999-12-31T23:59:59Z), or whose first occurrences cannot be found within
    /// the search budget (`Recurrence.admissionCheck`), or whose first occurrence comes after its end.
    private nonisolated static func firstOccurrence(
        of trigger: TriggerWire, now: Date, systemTimeZone system: Zone, phraseDefaults phrases: PhraseDefaults
    ) throws -> (Recurrence?, Date) {
        guard let rule = trigger.rule else {
            let fireDate = trigger.at ?? now
            if let until = trigger.until, fireDate > until {
                throw DBusError(name: ChimeBus.ErrorName.invalidTime, message: "the item is due after its end (until)")
            }
            return (nil, fireDate)
        }
        let zone: RuleTimeZone = trigger.timeZone.map { .named($0) } ?? .floating
        let parsed: Recurrence
        do {
            parsed = try Recurrence.parse(
                rule, now: now, timeZone: zone, systemTimeZone: system, phraseDefaults: phrases
            ).shifted(by: trigger.offset)
        } catch {
            throw DBusError(name: ChimeBus.ErrorName.invalidRule, message: error.description)
        }
        // Within the search budget, the first few occurrences: a rule chimed cannot follow is refused here.
        let first: Date
        do {
            first = try parsed.admissionCheck(after: now, systemTimeZone: system)
        } catch {
            throw DBusError(name: ChimeBus.ErrorName.invalidRule, message: error.description)
        }
        // The rule is fine; the end the trigger gives comes before its first occurrence.
        if let until = trigger.until, first > until {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidTime,
                message: "the rule's first occurrence (\(Time.iso(first))) is after its end (until); "
                    + "move until later")
        }
        return (parsed, first)
    }

    /// Adds the item to group `key` as one more entry of its timeline, `item-ID` (the group is made when
    /// there is none), through the same replacement of the timeline as `Reschedule`: every other entry
    /// is unchanged, so it keeps its next occurrence and its state. Returns the item id once it is stored.
    private func add(
        _ content: NotificationContent, trigger: TriggerWire, to key: GroupKey, now: Date, quota: Caller?
    ) async throws -> UInt64 {
        if scheduler.settings(of: key)?.enabled == false {
            throw DBusError(
                name: ChimeBus.ErrorName.conflict,
                message: "the group \(key) is turned off; turn it on with `chime group enable \(key)`, "
                    + "or schedule without a group")
        }
        let id = scheduler.allocateID()
        let entry = TimelineEntry(
            id: "item-\(id)", trigger: trigger.entryTrigger(now: now), content: .fixed(content),
            category: content.category, endDate: trigger.until, maximumOccurrences: trigger.count,
            escalation: trigger.escalation, offset: trigger.offset, wake: trigger.wake)
        _ = try await replaceTimeline(
            of: key, source: .api,
            timeline: { scheduler, reader in
                // The group as the copy planned with holds it: every other entry stays as it is.
                try TimelineGroup(
                    id: key.id, owner: key.owner, settings: scheduler.settings(of: key) ?? GroupSettings(),
                    entries: Self.entries(ofGroup: key, in: scheduler, reader: reader) + [entry])
            },
            prepare: { plan in
                for index in plan.upserts.indices where plan.upserts[index].entryID == "item-\(id)" {
                    plan.upserts[index].id = id
                    plan.upserts[index].replacesID = trigger.replacesID
                }
            },
            check: { plan in if let quota { try self.checkQuota(quota, plan: plan) } })
        return id
    }

    /// Cancels everything `owner` has pending ("" the user's own): its items on their own (snoozes too) and
    /// its groups, which are removed with their entries; only group `group` when given. A group that comes
    /// from a group file is the user's file and is left alone (named as `group`, it is refused with
    /// `Conflict`). Returns how many items went, once that is stored.
    public func cancelAll(owner: String, group: GroupKey? = nil) async throws -> Int {
        let items: [UInt64]
        let groups: [GroupKey]
        if let group {
            if groupSources[group] == .config {
                throw DBusError(
                    name: ChimeBus.ErrorName.conflict,
                    message: "the group \(group) comes from its file in the groups folder; delete or move that file")
            }
            items = []
            groups = scheduler.settings(of: group) == nil ? [] : [group]
        } else {
            items = scheduler.singles(owner: owner).map(\.id).sorted()
            groups = scheduler.groupKeys(owner: owner).filter { groupSources[$0] != .config }.sorted()
        }
        guard !items.isEmpty || !groups.isEmpty else { return 0 }
        let now = clock.now()
        let count = try await persisted { try $0.cancelAll(items: items, groups: groups, now: now) }
        // What was removed meanwhile is not there to cancel; the scheduler ignores it.
        for id in items { perform(scheduler.cancel(id, now: clock.now()).step) }
        var ended = Set(items)
        for key in groups {
            groupSources.removeValue(forKey: key)
            forgetAuthorization(ofRemoved: key)
            if let removed = scheduler.removeGroup(key, now: clock.now()) {
                ended.formUnion(removed.removed)
                perform(removed.step)
            }
        }
        endEscalations(of: ended, because: "its item was cancelled")
        let who = owner.isEmpty ? "the user" : owner
        logger.info("cancelled all of \(who)'s items: \(count) items, \(groups.count) groups removed")
        return count
    }

    /// Cancels a pending item; false when there is none with that id.
    public func cancel(_ id: UInt64) async throws -> Bool {
        let now = clock.now()
        guard scheduler.contains(id), try await persisted({ try $0.cancel(id, now: now) }) else { return false }
        perform(scheduler.cancel(id, now: clock.now()).step)
        endEscalations(of: [id], because: "its item was cancelled")
        return true
    }
}

/// The states that steps on their way through the store gave items (`perform`): their store jobs read and
/// write them in order, and the daemon clears them when none is on its way any more.
final class ResolvedStates: Sendable {
    private let states = Mutex<[UInt64: EntryState]>([:])

    var current: [UInt64: EntryState] { states.withLock { $0 } }

    func merge(_ new: [UInt64: EntryState]) {
        guard !new.isEmpty else { return }
        states.withLock { $0.merge(new) { _, newer in newer } }
    }

    func clear() { states.withLock { $0 = [:] } }
}
