@_exported import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

@_exported import struct ChimeProtocol.AppInfo
@_exported import enum ChimeProtocol.ChimeBus
@_exported import enum ChimeProtocol.ContentProviderBus
@_exported import struct ChimeProtocol.DeliveredNotification
@_exported import struct ChimeProtocol.GroupInfo
@_exported import struct ChimeProtocol.HistoryRecord
@_exported import struct ChimeProtocol.PendingItem
@_exported import struct ChimeProtocol.TriggerWire

/// A connection to chimed over D-Bus: schedule, list and cancel notifications.
public final class ChimeClient: Sendable {
    let connection: DBusConnection

    init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Connects to the bus chimed serves (the session bus by default).
    public static func connect(_ address: DBusConnection.Address = .session) async throws(ChimeError) -> ChimeClient {
        do {
            return ChimeClient(connection: try await DBusConnection.connect(address))
        } catch {
            throw ChimeError(
                .noBus,
                "cannot connect to the session bus (\(error.message)); run inside a desktop session, or set "
                    + "DBUS_SESSION_BUS_ADDRESS")
        }
    }

    /// Connects as the app `appID` (a reverse-DNS name such as `org.example.Pizza`): the connection owns
    /// that name on the bus, which is how chimed tells which app is calling (a Flatpak app is known by its
    /// sandbox instead).
    public static func connect(_ address: DBusConnection.Address = .session, owning appID: String)
        async throws(ChimeError) -> ChimeClient
    {
        let client = try await connect(address)
        do {
            try await client.connection.requestName(appID)
        } catch {
            client.close()
            throw ChimeError(.failed, "cannot own the name \(appID) on the bus: \(error.message)")
        }
        return client
    }

    /// Closes the connection.
    public func close() { connection.close() }

    /// Schedules `content` for `at` (now when nil); returns chimed's item id.
    public func schedule(_ content: ChimeCore.NotificationContent, at: Date? = nil) async throws(ChimeError) -> UInt64 {
        try await schedule(content, trigger: TriggerWire(at: at))
    }

    /// Schedules a repeating item that fires at every occurrence of `rule`; `timeZone` (an IANA name)
    /// pins its wall clock, otherwise it follows the system zone. Returns chimed's item id.
    public func schedule(
        _ content: ChimeCore.NotificationContent, rule: WrittenRule, timeZone: String? = nil
    ) async throws(ChimeError) -> UInt64 {
        try await schedule(content, trigger: TriggerWire(rule: rule, timeZone: timeZone))
    }

    /// Schedules `content` with a full trigger (a time or a rule, an end, a count); returns the item id.
    public func schedule(_ content: ChimeCore.NotificationContent, trigger: TriggerWire) async throws(ChimeError)
        -> UInt64
    {
        let reply = try await call("Schedule", [ContentWire.encode(content), trigger.encoded])
        guard case .uint64(let id)? = reply.first else { throw ChimeError(.protocolError, "Schedule returned no id") }
        return id
    }

    /// Cancels a pending item.
    public func cancel(_ id: UInt64) async throws(ChimeError) {
        _ = try await call("Cancel", [.uint64(id)])
    }

    /// Cancels everything this app has pending: its items on their own (snoozes too) and its groups, which
    /// are removed; only group `group`'s items when given. Returns how many items went.
    @discardableResult
    public func cancelAll(group: String? = nil) async throws(ChimeError) -> Int {
        var options = WireRecord()
        options.set("group", group)
        let reply = try await call("CancelAll", [options.value])
        guard case .uint32(let removed)? = reply.first else {
            throw ChimeError(.protocolError, "CancelAll returned no count")
        }
        return Int(removed)
    }

    /// The pending items, soonest first, each with its next `next` occurrences; only `group`'s when given.
    /// With `content`, each also carries its content and trigger (`PendingItem.content`, `.trigger`). With
    /// `until`, only the items due by then, each with its occurrences up to it (at most `next`, up to 1000;
    /// `PendingItem.more` says when some are left out). At most `limit` items: chimed answers in pages, and
    /// this follows them until it has `limit` or there are no more.
    public func pending(
        next: Int = 1, group: String? = nil, content: Bool = false, until: Date? = nil, limit: Int = .max
    ) async throws(ChimeError) -> [PendingItem] {
        var options = WireRecord()
        options.set("next", .uint32(UInt32(clamping: next)))
        options.set("group", group)
        options.set("until", until)
        if content { options.set("content", true) }
        return try await pages("ListPending", options, limit: limit) { (f) throws(DBusError) in try PendingItem(f) }
    }

    /// Replaces a group's whole timeline (or, with `dryRun`, only says what would change); returns the
    /// change of every entry.
    /// `permission` is evaluated first (the user may be asked; the call waits for the answer); nil asks for
    /// the system permission if it was never given.
    /// A reply has room for about 15,000 changes: of a larger group, see `rescheduleReport`.
    @discardableResult
    public func reschedule(
        _ group: TimelineGroup, permission: PermissionStrategy? = nil, dryRun: Bool = false
    ) async throws(ChimeError) -> [EntryChange] {
        try await rescheduleReport(group, permission: permission, dryRun: dryRun).changes
    }

    /// What a `Reschedule` changed, as chimed's reply lists it.
    public struct RescheduleReport: Sendable {
        /// The changes listed: every one, or when they do not fit in one reply, those other than
        /// `unchanged` first, as many as fit.
        public var changes: [EntryChange]
        /// How many changes of each kind the reply left out (empty: none).
        public var unlisted: [EntryChange.Kind: Int]
    }

    /// `reschedule(_:permission:dryRun:)`, with the count of the changes a reply had no room for.
    public func rescheduleReport(
        _ group: TimelineGroup, permission: PermissionStrategy? = nil, dryRun: Bool = false
    ) async throws(ChimeError) -> RescheduleReport {
        var options = permission.map(Self.permissionOptions) ?? WireRecord()
        if dryRun { options.set("dry-run", true) }
        var report = RescheduleReport(changes: [], unlisted: [:])
        _ = try await records(
            "Reschedule",
            [
                .string(group.id), GroupSettingsWire.encode(group.settings),
                .array(element: WireRecord.type, group.entries.map(EntryWire.encode)), options.value,
            ]
        ) { (f) throws(DBusError) in
            if let unlisted = try ChangeWire.unlisted(f) {
                report.unlisted = unlisted
            } else {
                report.changes.append(try ChangeWire.decode(f))
            }
        }
        return report
    }

    /// Removes a group and everything it has pending.
    public func removeGroup(_ id: String) async throws(ChimeError) {
        _ = try await call("RemoveGroup", [.string(id)])
    }

    /// The groups, with what they have pending, by owner then id. chimed answers in pages; this follows
    /// them all.
    public func groups() async throws(ChimeError) -> [GroupInfo] {
        try await pages("ListGroupsPaged", WireRecord(), limit: .max) { (f) throws(DBusError) in try GroupInfo(f) }
    }

    /// Delivery history, newest first.
    public func history(limit: Int = 100, group: String? = nil, item: UInt64? = nil, since: Date? = nil)
        async throws(ChimeError) -> [HistoryRecord]
    {
        var options = WireRecord()
        options.set("limit", .uint32(UInt32(clamping: limit)))
        options.set("group", group)
        if let item { options.set("item", .uint64(item)) }
        options.set("since", since)
        return try await pages("History", options, limit: limit, shrinking: "limit") { (f) throws(DBusError) in
            try HistoryRecord(f)
        }
    }

    /// The records of a listing that chimed answers in pages: each reply whose last record is
    /// `{next-page: CURSOR}` alone is followed by a call with `after: CURSOR`, until `limit` records came or
    /// no page follows. With `shrinking`, that option (a count) is lowered by what came, page by page.
    func pages<T>(
        _ member: String, _ options: WireRecord, limit: Int, shrinking: String? = nil,
        _ make: (WireFields) throws(DBusError) -> T
    ) async throws(ChimeError) -> [T] {
        var options = options
        var result: [T] = []
        while true {
            let reply = try await call(member, [options.value])
            var next: String?
            do {
                for fields in try WireRecord.fields(of: reply.first, what: "\(member) reply") {
                    if fields.has("next-page") {
                        next = try fields.string("next-page")
                    } else if result.count < limit {
                        result.append(try make(fields))
                    }
                }
            } catch {
                throw ChimeError(.protocolError, error.message)
            }
            guard let next, result.count < limit else { return result }
            options.set("after", next)
            if let shrinking { options.set(shrinking, .uint32(UInt32(clamping: limit - result.count))) }
        }
    }

    func records<T>(
        _ member: String, _ body: [DBusValue], _ make: (WireFields) throws(DBusError) -> T
    ) async throws(ChimeError) -> [T] {
        let reply = try await call(member, body)
        do {
            return try WireRecord.fields(of: reply.first, what: "\(member) reply").map { (f) throws(DBusError) in
                try make(f)
            }
        } catch {
            throw ChimeError(.protocolError, error.message)
        }
    }

    func call(_ member: String, _ body: [DBusValue], timeout: Duration = .seconds(120)) async throws(ChimeError)
        -> [DBusValue]
    {
        do {
            // Long enough for a question the user is asked (a permission) to be answered.
            return try await connection.call(
                destination: ChimeBus.name, path: ChimeBus.path, interface: ChimeBus.interface, member: member, body,
                timeout: timeout)
        } catch {
            throw ChimeError(error)
        }
    }
}

/// Why a request to chimed failed, and what to do about it.
public struct ChimeError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// No session bus to talk on.
        case noBus
        /// chimed is not running (and could not be started) on the bus.
        case notRunning
        /// chimed refused the request: the message says why.
        case rejected
        /// No such item.
        case notFound
        /// chimed answered something this client does not understand.
        case protocolError
        /// The bus or chimed failed otherwise.
        case failed
    }

    public var kind: Kind
    public var message: String
    /// The D-Bus error name chimed or the bus answered with, when there was one.
    public var dbusName: String?

    public init(_ kind: Kind, _ message: String, dbusName: String? = nil) {
        self.kind = kind
        self.message = message
        self.dbusName = dbusName
    }

    init(_ error: DBusError) {
        if error.is(.serviceUnknown) || error.is(.nameHasNoOwner)
            || error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn")
        {
            self.init(
                .notRunning,
                "chimed is not running on the session bus; start it with `chimed &` or "
                    + "`systemctl --user start chimed`", dbusName: error.name)
        } else if error.name == ChimeBus.ErrorName.notFound {
            self.init(.notFound, error.message, dbusName: error.name)
        } else if error.name.hasPrefix(ChimeBus.interface + ".Error.") || error.is(.invalidArgs) {
            self.init(.rejected, error.message, dbusName: error.name)
        } else {
            self.init(.failed, "\(error.message) (\(error.name))", dbusName: error.name)
        }
    }

    public var description: String { message }

    /// True when a permission strategy, or the user, said no (`io.chime.Chime1.Error.PermissionDenied`).
    public var isPermissionDenied: Bool { dbusName == ChimeBus.ErrorName.permissionDenied }
}

/// Interaction: actions, snoozes, categories and permissions.
extension ChimeClient {
    /// An action chosen on one of this app's notifications.
    public struct ActionEvent: Hashable, Sendable {
        public var itemID: UInt64
        public var group: String?
        public var entry: String?
        public var action: String
        /// The content's user info, with `activation-token` and `reply` (a typed reply) as strings when
        /// the server gave them.
        public var userInfo: [String: UserInfoValue]
    }

    /// Shows an item's notification again after `seconds`; returns the snooze's item id.
    @discardableResult
    public func snooze(_ id: UInt64, seconds: UInt32) async throws(ChimeError) -> UInt64 {
        let reply = try await call("Snooze", [.uint64(id), .uint32(seconds)])
        guard case .uint64(let snooze)? = reply.first else { throw ChimeError(.protocolError, "Snooze returned no id") }
        return snooze
    }

    /// Registers this app's categories of actions (replacing the ones it had).
    public func registerCategories(_ categories: [ActionCategory]) async throws(ChimeError) {
        _ = try await call(
            "RegisterCategories", [.array(element: WireRecord.type, categories.map(CategoryWire.encode))])
    }

    /// The actions chosen on this app's notifications while it was not connected; each is handed over once.
    public func takeActions() async throws(ChimeError) -> [ActionEvent] {
        // chimed hands over what fits in one reply; a last record {next-page: ""} says more wait.
        var events: [ActionEvent] = []
        while true {
            var more = false
            let page = try await records("TakeActions", []) { (f) throws(DBusError) -> ActionEvent? in
                if f.has("next-page") {
                    more = true
                    return nil
                }
                return try Self.event(f)
            }
            events += page.compactMap { $0 }
            guard more else { return events }
        }
    }

    /// Actions chosen on this app's notifications from now on, as chimed sends them to this connection.
    public func actionEvents() async throws(ChimeError) -> AsyncStream<ActionEvent> {
        let (stream, continuation) = AsyncStream<ActionEvent>.makeStream()
        do {
            let subscription = try await connection.subscribe(Self.rule("ActionInvoked")) { message in
                if let event = Self.actionEvent(message) { continuation.yield(event) }
            }
            continuation.onTermination = { _ in subscription.cancel() }
        } catch {
            throw ChimeError(error)
        }
        return stream
    }

    /// One of this app's notifications closed: the item, its group and entry, and the reason.
    public struct ClosedEvent: Hashable, Sendable {
        public var itemID: UInt64
        public var group: String?
        public var entry: String?
        public var reason: String
    }

    /// This app's notifications closing from now on (expired, dismissed, closed by a call).
    public func closedEvents() async throws(ChimeError) -> AsyncStream<ClosedEvent> {
        let (stream, continuation) = AsyncStream<ClosedEvent>.makeStream()
        do {
            let subscription = try await connection.subscribe(Self.rule("NotificationClosed")) { message in
                if let event = Self.closedEvent(message) { continuation.yield(event) }
            }
            continuation.onTermination = { _ in subscription.cancel() }
        } catch {
            throw ChimeError(error)
        }
        return stream
    }

    /// An action or a close, in the order chimed sent them.
    public enum ItemEvent: Hashable, Sendable {
        case action(ActionEvent)
        case closed(ClosedEvent)
    }

    /// This app's action and close events from now on, in one stream, in the order chimed sent them (both
    /// subscriptions are served by the connection's one queue in message order).
    public func itemEvents() async throws(ChimeError) -> AsyncStream<ItemEvent> {
        let (stream, continuation) = AsyncStream<ItemEvent>.makeStream()
        do {
            let actions = try await connection.subscribe(Self.rule("ActionInvoked")) { message in
                if let event = Self.actionEvent(message) { continuation.yield(.action(event)) }
            }
            let closes = try await connection.subscribe(Self.rule("NotificationClosed")) { message in
                if let event = Self.closedEvent(message) { continuation.yield(.closed(event)) }
            }
            continuation.onTermination = { _ in
                // Not here: termination can run while the consumer's task is being cancelled, under the
                // task's lock, which a signal being yielded on the connection's queue waits for; cancelling
                // a subscription waits for that queue.
                DispatchQueue.global().async {
                    actions.cancel()
                    closes.cancel()
                }
            }
        } catch {
            throw ChimeError(error)
        }
        return stream
    }

    static func rule(_ member: String) -> DBusMatchRule {
        DBusMatchRule(sender: ChimeBus.name, interface: ChimeBus.interface, member: member)
    }

    static func actionEvent(_ message: DBusMessage) -> ActionEvent? {
        guard message.body.count == 5, case .uint64(let item) = message.body[0],
            case .string(let group) = message.body[1], case .string(let entry) = message.body[2],
            case .string(let action) = message.body[3]
        else { return nil }
        let info = (try? UserInfoWire.decode(message.body[4], what: "user_info")) ?? [:]
        return ActionEvent(
            itemID: item, group: group.isEmpty ? nil : group, entry: entry.isEmpty ? nil : entry, action: action,
            userInfo: info)
    }

    static func closedEvent(_ message: DBusMessage) -> ClosedEvent? {
        guard message.body.count == 4, case .uint64(let item) = message.body[0],
            case .string(let group) = message.body[1], case .string(let entry) = message.body[2],
            case .string(let reason) = message.body[3]
        else { return nil }
        return ClosedEvent(
            itemID: item, group: group.isEmpty ? nil : group, entry: entry.isEmpty ? nil : entry, reason: reason)
    }

    /// Asks for permission as `strategy` says (the user may be asked; this waits for the answer) and
    /// returns the outcome: `allowed`, `deniedOnGroupLevel` or `deniedOnSystemLevel`, with the status.
    public func requestPermission(
        _ strategy: PermissionStrategy = .askSystemPermissionIfNeeded, group: String? = nil
    ) async throws(ChimeError) -> (outcome: String, status: String?) {
        let reply = try await call(
            "RequestPermission", [.string(group ?? ""), Self.permissionOptions(strategy).value],
            timeout: .seconds(180))
        do {
            let fields = try WireFields(reply.first ?? WireRecord().value, what: "permission")
            return (try fields.string("outcome") ?? "", try fields.string("status"))
        } catch {
            throw ChimeError(.protocolError, error.message)
        }
    }

    /// This app's system authorization and a group's, as chimed holds them now.
    public func authorization(group: String? = nil) async throws(ChimeError) -> (system: String, group: String?) {
        let reply = try await call("GetAuthorization", [.string(group ?? "")])
        do {
            let fields = try WireFields(reply.first ?? WireRecord().value, what: "authorization")
            return (try fields.string("system") ?? "", try fields.string("group"))
        } catch {
            throw ChimeError(.protocolError, error.message)
        }
    }

    /// The apps chimed knows, with their consent (the user only).
    public func apps() async throws(ChimeError) -> [AppInfo] {
        try await records("ListApps", []) { (f) throws(DBusError) in try AppInfo(f) }
    }

    /// Allows, denies or forgets an app's permission (`allow`, `deny`, `reset`; the user only).
    public func setConsent(_ word: String, app: String) async throws(ChimeError) {
        _ = try await call("SetAppConsent", [.string(app), .string(word)])
    }

    /// Turns a group on or off.
    public func setGroupEnabled(_ group: String, _ enabled: Bool) async throws(ChimeError) {
        _ = try await call("SetGroupEnabled", [.string(group), .boolean(enabled)])
    }

    /// chimed's status: the server, its capabilities, whether it is paused, and counts.
    public func status() async throws(ChimeError) -> [String: DBusValue] {
        let reply = try await call("Status", [])
        guard case .dictionary(_, _, let entries)? = reply.first else {
            throw ChimeError(.protocolError, "Status returned no record")
        }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let key) = entry.key, case .variant(let value) = entry.value { result[key] = value }
        }
        return result
    }

    static func permissionOptions(_ strategy: PermissionStrategy) -> WireRecord {
        var options = WireRecord()
        options.set("permission", strategy.text)
        if case .askPermission(_, let prompt) = strategy.group {
            options.set("prompt-title", prompt.title)
            options.set("prompt-message", prompt.message)
            options.set("prompt-allow", prompt.allowLabel)
            options.set("prompt-deny", prompt.denyLabel)
        }
        return options
    }

    static func event(_ fields: WireFields) throws(DBusError) -> ActionEvent {
        ActionEvent(
            itemID: try fields.uint64("item") ?? 0, group: try fields.string("group"),
            entry: try fields.string("entry"),
            action: try fields.string("action") ?? "",
            userInfo: try UserInfoWire.decode(fields, key: "user-info") ?? [:])
    }
}
