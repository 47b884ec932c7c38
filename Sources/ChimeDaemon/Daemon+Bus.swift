import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// The `io.chime.Chime1` object: every method checks its arguments and answers bad input with an error
/// that names the key and says what to change. Every call is made by a `Caller`: an app sees and
/// changes only its own items and groups; the `chime` command, the user's own tool, all of them.
extension Daemon {
    static let records = DBusType.array(WireRecord.type)

    /// A method of the object. `body` runs off the daemon's queue, where the arguments are decoded and
    /// checked; it reaches the daemon's state with `await`, and what it read there may have changed by
    /// its next `await`.
    private nonisolated func method(
        _ name: String, _ inputs: [DBusArgument] = [], _ outputs: [DBusArgument] = [],
        maximumBytes: Int = ChimeBus.maximumCallBytes, streaming: Int? = nil,
        _ body: @escaping @Sendable (Caller, [DBusValue], DBusMethodCall) async throws -> [DBusValue]
    ) -> DBusMethod {
        DBusMethod(
            name, inputs: inputs, outputs: outputs, maximumArgumentBytes: maximumBytes, streamedArgument: streaming
        ) { [unowned self] call in
            let caller = try await self.admit(call)
            do {
                return try await body(caller, call.arguments, call)
            } catch let error as StoreError {
                // Every transaction is all or nothing: a failed one left the state as it was.
                self.logger.error("\(name) failed: \(error.message)")
                throw DBusError(name: ChimeBus.ErrorName.storage, message: "\(error.message); nothing changed")
            }
        }
    }

    private nonisolated func record(_ name: String) -> DBusArgument { DBusArgument(name, WireRecord.type) }
    private nonisolated func records(_ name: String) -> DBusArgument { DBusArgument(name, Self.records) }

    nonisolated func makeInterface() -> DBusInterface {
        DBusInterface(
            ChimeBus.interface,
            methods: [
                method(
                    "Schedule", [record("content"), record("trigger")], [DBusArgument("item_id", .uint64)],
                    maximumBytes: ChimeBus.maximumScheduleBytes
                ) {
                    caller, arguments, _ in
                    let content = try ContentWire.decode(arguments[0])
                    let trigger = try TriggerWire.decode(arguments[1])
                    return [.uint64(try await self.schedule(content, trigger: trigger, caller: caller))]
                },
                method("Cancel", [DBusArgument("item_id", .uint64)]) { caller, arguments, _ in
                    let id = try Self.itemID(arguments[0], key: "item_id")
                    try await self.checkOwner(caller, itemID: id)
                    guard try await self.cancel(id) else { throw Self.noPendingItem(id) }
                    return []
                },
                method("CancelAll", [record("options")], [DBusArgument("removed", .uint32)]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: ["group"])
                    var group: GroupKey?
                    if let text = try options.string("group") { group = try await self.groupKey(text, caller: caller) }
                    if let group, !caller.owns(group.owner) {
                        throw DBusError(
                            name: ChimeBus.ErrorName.permissionDenied, message: "group \(group.id) is another app's")
                    }
                    let removed = try await self.cancelAll(owner: group?.owner ?? caller.appID, group: group)
                    return [.uint32(UInt32(clamping: removed))]
                },
                method(
                    "Snooze", [DBusArgument("item_id", .uint64), DBusArgument("seconds", .uint32)],
                    [DBusArgument("snooze_id", .uint64)]
                ) { caller, arguments, _ in
                    let id = try Self.itemID(arguments[0], key: "item_id")
                    let seconds = try arguments[1].decode(UInt32.self)
                    guard seconds > 0, seconds <= 366 * 86_400 else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument, message: "seconds must be 1 to a year (31622400)")
                    }
                    return [.uint64(try await self.snooze(itemID: id, seconds: TimeInterval(seconds), caller: caller))]
                },
                method("ListPending", [record("options")], [records("items")]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: ["next", "group", "content", "until", "after"])
                    var listing = PendingListing()
                    listing.until = try options.date("until")
                    listing.next = Int(try options.uint32("next") ?? 1)
                    let most = listing.until == nil ? 100 : Self.maximumOccurrencesUntil
                    guard (1...most).contains(listing.next) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message:
                                "options key \"next\" must be 1 to \(most)\(listing.until == nil ? " (with until: 1 to \(Self.maximumOccurrencesUntil))" : "")"
                        )
                    }
                    listing.group = try options.string("group").map { (text) throws(DBusError) in
                        try Self.groupID(text)
                    }
                    listing.content = try options.bool("content") ?? false
                    listing.after = try options.string("after").map { (text) throws(DBusError) in
                        try Self.pendingCursor(text)
                    }
                    return [.array(element: WireRecord.type, try await self.listPending(listing, caller: caller))]
                },
                method(
                    "Reschedule",
                    [DBusArgument("group", .string), record("settings"), records("entries"), record("options")],
                    [records("changes")], maximumBytes: ChimeBus.maximumRescheduleBytes, streaming: 2
                ) { caller, arguments, call in
                    let id = try Self.groupID(try arguments[0].decode(String.self))
                    let settings = try GroupSettingsWire.decode(arguments[1])
                    let options = try WireFields(arguments[3], what: "options")
                    try options.refuseUnknown(known: PermissionWire.keys.union(["dry-run"]))
                    let strategy = try PermissionWire.strategy(options) ?? .askSystemPermissionIfNeeded
                    let now = self.clock.now()
                    // The caller's work (up to 32 MiB decoded and checked) on `callerWork`; one entry decoded at
                    // a time, so that a large group never exists as D-Bus values all at once.
                    let group = try await self.callerWork.run {
                        var entries: [TimelineEntry] = []
                        try call.forEachElement { (value) throws(DBusError) in
                            guard entries.count < TimelineGroup.maximumEntries else {
                                throw DBusError(
                                    name: ChimeBus.ErrorName.invalidArgument,
                                    message: "more than the \(TimelineGroup.maximumEntries) entries a group may have")
                            }
                            entries.append(try EntryWire.decode(value, index: entries.count, now: now))
                        }
                        try Self.refuseCommands(in: entries)
                        try Self.checkCallbacks(in: entries, caller: caller)
                        try Self.checkOwnNames(in: entries, caller: caller)
                        let group = TimelineGroup(id: id, owner: caller.appID, settings: settings, entries: entries)
                        do {
                            try group.validate()
                        } catch {
                            throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: "\(error)")
                        }
                        return group
                    }
                    let entries = group.entries
                    try await self.checkEnds(of: entries, in: GroupKey(owner: caller.appID, id: id), now: now)
                    let dryRun = try options.bool("dry-run") ?? false
                    if !dryRun { try await self.checkPermission(strategy, caller: caller, group: id) }
                    let changes = try await self.reschedule(group, dryRun: dryRun, quota: caller)
                    // Stored by now: the reply, however many entries changed, must not fail for its size.
                    return [
                        .array(
                            element: WireRecord.type,
                            ChangeWire.encodeReply(changes, budget: ChimeBus.maximumReplyBytes - ListingPage.reserve))
                    ]
                },
                method("RemoveGroup", [DBusArgument("group", .string)]) { caller, arguments, _ in
                    let key = try await self.groupKey(try arguments[0].decode(String.self), caller: caller)
                    guard try await self.removeGroup(key) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.notFound,
                            message: "no group \(key); list them with `chime groups`")
                    }
                    return []
                },
                // The first page of ListGroupsPaged, for callers from before it: when groups are left, the
                // last record is {next-page: CURSOR}, for ListGroupsPaged's `after`.
                method("ListGroups", [], [records("groups")]) { caller, _, _ in
                    [.array(element: WireRecord.type, try await self.listGroups(after: nil, caller: caller))]
                },
                method("ListGroupsPaged", [record("options")], [records("groups")]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: ["after"])
                    let after = try options.string("after").map { (text) throws(DBusError) in
                        try Self.groupCursor(text)
                    }
                    return [.array(element: WireRecord.type, try await self.listGroups(after: after, caller: caller))]
                },
                method("History", [record("options")], [records("entries")]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: ["limit", "group", "item", "since", "after"])
                    let limit = Int(try options.uint32("limit") ?? 100)
                    guard (1...ScheduleStore.historyLimit).contains(limit) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message: "options key \"limit\" must be 1 to \(ScheduleStore.historyLimit)")
                    }
                    var group: GroupKey?
                    if let text = try options.string("group") { group = try await self.groupKey(text, caller: caller) }
                    let query = HistoryQuery(
                        limit: limit, owner: caller.isUser ? nil : caller.appID, group: group,
                        itemID: try options.uint64("item").map { (id) throws(DBusError) in
                            try Self.itemID(.uint64(id), key: "item")
                        },
                        since: try options.date("since"),
                        before: try options.string("after").map { (text) throws(DBusError) in
                            try Self.historyCursor(text)
                        })
                    return [.array(element: WireRecord.type, try await self.listHistory(query, caller: caller))]
                },
                method("ListDelivered", [record("options")], [records("notifications")]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: [])
                    // The newest that fit in one reply.
                    var page = ListingPage(marksCut: false)
                    for notification in await self.deliveredNotifications(owner: caller.appID) {
                        guard page.add(notification.encoded.value, cursor: "") else { break }
                    }
                    return [.array(element: WireRecord.type, page.records)]
                },
                method("CloseDelivered", [record("options")]) { caller, arguments, _ in
                    let options = try WireFields(arguments[0], what: "options")
                    try options.refuseUnknown(known: ["notifications", "all"])
                    let all = try options.bool("all") ?? false
                    var ids: [UInt32]?
                    if case .array(_, let values)? = try options.value("notifications", .array(.uint32)) {
                        guard values.count <= Self.maximumClosedAtOnce else {
                            throw DBusError(
                                name: ChimeBus.ErrorName.invalidArgument,
                                message: "options key \"notifications\" has \(values.count) ids, more than the "
                                    + "\(Self.maximumClosedAtOnce) allowed")
                        }
                        ids = values.compactMap { if case .uint32(let id) = $0 { id } else { nil } }
                    }
                    guard all != (ids != nil) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message: "options: give either \"notifications\" (au) or \"all\" (true)")
                    }
                    try await self.closeDelivered(ids, owner: caller.appID)
                    return []
                },
                method("RegisterCategories", [records("categories")], maximumBytes: ChimeBus.maximumCategoriesBytes) {
                    caller, arguments, _ in
                    guard case .array(_, let values) = arguments[0] else { return [] }
                    guard values.count <= 100 else {
                        throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: "at most 100 categories")
                    }
                    var list: [ActionCategory] = []
                    for (index, value) in values.enumerated() {
                        list.append(try CategoryWire.decode(value, index: index))
                    }
                    if let action = list.lazy.flatMap(\.actions).first(where: { $0.command != nil }) {
                        throw DBusError(
                            name: ChimeBus.ErrorName.permissionDenied,
                            message: "action \(action.id) has a command: \(Self.commandsComeFromFiles)")
                    }
                    guard Set(list.map(\.id)).count == list.count else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument, message: "a category id appears twice")
                    }
                    try await self.setCategories(list, owner: caller.appID)
                    return []
                },
                method("TakeActions", [], [records("actions")]) { caller, _, _ in
                    let owner = caller.appID
                    // As many as fit in one reply; when more wait, the last record is {next-page: ""}: call again.
                    let (actions, more) = try await self.takeActions(owner: owner)
                    var records = actions.map { action in
                        var r = WireRecord()
                        r.set("item", .uint64(action.itemID))
                        r.set("group", action.group)
                        r.set("entry", action.entryID)
                        r.set("action", action.key)
                        r.set("user-info", UserInfoWire.encode(action.userInfo))
                        r.set("at", action.date)
                        return r
                    }
                    if more {
                        var next = WireRecord()
                        next.set("next-page", "")
                        records.append(next)
                    }
                    return [WireRecord.list(records)]
                },
                method("RequestPermission", [DBusArgument("group", .string), record("options")], [record("result")]) {
                    caller, arguments, _ in
                    let group = try Self.groupID(try arguments[0].decode(String.self), allowEmpty: true)
                    let options = try WireFields(arguments[1], what: "options")
                    try options.refuseUnknown(known: PermissionWire.keys)
                    let strategy = try PermissionWire.strategy(options) ?? .askSystemPermissionIfNeeded
                    let outcome = try await self.evaluate(strategy, caller: caller, group: group.isEmpty ? nil : group)
                    return [await self.authorization(caller: caller, group: group, outcome: outcome).value]
                },
                method("GetAuthorization", [DBusArgument("group", .string)], [record("result")]) {
                    caller, arguments, _ in
                    let group = try Self.groupID(try arguments[0].decode(String.self), allowEmpty: true)
                    return [await self.authorization(caller: caller, group: group, outcome: nil).value]
                },
                method("ListApps", [], [records("apps")]) { caller, _, _ in
                    try self.requireUser(caller, "list apps")
                    return [WireRecord.list(await self.apps().map(\.encoded))]
                },
                method("SetAppConsent", [DBusArgument("app", .string), DBusArgument("consent", .string)]) {
                    caller, arguments, _ in
                    try self.requireUser(caller, "change an app's permission")
                    let app = try arguments[0].decode(String.self)
                    guard !app.isEmpty, app.utf8.count <= Self.maximumAppIDBytes else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message: "app must be an app id of 1 to \(Self.maximumAppIDBytes) bytes")
                    }
                    let word = try arguments[1].decode(String.self)
                    let consent: AppConsent?
                    switch word {
                    case "allow": consent = .allowed
                    case "deny": consent = .denied
                    case "reset": consent = nil
                    default:
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument, message: "consent must be allow, deny or reset")
                    }
                    try await self.setConsent(consent, app: app)
                    return []
                },
                method("SetGroupEnabled", [DBusArgument("group", .string), DBusArgument("enabled", .boolean)]) {
                    caller, arguments, _ in
                    let key = try await self.groupKey(try arguments[0].decode(String.self), caller: caller)
                    let enabled = try arguments[1].decode(Bool.self)
                    try await self.setGroupEnabled(key, enabled: enabled, byUser: caller.isUser)
                    return []
                },
                method("Status", [], [record("status")]) { _, _, _ in
                    [self.status().value]
                },
            ],
            signals: [
                DBusSignalDeclaration(
                    "Delivered",
                    arguments: [DBusArgument("item_id", .uint64), DBusArgument("notification_id", .uint32)]),
                DBusSignalDeclaration(
                    "ActionInvoked",
                    arguments: [
                        DBusArgument("item_id", .uint64), DBusArgument("group", .string),
                        DBusArgument("entry", .string),
                        DBusArgument("action", .string),
                        DBusArgument("user_info", .dictionary(key: .string, value: .variant)),
                    ]),
                DBusSignalDeclaration(
                    "NotificationClosed",
                    arguments: [
                        DBusArgument("item_id", .uint64), DBusArgument("group", .string),
                        DBusArgument("entry", .string),
                        DBusArgument("reason", .string),
                    ]),
            ],
            properties: [
                DBusProperty("Version", type: .string, emitsChangedSignal: false) { .string(ChimeBus.version) },
                DBusProperty("NotificationServerPresent", type: .boolean, emitsChangedSignal: false) {
                    [unowned self] in self.serverProperty("NotificationServerPresent")
                },
                DBusProperty("ServerInformation", type: WireRecord.type, emitsChangedSignal: false) {
                    [unowned self] in self.serverProperty("ServerInformation")
                },
                DBusProperty("Paused", type: .boolean, emitsChangedSignal: false) { [unowned self] in
                    self.serverProperty("Paused")
                },
            ])
    }

    // MARK: - Checks

    /// Refuses a call that changes another app's item, with the error of an item that does not exist: an
    /// app learns nothing of other apps' items, not even that they exist or whose they are.
    private func checkOwner(_ caller: Caller, itemID: UInt64) throws {
        guard let owner = scheduler.item(itemID)?.owner else { return }
        guard caller.owns(owner) else { throw Self.noPendingItem(itemID) }
    }

    /// The error for an item id the caller has no pending item of.
    static func noPendingItem(_ id: UInt64) -> DBusError {
        DBusError(name: ChimeBus.ErrorName.notFound, message: "no pending item \(id); list them with `chime pending`")
    }

    /// The largest item id: ids are stored as SQLite's signed 64-bit integers.
    static let maximumItemID = UInt64(Int64.max)

    /// An item id argument (t), 1 to `maximumItemID`.
    static func itemID(_ value: DBusValue, key: String) throws(DBusError) -> UInt64 {
        guard case .uint64(let id) = value, (1...maximumItemID).contains(id) else {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "\(key) must be an item id from 1 to \(maximumItemID); list them with `chime pending`")
        }
        return id
    }

    /// Why a command from the bus is refused, and where commands come from instead.
    static let commandsComeFromFiles =
        "chimed runs programs only from the user's own group files (~/.config/chime/groups/*.toml), never "
        + "from a D-Bus call; put the command in a group file, or make the content in the app (callback)"

    /// Refuses entries whose content a command makes: no caller on the bus may have chimed run a program.
    static func refuseCommands(in entries: [TimelineEntry]) throws(DBusError) {
        for entry in entries {
            guard case .command = entry.content else { continue }
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied, message: "entry \(entry.id): \(commandsComeFromFiles)")
        }
    }

    /// Refuses a content call-back to a bus name that is not the calling app's own: an app asks itself
    /// for content, never another app.
    static func checkCallbacks(in entries: [TimelineEntry], caller: Caller) throws(DBusError) {
        guard !caller.isUser else { return }
        for entry in entries {
            guard case .callback(let callback) = entry.content, callback.busName != caller.appID else { continue }
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied,
                message: "entry \(entry.id): the callback must be your own bus name \(caller.appID), "
                    + "not \(excerpt(callback.busName))")
        }
    }

    /// Refuses a new or changed entry whose first occurrence comes after its end (`until`), as `Schedule`
    /// refuses such an item: it would be listed and never fire. An entry the group has already, unchanged,
    /// may have ended meanwhile.
    private nonisolated func checkEnds(of entries: [TimelineEntry], in key: GroupKey, now: Date) async throws {
        guard entries.contains(where: { $0.endDate != nil }) else { return }
        let group = await planningCopy(of: key)
        // The caller's work, on one of the store's readers: its entries read, hashed and their rules searched.
        let store = self.store
        try await callerWork.run {
            try store.readEntries { reader in
                let (system, phrases) = (group.systemTimeZone, group.phraseDefaults)
                let existing = Set(try Self.entries(ofGroup: key, in: group, reader: reader))
                for entry in entries where !existing.contains(entry) {
                    guard let until = entry.endDate else { continue }
                    let first: Date?
                    switch entry.trigger {
                    case .at(let date):
                        first = date
                    case .rule(let rule, let zone):
                        first = try? Recurrence.parse(
                            rule, now: now, timeZone: zone.map { .named($0) } ?? .floating, systemTimeZone: system,
                            phraseDefaults: phrases
                        ).shifted(by: entry.offset).nextOccurrence(after: now, systemTimeZone: system)
                    }
                    guard let first, first > until else { continue }
                    throw DBusError(
                        name: ChimeBus.ErrorName.invalidTime,
                        message: "entry \(entry.id): its first occurrence (\(Time.iso(first))) is after its end (until "
                            + "\(Time.iso(until))); move until later")
                }
            }
        }
    }

    /// Group `key` alone, to work on off the daemon's queue (`Scheduler.planningCopy`).
    private func planningCopy(of key: GroupKey) -> Scheduler { scheduler.planningCopy(of: key) }

    /// Refuses a `replaces-id` that is not a popup of the caller's own items: an app must not take over
    /// another app's popup, nor a question chimed asks, and receive the actions chosen on it.
    private func checkReplaces(_ notificationID: UInt32, caller: Caller) throws {
        guard !caller.isUser else { return }
        let owner = shown[notificationID]?.owner
        guard owner == caller.appID else {
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied,
                message: "replaces-id \(notificationID) is not a notification chimed showed for \(caller.appID)'s "
                    + "items; an app replaces only its own popups")
        }
    }

    private nonisolated func requireUser(_ caller: Caller, _ what: String) throws {
        guard caller.isUser else {
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied, message: "only the user (the chime command) may \(what)")
        }
    }

    /// `Schedule`, checked and done in one visit to the daemon (unless a permission question is asked).
    private func schedule(_ content: NotificationContent, trigger: TriggerWire, caller: Caller) async throws
        -> UInt64
    {
        if let replaced = trigger.replacesID { try checkReplaces(replaced, caller: caller) }
        try OwnNames.check(content, appID: caller.appID)
        // With a group, a group the user turned off stays off, as for Reschedule.
        try await checkPermission(.askSystemPermissionIfNeeded, caller: caller, group: trigger.group)
        // The quota after the permission, which may have waited for the user: on the item as stored.
        return try await schedule(content, trigger: trigger, owner: caller.appID, quota: caller)
    }

    private func checkPermission(_ strategy: PermissionStrategy, caller: Caller, group: String?) async throws {
        let outcome = try await evaluate(strategy, caller: caller, group: group)
        guard outcome == .allowed else { throw Self.denial(outcome, app: caller.appID, group: group) }
    }

    /// A group named by a caller: an app names its own groups; the user names `OWNER/GROUP`, or a group
    /// id that only one owner has.
    func groupKey(_ text: String, caller: Caller) throws -> GroupKey {
        guard caller.isUser else { return GroupKey(owner: caller.appID, id: try Self.groupID(text)) }
        if let slash = text.lastIndex(of: "/") {
            let owner = String(text[..<slash])
            guard owner.utf8.count <= Self.maximumAppIDBytes else {
                throw DBusError(
                    name: ChimeBus.ErrorName.invalidArgument,
                    message: "group: the app before the \"/\" is longer than \(Self.maximumAppIDBytes) bytes")
            }
            return GroupKey(owner: owner, id: try Self.groupID(String(text[text.index(after: slash)...])))
        }
        _ = try Self.groupID(text)
        let matches = scheduler.groupSettings.keys.filter { $0.id == text }
        if matches.count > 1, !matches.contains(GroupKey(owner: "", id: text)) {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "several apps have a group \(text): name one as APP/\(text) ("
                    + matches.map(\.description).sorted().joined(separator: ", ") + ")")
        }
        return matches.count == 1 ? matches[0] : GroupKey(owner: "", id: text)
    }

    /// The longest app id: a bus name or a Flatpak id (255 bytes at most), or an executable's name.
    static let maximumAppIDBytes = 255

    /// Checks a group id as an argument gives it: letters, digits, `-`, `_`, `.`, 1 to 200 bytes (""
    /// too, meaning no group, where `allowEmpty`).
    static func groupID(_ text: String, allowEmpty: Bool = false) throws(DBusError) -> String {
        if allowEmpty, text.isEmpty { return text }
        do {
            try TimelineGroup.validateIdentifier(text, what: "group id")
        } catch {
            throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: error.message)
        }
        return text
    }

    /// What a caller may know about its permissions, and the outcome of a request.
    private func authorization(caller: Caller, group: String, outcome: PermissionOutcome?) -> WireRecord {
        var r = WireRecord()
        if let outcome {
            switch outcome {
            case .allowed: r.set("outcome", "allowed")
            case .deniedOnGroupLevel(let s):
                r.set("outcome", "deniedOnGroupLevel")
                r.set("status", s.rawValue)
            case .deniedOnSystemLevel(let s):
                r.set("outcome", "deniedOnSystemLevel")
                r.set("status", s.rawValue)
            }
        }
        let consent: AppConsent = caller.isUser ? .allowed : interaction.consents[caller.appID] ?? .undetermined
        r.set("system", consent.status.rawValue)
        if !group.isEmpty {
            let status = interaction.groupAuthorizations[GroupKey(owner: caller.appID, id: group)] ?? .notAsked
            r.set("group", status.status.rawValue)
        }
        r.set("server-present", serverOwner != nil)
        return r
    }
}

/// A strategy as calls give it: `permission` (s, the text form: `ask-system-permission-if-needed`,
/// `schedule-if-system-allowed`, or `group=ask-once,system=ask` …) and the question's texts
/// `prompt-title`, `prompt-message`, `prompt-allow`, `prompt-deny` (s).
enum PermissionWire {
    static let keys: Set<String> = ["permission", "prompt-title", "prompt-message", "prompt-allow", "prompt-deny"]

    static func strategy(_ fields: WireFields) throws(DBusError) -> PermissionStrategy? {
        var prompt = PermissionPrompt()
        if let title = try fields.string("prompt-title") { prompt.title = title }
        if let message = try fields.string("prompt-message") { prompt.message = message }
        if let allow = try fields.string("prompt-allow") { prompt.allowLabel = allow }
        if let deny = try fields.string("prompt-deny") { prompt.denyLabel = deny }
        // The texts are checked whenever they are given, not only once a question is asked with them: each
        // on its own (so the error names its key), then together (the two buttons must differ).
        let texts: [(key: String, field: WritableKeyPath<PermissionPrompt, String>)] = [
            ("prompt-title", \.title), ("prompt-message", \.message), ("prompt-allow", \.allowLabel),
            ("prompt-deny", \.denyLabel),
        ]
        for (key, field) in texts where fields.has(key) {
            var alone = PermissionPrompt()
            alone[keyPath: field] = prompt[keyPath: field]
            do {
                try alone.validate()
            } catch {
                throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: "options key \"\(key)\": \(error)")
            }
        }
        if texts.contains(where: { fields.has($0.key) }) {
            do {
                try prompt.validate()
            } catch {
                throw DBusError(
                    name: ChimeBus.ErrorName.invalidArgument,
                    message: "options keys prompt-allow and prompt-deny: \(error)")
            }
        }
        guard let text = try fields.string("permission") else { return nil }
        do {
            let strategy = try PermissionStrategy(parsing: text, prompt: prompt)
            try strategy.validate()
            return strategy
        } catch {
            throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: "options key \"permission\": \(error)")
        }
    }
}
