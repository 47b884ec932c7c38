import Foundation

/// A named set of actions that notifications carry, registered by an app or declared in a group file
/// (like `UNNotificationCategory`): an entry names its category, and each of its notifications shows
/// these actions.
public struct ActionCategory: Codable, Hashable, Sendable {
    public var id: String
    public var actions: [CategoryAction]
    /// The action a click on the notification itself means (the specification's `default` key); nil: the
    /// click only dismisses it.
    public var defaultAction: String?
    /// The actions to show on a server that shows only a couple of buttons (at most two); nil: the first two.
    public var minimalActions: [String]?

    public init(id: String, actions: [CategoryAction], defaultAction: String? = nil, minimalActions: [String]? = nil) {
        self.id = id
        self.actions = actions
        self.defaultAction = defaultAction
        self.minimalActions = minimalActions
    }

    /// The most actions one category may have; servers show few, and a long list helps no one.
    public static let maximumActions = 10

    public func validate() throws(TimelineError) {
        try TimelineGroup.validateIdentifier(id, what: "category id")
        guard !actions.isEmpty || defaultAction != nil else {
            throw TimelineError("category \(id) has no actions; give at least one, or a default action")
        }
        guard actions.count <= Self.maximumActions else {
            throw TimelineError(
                "category \(id) has \(actions.count) actions, more than the \(Self.maximumActions) allowed")
        }
        var seen = Set<String>()
        for action in actions {
            do {
                try action.validate()
            } catch {
                throw TimelineError("category \(id): \(error.message)")
            }
            guard seen.insert(action.id).inserted else {
                throw TimelineError("category \(id): the action \"\(action.id)\" appears twice")
            }
        }
        // An icon is sent as its action's key, so it must tell the actions apart when it comes back.
        var icons = Set<String>()
        for action in actions {
            guard let icon = action.icon else { continue }
            guard icons.insert(icon).inserted, icon == action.id || !seen.contains(icon) else {
                throw TimelineError(
                    "category \(id): the icon \"\(icon)\" of the action \(action.id) is another action's icon or id; "
                        + "give each action an icon of its own")
            }
        }
        if let defaultAction, defaultAction != "default", !seen.contains(defaultAction),
            BuiltInVerb(key: defaultAction) == nil
        {
            throw TimelineError(
                "category \(id): the default action \"\(defaultAction)\" is not one of its actions, a built-in verb, "
                    + "or \"default\" (the click reported to the app as it is)")
        }
        if let minimalActions {
            guard minimalActions.count <= 2 else {
                throw TimelineError("category \(id): give at most two minimal actions")
            }
            if let unknown = minimalActions.first(where: { !seen.contains($0) }) {
                throw TimelineError("category \(id): the minimal action \"\(unknown)\" is not one of its actions")
            }
        }
    }

    /// The actions to show: all of them, or the minimal ones where the server shows at most two.
    public func shownActions(fewButtons: Bool) -> [CategoryAction] {
        guard fewButtons else { return actions }
        let ids = minimalActions ?? actions.prefix(2).map(\.id)
        return actions.filter { ids.contains($0.id) }
    }
}

/// One action of a category.
public struct CategoryAction: Codable, Hashable, Sendable {
    public enum Option: String, Codable, Hashable, Sendable, CaseIterable {
        /// It deletes or ends something; servers that can mark it, do.
        case destructive
        /// It brings the app forward (activated when not running).
        case foreground
        /// It runs only while the session is unlocked; chosen on a locked screen, it waits for unlock.
        case authenticationRequired = "authentication-required"
        /// It asks for a line of text (a reply), where the server can.
        case textInput = "text-input"
    }

    /// The key reported back when it is chosen; a built-in verb (`stop-repeat`, `snooze:10m`,
    /// `skip-next`, `dismiss`) is carried out by chimed itself.
    public var id: String
    public var title: String
    public var options: Set<Option>
    /// A program (and arguments) chimed runs when the action is chosen; nil: the app handles it.
    public var command: [String]?
    /// A freedesktop icon name shown instead of the title where the server has `action-icons` and every
    /// button of the notification has one; nil: the title.
    public var icon: String?

    public init(
        id: String, title: String, options: Set<Option> = [], command: [String]? = nil, icon: String? = nil
    ) {
        self.id = id
        self.title = title
        self.options = options
        self.command = command
        self.icon = icon
    }

    public func validate() throws(TimelineError) {
        guard !id.isEmpty, id != "default", !id.contains(where: \.isWhitespace) else {
            throw TimelineError(
                "the action id \"\(id)\" is not usable; give a word without spaces (\"default\" is the click itself)")
        }
        if id == "snooze" || id.hasPrefix("snooze:"), BuiltInVerb(key: id) == nil {
            throw TimelineError(
                "the action \"\(id)\" looks like a snooze but is not one; write snooze:10m, snooze:1h, … (at most a year)"
            )
        }
        guard !title.isEmpty, title.utf8.count <= 200 else {
            throw TimelineError("the action \(id) needs a title of 1 to 200 bytes")
        }
        if let command, command.first?.isEmpty ?? true {
            throw TimelineError("the action \(id) has an empty command")
        }
        if let icon, !Self.isIconName(icon) {
            throw TimelineError(
                "the action \(id) has the icon \"\(icon.prefix(40))\"; give an icon name of 1 to 255 letters, digits, "
                    + "-, _ and . (not starting with a dot)")
        }
    }

    /// An icon theme name: it is sent as the action's key, so no spaces, slashes or control characters.
    static func isIconName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255 && !name.hasPrefix(".") && name != "default" && name != "inline-reply"
            && name.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E
            }
    }

    /// The built-in verb this action is, if it is one.
    public var verb: BuiltInVerb? { BuiltInVerb(key: id) }
}

/// The actions chimed carries out itself, with no app running.
public enum BuiltInVerb: Hashable, Sendable {
    /// End the entry's future occurrences.
    case stopRepeat
    /// Show the notification again after this many seconds, with the same actions.
    case snooze(TimeInterval)
    /// Skip the entry's next occurrence.
    case skipNext
    /// Close the notification.
    case dismiss

    /// The snooze of a plain `snooze` key.
    public static let defaultSnooze: TimeInterval = 600

    /// The longest snooze a `snooze:DURATION` key may ask for: a year. A longer one is not a built-in
    /// verb but an action key like any other.
    public static let longestSnooze: TimeInterval = 366 * 86_400

    /// Reads an action key: `stop-repeat`, `snooze` or `snooze:DURATION` (`snooze:10m`, `snooze:1h30m`,
    /// at most `longestSnooze`), `skip-next`, `dismiss`; nil for any other key.
    public init?(key: String) {
        switch key {
        case "stop-repeat": self = .stopRepeat
        case "skip-next": self = .skipNext
        case "dismiss": self = .dismiss
        case "snooze": self = .snooze(Self.defaultSnooze)
        default:
            guard key.hasPrefix("snooze:"), let seconds = try? TimeInput.parseDuration(String(key.dropFirst(7))),
                seconds > 0, seconds <= Self.longestSnooze
            else {
                return nil
            }
            self = .snooze(seconds)
        }
    }
}
