import ChimeCore
import DBusKit
import Foundation

/// One pending item as `ListPending` returns it: `id` (t), `owner` (s), `group` (s) and `entry` (s) for a
/// group's entry, `app-name` (s), `summary` (s), `fire-at` (x), `next` (ax: the next occurrences,
/// `fire-at` first), `more` (b: with the option `until`, true when occurrences before it are left out),
/// `rule` (s: the rule as written, for a repeating item), `escalation` (s: how an
/// escalating entry shows its occurrences again, or which showing a re-notification is), `wake` (b, present
/// and true when each occurrence wakes the machine); with the option `content`,
/// also `content` (a{sv}, as `Schedule` takes it) and `trigger` (a{sv}: `at` or the rule's key, `tz`,
/// `until`, `count`).
public struct PendingItem: Hashable, Sendable {
    public var id: UInt64
    public var owner: String
    public var group: String?
    public var entry: String?
    public var appName: String
    public var summary: String
    public var fireDate: Date
    public var next: [Date]
    /// For each of `next`, what daylight saving did to it (`02:30 does not exist on …: moved to 03:00`), or nil.
    public var nextNotes: [String?]
    public var rule: String?
    /// Listed up to a time (`until`): whether occurrences before it are left out.
    public var more: Bool
    /// How it escalates ("again every 5m, at most 3 times, until acknowledged"), or, for a re-notification
    /// chimed scheduled, which showing it is.
    public var escalation: String?
    /// Whether each occurrence wakes the machine from suspend (`TimelineEntry.wake`).
    public var wake = false
    /// The item's content (its fixed part, user info included), when the listing was asked for it.
    public var content: NotificationContent?
    /// When the item fires, as it was given: a time or a rule, with its zone, end and count; when the
    /// listing was asked for content.
    public var trigger: TriggerWire?

    public init(
        id: UInt64, owner: String = "", group: String? = nil, entry: String? = nil, appName: String, summary: String,
        fireDate: Date, next: [Date], nextNotes: [String?] = [], rule: String? = nil,
        more: Bool = false, escalation: String? = nil, content: NotificationContent? = nil,
        trigger: TriggerWire? = nil
    ) {
        self.more = more
        self.escalation = escalation
        self.nextNotes = nextNotes
        self.content = content
        self.trigger = trigger
        self.id = id
        self.owner = owner
        self.group = group
        self.entry = entry
        self.appName = appName
        self.summary = summary
        self.fireDate = fireDate
        self.next = next
        self.rule = rule
    }

    public var encoded: WireRecord {
        var record = WireRecord()
        record.set("id", .uint64(id))
        record.set("owner", owner)
        record.set("group", group)
        record.set("entry", entry)
        record.set("app-name", appName)
        record.set("summary", summary)
        record.set("fire-at", fireDate)
        record.set("next", .array(element: .int64, next.map { .int64(WireTime.microseconds($0)) }))
        if nextNotes.contains(where: { $0 != nil }) {
            record.set("next-notes", .array(element: .string, nextNotes.map { .string($0 ?? "") }))
        }
        record.set("rule", rule)
        if more { record.set("more", true) }
        record.set("escalation", escalation)
        if wake { record.set("wake", true) }
        if let content { record.set("content", ContentWire.encode(content)) }
        if let trigger { record.set("trigger", trigger.encoded) }
        return record
    }

    public init(_ fields: WireFields) throws(DBusError) {
        guard let id = try fields.uint64("id"), let fireDate = try fields.date("fire-at") else {
            throw invalid("a pending item must have an id and a fire-at time")
        }
        var next: [Date] = []
        if case .array(_, let values)? = try fields.value("next", .array(.int64)) {
            next = values.compactMap { if case .int64(let v) = $0 { WireTime.date(microseconds: v) } else { nil } }
        }
        // One note (or "") per next occurrence; extra ones are dropped.
        var nextNotes: [String?] = []
        if case .array(_, let values)? = try fields.value("next-notes", .array(.string)) {
            nextNotes = values.prefix(next.count).map { if case .string(let v) = $0, !v.isEmpty { v } else { nil } }
        }
        self.init(
            id: id, owner: try fields.string("owner") ?? "", group: try fields.string("group"),
            entry: try fields.string("entry"), appName: try fields.string("app-name") ?? "",
            summary: try fields.string("summary") ?? "", fireDate: fireDate, next: next, nextNotes: nextNotes,
            rule: try fields.string("rule"), more: try fields.bool("more") ?? false,
            escalation: try fields.string("escalation"),
            content: try fields.value("content", WireRecord.type).map { (value) throws(DBusError) in
                try ContentWire.decode(value, what: "pending item \(id) content")
            },
            trigger: try fields.value("trigger", WireRecord.type).map { (value) throws(DBusError) in
                try TriggerWire.decode(value)
            })
        wake = try fields.bool("wake") ?? false
    }
}

/// One group as `ListGroups` returns it: `id` (s), `owner` (s), `source` (s: api or config), `enabled`
/// (b), `missed` (s), `entries` (u), `pending` (u), `next` (x, absent when nothing is pending).
public struct GroupInfo: Hashable, Sendable {
    public var id: String
    public var owner: String
    public var source: String
    public var enabled: Bool
    public var missed: String
    public var entries: Int
    public var pending: Int
    public var next: Date?

    public init(
        id: String, owner: String, source: String, enabled: Bool, missed: String, entries: Int, pending: Int,
        next: Date?
    ) {
        self.id = id
        self.owner = owner
        self.source = source
        self.enabled = enabled
        self.missed = missed
        self.entries = entries
        self.pending = pending
        self.next = next
    }

    public var encoded: WireRecord {
        var record = WireRecord()
        record.set("id", id)
        record.set("owner", owner)
        record.set("source", source)
        record.set("enabled", enabled)
        record.set("missed", missed)
        record.set("entries", .uint32(UInt32(clamping: entries)))
        record.set("pending", .uint32(UInt32(clamping: pending)))
        record.set("next", next)
        return record
    }

    public init(_ fields: WireFields) throws(DBusError) {
        guard let id = try fields.string("id") else { throw invalid("a group must have an id") }
        self.init(
            id: id, owner: try fields.string("owner") ?? "", source: try fields.string("source") ?? "",
            enabled: try fields.bool("enabled") ?? true, missed: try fields.string("missed") ?? "",
            entries: Int(try fields.uint32("entries") ?? 0), pending: Int(try fields.uint32("pending") ?? 0),
            next: try fields.date("next"))
    }
}

/// One line of history as `History` returns it: `seq` (t), `at` (x), `event` (s), `item` (t), `owner`
/// (s), `group` (s) and `entry` (s) for a group's entry, `summary` (s), `detail` (s).
public struct HistoryRecord: Hashable, Sendable {
    public var seq: UInt64
    public var date: Date
    public var event: String
    public var itemID: UInt64
    public var owner: String
    public var group: String?
    public var entry: String?
    public var summary: String
    public var detail: String?

    public init(
        seq: UInt64, date: Date, event: String, itemID: UInt64, owner: String = "", group: String? = nil,
        entry: String? = nil, summary: String, detail: String? = nil
    ) {
        self.seq = seq
        self.date = date
        self.event = event
        self.itemID = itemID
        self.owner = owner
        self.group = group
        self.entry = entry
        self.summary = summary
        self.detail = detail
    }

    public var encoded: WireRecord {
        var record = WireRecord()
        record.set("seq", .uint64(seq))
        record.set("at", date)
        record.set("event", event)
        record.set("item", .uint64(itemID))
        record.set("owner", owner)
        record.set("group", group)
        record.set("entry", entry)
        record.set("summary", summary)
        record.set("detail", detail)
        return record
    }

    public init(_ fields: WireFields) throws(DBusError) {
        guard let seq = try fields.uint64("seq"), let date = try fields.date("at"),
            let event = try fields.string("event")
        else { throw invalid("a history entry must have seq, at and event") }
        self.init(
            seq: seq, date: date, event: event, itemID: try fields.uint64("item") ?? 0,
            owner: try fields.string("owner") ?? "", group: try fields.string("group"),
            entry: try fields.string("entry"), summary: try fields.string("summary") ?? "",
            detail: try fields.string("detail"))
    }
}

extension WrittenRule {
    /// The rule as a person wrote it, with its form: `every day at 9:00`, `RRULE:FREQ=…`,
    /// `OnCalendar=Mon..Fri 09:00`.
    public var text: String {
        switch self {
        case .phrase(let text): text
        case .rrule(let text, let dtstart):
            (dtstart.map { "DTSTART:\($0) " } ?? "") + (text.uppercased().hasPrefix("RRULE:") ? text : "RRULE:\(text)")
        case .onCalendar(let text): "OnCalendar=\(text)"
        case .dateRule(let rule): rule.summary
        }
    }
}
