import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// Groups: a whole timeline replaced at once, over D-Bus or from the group files.
extension Daemon {
    /// Replaces a group's timeline, or only computes the change when `dryRun`. The reply comes after the
    /// new timeline is stored. With `quota`, the plan must keep that caller within its limits.
    public func reschedule(_ group: TimelineGroup, dryRun: Bool, source: GroupSource = .api, quota: Caller? = nil)
        async throws -> [EntryChange]
    {
        try await replaceTimeline(
            of: GroupKey(owner: group.owner, id: group.id), source: source, dryRun: dryRun,
            timeline: { _, _ in group }, check: { plan in if let quota { try self.checkQuota(quota, plan: plan) } })
    }

    /// Replaces the timeline of group `key` with the one `timeline` makes; `prepare` may adjust the planned
    /// items before new ones get their ids, and `check` may refuse the plan (an app's limits). A group from
    /// a file in the groups folder is changed only through its file.
    ///
    /// The plan is the caller's work, done off the daemon's queue: the daemon hands out a copy of the
    /// group (`Scheduler.planningCopy`), and `timeline` and `Scheduler.planReschedule` run on one of the
    /// store's reader connections with it, reading the stored definitions they need there. Back on the
    /// daemon's queue, the plan's new items get their ids and it is stored; while it is stored other calls
    /// and steps go on, and the scheduler applies the plan to what it has then (`Scheduler.apply` keeps
    /// what changed meanwhile). One group is replaced by one call at a time.
    func replaceTimeline(
        of key: GroupKey, source: GroupSource, dryRun: Bool = false,
        timeline: @escaping @Sendable (Scheduler, EntryReader) throws -> TimelineGroup,
        prepare: (inout ReschedulePlan) -> Void = { _ in }, check: (ReschedulePlan) throws -> Void = { _ in }
    ) async throws -> [EntryChange] {
        if source == .api, groupSources[key] == .config {
            throw DBusError(
                name: ChimeBus.ErrorName.conflict,
                message: "the group \(key) comes from its file in the groups folder; edit that file "
                    + "(chimed reloads it), or give this group another id")
        }
        await takeTurn(key)
        defer { endTurn(key) }
        let local = scheduler.planningCopy(of: key)
        let planned = clock.now()
        var plan: ReschedulePlan
        do {
            let store = self.store
            plan = try await callerWork.run {
                try store.readEntries { reader in
                    let group = try timeline(local, reader)
                    return try local.planReschedule(group, now: planned) { item in
                        (try? reader.entries(of: [item.id]))?[item.id]
                    }
                }
            }
        } catch let error as TimelineError {
            let name = error.kind == .rule ? ChimeBus.ErrorName.invalidRule : ChimeBus.ErrorName.invalidArgument
            throw DBusError(name: name, message: "group \(key): \(error)")
        }
        // After the await: what the group is now decides whether anything changes.
        prepare(&plan)
        if dryRun { return plan.changes }
        try check(plan)
        let unchanged =
            groupSources[key] == source && plan.upserts.isEmpty && plan.removed.isEmpty
            && scheduler.settings(of: key) == plan.group.settings
        if unchanged { return plan.changes }
        scheduler.assignIDs(&plan)
        // A new group counts towards its app's groups while it is stored (`checkGroupCount`).
        let isNew = scheduler.settings(of: key) == nil
        if isNew { groupsBeingMade[key.owner, default: []].insert(key.id) }
        defer {
            if isNew {
                groupsBeingMade[key.owner]?.remove(key.id)
                if groupsBeingMade[key.owner]?.isEmpty == true { groupsBeingMade[key.owner] = nil }
            }
        }
        let now = clock.now()
        let stored = plan
        do {
            try await persisted { try $0.replaceGroup(stored, source: source, now: now) }
        } catch {
            logger.error("cannot store group \(key): \(error)")
            throw DBusError(
                name: ChimeBus.ErrorName.storage,
                message: "chimed could not save group \(key): \(error); nothing changed")
        }
        groupSources[key] = source
        let counts = Dictionary(grouping: plan.changes, by: { $0.kind }).mapValues { $0.count }
        logger.info(
            """
            rescheduled group \(key): \(counts[.added] ?? 0) added, \(counts[.changed] ?? 0) changed, \
            \(counts[.removed] ?? 0) removed, \(counts[.unchanged] ?? 0) unchanged
            """)
        perform(scheduler.apply(plan, now: clock.now()))
        endEscalations(of: Set(plan.removed), because: "its entry was removed from the group")
        return plan.changes
    }

    /// Waits until no other call is replacing group `key`'s timeline, then holds it (`endTurn` lets the next
    /// one go, in the order they came): two calls planning one group at once would both add its new entries.
    func takeTurn(_ key: GroupKey) async {
        guard groupTurns[key] != nil else {
            groupTurns[key] = []
            return
        }
        await withCheckedContinuation { groupTurns[key, default: []].append($0) }
    }

    func endTurn(_ key: GroupKey) {
        guard var waiting = groupTurns[key], !waiting.isEmpty else {
            groupTurns[key] = nil
            return
        }
        let next = waiting.removeFirst()
        groupTurns[key] = waiting
        next.resume()
    }

    /// Removes a group and everything it has pending, and forgets its authorization unless that is the
    /// user's "no" (`goesWithItsGroup`); false when there was neither a group nor such an authorization.
    public func removeGroup(_ key: GroupKey, source: GroupSource = .api) async throws -> Bool {
        if source == .api, groupSources[key] == .config {
            throw DBusError(
                name: ChimeBus.ErrorName.conflict,
                message: "the group \(key) comes from its file in the groups folder; delete or move that file")
        }
        // A group only decided about (a permission asked ahead, an app's switch): its decision is forgotten.
        guard scheduler.settings(of: key) != nil else { return try await forgetAuthorization(of: key) }
        let now = clock.now()
        guard try await persisted({ try $0.removeGroup(key, now: now) }) else { return false }
        // The group may be gone meanwhile (another call removed it first): then there is nothing to remove.
        groupSources.removeValue(forKey: key)
        forgetAuthorization(ofRemoved: key)
        if let removed = scheduler.removeGroup(key, now: clock.now()) {
            logger.info("removed group \(key) and its \(removed.removed.count) entries")
            perform(removed.step)
            endEscalations(of: Set(removed.removed), because: "its group was removed")
        }
        return true
    }

    /// Loads every group file: a new or changed file replaces its group, a deleted file removes it, and a
    /// broken file is reported with file, line and reason while the group it defined keeps running.
    func loadGroupFiles() async {
        guard let directory = configuration.groupsDirectory else { return }
        let (now, zone) = (clock.now(), scheduler.systemTimeZone)
        // Read and parsed off the daemon's queue.
        let results = await Self.loadGroupFiles(in: directory, now: now, timeZone: zone)
        var present = Set<GroupKey>()
        var fileCategories = configCategories
        fileCategories = fileCategories.filter { file, _ in results.contains { $0.file == file } }
        for (file, result) in results {
            let id = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
            present.insert(GroupKey(owner: "", id: id))
            switch result {
            case .failure(let error):
                let running = groupSources[GroupKey(owner: "", id: id)] != nil
                logger.error(
                    "\(error)\(running ? "; group \(id) keeps running as it was" : "; group \(id) not loaded")")
            case .success(var group):
                fileCategories[file] = group.categories
                let key = GroupKey(owner: group.owner, id: group.id)
                // The user's switch (`chime group disable`) is kept over the file's edits: the group runs when
                // its file does not say `enabled = false` and the user has not turned it off.
                if interaction.groupAuthorizations[key] == .denied { group.settings.enabled = false }
                if groupSources[key] == .api {
                    logger.error(
                        """
                        \(file): group \(key) was scheduled over D-Bus already; remove it (chime remove \(key)) \
                        or rename the file
                        """)
                    continue
                }
                do {
                    _ = try await reschedule(group, dryRun: false, source: .config)
                } catch {
                    logger.error("\(file): \(error)")
                }
            }
        }
        // The user's categories are those the group files declare (a broken file keeps its last good ones).
        let declared = fileCategories.sorted { $0.key < $1.key }.flatMap(\.value)
        let changed = (categories[""] ?? []) != declared
        configCategories = fileCategories
        if changed {
            do {
                try await setCategories(declared, owner: "")
            } catch {
                logger.error("cannot store the categories of the group files: \(error)")
            }
        }
        let gone = groupSources.filter { $0.value == .config && !present.contains($0.key) }.map(\.key)
        for key in gone {
            logger.info("the file of group \(key) is gone; removing the group")
            _ = try? await removeGroup(key, source: .config)
        }
    }
}

extension Daemon {
    /// Reads and parses the group files of `directory`, off the daemon's queue.
    static func loadGroupFiles(in directory: String, now: Date, timeZone: Zone) async
        -> [(file: String, result: Result<TimelineGroup, ConfigError>)]
    {
        GroupFile.loadDirectory(directory, now: now, timeZone: timeZone)
    }
}
