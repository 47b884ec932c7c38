import Foundation

/// How urgent a notification is, as the freedesktop specification's `urgency` hint says.
public enum Urgency: UInt8, Codable, Sendable, CaseIterable {
    case low = 0
    case normal = 1
    case critical = 2

    /// Parses notify-send's words: `low`, `normal`, `critical`.
    public init?(name: String) {
        switch name.lowercased() {
        case "low": self = .low
        case "normal": self = .normal
        case "critical": self = .critical
        default: return nil
        }
    }

    public var name: String {
        switch self {
        case .low: "low"
        case .normal: "normal"
        case .critical: "critical"
        }
    }
}

/// A value of a notification hint, in the types notify-send's `-h TYPE:NAME:VALUE` names.
public enum NotificationHint: Codable, Hashable, Sendable {
    case string(String)
    case int(Int32)
    case double(Double)
    case byte(UInt8)
    case boolean(Bool)

    /// Parses notify-send's `TYPE:NAME:VALUE` (types `string`, `int`, `double`, `byte`, `boolean`).
    public static func parse(_ text: String) throws(ContentError) -> (name: String, value: NotificationHint) {
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, !parts[1].isEmpty else {
            throw ContentError("the hint \"\(text)\" is not TYPE:NAME:VALUE (e.g. string:x-app:note, int:value:50)")
        }
        let value: NotificationHint?
        switch parts[0] {
        case "string": value = .string(parts[2])
        case "int": value = Int32(parts[2]).map(NotificationHint.int)
        case "double": value = Double(parts[2]).map(NotificationHint.double)
        case "byte": value = UInt8(parts[2]).map(NotificationHint.byte)
        case "boolean", "bool": value = ["true": true, "false": false][parts[2]].map(NotificationHint.boolean)
        default:
            throw ContentError(
                "the hint type \"\(parts[0])\" is not one of string, int, double, byte, boolean")
        }
        guard let value else {
            throw ContentError("the hint value \"\(parts[2])\" is not a \(parts[0])")
        }
        return (parts[1], value)
    }
}

/// One action button: the key reported back when it is chosen, and the label shown.
public struct NotificationAction: Codable, Hashable, Sendable {
    public var key: String
    public var label: String

    public init(key: String, label: String) {
        self.key = key
        self.label = label
    }
}

/// What a notification shows: everything the freedesktop `Notify` call carries, and what chimed keeps
/// for the app (user info).
public struct NotificationContent: Codable, Hashable, Sendable {
    public var appName: String
    public var summary: String
    /// A second line under the summary; servers have no such field, so it is shown as the body's first line.
    public var subtitle: String?
    public var body: String
    /// An icon name from the theme or a `file://` URI.
    public var icon: String
    /// A sound theme name (`message-new-instant`, …), sent as the `sound-name` hint.
    public var sound: String?
    public var urgency: Urgency?
    /// Milliseconds; -1 lets the server decide, 0 never expires.
    public var expireTimeout: Int32
    public var actions: [NotificationAction]
    /// The `category` hint (`email.arrived`, `im.received`, …).
    public var category: String?
    /// Data for the app, handed back with its action events; never shown. Property-list values; user info
    /// stored by earlier versions, strings only, reads as `.string` values.
    public var userInfo: [String: UserInfoValue]
    /// The app's desktop entry (`org.example.App`), sent as the `desktop-entry` hint; a foreground action
    /// chosen while the app is not running activates it through this id.
    public var desktopEntry: String?
    /// More hints for the server, by name (`x-kde-…`, `value`, …); the named fields above win over these.
    public var hints: [String: NotificationHint]
    /// The count to show on the app's launcher icon when this is delivered (Unity's LauncherEntry, which
    /// docks and panels follow); 0 clears it, nil leaves it as it is.
    public var badge: Int?
    /// Whether the body is written in the specification's markup (`<b>`, `<i>`, `<u>`, `<a href>`,
    /// `<img>`): a server that reads markup gets it sanitized (`BodyMarkup.sanitized`), one that does not
    /// gets the text without the tags. False: the body is plain text, shown as written everywhere.
    public var markup = false

    public init(
        appName: String = "", summary: String, subtitle: String? = nil, body: String = "", icon: String = "",
        sound: String? = nil, urgency: Urgency? = nil, expireTimeout: Int32 = -1, actions: [NotificationAction] = [],
        category: String? = nil, userInfo: [String: UserInfoValue] = [:], hints: [String: NotificationHint] = [:]
    ) {
        self.hints = hints
        self.appName = appName
        self.summary = summary
        self.subtitle = subtitle
        self.body = body
        self.icon = icon
        self.sound = sound
        self.urgency = urgency
        self.expireTimeout = expireTimeout
        self.actions = actions
        self.category = category
        self.userInfo = userInfo
    }

    enum CodingKeys: String, CodingKey {
        case appName, summary, subtitle, body, icon, sound, urgency, expireTimeout, actions, category, userInfo
        case desktopEntry, hints, badge, markup
    }

    /// Reads stored content; keys added in later versions may be missing.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            appName: try c.decodeIfPresent(String.self, forKey: .appName) ?? "",
            summary: try c.decode(String.self, forKey: .summary),
            subtitle: try c.decodeIfPresent(String.self, forKey: .subtitle),
            body: try c.decodeIfPresent(String.self, forKey: .body) ?? "",
            icon: try c.decodeIfPresent(String.self, forKey: .icon) ?? "",
            sound: try c.decodeIfPresent(String.self, forKey: .sound),
            urgency: try c.decodeIfPresent(Urgency.self, forKey: .urgency),
            expireTimeout: try c.decodeIfPresent(Int32.self, forKey: .expireTimeout) ?? -1,
            actions: try c.decodeIfPresent([NotificationAction].self, forKey: .actions) ?? [],
            category: try c.decodeIfPresent(String.self, forKey: .category),
            userInfo: try c.decodeIfPresent([String: UserInfoValue].self, forKey: .userInfo) ?? [:])
        desktopEntry = try c.decodeIfPresent(String.self, forKey: .desktopEntry)
        hints = try c.decodeIfPresent([String: NotificationHint].self, forKey: .hints) ?? [:]
        badge = try c.decodeIfPresent(Int.self, forKey: .badge)
        markup = try c.decodeIfPresent(Bool.self, forKey: .markup) ?? false
    }

    /// Writes only what differs from the defaults `init(from:)` fills in: most content is a summary and
    /// little else, and every stored item carries its content.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(summary, forKey: .summary)
        if !appName.isEmpty { try c.encode(appName, forKey: .appName) }
        try c.encodeIfPresent(subtitle, forKey: .subtitle)
        if !body.isEmpty { try c.encode(body, forKey: .body) }
        if !icon.isEmpty { try c.encode(icon, forKey: .icon) }
        try c.encodeIfPresent(sound, forKey: .sound)
        try c.encodeIfPresent(urgency, forKey: .urgency)
        if expireTimeout != -1 { try c.encode(expireTimeout, forKey: .expireTimeout) }
        if !actions.isEmpty { try c.encode(actions, forKey: .actions) }
        try c.encodeIfPresent(category, forKey: .category)
        if !userInfo.isEmpty { try c.encode(userInfo, forKey: .userInfo) }
        try c.encodeIfPresent(desktopEntry, forKey: .desktopEntry)
        if !hints.isEmpty { try c.encode(hints, forKey: .hints) }
        try c.encodeIfPresent(badge, forKey: .badge)
        if markup { try c.encode(markup, forKey: .markup) }
    }

    /// The body as a server shows it: the subtitle, when there is one, as its first line.
    public var displayedBody: String {
        guard let subtitle, !subtitle.isEmpty else { return body }
        return body.isEmpty ? subtitle : subtitle + "\n" + body
    }

    /// The body as `Notify` carries it to a server that reads markup (`bodyMarkup`) or not: the subtitle
    /// as its first line, plain text escaped for a markup server, a markup body sanitized for one and
    /// without its tags for the other. With `basicMarkup` the server reads `<b>`, `<i>` and `<u>` only
    /// (`BodyMarkup.basic`).
    public func notifyBody(bodyMarkup: Bool, basicMarkup: Bool = false) -> String {
        let text: String
        switch (markup, bodyMarkup) {
        case (false, false): return displayedBody
        case (false, true): return BodyMarkup.escaped(displayedBody)
        case (true, true): text = basicMarkup ? BodyMarkup.basic(body) : BodyMarkup.sanitized(body)
        case (true, false): text = BodyMarkup.plain(body)
        }
        guard let subtitle, !subtitle.isEmpty else { return text }
        let line = bodyMarkup ? BodyMarkup.escaped(subtitle) : subtitle
        return text.isEmpty ? line : line + "\n" + text
    }

    /// Limits that keep one bad request from hurting the daemon or the notification server.
    public static let maximumSummaryLength = 1_000
    public static let maximumBodyLength = 16_000
    public static let maximumActions = 16
    public static let maximumUserInfoBytes = 16_000
    public static let maximumHints = 32
    /// The most bytes one notification's content may take (`byteSize`): 64 KiB.
    public static let maximumBytes = 65_536

    /// What the content takes, counted as a caller's quota counts it: the UTF-8 bytes of every text
    /// (summary, subtitle, body, app name, icon, sound, category, desktop entry, each action's key and
    /// label, each user-info key, string and data value, each hint's name and text) and 8 bytes for any other
    /// hint or user-info value.
    public var byteSize: Int {
        var total = summary.utf8.count + body.utf8.count + appName.utf8.count + icon.utf8.count
        total += (subtitle?.utf8.count ?? 0) + (sound?.utf8.count ?? 0) + (category?.utf8.count ?? 0)
        total += desktopEntry?.utf8.count ?? 0
        for action in actions { total += action.key.utf8.count + action.label.utf8.count }
        total += userInfo.userInfoByteSize
        for (name, hint) in hints {
            total += name.utf8.count
            if case .string(let text) = hint { total += text.utf8.count } else { total += 8 }
        }
        return total
    }

    /// Checks sizes and values; the message says what to change.
    public func validate() throws(ContentError) {
        guard !summary.isEmpty else { throw ContentError("the summary is empty; give the notification a title") }
        guard summary.utf8.count <= Self.maximumSummaryLength else {
            throw ContentError("the summary is longer than \(Self.maximumSummaryLength) bytes; shorten it")
        }
        guard body.utf8.count <= Self.maximumBodyLength else {
            throw ContentError("the body is longer than \(Self.maximumBodyLength) bytes; shorten it")
        }
        guard (subtitle?.utf8.count ?? 0) <= Self.maximumSummaryLength else {
            throw ContentError("the subtitle is longer than \(Self.maximumSummaryLength) bytes; shorten it")
        }
        if let badge {
            guard (0...Int(UInt32.max)).contains(badge) else {
                throw ContentError("the badge is \(badge); a badge count is 0 (to clear it) to \(UInt32.max)")
            }
        }
        guard hints.count <= Self.maximumHints else {
            throw ContentError("\(hints.count) hints is more than the \(Self.maximumHints) allowed")
        }
        let userInfoBytes = userInfo.userInfoByteSize
        guard userInfoBytes <= Self.maximumUserInfoBytes else {
            throw ContentError(
                "the user info takes \(userInfoBytes) bytes (strings and data, 8 per other value), more than the "
                    + "\(Self.maximumUserInfoBytes) allowed; keep less in it")
        }
        for key in userInfo.keys.sorted() {
            guard let value = userInfo[key] else { continue }
            guard value.depth <= UserInfoValue.maximumDepth else {
                throw ContentError(
                    "the user info \(key) nests \(value.depth) arrays and dictionaries, more than the "
                        + "\(UserInfoValue.maximumDepth) allowed")
            }
            if let (path, number) = value.firstNonFinite(at: key) {
                throw ContentError("the user info \(path) is \(number); a number in the user info must be finite")
            }
        }
        for (name, hint) in hints {
            guard case .double(let value) = hint, !value.isFinite else { continue }
            throw ContentError("the hint \(name) is \(value); a number hint must be finite")
        }
        let bytes = byteSize
        guard bytes <= Self.maximumBytes else {
            throw ContentError(
                "the content takes \(bytes) bytes, more than the \(Self.maximumBytes) a notification may; "
                    + "shorten its texts or hints")
        }
        guard expireTimeout >= -1 else {
            throw ContentError(
                "expire timeout \(expireTimeout) is negative; use -1 (server default), 0 or milliseconds")
        }
        guard actions.count <= Self.maximumActions else {
            throw ContentError("\(actions.count) actions is more than the \(Self.maximumActions) allowed")
        }
        var keys = Set<String>()
        for action in actions {
            guard !action.key.isEmpty else { throw ContentError("an action has an empty key; write KEY=LABEL") }
            guard keys.insert(action.key).inserted else {
                throw ContentError("the action key \"\(action.key)\" appears twice; keys must be unique")
            }
        }
    }
}

/// Notification content that cannot be shown, with what to change.
public struct ContentError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
