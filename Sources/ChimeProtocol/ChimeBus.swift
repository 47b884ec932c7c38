import ChimeCore
import DBusKit
import Foundation

/// The fixed names of Chime's D-Bus API, shared by chimed and its clients.
public enum ChimeBus {
    /// The well-known name chimed owns.
    public static let name = "io.chime.Chime1"
    public static let path: DBusObjectPath = "/io/chime/Chime1"
    public static let interface = "io.chime.Chime1"
    /// The version of the API in this build (the `Version` property).
    public static let version = "0.1.0"

    /// Error names chimed answers with; each comes with a message saying what to change.
    public enum ErrorName {
        /// An argument has the wrong shape or value.
        public static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
        /// A time or trigger that cannot be used.
        public static let invalidTime = "io.chime.Chime1.Error.InvalidTime"
        /// No such item.
        public static let notFound = "io.chime.Chime1.Error.NotFound"
        /// Too many pending items for one caller.
        public static let quotaExceeded = "io.chime.Chime1.Error.QuotaExceeded"
    }
}

/// Content as it travels over D-Bus: an `a{sv}` with documented keys, so the API can grow without
/// changing signatures.
///
/// Keys: `summary` (s, required), `body` (s), `app-name` (s), `icon` (s), `urgency` (y: 0 low,
/// 1 normal, 2 critical), `expire-timeout` (i, milliseconds; -1 server default, 0 never),
/// `actions` (a(ss): key, label), `category` (s). Unknown keys are refused, so a typo is not silently
/// ignored.
public enum ContentWire {
    public static func encode(_ content: NotificationContent) -> DBusValue {
        var entries: [(String, DBusValue)] = [("summary", .string(content.summary))]
        if !content.body.isEmpty { entries.append(("body", .string(content.body))) }
        if !content.appName.isEmpty { entries.append(("app-name", .string(content.appName))) }
        if !content.icon.isEmpty { entries.append(("icon", .string(content.icon))) }
        if let urgency = content.urgency { entries.append(("urgency", .byte(urgency.rawValue))) }
        if content.expireTimeout != -1 { entries.append(("expire-timeout", .int32(content.expireTimeout))) }
        if !content.actions.isEmpty {
            let pairs = content.actions.map { DBusValue.structure([.string($0.key), .string($0.label)]) }
            entries.append(("actions", .array(element: .structure([.string, .string]), pairs)))
        }
        if let category = content.category { entries.append(("category", .string(category))) }
        return .dictionary(
            key: .string, value: .variant, entries.map { DBusDictEntry(.string($0.0), .variant($0.1)) })
    }

    public static func decode(_ value: DBusValue) throws(DBusError) -> NotificationContent {
        let fields = try WireFields(value, what: "content")
        var content = NotificationContent(summary: try fields.string("summary") ?? "")
        content.body = try fields.string("body") ?? ""
        content.appName = try fields.string("app-name") ?? ""
        content.icon = try fields.string("icon") ?? ""
        content.category = try fields.string("category")
        if let raw = try fields.value("urgency", .byte) {
            guard case .byte(let b) = raw, let urgency = Urgency(rawValue: b) else {
                throw invalid("content key \"urgency\" must be 0 (low), 1 (normal) or 2 (critical)")
            }
            content.urgency = urgency
        }
        if case .int32(let t)? = try fields.value("expire-timeout", .int32) { content.expireTimeout = t }
        if case .array(_, let pairs)? = try fields.value("actions", .array(.structure([.string, .string]))) {
            content.actions = pairs.compactMap { pair in
                guard case .structure(let f) = pair, case .string(let key) = f[0], case .string(let label) = f[1]
                else { return nil }
                return NotificationAction(key: key, label: label)
            }
        }
        try fields.refuseUnknown(known: [
            "summary", "body", "app-name", "icon", "urgency", "expire-timeout", "actions", "category",
        ])
        do {
            try content.validate()
        } catch {
            throw invalid(error.message)
        }
        return content
    }
}

/// When to deliver, as an `a{sv}`. Either `at` (x, microseconds since the Unix epoch, UTC) for a
/// one-off, or one rule for a repeating item: `every` (s, a phrase), `rrule` (s, RFC 5545, with an
/// optional `dtstart`, s, local ISO 8601) or `on-calendar` (s, systemd.time(7)), each with an optional
/// `tz` (s, an IANA zone; without it the rule follows the system zone). An empty dictionary means now.
public struct TriggerWire: Hashable, Sendable {
    public var at: Date?
    public var rule: WrittenRule?
    public var timeZone: String?

    public init(at: Date? = nil, rule: WrittenRule? = nil, timeZone: String? = nil) {
        self.at = at
        self.rule = rule
        self.timeZone = timeZone
    }

    public var encoded: DBusValue {
        var entries: [DBusDictEntry] = []
        func add(_ key: String, _ value: DBusValue) { entries.append(DBusDictEntry(.string(key), .variant(value))) }
        if let at { add("at", .int64(Self.microseconds(at))) }
        switch rule {
        case .phrase(let text)?: add("every", .string(text))
        case .rrule(let text, let dtstart)?:
            add("rrule", .string(text))
            if let dtstart { add("dtstart", .string(dtstart.description)) }
        case .onCalendar(let text)?: add("on-calendar", .string(text))
        case nil: break
        }
        if let timeZone { add("tz", .string(timeZone)) }
        return .dictionary(key: .string, value: .variant, entries)
    }

    /// Reads and checks a trigger; the message of a refusal names the key.
    public static func decode(_ value: DBusValue) throws(DBusError) -> TriggerWire {
        let fields = try WireFields(value, what: "trigger")
        try fields.refuseUnknown(known: ["at", "every", "rrule", "dtstart", "on-calendar", "tz"])
        var trigger = TriggerWire()
        if case .int64(let usec)? = try fields.value("at", .int64) { trigger.at = date(microseconds: usec) }
        var rules: [WrittenRule] = []
        if let text = try fields.string("every") { rules.append(.phrase(text)) }
        if let text = try fields.string("on-calendar") { rules.append(.onCalendar(text)) }
        let dtstart = try fields.string("dtstart")
        if let text = try fields.string("rrule") {
            var start: LocalDateTime?
            if let dtstart {
                guard let parsed = LocalDateTime(iso: dtstart) else {
                    throw invalid("trigger key \"dtstart\" must be local ISO 8601 time such as 2026-12-01T09:00:00")
                }
                start = parsed
            }
            rules.append(.rrule(text, dtstart: start))
        } else if dtstart != nil {
            throw invalid("trigger key \"dtstart\" goes with \"rrule\" only")
        }
        guard rules.count <= 1 else { throw invalid("give one rule: every, rrule or on-calendar") }
        trigger.rule = rules.first
        if trigger.rule != nil, trigger.at != nil {
            throw invalid("give either \"at\" for a one-off or a rule for a repeating item, not both")
        }
        trigger.timeZone = try fields.string("tz")
        if let zone = trigger.timeZone {
            guard trigger.rule != nil else { throw invalid("trigger key \"tz\" goes with a rule only") }
            guard TimeZone(identifier: zone) != nil else {
                throw invalid("unknown time zone \"\(zone)\"; use an IANA name such as Europe/Berlin")
            }
        }
        return trigger
    }

    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

/// One pending item as `ListPending` returns it: `(t id, x fire-at µs, s app-name, s summary)`.
public struct PendingInfo: Hashable, Sendable {
    public var id: UInt64
    public var fireDate: Date
    public var appName: String
    public var summary: String

    public init(id: UInt64, fireDate: Date, appName: String, summary: String) {
        self.id = id
        self.fireDate = fireDate
        self.appName = appName
        self.summary = summary
    }

    public static let wireType: DBusType = .structure([.uint64, .int64, .string, .string])

    public var wireValue: DBusValue {
        .structure([
            .uint64(id), .int64(TriggerWire.microseconds(fireDate)), .string(appName), .string(summary),
        ])
    }

    public init(wire: DBusValue) throws(DBusError) {
        guard case .structure(let f) = wire, f.count == 4, case .uint64(let id) = f[0], case .int64(let at) = f[1],
            case .string(let app) = f[2], case .string(let summary) = f[3]
        else { throw invalid("a pending item must be (t, x, s, s)") }
        self.init(id: id, fireDate: TriggerWire.date(microseconds: at), appName: app, summary: summary)
    }
}

func invalid(_ message: String) -> DBusError {
    DBusError(name: ChimeBus.ErrorName.invalidArgument, message: message)
}

/// Reads an `a{sv}` argument, checking each key's type.
struct WireFields {
    let values: [String: DBusValue]
    let what: String

    init(_ value: DBusValue, what: String) throws(DBusError) {
        guard case .dictionary(.string, .variant, let entries) = value else {
            throw invalid("the \(what) must be a dictionary a{sv}")
        }
        var values: [String: DBusValue] = [:]
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let inner) = entry.value else { continue }
            values[key] = inner
        }
        self.values = values
        self.what = what
    }

    func value(_ key: String, _ type: DBusType) throws(DBusError) -> DBusValue? {
        guard let v = values[key] else { return nil }
        guard v.type == type else {
            throw invalid("\(what) key \"\(key)\" must have type \(type), not \(v.type)")
        }
        return v
    }

    func string(_ key: String) throws(DBusError) -> String? {
        guard case .string(let s)? = try value(key, .string) else { return nil }
        return s
    }

    func refuseUnknown(known: Set<String>) throws(DBusError) {
        if let unknown = values.keys.sorted().first(where: { !known.contains($0) }) {
            throw invalid(
                "unknown \(what) key \"\(unknown)\"; known keys: \(known.sorted().joined(separator: ", "))")
        }
    }
}
