/// How the evaluation of a permission strategy ended.
public enum PermissionOutcome: Hashable, Sendable {
    /// Both levels passed: schedule.
    case allowed
    /// The group level refused; the system level was not looked at.
    case deniedOnGroupLevel(AuthorizationStatus)
    /// The group level passed and the system level refused.
    case deniedOnSystemLevel(AuthorizationStatus)

    /// Whether notifications may be scheduled.
    public var isAllowed: Bool { self == .allowed }
}

/// A question the daemon shows as an interactive notification, then reports with
/// `PermissionRequest.answer(_:)`.
public enum PermissionQuestion: Hashable, Sendable {
    /// Whether the user wants the notifications of group `id`, in the group's own words.
    case group(id: String, PermissionPrompt)
    /// Whether the user lets `app` schedule notifications at all; the daemon words it.
    case system(app: String)
}

/// A decision to store before carrying out the rest of a step.
public enum PermissionChange: Hashable, Sendable {
    /// Store this decision for the group with this id.
    case group(id: String, GroupAuthorization)
    /// Store this consent for the app with this id.
    case app(String, AppConsent)
}

/// One step of an evaluation: store `changes` first, then either ask `question` and pass its answer to
/// `PermissionRequest.answer(_:)`, or report `outcome`. Exactly one of `question` and `outcome` is set.
public struct PermissionStep: Hashable, Sendable {
    /// Decisions that differ from what the facts (and earlier steps) said, in the order they were made;
    /// an answer that repeats a stored decision changes nothing.
    public var changes: [PermissionChange]
    /// The question to ask next; nil when the evaluation is over.
    public var question: PermissionQuestion?
    /// How the evaluation ended; nil while a question is pending.
    public var outcome: PermissionOutcome?

    /// A step of these parts.
    public init(
        changes: [PermissionChange] = [], question: PermissionQuestion? = nil, outcome: PermissionOutcome? = nil
    ) {
        self.changes = changes
        self.question = question
        self.outcome = outcome
    }
}
