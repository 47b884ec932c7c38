/// The stored decisions of every app's groups, by app and then by group id: one app's decisions are
/// found, and counted, without visiting any other app's, so an evaluation costs the same however many
/// decisions other apps keep.
public struct GroupAuthorizations: Hashable, Sendable {
    private var byApp: [String: [String: GroupAuthorization]] = [:]

    /// No decisions.
    public init() {}

    /// The decisions `rows` holds, as the store reads them.
    public init(_ rows: [GroupKey: GroupAuthorization]) {
        for (key, status) in rows { self[key] = status }
    }

    /// The stored decision of a group; nil when there is none. Setting nil forgets it.
    public subscript(key: GroupKey) -> GroupAuthorization? {
        get { byApp[key.owner]?[key.id] }
        set {
            byApp[key.owner, default: [:]][key.id] = newValue
            if byApp[key.owner]?.isEmpty == true { byApp[key.owner] = nil }
        }
    }

    /// How many groups of `app` have a stored decision.
    public func count(app: String) -> Int {
        byApp[app]?.count ?? 0
    }

    /// The facts' decisions for an evaluation of `strategy` for `app` and `group`: only those of the
    /// groups the evaluation reads (`group`, and `ifAllowed`'s other group), so that building them costs
    /// the same however many the app keeps.
    public func decisions(app: String, strategy: GroupPermissionStrategy, group: String?) -> [String:
        GroupAuthorization]
    {
        guard let group, let decided = byApp[app] else { return [:] }
        var ids = [group]
        if case .ifAllowed(let otherGroup) = strategy { ids.append(otherGroup) }
        var decisions: [String: GroupAuthorization] = [:]
        for id in ids { decisions[id] = decided[id] }
        return decisions
    }
}

extension GroupPermissionStrategy {
    /// Whether evaluating this level for a group may store a decision for it: `allowAutomatically` does,
    /// and so does the answer to `askPermission`'s question.
    public var mayStoreDecision: Bool {
        switch self {
        case .allowAutomatically, .askPermission: true
        case .bypass, .ifAlreadyAllowed, .ifAllowed: false
        }
    }
}
