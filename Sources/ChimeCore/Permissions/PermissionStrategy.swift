/// How often a group's question is asked.
public enum AskPermissionMode: String, Codable, Hashable, Sendable {
    /// Ask while the group is not asked yet; once denied, the group stays denied without asking again.
    case once
    /// Ask whenever the group is not allowed, denied before included.
    case alwaysIfNotAllowed = "always-if-not-allowed"
}

/// The group level of a permission strategy: whether the user wants this group's notifications.
///
/// Scheduling outside a group (no group id) has no group level: every case then acts as `bypass`.
public enum GroupPermissionStrategy: Codable, Hashable, Sendable {
    /// Go straight to the system level, leaving the group's stored decision as it is.
    case bypass
    /// Store the group as allowed, overwriting a denial, then go to the system level.
    case allowAutomatically
    /// Go to the system level if the group is allowed; otherwise ask with `prompt` (as `mode` permits),
    /// store the answer, and go on if it allows.
    case askPermission(AskPermissionMode, PermissionPrompt)
    /// Go to the system level only if the group was allowed before; never ask.
    case ifAlreadyAllowed
    /// Go to the system level only if the other group was allowed before; never ask. Lets an app offer
    /// a group only to users who opted in to a related one.
    case ifAllowed(otherGroup: String)
}

/// The system level of a permission strategy: whether the user lets the app schedule notifications at
/// all.
public enum SystemPermissionStrategy: String, Codable, Hashable, Sendable {
    /// Ask for the app's consent if it is undetermined.
    case askPermission = "ask"
    /// Go on only if the app's consent was given before; never ask.
    case ifAlreadyAllowed = "if-already-allowed"
}

/// How to decide whether notifications may be scheduled: the group level first, then, only if it
/// passes, the system level. `PermissionRequest` evaluates it.
public struct PermissionStrategy: Codable, Hashable, Sendable {
    /// The first level.
    public var group: GroupPermissionStrategy
    /// The second level, reached only if the group level passes.
    public var system: SystemPermissionStrategy

    /// A strategy of these two levels.
    public init(group: GroupPermissionStrategy, system: SystemPermissionStrategy) {
        self.group = group
        self.system = system
    }

    /// Ask for the app's consent if it was never given or refused; schedule if it is given.
    public static let askSystemPermissionIfNeeded = PermissionStrategy(group: .bypass, system: .askPermission)
    /// Schedule only if the app's consent was given before; never ask.
    public static let scheduleIfSystemAllowed = PermissionStrategy(group: .bypass, system: .ifAlreadyAllowed)

    /// Checks the prompt's texts and the other group's id; the message says what to change.
    public func validate() throws(PermissionError) {
        switch group {
        case .askPermission(_, let prompt):
            try prompt.validate()
        case .ifAllowed(let otherGroup):
            do {
                try TimelineGroup.validateIdentifier(otherGroup, what: "group id in if-allowed")
            } catch {
                throw PermissionError(error.message)
            }
        case .bypass, .allowAutomatically, .ifAlreadyAllowed:
            break
        }
    }
}
