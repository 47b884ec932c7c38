@_exported import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

@_exported import enum ChimeProtocol.ChimeBus
@_exported import enum ChimeProtocol.ContentProviderBus
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

    /// Closes the connection.
    public func close() { connection.close() }

    /// Schedules `content` for `at` (now when nil); returns chimed's item id.
    public func schedule(_ content: NotificationContent, at: Date? = nil) async throws(ChimeError) -> UInt64 {
        try await schedule(content, trigger: TriggerWire(at: at))
    }

    /// Schedules a repeating item that fires at every occurrence of `rule`; `timeZone` (an IANA name)
    /// pins its wall clock, otherwise it follows the system zone. Returns chimed's item id.
    public func schedule(
        _ content: NotificationContent, rule: WrittenRule, timeZone: String? = nil
    ) async throws(ChimeError) -> UInt64 {
        try await schedule(content, trigger: TriggerWire(rule: rule, timeZone: timeZone))
    }

    /// Schedules `content` with a full trigger (a time or a rule, an end, a count); returns the item id.
    public func schedule(_ content: NotificationContent, trigger: TriggerWire) async throws(ChimeError) -> UInt64 {
        let reply = try await call("Schedule", [ContentWire.encode(content), trigger.encoded])
        guard case .uint64(let id)? = reply.first else { throw ChimeError(.protocolError, "Schedule returned no id") }
        return id
    }

    /// Cancels a pending item.
    public func cancel(_ id: UInt64) async throws(ChimeError) {
        _ = try await call("Cancel", [.uint64(id)])
    }

    /// The pending items, soonest first, each with its next `next` occurrences; only `group`'s when given.
    public func pending(next: Int = 1, group: String? = nil) async throws(ChimeError) -> [PendingItem] {
        var options = WireRecord()
        options.set("next", .uint32(UInt32(clamping: next)))
        options.set("group", group)
        return try await records("ListPending", [options.value]) { (f) throws(DBusError) in try PendingItem(f) }
    }

    /// Replaces a group's whole timeline (or, with `dryRun`, only says what would change); returns the
    /// change of every entry.
    @discardableResult
    public func reschedule(_ group: TimelineGroup, dryRun: Bool = false) async throws(ChimeError) -> [EntryChange] {
        var options = WireRecord()
        if dryRun { options.set("dry-run", true) }
        return try await records(
            "Reschedule",
            [
                .string(group.id), GroupSettingsWire.encode(group.settings),
                .array(element: WireRecord.type, group.entries.map(EntryWire.encode)), options.value,
            ]
        ) { (f) throws(DBusError) in try ChangeWire.decode(f) }
    }

    /// Removes a group and everything it has pending.
    public func removeGroup(_ id: String) async throws(ChimeError) {
        _ = try await call("RemoveGroup", [.string(id)])
    }

    /// The groups, with what they have pending.
    public func groups() async throws(ChimeError) -> [GroupInfo] {
        try await records("ListGroups", []) { (f) throws(DBusError) in try GroupInfo(f) }
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
        return try await records("History", [options.value]) { (f) throws(DBusError) in try HistoryRecord(f) }
    }

    private func records<T>(
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

    private func call(_ member: String, _ body: [DBusValue]) async throws(ChimeError) -> [DBusValue] {
        do {
            return try await connection.call(
                destination: ChimeBus.name, path: ChimeBus.path, interface: ChimeBus.interface, member: member, body)
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
}
