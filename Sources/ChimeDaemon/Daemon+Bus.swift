import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// The `io.chime.Chime1` object: every method checks its arguments and answers bad input with an error
/// that names the key and says what to change.
extension Daemon {
    static let records = DBusType.array(WireRecord.type)

    func makeInterface() -> DBusInterface {
        DBusInterface(
            ChimeBus.interface,
            methods: [
                DBusMethod(
                    "Schedule",
                    inputs: [DBusArgument("content", WireRecord.type), DBusArgument("trigger", WireRecord.type)],
                    outputs: [DBusArgument("item_id", .uint64)]
                ) { [unowned self] call in
                    let content = try ContentWire.decode(call.arguments[0])
                    let trigger = try TriggerWire.decode(call.arguments[1])
                    return [.uint64(try await self.schedule(content, trigger: trigger))]
                },
                DBusMethod("Cancel", inputs: [DBusArgument("item_id", .uint64)]) { [unowned self] call in
                    let id = try call.arguments[0].decode(UInt64.self)
                    guard try await self.cancel(id) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.notFound,
                            message: "no pending item \(id); list them with `chime pending`")
                    }
                    return []
                },
                DBusMethod(
                    "ListPending", inputs: [DBusArgument("options", WireRecord.type)],
                    outputs: [DBusArgument("items", Self.records)]
                ) { [unowned self] call in
                    let options = try WireFields(call.arguments[0], what: "options")
                    try options.refuseUnknown(known: ["next", "group"])
                    let next = Int(try options.uint32("next") ?? 1)
                    guard (1...100).contains(next) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument, message: "options key \"next\" must be 1 to 100")
                    }
                    return [
                        WireRecord.list(self.pending(next: next, group: try options.string("group")).map(\.encoded))
                    ]
                },
                DBusMethod(
                    "Reschedule",
                    inputs: [
                        DBusArgument("group", .string), DBusArgument("settings", WireRecord.type),
                        DBusArgument("entries", Self.records), DBusArgument("options", WireRecord.type),
                    ],
                    outputs: [DBusArgument("changes", Self.records)]
                ) { [unowned self] call in
                    let id = try call.arguments[0].decode(String.self)
                    let settings = try GroupSettingsWire.decode(call.arguments[1])
                    guard case .array(_, let values) = call.arguments[2] else { return [] }
                    guard values.count <= TimelineGroup.maximumEntries else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message: "\(values.count) entries is more than the \(TimelineGroup.maximumEntries) allowed")
                    }
                    let options = try WireFields(call.arguments[3], what: "options")
                    try options.refuseUnknown(known: ["dry-run"])
                    let now = self.clock.now()
                    var entries: [TimelineEntry] = []
                    entries.reserveCapacity(values.count)
                    for (index, value) in values.enumerated() {
                        entries.append(try EntryWire.decode(value, index: index, now: now))
                    }
                    let group = TimelineGroup(id: id, settings: settings, entries: entries)
                    do {
                        try group.validate()
                    } catch {
                        throw DBusError(name: ChimeBus.ErrorName.invalidArgument, message: "\(error)")
                    }
                    let changes = try await self.reschedule(group, dryRun: try options.bool("dry-run") ?? false)
                    return [WireRecord.list(changes.map(ChangeWire.encode))]
                },
                DBusMethod("RemoveGroup", inputs: [DBusArgument("group", .string)]) { [unowned self] call in
                    let id = try call.arguments[0].decode(String.self)
                    guard try await self.removeGroup(GroupKey(owner: "", id: id)) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.notFound, message: "no group \(id); list them with `chime groups`")
                    }
                    return []
                },
                DBusMethod("ListGroups", outputs: [DBusArgument("groups", Self.records)]) { [unowned self] _ in
                    [WireRecord.list(self.groups().map(\.encoded))]
                },
                DBusMethod(
                    "History", inputs: [DBusArgument("options", WireRecord.type)],
                    outputs: [DBusArgument("entries", Self.records)]
                ) { [unowned self] call in
                    let options = try WireFields(call.arguments[0], what: "options")
                    try options.refuseUnknown(known: ["limit", "group", "item", "since"])
                    let limit = Int(try options.uint32("limit") ?? 100)
                    guard (1...ScheduleStore.historyLimit).contains(limit) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.invalidArgument,
                            message: "options key \"limit\" must be 1 to \(ScheduleStore.historyLimit)")
                    }
                    let query = HistoryQuery(
                        limit: limit, group: try options.string("group").map { GroupKey(owner: "", id: $0) },
                        itemID: try options.uint64("item"), since: try options.date("since"))
                    let entries = try await self.persisted { try $0.history(query) }
                    return [
                        WireRecord.list(
                            entries.map {
                                HistoryRecord(
                                    seq: $0.seq, date: $0.date, event: $0.event.rawValue, itemID: $0.itemID,
                                    owner: $0.group?.owner ?? "", group: $0.group?.id, entry: $0.entryID,
                                    summary: $0.summary, detail: $0.detail
                                ).encoded
                            })
                    ]
                },
            ],
            signals: [
                DBusSignalDeclaration(
                    "Delivered",
                    arguments: [DBusArgument("item_id", .uint64), DBusArgument("notification_id", .uint32)])
            ],
            properties: [
                DBusProperty("Version", type: .string, emitsChangedSignal: false) { .string(ChimeBus.version) },
                DBusProperty("NotificationServerPresent", type: .boolean, emitsChangedSignal: false) {
                    [unowned self] in
                    .boolean(self.queue.sync { self.serverOwner != nil })
                },
            ])
    }

    /// The pending items, soonest first, each with its next `next` occurrences.
    public func pending(next: Int = 1, group: String? = nil) -> [PendingItem] {
        queue.sync {
            scheduler.pending.filter { group == nil || $0.groupID == group }.map { item in
                // A fire date past the end date only waits for the end: it is not an occurrence.
                let first = item.entry.endDate.map { item.fireDate <= $0 } ?? true ? [item.fireDate] : []
                let upcoming =
                    first
                    + item.occurrences(after: item.fireDate, count: next - 1, systemTimeZone: scheduler.systemTimeZone)
                var rule: String?
                if item.recurrence != nil, case .rule(let written, _) = item.entry.trigger { rule = written.text }
                return PendingItem(
                    id: item.id, owner: item.owner, group: item.groupID,
                    entry: item.groupID == nil ? nil : item.entry.id, appName: item.content.appName,
                    summary: item.content.summary, fireDate: item.fireDate, next: upcoming, rule: rule)
            }
        }
    }
}
