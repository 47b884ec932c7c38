/// The texts of the question shown before a group's notifications are let through: an interactive
/// notification with an allow and a deny button. The app (or the group file) may set each text.
public struct PermissionPrompt: Codable, Hashable, Sendable {
    /// The notification's summary.
    public var title: String
    /// The notification's body; may be empty.
    public var message: String
    /// The label of the button that allows the group.
    public var allowLabel: String
    /// The label of the button that denies the group.
    public var denyLabel: String

    /// The title when the app sets none.
    public static let defaultTitle = "Allow notifications?"
    /// The message when the app sets none.
    public static let defaultMessage = "Notifications of this group are shown only if you allow them."
    /// The allow button's label when the app sets none.
    public static let defaultAllowLabel = "Allow"
    /// The deny button's label when the app sets none.
    public static let defaultDenyLabel = "Don't Allow"

    /// A prompt whose texts not given are the defaults.
    public init(
        title: String = Self.defaultTitle, message: String = Self.defaultMessage,
        allowLabel: String = Self.defaultAllowLabel, denyLabel: String = Self.defaultDenyLabel
    ) {
        self.title = title
        self.message = message
        self.allowLabel = allowLabel
        self.denyLabel = denyLabel
    }

    enum CodingKeys: String, CodingKey {
        case title, message, allowLabel, denyLabel
    }

    /// Reads a prompt in which any text may be missing; a missing one takes its default, so an app sets
    /// only the texts it cares about.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            title: try c.decodeIfPresent(String.self, forKey: .title) ?? Self.defaultTitle,
            message: try c.decodeIfPresent(String.self, forKey: .message) ?? Self.defaultMessage,
            allowLabel: try c.decodeIfPresent(String.self, forKey: .allowLabel) ?? Self.defaultAllowLabel,
            denyLabel: try c.decodeIfPresent(String.self, forKey: .denyLabel) ?? Self.defaultDenyLabel)
    }

    // Labels are kept short because servers show them on buttons side by side.
    /// The longest title, in UTF-8 bytes.
    public static let maximumTitleLength = 200
    /// The longest message, in UTF-8 bytes.
    public static let maximumMessageLength = 1_000
    /// The longest button label, in UTF-8 bytes.
    public static let maximumLabelLength = 40

    /// Checks that every text can be shown; the message says what to change.
    public func validate() throws(PermissionError) {
        guard !title.isEmpty else {
            throw PermissionError("the permission prompt's title is empty; give it a question")
        }
        guard title.utf8.count <= Self.maximumTitleLength else {
            throw PermissionError(
                "the permission prompt's title is longer than \(Self.maximumTitleLength) bytes; shorten it")
        }
        guard message.utf8.count <= Self.maximumMessageLength else {
            throw PermissionError(
                "the permission prompt's message is longer than \(Self.maximumMessageLength) bytes; shorten it")
        }
        for (label, what) in [(allowLabel, "allow"), (denyLabel, "deny")] {
            guard !label.isEmpty else {
                throw PermissionError("the permission prompt's \(what) label is empty; name the button")
            }
            guard label.utf8.count <= Self.maximumLabelLength else {
                throw PermissionError(
                    "the permission prompt's \(what) label is longer than \(Self.maximumLabelLength) bytes; shorten it"
                )
            }
        }
        // A question the user cannot read is no question: no control characters (the message may break
        // lines).
        for (text, what) in [(title, "title"), (allowLabel, "allow label"), (denyLabel, "deny label")]
        where text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw PermissionError("the permission prompt's \(what) has control characters; write plain text")
        }
        if message.unicodeScalars.contains(where: { $0 != "\n" && $0.properties.generalCategory == .control }) {
            throw PermissionError("the permission prompt's message has control characters; write plain text")
        }
        // Two buttons with one label would leave the user guessing which one allows.
        guard allowLabel != denyLabel else {
            throw PermissionError(
                "the permission prompt's allow and deny labels are both \"\(allowLabel)\"; make them differ")
        }
    }
}

/// A permission strategy or prompt that cannot be used, with what to change.
public struct PermissionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// One sentence saying what is wrong and what to change.
    public var message: String
    /// An error with this message.
    public init(_ message: String) { self.message = message }
    /// The message.
    public var description: String { message }
}
