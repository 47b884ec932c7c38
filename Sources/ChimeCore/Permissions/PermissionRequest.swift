/// What an evaluation knows when it starts: the stored decisions, and whether a question can be shown.
public struct PermissionFacts: Hashable, Sendable {
    /// The stored decision per group id; a group missing here is `notAsked`.
    public var groupAuthorizations: [String: GroupAuthorization]
    /// The stored consent of the app the request is for.
    public var appConsent: AppConsent
    /// Whether a notification server is there to show a question at all.
    public var serverPresent: Bool

    /// Facts of these parts; by default nothing is decided and a server is there.
    public init(
        groupAuthorizations: [String: GroupAuthorization] = [:], appConsent: AppConsent = .undetermined,
        serverPresent: Bool = true
    ) {
        self.groupAuthorizations = groupAuthorizations
        self.appConsent = appConsent
        self.serverPresent = serverPresent
    }

    /// The stored decision for a group, `notAsked` when there is none.
    public func authorization(ofGroup id: String) -> GroupAuthorization {
        groupAuthorizations[id] ?? .notAsked
    }
}

/// The evaluation of a permission strategy for one app and group: a pure state machine whose methods
/// return what the daemon must do.
///
/// The daemon calls `start()` once, carries out the step (store its changes, then show its question or
/// report its outcome), and, while a step asks a question, passes the answer to `answer(_:)` and
/// carries out the step it returns. The group level is evaluated first; the system level only if the
/// group level passes. So at most two questions are asked: the group's, then the app's consent.
///
/// Calling `answer(_:)` once the outcome is known is allowed and returns that outcome again with no
/// changes: a popup's `ActionInvoked` is commonly followed by its `NotificationClosed`, and the second
/// signal must do no harm. Calling `answer(_:)` before `start()`, or `start()` twice, is a programming
/// error and stops the process.
public struct PermissionRequest: Sendable {
    /// What is evaluated.
    public let strategy: PermissionStrategy
    /// The app asking to schedule.
    public let app: String
    /// The group to schedule in; nil schedules outside a group, where the group level is `bypass`.
    public let group: String?
    /// The facts given to `init`, with the changes of every step so far applied.
    public private(set) var facts: PermissionFacts

    private enum Phase: Hashable, Sendable {
        case notStarted
        case asking(PermissionQuestion)
        case finished(PermissionOutcome)
    }

    private var phase = Phase.notStarted

    /// An evaluation not started yet.
    public init(strategy: PermissionStrategy, app: String, group: String?, facts: PermissionFacts) {
        self.strategy = strategy
        self.app = app
        self.group = group
        self.facts = facts
    }

    /// The question whose answer `answer(_:)` expects; nil before `start()` and once the outcome is known.
    public var pendingQuestion: PermissionQuestion? {
        if case .asking(let question) = phase { return question }
        return nil
    }

    /// How the evaluation ended; nil until it has.
    public var outcome: PermissionOutcome? {
        if case .finished(let outcome) = phase { return outcome }
        return nil
    }

    /// Evaluates as far as the facts allow: to the first question, or to the outcome.
    public mutating func start() -> PermissionStep {
        guard case .notStarted = phase else { preconditionFailure("PermissionRequest.start() called twice") }
        guard let group else { return evaluateSystemLevel() }
        switch strategy.group {
        case .bypass:
            return evaluateSystemLevel()
        case .allowAutomatically:
            return evaluateSystemLevel(after: store(.group(id: group, .allowed)))
        case .askPermission(let mode, let prompt):
            switch (facts.authorization(ofGroup: group), mode) {
            case (.allowed, _):
                return evaluateSystemLevel()
            case (.denied, .once):
                return finish(.deniedOnGroupLevel(.deniedPreviously))
            case (.notAsked, _), (.denied, .alwaysIfNotAllowed):
                // A question nobody can see counts as one that went unanswered.
                guard facts.serverPresent else { return finish(.deniedOnGroupLevel(.undetermined)) }
                return ask(.group(id: group, prompt))
            }
        case .ifAlreadyAllowed:
            return requireAllowed(group)
        case .ifAllowed(let otherGroup):
            return requireAllowed(otherGroup)
        }
    }

    /// Takes the answer to the pending question and evaluates on: `true` allowed, `false` denied, nil when
    /// the question could not be shown or went unanswered (closed, expired). Once the outcome is known,
    /// returns it again with no changes and ignores `allowed`.
    public mutating func answer(_ allowed: Bool?) -> PermissionStep {
        switch phase {
        case .notStarted:
            preconditionFailure("PermissionRequest.answer(_:) called before start()")
        case .finished(let outcome):
            return PermissionStep(outcome: outcome)
        case .asking(.group(let id, _)):
            switch allowed {
            case true?:
                return evaluateSystemLevel(after: store(.group(id: id, .allowed)))
            case false?:
                return finish(.deniedOnGroupLevel(.deniedNow), after: store(.group(id: id, .denied)))
            case nil:
                return finish(.deniedOnGroupLevel(.undetermined))
            }
        case .asking(.system(let app)):
            switch allowed {
            case true?:
                return finish(.allowed, after: store(.app(app, .allowed)))
            case false?:
                return finish(.deniedOnSystemLevel(.deniedNow), after: store(.app(app, .denied)))
            case nil:
                return finish(.deniedOnSystemLevel(.undetermined))
            }
        }
    }

    /// The group level of `ifAlreadyAllowed` and `ifAllowed(otherGroup:)`: judge the stored decision of
    /// `id` without asking.
    private mutating func requireAllowed(_ id: String) -> PermissionStep {
        switch facts.authorization(ofGroup: id) {
        case .allowed: evaluateSystemLevel()
        case .denied: finish(.deniedOnGroupLevel(.deniedPreviously))
        case .notAsked: finish(.deniedOnGroupLevel(.undetermined))
        }
    }

    private mutating func evaluateSystemLevel(after changes: [PermissionChange] = []) -> PermissionStep {
        switch (facts.appConsent, strategy.system) {
        case (.allowed, _):
            return finish(.allowed, after: changes)
        case (.denied, _):
            return finish(.deniedOnSystemLevel(.deniedPreviously), after: changes)
        case (.undetermined, .ifAlreadyAllowed):
            return finish(.deniedOnSystemLevel(.undetermined), after: changes)
        case (.undetermined, .askPermission):
            guard facts.serverPresent else { return finish(.deniedOnSystemLevel(.undetermined), after: changes) }
            return ask(.system(app: app), after: changes)
        }
    }

    /// Applies `change` to the facts; returns it if it changed them, so a step lists only real changes.
    private mutating func store(_ change: PermissionChange) -> [PermissionChange] {
        switch change {
        case .group(let id, let authorization):
            guard facts.authorization(ofGroup: id) != authorization else { return [] }
            facts.groupAuthorizations[id] = authorization
        case .app(_, let consent):
            guard facts.appConsent != consent else { return [] }
            facts.appConsent = consent
        }
        return [change]
    }

    private mutating func ask(_ question: PermissionQuestion, after changes: [PermissionChange] = []) -> PermissionStep
    {
        phase = .asking(question)
        return PermissionStep(changes: changes, question: question)
    }

    private mutating func finish(_ outcome: PermissionOutcome, after changes: [PermissionChange] = [])
        -> PermissionStep
    {
        phase = .finished(outcome)
        return PermissionStep(changes: changes, outcome: outcome)
    }
}
