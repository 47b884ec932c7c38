/// The user's decision about one group, as the daemon stores it per group.
///
/// A group the store has no row for is `notAsked`: `PermissionFacts` treats a missing entry that way, so
/// the daemon need not write rows for groups nobody decided about.
public enum GroupAuthorization: String, Codable, Hashable, Sendable, CaseIterable {
    case allowed
    case denied
    case notAsked = "not-asked"

    /// How this stored decision is reported: a denial stored earlier is `deniedPreviously`.
    public var status: AuthorizationStatus {
        switch self {
        case .allowed: .allowed
        case .denied: .deniedPreviously
        case .notAsked: .undetermined
        }
    }
}

/// The user's consent for one app to schedule notifications at all, as the daemon stores it per app: the
/// system level of a permission strategy, like iOS's "App X wants to send notifications".
public enum AppConsent: String, Codable, Hashable, Sendable, CaseIterable {
    case allowed
    case denied
    case undetermined

    /// How this stored consent is reported: a denial stored earlier is `deniedPreviously`.
    public var status: AuthorizationStatus {
        switch self {
        case .allowed: .allowed
        case .denied: .deniedPreviously
        case .undetermined: .undetermined
        }
    }
}

/// What an evaluation, or a status query, reports for one level (group or system).
public enum AuthorizationStatus: String, Codable, Hashable, Sendable, CaseIterable {
    case allowed
    /// The user said no to the question just asked.
    case deniedNow = "denied-now"
    /// The user said no earlier, and nothing was asked this time.
    case deniedPreviously = "denied-previously"
    /// No decision: never asked, or the question could not be shown or went unanswered.
    case undetermined

    /// Whether notifications may be scheduled at this level.
    public var isAllowed: Bool { self == .allowed }
}
