import ChimeCore
import DBusKit
import Foundation

/// Content as it travels over D-Bus: an `a{sv}` with documented keys, so the API can grow without
/// changing signatures.
///
/// Keys: `summary` (s, required), `subtitle` (s), `body` (s), `app-name` (s), `icon` (s), `sound` (s),
/// `urgency` (y: 0 low, 1 normal, 2 critical), `expire-timeout` (i, milliseconds; -1 server default,
/// 0 never), `actions` (a(ss): key, label), `category` (s), `user-info` (a{sv}, `UserInfoWire`; a{ss}
/// from older clients), `desktop-entry` (s), `hints` (a{sv}), `badge` (u: the launcher icon's count, 0
/// clears it), `markup` (b: the body is written in the specification's markup, `BodyMarkup`). Unknown
/// keys are refused, so a typo is not silently ignored.
public enum ContentWire {
    public static let keys: Set<String> = [
        "summary", "subtitle", "body", "app-name", "icon", "sound", "urgency", "expire-timeout", "actions",
        "category", "user-info", "desktop-entry", "hints", "badge", "markup",
    ]

    public static func encode(_ content: NotificationContent) -> DBusValue {
        var record = WireRecord()
        record.set("summary", content.summary)
        record.set("subtitle", content.subtitle)
        if !content.body.isEmpty { record.set("body", content.body) }
        if content.markup { record.set("markup", .boolean(true)) }
        if !content.appName.isEmpty { record.set("app-name", content.appName) }
        if !content.icon.isEmpty { record.set("icon", content.icon) }
        record.set("sound", content.sound)
        if let urgency = content.urgency { record.set("urgency", .byte(urgency.rawValue)) }
        if content.expireTimeout != -1 { record.set("expire-timeout", .int32(content.expireTimeout)) }
        if !content.actions.isEmpty {
            let pairs = content.actions.map { DBusValue.structure([.string($0.key), .string($0.label)]) }
            record.set("actions", .array(element: .structure([.string, .string]), pairs))
        }
        record.set("category", content.category)
        record.set("desktop-entry", content.desktopEntry)
        if let badge = content.badge { record.set("badge", .uint32(UInt32(clamping: badge))) }
        if !content.hints.isEmpty {
            record.set(
                "hints",
                .dictionary(
                    key: .string, value: .variant,
                    content.hints.sorted { $0.key < $1.key }.map {
                        DBusDictEntry(.string($0.key), .variant($0.value.dbusValue))
                    }
                ))
        }
        if !content.userInfo.isEmpty { record.set("user-info", UserInfoWire.encode(content.userInfo)) }
        return record.value
    }

    public static func decode(_ value: DBusValue, what: String = "content") throws(DBusError) -> NotificationContent {
        let fields = try WireFields(value, what: what)
        try fields.refuseUnknown(known: keys)
        return try decode(fields)
    }

    /// The longest name (app-name, sound, desktop-entry, an action's label) in bytes.
    public static let maximumNameBytes = 1_000
    /// The longest identifier (category, an action's key, a hint's name) in bytes.
    public static let maximumKeyBytes = 200
    /// The longest icon (a name, a path or a file:// URI) in bytes.
    public static let maximumIconBytes = 4_096

    static func decode(_ fields: WireFields) throws(DBusError) -> NotificationContent {
        let summaryLimit = NotificationContent.maximumSummaryLength
        var content = NotificationContent(summary: try fields.string("summary", maximumBytes: summaryLimit) ?? "")
        content.subtitle = try fields.string("subtitle", maximumBytes: summaryLimit)
        content.body = try fields.string("body", maximumBytes: NotificationContent.maximumBodyLength) ?? ""
        content.markup = try fields.bool("markup") ?? false
        content.appName = try fields.string("app-name", maximumBytes: maximumNameBytes) ?? ""
        content.icon = try fields.string("icon", maximumBytes: maximumIconBytes) ?? ""
        content.sound = try fields.string("sound", maximumBytes: maximumNameBytes)
        content.category = try fields.string("category", maximumBytes: maximumKeyBytes)
        content.userInfo = try UserInfoWire.decode(fields, key: "user-info") ?? [:]
        content.desktopEntry = try fields.string("desktop-entry", maximumBytes: maximumNameBytes)
        content.badge = try fields.uint32("badge").map(Int.init)
        if case .dictionary(_, _, let entries)? = try fields.value("hints", WireRecord.type) {
            guard entries.count <= NotificationContent.maximumHints else {
                throw invalid(
                    "\(fields.what) key \"hints\" has \(entries.count) hints, more than the "
                        + "\(NotificationContent.maximumHints) allowed")
            }
            for entry in entries {
                guard case .string(let name) = entry.key, case .variant(let value) = entry.value else { continue }
                try fields.checkLength(name, key: "hints", maximumBytes: maximumKeyBytes)
                guard content.hints[name] == nil else {
                    throw invalid("\(fields.what) hint \(excerpt(name)) appears twice")
                }
                // Exactly one variant around the value, as the specification's hints have it.
                switch value {
                case .string(let s):
                    try fields.checkLength(s, key: "hints", maximumBytes: WireFields.maximumStringBytes)
                    content.hints[name] = .string(s)
                case .int32(let i): content.hints[name] = .int(i)
                case .double(let d):
                    guard d.isFinite else {
                        throw invalid("\(fields.what) hint \(excerpt(name)) must be a finite number, not \(d)")
                    }
                    content.hints[name] = .double(d)
                case .byte(let b): content.hints[name] = .byte(b)
                case .boolean(let b): content.hints[name] = .boolean(b)
                case let other:
                    throw invalid(
                        "\(fields.what) hint \(excerpt(name)) has type \(other.type); hints are s, i, d, y or b")
                }
            }
        }
        if let raw = try fields.value("urgency", .byte) {
            guard case .byte(let b) = raw, let urgency = Urgency(rawValue: b) else {
                throw invalid("\(fields.what) key \"urgency\" must be 0 (low), 1 (normal) or 2 (critical)")
            }
            content.urgency = urgency
        }
        if case .int32(let t)? = try fields.value("expire-timeout", .int32) { content.expireTimeout = t }
        if case .array(_, let pairs)? = try fields.value("actions", .array(.structure([.string, .string]))) {
            guard pairs.count <= NotificationContent.maximumActions else {
                throw invalid(
                    "\(fields.what) key \"actions\" has \(pairs.count) actions, more than the "
                        + "\(NotificationContent.maximumActions) allowed")
            }
            for pair in pairs {
                guard case .structure(let f) = pair, case .string(let key) = f[0], case .string(let label) = f[1]
                else { continue }
                try fields.checkLength(key, key: "actions", maximumBytes: maximumKeyBytes)
                try fields.checkLength(label, key: "actions", maximumBytes: maximumNameBytes)
                content.actions.append(NotificationAction(key: key, label: label))
            }
        }
        do {
            try content.validate()
        } catch {
            throw invalid("\(fields.what): \(error.message)")
        }
        return content
    }
}

/// When to deliver, as an `a{sv}`. Either `at` (x, microseconds since the Unix epoch, UTC) for a
/// one-off, or one rule for a repeating item: `every` (s, a phrase), `rrule` (s, RFC 5545, with an
/// optional `dtstart`, s, local ISO 8601), `on-calendar` (s, systemd.time(7)) or `date-rule` (s, a resolved
/// DateBuilder rule as JSON, which ChimeKit sends), each with an optional
/// `tz` (s, an IANA zone; without it the rule follows the system zone). `until` (x) ends it, `count` (u)
/// limits how often it fires. `replaces-id` (u) names a server's notification the first popup replaces.
/// `escalate-every` (d, seconds, 60 to 86400) shows each occurrence again while nobody reacts to it, one
/// urgency higher each time, at most `escalate-times` (u, 1 to 10; 3 when left out) times.
/// `group` (s, a group id) puts the item in the caller's group of that id, made when there is none: the
/// item becomes one entry of the group's timeline, so a later `Reschedule` of the group replaces it with
/// the rest. An empty dictionary means now.
public struct TriggerWire: Hashable, Sendable {
    public static let keys: Set<String> = [
        "at", "every", "rrule", "dtstart", "on-calendar", "date-rule", "tz", "until", "count", "replaces-id",
        "group", "escalate-every", "escalate-times", "offset", "wake",
    ]

    /// The longest `date-rule` accepted, in bytes (a rule with 64 days per period is far shorter).
    public static let maximumDateRuleLength = 16_384

    public var at: Date?
    public var rule: WrittenRule?
    public var timeZone: String?
    public var until: Date?
    public var count: Int?
    /// The notification (a server's id) the first popup replaces, like notify-send's `--replace-id`.
    public var replacesID: UInt32?
    /// The caller's group the item joins (nil: an item on its own).
    public var group: String?
    /// Each occurrence shown again while nobody reacts to it.
    public var escalation: Escalation?
    /// Fire this long before or after each occurrence of the rule (`offset`, s: `-15m`, `-1d`).
    public var offset: OccurrenceOffset?
    /// Wake the machine from suspend for each occurrence (`wake`, b; docs/wake.md).
    public var wake = false

    public init(
        at: Date? = nil, rule: WrittenRule? = nil, timeZone: String? = nil, until: Date? = nil, count: Int? = nil,
        replacesID: UInt32? = nil, group: String? = nil, escalation: Escalation? = nil
    ) {
        self.escalation = escalation
        self.replacesID = replacesID
        self.group = group
        self.at = at
        self.rule = rule
        self.timeZone = timeZone
        self.until = until
        self.count = count
    }

    public var encoded: DBusValue {
        var record = WireRecord()
        encode(into: &record)
        return record.value
    }

    func encode(into record: inout WireRecord) {
        record.set("at", at)
        switch rule {
        case .phrase(let text)?: record.set("every", text)
        case .rrule(let text, let dtstart)?:
            record.set("rrule", text)
            record.set("dtstart", dtstart?.description)
        case .onCalendar(let text)?: record.set("on-calendar", text)
        case .dateRule(let rule)?: record.set("date-rule", Self.json(rule))
        case nil: break
        }
        record.set("tz", timeZone)
        record.set("until", until)
        if let count { record.set("count", .uint32(UInt32(clamping: count))) }
        if let replacesID { record.set("replaces-id", .uint32(replacesID)) }
        record.set("group", group)
        if let escalation {
            record.set("escalate-every", .double(escalation.every))
            record.set("escalate-times", .uint32(UInt32(clamping: escalation.times)))
        }
        record.set("offset", offset?.description)
        if wake { record.set("wake", true) }
    }

    /// Reads and checks a trigger; the message of a refusal names the key.
    public static func decode(_ value: DBusValue) throws(DBusError) -> TriggerWire {
        let fields = try WireFields(value, what: "trigger")
        try fields.refuseUnknown(known: keys)
        return try decode(fields)
    }

    /// The longest rule (`every`, `rrule`, `on-calendar`) in bytes.
    public static let maximumRuleBytes = 1_000
    /// The longest `rrule` in bytes: a set with its RDATE and EXDATE lines (a calendar's series with its
    /// exceptions) is longer than a rule alone.
    public static let maximumRRuleBytes = WrittenRule.maximumRRuleSetBytes
    /// The longest time zone name in bytes.
    public static let maximumZoneBytes = 255

    static func decode(_ fields: WireFields) throws(DBusError) -> TriggerWire {
        var trigger = TriggerWire()
        trigger.at = try fields.date("at")
        var rules: [WrittenRule] = []
        if let text = try fields.string("every", maximumBytes: maximumRuleBytes) { rules.append(.phrase(text)) }
        if let text = try fields.string("on-calendar", maximumBytes: maximumRuleBytes) {
            rules.append(.onCalendar(text))
        }
        if let text = try fields.string("date-rule", maximumBytes: maximumDateRuleLength) {
            rules.append(.dateRule(try dateRule(text, what: fields.what)))
        }
        let dtstart = try fields.string("dtstart", maximumBytes: maximumZoneBytes)
        if let text = try fields.string("rrule", maximumBytes: maximumRRuleBytes) {
            var start: LocalDateTime?
            if let dtstart {
                guard let parsed = LocalDateTime(iso: dtstart) else {
                    throw invalid(
                        "\(fields.what) key \"dtstart\" must be local ISO 8601 time such as 2026-12-01T09:00:00")
                }
                start = parsed
            }
            rules.append(.rrule(text, dtstart: start))
        } else if dtstart != nil {
            throw invalid("\(fields.what) key \"dtstart\" goes with \"rrule\" only")
        }
        guard rules.count <= 1 else {
            throw invalid("\(fields.what): give one rule: every, rrule, on-calendar or date-rule")
        }
        trigger.rule = rules.first
        if trigger.rule != nil, trigger.at != nil {
            throw invalid("\(fields.what): give either \"at\" for a one-off or a rule for a repeating item, not both")
        }
        trigger.timeZone = try fields.string("tz", maximumBytes: maximumZoneBytes)
        if let zone = trigger.timeZone {
            guard trigger.rule != nil else { throw invalid("\(fields.what) key \"tz\" goes with a rule only") }
            guard Zone(identifier: zone) != nil else {
                throw invalid("\(fields.what): unknown time zone \"\(zone)\"; use an IANA name such as Europe/Berlin")
            }
        }
        trigger.until = try fields.date("until")
        if let count = try fields.uint32("count") {
            guard count > 0 else { throw invalid("\(fields.what) key \"count\" must be at least 1") }
            trigger.count = Int(count)
        }
        trigger.replacesID = try fields.uint32("replaces-id")
        trigger.escalation = try escalation(fields)
        if let text = try fields.string("offset", maximumBytes: 64) {
            guard trigger.rule != nil else {
                throw invalid("\(fields.what) key \"offset\" goes with a rule only (it moves each occurrence)")
            }
            do {
                trigger.offset = try OccurrenceOffset.parse(text)
            } catch {
                throw invalid("\(fields.what) key \"offset\": \(error)")
            }
        }
        if let group = try fields.string("group") {
            do {
                try TimelineGroup.validateIdentifier(group, what: "group id")
            } catch {
                throw invalid("\(fields.what) key \"group\": \(error.message)")
            }
            trigger.group = group
        }
        trigger.wake = try fields.bool("wake") ?? false
        return trigger
    }

    static func escalation(_ fields: WireFields) throws(DBusError) -> Escalation? {
        let times = try fields.uint32("escalate-times")
        guard let every = try fields.seconds("escalate-every", maximum: Escalation.longestInterval) else {
            guard times == nil else {
                throw invalid("\(fields.what) key \"escalate-times\" goes with \"escalate-every\" only")
            }
            return nil
        }
        let escalation = Escalation(every: every, times: times.map { Int($0) } ?? Escalation.defaultTimes)
        if let problem = escalation.problem {
            throw invalid("\(fields.what): \(problem) (keys \"escalate-every\", \"escalate-times\")")
        }
        return escalation
    }

    static func json(_ rule: DateRule) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        // A DateRule always encodes (plain numbers and strings).
        return (try? encoder.encode(rule)).map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Decodes a `date-rule` and checks every field's range before anything computes with it: the JSON
    /// is ChimeKit's encoding, but any caller can send any numbers in it.
    static func dateRule(_ text: String, what: String) throws(DBusError) -> DateRule {
        let rule: DateRule
        do {
            rule = try JSONDecoder().decode(DateRule.self, from: Data(text.utf8))
        } catch {
            throw invalid(
                "\(what) key \"date-rule\" is not a DateBuilder rule as ChimeKit encodes it (\(error)); from other "
                    + "languages use every, rrule or on-calendar")
        }
        if let problem = rule.rangeProblem {
            throw invalid("\(what) key \"date-rule\" has a field out of range: \(problem)")
        }
        if case .named(let zone) = rule.timeZone, Zone(identifier: zone) == nil {
            throw invalid(
                "\(what) key \"date-rule\" names an unknown time zone; use an IANA name such as Europe/Berlin")
        }
        return rule
    }

    /// The trigger as a timeline entry's, `now` standing in for a missing `at`.
    public func entryTrigger(now: Date) -> EntryTrigger {
        if let rule { return .rule(rule, timeZone: timeZone) }
        return .at(at ?? now)
    }

    public init(_ entry: TimelineEntry) {
        switch entry.trigger {
        case .at(let date): self.init(at: date)
        case .rule(let rule, let zone): self.init(rule: rule, timeZone: zone)
        }
        until = entry.endDate
        count = entry.maximumOccurrences
        escalation = entry.escalation
        offset = entry.offset
        wake = entry.wake
    }
}

extension NotificationHint {
    /// The hint as a D-Bus value, as `Notify` and the `hints` key carry it.
    public var dbusValue: DBusValue {
        switch self {
        case .string(let s): .string(s)
        case .int(let i): .int32(i)
        case .double(let d): .double(d)
        case .byte(let b): .byte(b)
        case .boolean(let b): .boolean(b)
        }
    }
}

/// User info on the wire: an `a{sv}` whose values are property-list values. `s` is a string, `x` an integer
/// (`y`, `n`, `q`, `i`, `u` and `t` up to 2^63-1 are taken as integers too), `d` a finite double, `b` a
/// boolean, `ay` data, `av` an array, `a{sv}` a dictionary, and the structure `(sx)` = ("date",
/// microseconds since 1970-01-01 UTC) a date. An `a{ss}`, as older clients send it, is taken as strings.
///
/// Limits: at most `UserInfoValue.maximumDepth` arrays and dictionaries inside one another, at most
/// `maximumValues` values in all, and `NotificationContent.maximumUserInfoBytes` bytes in all (the bytes of
/// keys, strings and data, 8 for any other value).
public enum UserInfoWire {
    /// The most values (scalars, arrays and dictionaries) one user info may hold.
    public static let maximumValues = 2_000

    public static func encode(_ info: [String: UserInfoValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            info.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant(encode($0.value))) })
    }

    public static func encode(_ value: UserInfoValue) -> DBusValue {
        switch value {
        case .string(let text): .string(text)
        case .integer(let number): .int64(number)
        case .double(let number): .double(number)
        case .bool(let flag): .boolean(flag)
        case .date(let date): .structure([.string("date"), .int64(WireTime.microseconds(date))])
        case .data(let data): .bytes(Array(data))
        case .array(let items): .array(element: .variant, items.map { .variant(encode($0)) })
        case .dictionary(let items): encode(items)
        }
    }

    /// Reads `key` of `fields` as user info (nil when absent), checking every limit; a refusal names the
    /// key and where in it the value is.
    public static func decode(_ fields: WireFields, key: String) throws(DBusError) -> [String: UserInfoValue]? {
        guard let value = fields[key] else { return nil }
        var reader = Reader(what: "\(fields.what) key \"\(key)\"")
        let info = try reader.dictionary(value, path: "", depth: 0, allowStrings: true)
        guard reader.bytes <= NotificationContent.maximumUserInfoBytes else {
            throw invalid(
                "\(reader.what) takes \(reader.bytes) bytes (keys, strings and data, 8 per other value), more than "
                    + "the \(NotificationContent.maximumUserInfoBytes) allowed")
        }
        return info
    }

    /// Reads a user info value as it is (outside a content record): an `a{sv}` or an `a{ss}`.
    public static func decode(_ value: DBusValue, what: String) throws(DBusError) -> [String: UserInfoValue] {
        var reader = Reader(what: what)
        return try reader.dictionary(value, path: "", depth: 0, allowStrings: true)
    }

    struct Reader {
        let what: String
        var bytes = 0
        var count = 0

        mutating func counted(_ size: Int, at path: String) throws(DBusError) {
            bytes += size
            count += 1
            guard count <= UserInfoWire.maximumValues else {
                throw invalid("\(what) holds more than the \(UserInfoWire.maximumValues) values allowed")
            }
            // Checked as it grows, so that a huge value is refused before it is all read.
            guard bytes <= NotificationContent.maximumUserInfoBytes else {
                throw invalid(
                    "\(what) takes more than the \(NotificationContent.maximumUserInfoBytes) bytes allowed (keys, "
                        + "strings and data, 8 per other value)\(path.isEmpty ? "" : " at \(path)")")
            }
        }

        mutating func dictionary(_ value: DBusValue, path: String, depth: Int, allowStrings: Bool = false)
            throws(DBusError) -> [String: UserInfoValue]
        {
            guard case .dictionary(.string, let valueType, let entries) = value,
                valueType == .variant || (allowStrings && valueType == .string)
            else {
                throw invalid(
                    "\(what)\(path.isEmpty ? "" : " at \(path)") must be a dictionary a{sv}\(allowStrings ? " (or a{ss})" : ""), "
                        + "not \(value.type)")
            }
            var result: [String: UserInfoValue] = [:]
            for entry in entries {
                guard case .string(let name) = entry.key else { continue }
                let inner = path.isEmpty ? name : "\(path).\(name)"
                try counted(name.utf8.count, at: inner)
                let item: UserInfoValue
                if case .variant(let wrapped) = entry.value {
                    item = try self.value(wrapped, path: inner, depth: depth)
                } else {
                    item = try self.value(entry.value, path: inner, depth: depth)
                }
                guard result.updateValue(item, forKey: name) == nil else {
                    throw invalid("\(what) gives \(excerpt(inner)) twice")
                }
            }
            return result
        }

        mutating func value(_ value: DBusValue, path: String, depth: Int) throws(DBusError) -> UserInfoValue {
            switch value {
            case .string(let text):
                guard text.utf8.count <= WireFields.maximumStringBytes else {
                    throw invalid(
                        "\(what) at \(path) is \(text.utf8.count) bytes long, more than the "
                            + "\(WireFields.maximumStringBytes) allowed")
                }
                try counted(text.utf8.count, at: path)
                return .string(text)
            case .int64(let number): return try scalar(.integer(number), at: path)
            case .byte(let number): return try scalar(.integer(Int64(number)), at: path)
            case .int16(let number): return try scalar(.integer(Int64(number)), at: path)
            case .uint16(let number): return try scalar(.integer(Int64(number)), at: path)
            case .int32(let number): return try scalar(.integer(Int64(number)), at: path)
            case .uint32(let number): return try scalar(.integer(Int64(number)), at: path)
            case .uint64(let number):
                guard let exact = Int64(exactly: number) else {
                    throw invalid("\(what) at \(path) is \(number), more than the largest integer, 2^63-1")
                }
                return try scalar(.integer(exact), at: path)
            case .double(let number):
                guard number.isFinite else {
                    throw invalid("\(what) at \(path) is \(number); a number in the user info must be finite")
                }
                return try scalar(.double(number), at: path)
            case .boolean(let flag): return try scalar(.bool(flag), at: path)
            case .structure(let parts):
                guard parts.count == 2, parts[0] == .string("date"), case .int64(let microseconds) = parts[1] else {
                    throw invalid(
                        "\(what) at \(path) is a structure \(value.type); the one structure taken is a date, "
                            + "(sx) = (\"date\", microseconds since 1970-01-01 UTC)")
                }
                guard WireTime.validRange.contains(microseconds) else {
                    throw invalid(
                        "\(what) at \(path): a date must be microseconds since 1970-01-01 UTC from "
                            + "\(WireTime.validRange.lowerBound) to \(WireTime.validRange.upperBound), not \(microseconds)"
                    )
                }
                return try scalar(.date(WireTime.date(microseconds: microseconds)), at: path)
            case .bytes(let bytes):
                try counted(bytes.count, at: path)
                return .data(Data(bytes))
            case .array(.variant, let items):
                try nest(depth, at: path)
                try counted(0, at: path)
                var result: [UserInfoValue] = []
                for (index, item) in items.enumerated() {
                    guard case .variant(let wrapped) = item else { continue }
                    result.append(try self.value(wrapped, path: "\(path)[\(index)]", depth: depth + 1))
                }
                return .array(result)
            case .dictionary(.string, .variant, _):
                try nest(depth, at: path)
                try counted(0, at: path)
                return .dictionary(try dictionary(value, path: path, depth: depth + 1))
            default:
                throw invalid(
                    "\(what) at \(path) has type \(value.type); user info values are s, x (or another integer), d, "
                        + "b, ay, av, a{sv} or a date (sx)")
            }
        }

        mutating func scalar(_ value: UserInfoValue, at path: String) throws(DBusError) -> UserInfoValue {
            try counted(8, at: path)
            return value
        }

        func nest(_ depth: Int, at path: String) throws(DBusError) {
            guard depth < UserInfoValue.maximumDepth else {
                throw invalid(
                    "\(what) at \(path) nests arrays and dictionaries more than \(UserInfoValue.maximumDepth) deep")
            }
        }
    }
}

/// What an app's notifications may say of who sent them, and how its popups are kept apart from other
/// apps' on the server (docs/security.md, "Names an app gives").
///
/// - `desktop-entry` is the app's own desktop file: its app id, or an id that starts with the app id and
///   a dot (as a Flatpak app exports its files), with or without `.desktop`. For a Flatpak app that is
///   its Flatpak id; for an app on the host, the bus name it owns or its executable's name.
/// - `app-name` is a label the app chooses (its app id when it gives none), except `chime`, which
///   chimed's own notifications carry (its questions): no app can make a popup that looks like one.
/// - Hints that make a server replace or stack popups that share their value (`stackingHints`) get the
///   app's id in front of their value when sent, so they match the same app's popups only: an app's own
///   tag still replaces its own popup, never another app's nor chimed's.
///
/// The user's own items (the `chime` command, group files) are not bound: the user names anything.
public enum OwnNames {
    /// The app name of chimed's own notifications.
    public static let chimedAppName = NotificationContent.chimedAppName

    /// Hints with which a server replaces an earlier popup that has the same value: dunst's four
    /// (`x-dunst-stack-tag` and the three it reads as the same, which notify-osd, swaync and mako share).
    public static let stackingHints: Set<String> = [
        "x-dunst-stack-tag", "x-canonical-private-synchronous", "synchronous", "private-synchronous",
    ]

    /// Hints a server shows as the app's name in place of `app-name` (KDE Plasma).
    public static let appNameHints: Set<String> = ["x-kde-display-appname"]

    /// Whether `name` is chimed's own app name, however it is written.
    public static func isReserved(appName name: String) -> Bool { NotificationContent.isChimedAppName(name) }

    /// Whether `entry` names a desktop file of app `appID`.
    public static func isOwn(desktopEntry entry: String, appID: String) -> Bool {
        guard !appID.isEmpty else { return true }
        let id = entry.hasSuffix(".desktop") ? String(entry.dropLast(".desktop".count)) : entry
        return id == appID || id.hasPrefix(appID + ".")
    }

    /// Refuses content of app `appID` that names another app's desktop file, or chimed's own name.
    public static func check(_ content: NotificationContent, appID: String, what: String = "content")
        throws(DBusError)
    {
        guard !appID.isEmpty else { return }
        if let entry = content.desktopEntry, !isOwn(desktopEntry: entry, appID: appID) {
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied,
                message: "\(what) key \"desktop-entry\": \(excerpt(entry)) is not a desktop file of \(appID); an "
                    + "app names only its own (\(appID), or \(appID).NAME)")
        }
        let names =
            [("app-name", content.appName)]
            + appNameHints.sorted().compactMap { hint in
                if case .string(let text)? = content.hints[hint] { (hint, text) } else { nil }
            }
        for (key, name) in names where isReserved(appName: name) {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "\(what) key \"\(key)\": \"\(chimedAppName)\" is the name of chimed's own questions; give "
                    + "your app's name")
        }
    }

    /// The content as the server gets it for a notification of `owner` ("" the user): stacking hints
    /// carry the owner's id, a desktop entry that is not the owner's is left out, and an empty or
    /// reserved app name becomes the owner's id. Content stored before these rules, or made by the app
    /// when due, is bound the same way.
    public static func bound(_ content: NotificationContent, owner: String) -> NotificationContent {
        guard !owner.isEmpty else { return content }
        var bound = content
        for name in stackingHints {
            guard let hint = content.hints[name] else { continue }
            let value: String
            switch hint {
            case .string(let text): value = text
            case .int(let n): value = "\(n)"
            case .double(let d): value = "\(d)"
            case .byte(let b): value = "\(b)"
            case .boolean(let b): value = "\(b)"
            }
            // An empty tag asks for nothing on dunst; it stays empty, so it still asks for nothing.
            bound.hints[name] = .string(value.isEmpty ? "" : "\(owner)/\(value)")
        }
        if let entry = content.desktopEntry, !isOwn(desktopEntry: entry, appID: owner) { bound.desktopEntry = nil }
        if content.appName.isEmpty || isReserved(appName: content.appName) {
            // An app whose id is itself "chime" (an executable of that name) still gets a name of its own.
            bound.appName = isReserved(appName: owner) ? "\(owner) (an app)" : owner
        }
        for name in appNameHints {
            if case .string(let text)? = content.hints[name], isReserved(appName: text) { bound.hints[name] = nil }
        }
        return bound
    }
}
