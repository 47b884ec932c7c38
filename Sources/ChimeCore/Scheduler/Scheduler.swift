import Foundation
import HeapModule

/// The scheduler's pure state machine: one min-heap of (deadline, sequence, item) with one trigger per
/// timeline entry, however often it repeats.
///
/// It never reads the clock: every mutating method takes `now` and returns a `SchedulerStep` saying what
/// the daemon must store, deliver and arm. Cancellation is lazy: a cancelled or replaced trigger stays in
/// the heap until it reaches the top, where it is dropped, so no operation scans the heap.
///
/// When an entry fires, its next occurrence is computed and pushed back. Occurrences that passed while
/// nobody stepped the scheduler (chimed was not running, the machine slept, the clock jumped forward)
/// are handled by the group's `MissedPolicy`.
public struct Scheduler: Sendable {
    struct Trigger: Comparable, Sendable {
        enum Kind: Sendable {
            /// The item's next occurrence.
            case fire
            /// The item's end date comes before its next occurrence.
            case end
        }

        var date: Date
        /// The sequence in the low 63 bits, the kind in the top one: 24 bytes a trigger instead of 32.
        private var sequenceAndKind: UInt64
        var itemID: UInt64

        init(date: Date, sequence: UInt64, itemID: UInt64, kind: Kind) {
            precondition(sequence < 1 << 63, "trigger sequences run out after 2^63")
            self.date = date
            self.sequenceAndKind = sequence | (kind == .end ? 1 << 63 : 0)
            self.itemID = itemID
        }

        /// Breaks ties so that items due together come out in the order they were scheduled.
        var sequence: UInt64 { sequenceAndKind & ~(1 << 63) }
        var kind: Kind { sequenceAndKind >> 63 == 1 ? .end : .fire }

        static func < (a: Trigger, b: Trigger) -> Bool { (a.date, a.sequence) < (b.date, b.sequence) }
        static func == (a: Trigger, b: Trigger) -> Bool { a.sequence == b.sequence }
    }

    struct PopupTrigger: Comparable, Sendable {
        var popup: ShownPopup
        static func < (a: PopupTrigger, b: PopupTrigger) -> Bool {
            (a.popup.until, a.popup.notificationID) < (b.popup.until, b.popup.notificationID)
        }
    }

    struct GroupRecord: Sendable {
        var settings: GroupSettings
        /// Its items, live and retired, by id. (Entry ids are looked up only when the group is
        /// rescheduled: keeping them here cost every item of every group a hashed string at start.)
        var items: Set<UInt64> = []
    }

    /// An occurrence later than this after its due time counts as missed (the timer itself is late by
    /// milliseconds; this covers a busy machine without calling it downtime).
    public static let missedAfter: TimeInterval = 30
    /// The work all the new rules of one reschedule may take to be checked, in ``SearchBudget`` steps:
    /// 20,000,000 (under a second in a release build), room for 100,000 ordinary rules.
    public static let rescheduleCheckSteps = 200 * SearchBudget.stepsPerSearch
    /// Missed occurrences of one item are counted up to this many, then the count is a lower bound.
    public static let missedCountLimit = 100_000

    private var heap = Heap<Trigger>()
    /// Pending items.
    private(set) var items = ItemTable()
    /// Group items that are finished, or whose group is disabled: kept so a reschedule keeps their state.
    private(set) var retired = ItemTable()
    private var groups: [GroupKey: GroupRecord] = [:]
    /// The ids of each owner's groups, so that one app's groups are found without looking at the others'.
    private var groupIDsByOwner: [String: Set<String>] = [:]
    private var popups = Heap<PopupTrigger>()
    private var livePopups: [UInt32: ShownPopup] = [:]
    private var nextSequence: UInt64 = 0
    private var nextID: UInt64 = 1

    /// The zone floating rules follow; the daemon sets it from the system (and again when it changes).
    public private(set) var systemTimeZone = Zone.utc
    /// The missed-trigger policy of items on their own and of groups that set none.
    public var defaultMissedPolicy = MissedPolicy.default
    /// When chimed could not deliver (the machine off or asleep, chimed not running): tells a missed
    /// occurrence's cause, which picks the group's policy for it.
    public var downtime = Downtime()
    /// The times phrases' parts of the day mean (chime.toml's `[phrases]`), for rules scheduled from now on.
    public var phraseDefaults = PhraseDefaults.standard
    /// Whether items are kept without their definitions' encodings, because the store holds them: the
    /// daemon then reads an entry from its item's row, and `planReschedule` gets old entries from its
    /// `storedEntry`. Set before any item is added; every item given to the scheduler must be stored by
    /// then.
    public var definitionsInStore = false {
        didSet {
            items.releasesDefinitions = definitionsInStore
            retired.releasesDefinitions = definitionsInStore
        }
    }

    public init(systemTimeZone: Zone = Zone.utc) {
        self.systemTimeZone = systemTimeZone
    }

    // MARK: - Reading

    /// The pending items, soonest first.
    public var pending: [ScheduledItem] {
        items.values.sorted { ($0.fireDate, $0.id) < ($1.fireDate, $1.id) }
    }

    /// How many items are pending.
    public var count: Int { items.count }

    /// How many items an owner has, pending and retired.
    public func count(owner: String) -> Int {
        items.count(owner: owner) + retired.count(owner: owner)
    }

    /// The bytes the items of app `owner` take in the store, pending and retired (`ScheduledItem.storedBytes`),
    /// kept as items come and go.
    public func bytes(owner: String) -> Int {
        items.bytes(owner: owner) + retired.bytes(owner: owner)
    }

    /// Whether `id` is pending.
    public func contains(_ id: UInt64) -> Bool { items[id] != nil }

    /// A pending or retired item.
    public func item(_ id: UInt64) -> ScheduledItem? { items[id] ?? retired[id] }

    /// The groups, with their settings.
    public var groupSettings: [GroupKey: GroupSettings] { groups.mapValues(\.settings) }

    /// How many groups there are.
    public var groupCount: Int { groups.count }

    /// The settings of group `key`; nil when there is no such group.
    public func settings(of key: GroupKey) -> GroupSettings? { groups[key]?.settings }

    /// The ids of `owner`'s groups.
    public func groupKeys(owner: String) -> [GroupKey] {
        (groupIDsByOwner[owner] ?? []).map { GroupKey(owner: owner, id: $0) }
    }

    /// How many groups `owner` has.
    public func groupCount(owner: String) -> Int { groupIDsByOwner[owner]?.count ?? 0 }

    /// The owners of groups, the user ("") among them.
    public var groupOwners: Set<String> { Set(groupIDsByOwner.keys) }

    /// How many items `owner` has pending.
    public func pendingCount(owner: String) -> Int { items.count(owner: owner) }

    /// The owners with items pending, the user ("") among them.
    public var pendingOwners: Set<String> { items.owners }

    /// The pending items, in no order: a look at each, without sorting them.
    public var pendingUnordered: some Sequence<ScheduledItem> { items.values }

    /// `owner`'s pending items that belong to no group (on their own, snoozes), found through the owner's
    /// own index.
    public func singles(owner: String) -> [ScheduledItem] { items.singles(owner: owner) }

    /// The groups of `owner`, with their settings: found through the owner's own index.
    public func groupSettings(owner: String) -> [GroupKey: GroupSettings] {
        var result: [GroupKey: GroupSettings] = [:]
        for id in groupIDsByOwner[owner] ?? [] {
            let key = GroupKey(owner: owner, id: id)
            if let record = groups[key] { result[key] = record.settings }
        }
        return result
    }

    /// How many owners have items pending, the user (owner "") left out.
    public var ownersWithPendingItems: Int { items.owners.subtracting([""]).count }

    /// Sets a group's record, keeping `groupIDsByOwner` in step.
    private mutating func setGroup(_ key: GroupKey, _ record: GroupRecord) {
        if groups.updateValue(record, forKey: key) == nil { groupIDsByOwner[key.owner, default: []].insert(key.id) }
    }

    /// Removes a group's record, keeping `groupIDsByOwner` in step.
    private mutating func removeGroupRecord(_ key: GroupKey) -> GroupRecord? {
        guard let record = groups.removeValue(forKey: key) else { return nil }
        groupIDsByOwner[key.owner]?.remove(key.id)
        if groupIDsByOwner[key.owner]?.isEmpty == true { groupIDsByOwner.removeValue(forKey: key.owner) }
        return record
    }

    /// The items of a group, pending and retired, in no particular order.
    public func items(of key: GroupKey) -> [ScheduledItem] {
        groups[key]?.items.compactMap { item($0) } ?? []
    }

    /// How many pending items ask to wake the machine (`TimelineEntry.wake`).
    public var wakeItemCount: Int { items.wakeIDs.count }

    /// Changes whenever a pending item that asks to wake the machine is added, moves on or goes: the
    /// earliest wake (`earliestWake(after:)`) needs looking for again only then, or when it has passed.
    public var wakeGeneration: UInt64 { items.wakeGeneration }

    /// The earliest next occurrence after `now` of the pending items that ask to wake the machine; nil
    /// when there is none. Only those items are looked at.
    public func earliestWake(after now: Date) -> Date? {
        var earliest: Date?
        for id in items.wakeIDs {
            guard let date = items[id]?.fireDate, date > now else { continue }
            if earliest.map({ date < $0 }) ?? true { earliest = date }
        }
        return earliest
    }

    /// The earliest live deadline: a trigger or a popup to close.
    public var nextDeadline: Date? {
        mutating get {
            dropStale()
            return [heap.min?.date, popups.min?.popup.until].compactMap { $0 }.min()
        }
    }

    /// The pending items whose next occurrence is due at `date`, the next deadline, in the order they will
    /// come out of `step`: what the daemon prepares before they come due. Nil when more than `limit` are,
    /// or when `date` is not the earliest trigger. Nothing changes (the triggers looked at are put back).
    public mutating func items(dueAt date: Date, limit: Int) -> [ScheduledItem]? {
        var looked: [Trigger] = []
        var found: [ScheduledItem]? = []
        while let top = heap.min, top.date <= date {
            heap.removeMin()
            // A stale trigger is dropped, as `step` would drop it.
            guard items.sequence(of: top.itemID) == top.sequence, let item = items[top.itemID] else { continue }
            looked.append(top)
            guard top.date == date, top.kind == .fire, looked.count <= limit else {
                found = nil
                break
            }
            found?.append(item)
        }
        for trigger in looked { heap.insert(trigger) }
        return found
    }

    // MARK: - Items on their own

    /// Takes the next item id, so the caller can make the item durable before it becomes active.
    public mutating func allocateID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Makes sure new ids are larger than `id` (ids are never reused).
    public mutating func reserveIDs(through id: UInt64) {
        nextID = max(nextID, id + 1)
    }

    /// Adds an item (with an id from `allocateID`); what is due already comes out in the step.
    public mutating func add(_ item: ScheduledItem, now: Date) -> SchedulerStep {
        nextID = max(nextID, item.id + 1)
        if let key = item.groupKey {
            if groups[key] == nil { setGroup(key, GroupRecord(settings: GroupSettings())) }
            groups[key]!.items.insert(item.id)
        }
        place(item, now: now)
        return step(now: now)
    }

    /// Puts back stored state at start: groups with their settings, pending and retired items. Then steps
    /// once, so what came due while chimed was not running is handled by the missed-trigger policy.
    public mutating func restore(
        groups storedGroups: [GroupKey: GroupSettings], items storedItems: [ScheduledItem], now: Date
    ) -> SchedulerStep {
        for (key, settings) in storedGroups { setGroup(key, GroupRecord(settings: settings)) }
        items.reserveCapacity(items.count + storedItems.count)
        // The triggers of the items put back, for one heap built from them all at once (linear), instead of
        // an insertion per item.
        var restored: [Trigger] = []
        restored.reserveCapacity(storedItems.count)
        // A group's items come one after the other (they are stored together): the group is looked up
        // once per run of its items, not once per item.
        var run: (key: GroupKey, enabled: Bool, ids: [UInt64])?
        func endRun() {
            guard let (key, _, ids) = run else { return }
            if groups[key] == nil { setGroup(key, GroupRecord(settings: GroupSettings())) }
            groups[key]!.items.formUnion(ids)
            run = nil
        }
        for item in storedItems {
            nextID = max(nextID, item.id + 1)
            var enabled = true
            if let groupID = item.groupID {
                if run?.key.id != groupID || run?.key.owner != item.owner {
                    endRun()
                    let key = GroupKey(owner: item.owner, id: groupID)
                    run = (key, groups[key]?.settings.enabled ?? true, [])
                }
                run!.ids.append(item.id)
                enabled = run!.enabled
            }
            if item.finished != nil || !enabled {
                retired[item.id] = item
            } else {
                let sequence = nextSequence
                nextSequence += 1
                items.add(item, sequence: sequence)
                restored.append(trigger(of: item, sequence: sequence))
            }
        }
        items.finishAdding()
        endRun()
        // Built in place from the triggers when nothing was pending before (a start), not from a copy.
        heap = heap.isEmpty ? Heap(consume restored) : Heap(heap.unordered + restored)
        return step(now: now)
    }

    /// Removes a pending item; returns it (nil when it is not pending) with the step to perform.
    public mutating func cancel(_ id: UInt64, now: Date) -> (item: ScheduledItem?, step: SchedulerStep) {
        guard let item = items.removeValue(forKey: id) else { return (nil, step(now: now)) }
        if let key = item.groupKey { groups[key]?.items.remove(item.id) }
        return (item, step(now: now))
    }

    /// Ends a pending item's repeats (Stop Repeat): it is finished as `stopped`; nil when it is not pending.
    public mutating func stop(_ id: UInt64, now: Date) -> SchedulerStep? {
        guard let item = items.removeValue(forKey: id) else { return nil }
        var result = step(now: now)
        finish(item, .stopped, into: &result)
        return result
    }

    /// Skips a pending item's next occurrence (Skip Next): it is counted, recorded as missed (skipped), and
    /// the item moves on to the one after; nil when it is not pending.
    public mutating func skipNext(_ id: UInt64, now: Date) -> SchedulerStep? {
        guard var item = items[id] else { return nil }
        let skipped = item.fireDate
        item.state.occurrences += 1
        item.state.lastFired = skipped
        var result = SchedulerStep()
        result.missed.append(MissedOccurrences(item: item, first: skipped, last: skipped, count: 1, handling: .skipped))
        items.removeValue(forKey: id)
        if let reason = advance(&item, after: max(now, skipped), now: now) {
            finish(item, reason, into: &result)
        } else {
            insert(item)
            result.updated.append(item)
        }
        let rest = step(now: now)
        result.due = rest.due
        result.missed += rest.missed
        result.updated += rest.updated
        result.finished += rest.finished
        result.closePopups = rest.closePopups
        result.deadline = rest.deadline
        return result
    }

    /// Takes a pool's place from `state` (after an item's content was resolved from its pool), leaving the
    /// rest of the item's state as it is now.
    public mutating func updatePool(of id: UInt64, from state: EntryState) {
        if items[id] != nil {
            items[id]!.state.takePool(from: state)
        } else if retired[id] != nil {
            retired[id]!.state.takePool(from: state)
        }
    }

    // MARK: - Popups with an end date

    /// Remembers a shown popup whose item ends at `until`, so the step at that moment closes it.
    public mutating func trackPopup(_ popup: ShownPopup) {
        livePopups[popup.notificationID] = popup
        popups.insert(PopupTrigger(popup: popup))
    }

    /// Whether a popup is waiting to be closed at its item's end date.
    public func isTracking(notificationID: UInt32) -> Bool { livePopups[notificationID] != nil }

    /// Forgets a popup the server closed.
    public mutating func popupClosed(notificationID: UInt32) {
        livePopups.removeValue(forKey: notificationID)
    }

    // MARK: - Time passes

    /// Delivers what is due at `now` and says when to wake next: call it when the timer fires, after the
    /// clock jumped, and after a resume from suspend.
    public mutating func step(now: Date) -> SchedulerStep {
        var result = SchedulerStep()
        while let top = heap.min {
            guard items.sequence(of: top.itemID) == top.sequence, let item = items[top.itemID] else {
                heap.removeMin()
                continue
            }
            guard top.date <= now else { break }
            heap.removeMin()
            items.removeValue(forKey: top.itemID)
            switch top.kind {
            case .end: finish(item, .ended, into: &result)
            case .fire: fire(item, now: now, into: &result)
            }
        }
        while let top = popups.min, top.popup.until <= now {
            popups.removeMin()
            if livePopups[top.popup.notificationID] == top.popup {
                livePopups.removeValue(forKey: top.popup.notificationID)
                result.closePopups.append(top.popup)
            }
        }
        result.deadline = nextDeadline
        return result
    }

    /// The system zone changed: floating rules follow it, so every repeating item's next occurrence is
    /// computed again (items pinned to a zone come out the same).
    public mutating func setSystemTimeZone(_ zone: Zone, now: Date) -> SchedulerStep {
        guard zone != systemTimeZone else { return step(now: now) }
        systemTimeZone = zone
        return recomputeRepeatingItems(now: now)
    }

    /// The zone rules changed (a tzdata upgrade, read again through `ZoneRulesStore.reload`): every
    /// repeating item's next occurrence is computed again under the new rules, floating or pinned.
    public mutating func zoneRulesChanged(now: Date) -> SchedulerStep {
        recomputeRepeatingItems(now: now)
    }

    private mutating func recomputeRepeatingItems(now: Date) -> SchedulerStep {
        var moved: [ScheduledItem] = []
        for var item in items.values where item.repeats {
            let before = item.fireDate
            guard advance(&item, after: max(now, item.state.lastFired ?? .distantPast), now: now) == nil,
                item.fireDate != before
            else { continue }
            moved.append(item)
        }
        for item in moved { insert(item) }
        var result = step(now: now)
        result.updated = moved + result.updated
        return result
    }

    private mutating func fire(_ item: ScheduledItem, now: Date, into result: inout SchedulerStep) {
        var item = item
        // Every occurrence up to now, within the end date and the count.
        let left = item.maximumOccurrences.map { $0 - item.state.occurrences } ?? Int.max
        var occurrences = [item.fireDate]
        var lowerBound = false
        var latest = item.fireDate
        var cursor = item.fireDate
        // The missed occurrences are counted within one search's budget; past it the count is a lower
        // bound, as past `missedCountLimit`.
        var budget = SearchBudget()
        while occurrences.count < left {
            let found: Date?
            do {
                found = try item.nextOccurrence(after: cursor, systemTimeZone: systemTimeZone, budget: &budget)
            } catch {
                lowerBound = true
                break
            }
            guard let next = found, next <= now, item.endDate.map({ next <= $0 }) ?? true else { break }
            guard occurrences.count < Self.missedCountLimit else {
                lowerBound = true
                break
            }
            occurrences.append(next)
            latest = next
            cursor = next
        }
        let count = occurrences.count
        item.state.occurrences += count
        item.state.lastFired = latest

        // Advance first, so the step carries the item as it will be stored.
        let finished = advance(&item, after: max(now, latest), now: now)

        let onTime = now.timeIntervalSince(latest) <= Self.missedAfter
        let cause = onTime ? nil : downtime.cause(of: latest)
        let policy =
            item.groupKey.flatMap { groups[$0]?.settings.missedPolicy(for: cause) } ?? defaultMissedPolicy
        var deliver: (date: Date, late: Bool)?
        var earlier: MissedOccurrences.Handling = .skipped
        var latestHandling: MissedOccurrences.Handling?
        if onTime {
            deliver = (latest, false)
        } else {
            switch policy {
            case .deliverLate(let window):
                if now.timeIntervalSince(latest) <= window {
                    deliver = (latest, true)
                } else {
                    earlier = .tooLate
                    latestHandling = .tooLate
                }
            case .coalesce:
                earlier = .coalesced
                latestHandling = .coalesced
            case .skip:
                latestHandling = .skipped
            }
        }
        let missedCount = deliver == nil ? count : count - 1
        if missedCount > 0 {
            let last = deliver == nil ? latest : (occurrences.count > 1 ? occurrences[occurrences.count - 2] : latest)
            result.missed.append(
                MissedOccurrences(
                    item: item, first: occurrences[0], last: last, count: missedCount,
                    countIsLowerBound: lowerBound, handling: latestHandling ?? earlier, cause: cause))
        }
        if let deliver, deliver.late, let cause {
            // History says why it came late.
            result.missed.append(
                MissedOccurrences(
                    item: item, first: deliver.date, last: deliver.date, count: 1, handling: .deliveredLate,
                    cause: cause))
        }
        if let deliver {
            result.due.append(
                DueOccurrence(item: item, occurrence: deliver.date, number: item.state.occurrences, late: deliver.late))
        }
        if let finished {
            finish(item, finished, into: &result)
        } else {
            place(item, now: now)
            result.updated.append(item)
        }
    }

    private mutating func finish(_ item: ScheduledItem, _ reason: FinishReason, into result: inout SchedulerStep) {
        var item = item
        item.finished = reason
        if item.groupKey != nil { retired[item.id] = item }
        result.finished.append(item)
    }

    /// Makes an item pending at its fire date, or at its end date when that comes first.
    private mutating func place(_ item: ScheduledItem, now: Date) {
        retired.removeValue(forKey: item.id)
        insert(item)
    }

    /// Makes an item pending.
    private mutating func insert(_ item: ScheduledItem) {
        items[item.id] = item
        let sequence = nextSequence
        nextSequence += 1
        items.setSequence(sequence, of: item.id)
        heap.insert(trigger(of: item, sequence: sequence))
    }

    /// The trigger of a pending item: its next occurrence, or its end date when that comes first.
    private func trigger(of item: ScheduledItem, sequence: UInt64) -> Trigger {
        let endsFirst = item.endDate.map { $0 < item.fireDate } ?? false
        return Trigger(
            date: endsFirst ? item.endDate! : item.fireDate, sequence: sequence, itemID: item.id,
            kind: endsFirst ? .end : .fire)
    }

    private mutating func dropStale() {
        while let top = heap.min, items.sequence(of: top.itemID) != top.sequence { heap.removeMin() }
        while let top = popups.min, livePopups[top.popup.notificationID] != top.popup { popups.removeMin() }
    }

    // MARK: - Groups

    /// Computes what replacing a group's timeline changes, without changing anything: the diff a dry run
    /// reports. Entries are matched by id; an entry whose trigger is unchanged keeps its next occurrence
    /// and its state. `storedEntry` reads an entry whose definition changed, to compare its trigger: it
    /// decodes the definition the item holds unless the store holds it (`definitionsInStore`).
    public func planReschedule(
        _ group: TimelineGroup, now: Date,
        storedEntry: (ScheduledItem) -> TimelineEntry? = { try? $0.definition.decode() }
    ) throws(TimelineError) -> ReschedulePlan {
        try group.validate()
        let key = GroupKey(owner: group.owner, id: group.id)
        let existing = entryIndex(of: key)
        var changes: [EntryChange] = []
        var upserts: [ScheduledItem] = []
        var removed: [UInt64] = []
        let enabled = group.settings.enabled
        // All the new rules of one plan are checked within one budget, so a caller's one call is bounded.
        var checks = SearchBudget(steps: Self.rescheduleCheckSteps)
        for entry in group.entries {
            let old = existing[entry.id].flatMap { item($0) }
            let before = old.flatMap { items[$0.id] }?.fireDate
            let definition = EntryDefinition(entry)
            // Equal encodings (or fingerprints, for a definition the store holds) are equal entries; others
            // are compared decoded.
            let oldEntry: TimelineEntry? = old.flatMap {
                $0.definition == definition ? entry : storedEntry($0)
            }
            if let old, oldEntry == entry {
                // Unchanged; a group that is enabled again puts its waiting entries back.
                let wasEnabled = groups[key]?.settings.enabled ?? true
                if enabled, !wasEnabled, old.finished == nil {
                    let revived = try revive(old, definition: definition, now: now)
                    upserts.append(revived)
                    changes.append(
                        EntryChange(entryID: entry.id, kind: .unchanged, before: nil, after: revived.fireDate))
                } else {
                    changes.append(
                        EntryChange(entryID: entry.id, kind: .unchanged, before: before, after: enabled ? before : nil))
                    if !enabled, before != nil { upserts.append(old) }
                }
                continue
            }
            var next: ScheduledItem
            if let old {
                next = old
                next.definition = definition
                if oldEntry?.trigger != entry.trigger {
                    next = try makeItem(
                        entry, key: key, id: old.id, now: now, definition: definition, checks: &checks)
                    next.state.poolPosition = old.state.poolPosition
                    next.state.poolBag = old.state.poolBag
                } else if old.finished != nil || items[old.id] == nil {
                    next = try revive(old, definition: definition, now: now)
                }
            } else {
                next = try makeItem(entry, key: key, id: 0, now: now, definition: definition, checks: &checks)
            }
            settle(&next, now: now)
            upserts.append(next)
            changes.append(
                EntryChange(
                    entryID: entry.id, kind: old == nil ? .added : .changed, before: before,
                    after: enabled && next.finished == nil ? next.fireDate : nil))
        }
        let kept = Set(group.entries.map(\.id))
        for (entryID, id) in existing.sorted(by: { $0.key < $1.key }) where !kept.contains(entryID) {
            removed.append(id)
            changes.append(EntryChange(entryID: entryID, kind: .removed, before: items[id]?.fireDate, after: nil))
        }
        return ReschedulePlan(group: group, changes: changes, upserts: upserts, removed: removed)
    }

    /// A scheduler that holds group `key`'s settings and items (pending and retired) and nothing else, with
    /// this one's zone, phrase times and missed-trigger policy: `planReschedule` plans on it what it would
    /// plan here, so the plan can be made elsewhere while this scheduler goes on. Costs a copy of the
    /// group's items.
    public func planningCopy(of key: GroupKey) -> Scheduler {
        var copy = Scheduler(systemTimeZone: systemTimeZone)
        copy.defaultMissedPolicy = defaultMissedPolicy
        copy.downtime = downtime
        copy.phraseDefaults = phraseDefaults
        copy.definitionsInStore = definitionsInStore
        copy.nextID = nextID
        guard let record = groups[key] else { return copy }
        copy.setGroup(key, record)
        for id in record.items {
            if let item = items[id] {
                copy.items[id] = item
            } else if let item = retired[id] {
                copy.retired[id] = item
            }
        }
        return copy
    }

    /// A group's items by entry id. Two items with one entry id (a database edited by hand) resolve to
    /// the later one.
    private func entryIndex(of key: GroupKey) -> [String: UInt64] {
        guard let record = groups[key] else { return [:] }
        return Dictionary(
            record.items.compactMap { id in item(id).map { ($0.entryID, id) } }, uniquingKeysWith: { max($0, $1) })
    }

    /// Gives the plan's new items their ids.
    public mutating func assignIDs(_ plan: inout ReschedulePlan) {
        for index in plan.upserts.indices where plan.upserts[index].id == 0 {
            plan.upserts[index].id = allocateID()
        }
    }

    /// Puts a planned timeline in place, in one step: the group's settings, its added and changed items,
    /// and the removal of the others.
    public mutating func apply(_ plan: ReschedulePlan, now: Date) -> SchedulerStep {
        let key = plan.key
        var record = groups[key] ?? GroupRecord(settings: plan.group.settings)
        record.settings = plan.group.settings
        for id in plan.removed {
            forget(id)
            record.items.remove(id)
        }
        for var item in plan.upserts {
            precondition(item.id != 0, "assignIDs(_:) gives new items their ids before apply")
            nextID = max(nextID, item.id + 1)
            // An occurrence may have fired while the plan was being stored: never fire it twice.
            if let current = items[item.id], let fired = current.state.lastFired,
                item.fireDate <= fired, item.repeats
            {
                item.state.occurrences = max(item.state.occurrences, current.state.occurrences)
                item.state.lastFired = fired
                item.finished = advance(&item, after: fired, now: now)
            }
            record.items.insert(item.id)
            forget(item.id)
            if item.finished != nil || !plan.group.settings.enabled {
                retired[item.id] = item
            } else {
                insert(item)
            }
        }
        if !plan.group.settings.enabled {
            for id in record.items {
                if let item = items.removeValue(forKey: id) {
                    retired[id] = item
                }
            }
        }
        setGroup(key, record)
        return step(now: now)
    }

    /// Removes a group and all its items; returns the ids of the items it had.
    public mutating func removeGroup(_ key: GroupKey, now: Date) -> (removed: [UInt64], step: SchedulerStep)? {
        guard let record = removeGroupRecord(key) else { return nil }
        let ids = record.items.sorted()
        for id in ids { forget(id) }
        return (ids, step(now: now))
    }

    private mutating func forget(_ id: UInt64) {
        items.removeValue(forKey: id)
        retired.removeValue(forKey: id)
    }

    /// The item an entry starts as: its rule parsed, its first occurrence after `now`. A rule that cannot
    /// be read or never fires is refused (`TimelineError.Kind.rule`).
    /// `definition` is the entry's, when the caller made it already.
    /// `checks` is the budget the rule's check takes its work from (all of a plan's share one).
    func makeItem(
        _ entry: TimelineEntry, key: GroupKey, id: UInt64, now: Date, definition: EntryDefinition? = nil,
        checks: inout SearchBudget
    ) throws(TimelineError) -> ScheduledItem {
        let definition = definition ?? EntryDefinition(entry)
        switch entry.trigger {
        case .at(let date):
            return ScheduledItem(
                id: id, owner: key.owner, groupID: key.id, definition: definition, storedRecurrence: nil,
                fireDate: date, state: EntryState(), finished: nil, snoozeOf: nil, replacesID: nil)
        case .rule(let rule, let zone):
            let recurrence: Recurrence
            do {
                recurrence = try Recurrence.parse(
                    rule, now: now, timeZone: zone.map { .named($0) } ?? .floating, systemTimeZone: systemTimeZone,
                    phraseDefaults: phraseDefaults
                ).shifted(by: entry.offset)
            } catch {
                throw TimelineError("entry \(entry.id): \(error.description)", kind: .rule)
            }
            var first: Date?
            do throws(RuleRefusal) {
                guard !checks.isExhausted else { throw RuleRefusal(.tooSparse, "") }
                first = try recurrence.admissionCheck(after: now, systemTimeZone: systemTimeZone, budget: &checks)
            } catch  where error.kind == .noOccurrenceAfter {
                // A rule that has ended (UNTIL in the past) is an entry that is done, not an error.
                first = nil
            } catch  where checks.isExhausted {
                throw TimelineError(
                    "entry \(entry.id): the group's rules take more than the \(Self.rescheduleCheckSteps) steps "
                        + "chimed gives one reschedule to check them; split the group, or write its sparsest rules "
                        + "with a coarser frequency",
                    kind: .rule)
            } catch {
                throw TimelineError("entry \(entry.id): \(error.description)", kind: .rule)
            }
            return ScheduledItem(
                id: id, owner: key.owner, groupID: key.id, definition: definition,
                storedRecurrence: StoredRecurrence(recurrence), fireDate: first ?? now, state: EntryState(),
                finished: first == nil ? .lastOccurrence : nil, snoozeOf: nil, replacesID: nil)
        }
    }

    /// An entry that was finished or waiting in a disabled group, pending again from `now` on.
    private func revive(_ old: ScheduledItem, definition: EntryDefinition, now: Date) throws(TimelineError)
        -> ScheduledItem
    {
        var item = old
        item.definition = definition
        item.finished = nil
        if !item.repeats {
            // A one-off that already fired stays done; one still to come keeps its time.
            if old.state.occurrences > 0 { item.finished = .lastOccurrence }
            return item
        }
        item.finished = advance(&item, after: max(now, old.state.lastFired ?? .distantPast), now: now)
        return item
    }

    /// Moves an item to its next occurrence after `after`; returns why it is done instead, if it is. An
    /// item whose next occurrence lies past its end date stays pending until the end date, when a step
    /// removes it.
    /// A rule whose next occurrence cannot be found within one search's budget is finished
    /// (`.searchExhausted`): chimed cannot follow it, and does not try again at every step.
    private func advance(_ item: inout ScheduledItem, after: Date, now: Date) -> FinishReason? {
        if let max = item.maximumOccurrences, item.state.occurrences >= max { return .countReached }
        var budget = SearchBudget()
        let found: Date?
        do {
            found = try item.nextOccurrence(after: after, systemTimeZone: systemTimeZone, budget: &budget)
        } catch {
            return .searchExhausted
        }
        guard let next = found else { return .lastOccurrence }
        if let end = item.endDate, next > end, end <= now { return .ended }
        item.fireDate = next
        return nil
    }

    /// Applies the end date and the count to an item about to be placed.
    private func settle(_ item: inout ScheduledItem, now: Date) {
        guard item.finished == nil else { return }
        if let max = item.maximumOccurrences, item.state.occurrences >= max {
            item.finished = .countReached
        } else if let end = item.endDate, end <= now {
            item.finished = .ended
        }
    }
}
