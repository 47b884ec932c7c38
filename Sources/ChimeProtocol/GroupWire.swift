import ChimeCore
import DBusKit
import Foundation

/// A timeline entry as `Reschedule` takes it: an `a{sv}`.
///
/// Keys: `id` (s, required, unique in the group); the trigger keys of `TriggerWire` (`at`, `every`,
/// `rrule` + `dtstart`, `on-calendar`, `tz`, `until`, `count`, `wake`); `content` (a{sv}, the keys of
/// `ContentWire`: the fixed content, or the base of a pool, command or call back); `category` (s);
/// and at most one content source: `template` (b: fill the placeholders), `pool` (aa{sv}: `body` s,
/// `summary` s, `enabled` b) with `pool-order` (s: random, in-order, shuffled), `command` (as) with
/// `command-timeout` (d, seconds) and `command-output` (s: body, summary-and-body), or `callback`
/// (s, the app's bus name) with `callback-timeout` (d, seconds).
public enum EntryWire {
    /// An entry is in its group already: a trigger's `group` key has no meaning here.
    public static let keys: Set<String> = TriggerWire.keys.subtracting(["group"]).union([
        "id", "content", "category", "template", "pool", "pool-order", "command", "command-timeout",
        "command-output", "callback", "callback-timeout",
    ])

    public static func encode(_ entry: TimelineEntry) -> DBusValue {
        var record = WireRecord()
        record.set("id", entry.id)
        TriggerWire(entry).encode(into: &record)
        record.set("category", entry.category)
        record.set("content", ContentWire.encode(entry.content.base))
        switch entry.content {
        case .fixed:
            break
        case .template:
            record.set("template", true)
        case .pool(let pool):
            if pool.fillsPlaceholders { record.set("template", true) }
            record.set("pool-order", pool.order.rawValue)
            record.set(
                "pool",
                records: pool.items.map { item in
                    var r = WireRecord()
                    r.set("body", item.body)
                    r.set("summary", item.summary)
                    if !item.enabled { r.set("enabled", false) }
                    return r
                })
        case .command(let command):
            record.set("command", strings: command.arguments)
            record.set("command-timeout", .double(command.timeout))
            record.set("command-output", command.output.rawValue)
        case .callback(let callback):
            record.set("callback", callback.busName)
            record.set("callback-timeout", .double(callback.timeout))
        }
        return record.value
    }

    /// Reads one entry; `now` stands in for a trigger with neither `at` nor a rule.
    public static func decode(_ value: DBusValue, index: Int, now: Date) throws(DBusError) -> TimelineEntry {
        let fields = try WireFields(value, what: "entry \(index + 1)")
        try fields.refuseUnknown(known: keys)
        guard let id = try fields.string("id", maximumBytes: 200) else {
            throw invalid("entry \(index + 1) has no \"id\"")
        }
        let what = "entry \(id)"
        let trigger = try TriggerWire.decode(WireFields(value, what: what))
        guard let contentValue = try fields.value("content", WireRecord.type) else {
            throw invalid("\(what) has no \"content\"")
        }
        let base = try ContentWire.decode(contentValue, what: "\(what) content")
        let template = try fields.bool("template") ?? false
        var sources: [ContentSource] = []
        if let items = try fields.records("pool") {
            var poolItems: [ContentPool.Item] = []
            for item in items {
                try item.refuseUnknown(known: ["body", "summary", "enabled"])
                poolItems.append(
                    ContentPool.Item(
                        summary: try item.string("summary"), body: try item.string("body") ?? "",
                        enabled: try item.bool("enabled") ?? true))
            }
            let orderName = try fields.string("pool-order") ?? ContentPool.Order.shuffled.rawValue
            guard let order = ContentPool.Order(rawValue: orderName) else {
                throw invalid("\(what) key \"pool-order\" must be random, in-order or shuffled")
            }
            sources.append(.pool(ContentPool(base: base, items: poolItems, order: order, fillsPlaceholders: template)))
        } else if fields.has("pool-order") {
            throw invalid("\(what) key \"pool-order\" goes with \"pool\" only")
        }
        if let arguments = try fields.strings("command") {
            let outputName = try fields.string("command-output") ?? CommandSource.Output.body.rawValue
            guard let output = CommandSource.Output(rawValue: outputName) else {
                throw invalid("\(what) key \"command-output\" must be body or summary-and-body")
            }
            sources.append(
                .command(
                    CommandSource(
                        arguments: arguments, timeout: try fields.seconds("command-timeout", maximum: 60) ?? 5,
                        output: output,
                        base: base)))
        }
        if let busName = try fields.string("callback", maximumBytes: 255) {
            sources.append(
                .callback(
                    CallbackSource(
                        busName: busName, timeout: try fields.seconds("callback-timeout", maximum: 10) ?? 1,
                        fallback: base)
                ))
        }
        guard sources.count <= 1 else { throw invalid("\(what): give at most one of pool, command and callback") }
        let source = sources.first ?? (template ? .template(base) : .fixed(base))
        let entry = TimelineEntry(
            id: id, trigger: trigger.entryTrigger(now: now), content: source,
            category: try fields.string("category", maximumBytes: ContentWire.maximumKeyBytes),
            endDate: trigger.until, maximumOccurrences: trigger.count, escalation: trigger.escalation,
            offset: trigger.offset, wake: trigger.wake)
        do {
            try entry.validate()
        } catch {
            throw invalid(error.message)
        }
        return entry
    }
}

/// A group's settings as `Reschedule` takes them: `missed` (s: deliver-late, coalesce, skip),
/// `late-window` (d, seconds, with deliver-late), `enabled` (b).
public enum GroupSettingsWire {
    /// The keys of the policy for one cause (nil: the policy for every cause).
    static func keys(_ cause: MissedCause?) -> (policy: String, window: String) {
        guard let cause else { return ("missed", "late-window") }
        return ("missed-when-\(cause.rawValue)", "late-window-when-\(cause.rawValue)")
    }

    public static func encode(_ settings: GroupSettings) -> DBusValue {
        var record = WireRecord()
        let policies =
            [(nil, settings.missedPolicy)] + MissedCause.allCases.map { ($0, settings.missedPolicyByCause?[$0]) }
        for (cause, policy) in policies {
            let (policyKey, windowKey) = keys(cause)
            switch policy {
            case .deliverLate(let window)?:
                record.set(policyKey, "deliver-late")
                record.set(windowKey, .double(window))
            case .coalesce?: record.set(policyKey, "coalesce")
            case .skip?: record.set(policyKey, "skip")
            case nil: break
            }
        }
        if !settings.enabled { record.set("enabled", false) }
        return record.value
    }

    public static func decode(_ value: DBusValue) throws(DBusError) -> GroupSettings {
        let fields = try WireFields(value, what: "settings")
        let causeKeys = MissedCause.allCases.flatMap { [keys($0).policy, keys($0).window] }
        try fields.refuseUnknown(known: Set(["missed", "late-window", "enabled"] + causeKeys))
        var settings = GroupSettings(enabled: try fields.bool("enabled") ?? true)
        settings.missedPolicy = try policy(fields, nil)
        var byCause: [MissedCause: MissedPolicy] = [:]
        for cause in MissedCause.allCases { byCause[cause] = try policy(fields, cause) }
        settings.missedPolicyByCause = byCause.isEmpty ? nil : byCause
        return settings
    }

    /// The policy under `missed` and `late-window` (or their keys for `cause`); nil when absent.
    static func policy(_ fields: WireFields, _ cause: MissedCause?) throws(DBusError) -> MissedPolicy? {
        let (policyKey, windowKey) = keys(cause)
        let window = try fields.seconds(windowKey, maximum: MissedPolicy.longestLateWindow)
        let policy: MissedPolicy?
        switch try fields.string(policyKey) {
        case nil: policy = nil
        case "deliver-late"?: policy = .deliverLate(window: window ?? 3600)
        case "coalesce"?: policy = .coalesce
        case "skip"?: policy = .skip
        case let other?:
            throw invalid("settings key \"\(policyKey)\" is \"\(other)\"; use deliver-late, coalesce or skip")
        }
        if window != nil, policy.map({ if case .deliverLate = $0 { false } else { true } }) ?? true {
            throw invalid("settings key \"\(windowKey)\" goes with \(policyKey) = deliver-late")
        }
        return policy
    }

    /// The policy's name as listings show it.
    public static func name(_ policy: MissedPolicy?) -> String {
        switch policy {
        case .deliverLate(let window)?: "deliver-late (\(Int(min(window, MissedPolicy.longestLateWindow))) s)"
        case .coalesce?: "coalesce"
        case .skip?: "skip"
        case nil: "default"
        }
    }

    /// The group's policies as listings show them: `default`, or `skip; off: deliver-late (3600 s)`.
    public static func name(_ settings: GroupSettings) -> String {
        var text = name(settings.missedPolicy)
        for cause in MissedCause.allCases {
            if let policy = settings.missedPolicyByCause?[cause] { text += "; \(cause.rawValue): \(name(policy))" }
        }
        return text
    }
}

/// One line of a reschedule's diff: `entry` (s), `change` (s: added, removed, changed, unchanged),
/// `before` and `after` (x, the next occurrence; absent when none is pending).
public enum ChangeWire {
    /// The changes of a `Reschedule` as its reply lists them, within `budget` bytes: every change when they
    /// fit; else the changes other than `unchanged` first, as many as fit, then one record
    /// `{more: u, added: u, removed: u, changed: u, unchanged: u}` counting, by kind, those left out.
    public static func encodeReply(_ changes: [EntryChange], budget: Int) -> [DBusValue] {
        let encoded = changes.map { encode($0).value }
        let total = encoded.reduce(0) { $0 + $1.estimatedWireBytes }
        guard total > budget else { return encoded }
        var listed: [DBusValue] = []
        var bytes = 0
        var left: [EntryChange.Kind: Int] = [:]
        let order =
            changes.indices.filter { changes[$0].kind != .unchanged }
            + changes.indices.filter { changes[$0].kind == .unchanged }
        for index in order {
            let size = encoded[index].estimatedWireBytes
            if left.isEmpty, bytes + size <= budget {
                listed.append(encoded[index])
                bytes += size
            } else {
                left[changes[index].kind, default: 0] += 1
            }
        }
        var more = WireRecord()
        more.set("more", .uint32(UInt32(clamping: left.values.reduce(0, +))))
        for kind in [EntryChange.Kind.added, .removed, .changed, .unchanged] {
            more.set(kind.rawValue, .uint32(UInt32(clamping: left[kind] ?? 0)))
        }
        return listed + [more.value]
    }

    /// The changes left out of a `Reschedule` reply, by kind, when its last record says so
    /// (`encodeReply`); nil for a record that is a change.
    public static func unlisted(_ fields: WireFields) throws(DBusError) -> [EntryChange.Kind: Int]? {
        guard try fields.uint32("more") != nil else { return nil }
        var counts: [EntryChange.Kind: Int] = [:]
        for kind in [EntryChange.Kind.added, .removed, .changed, .unchanged] {
            counts[kind] = Int(try fields.uint32(kind.rawValue) ?? 0)
        }
        return counts
    }

    public static func encode(_ change: EntryChange) -> WireRecord {
        var record = WireRecord()
        record.set("entry", change.entryID)
        record.set("change", change.kind.rawValue)
        record.set("before", change.before)
        record.set("after", change.after)
        return record
    }

    public static func decode(_ fields: WireFields) throws(DBusError) -> EntryChange {
        guard let entry = try fields.string("entry"),
            let kind = EntryChange.Kind(rawValue: try fields.string("change") ?? "")
        else { throw invalid("a change must name its entry and kind") }
        return EntryChange(
            entryID: entry, kind: kind, before: try fields.date("before"), after: try fields.date("after"))
    }
}
