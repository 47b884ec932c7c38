import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation

/// What chimed knows of the notification server.
struct ServerInfo: Sendable {
    var name = ""
    var vendor = ""
    var version = ""
    var specVersion = ""
    var capabilities: [String] = []
}

/// Permissions: the group level, then the system level (the user's consent per app), evaluated by
/// `PermissionRequest`; questions are interactive notifications chimed shows itself.
extension Daemon {
    /// How long a question waits for its answer before it counts as unanswered.
    static let questionTimeout: TimeInterval = 60

    /// Evaluates `strategy` for the caller and `group`; the user's own tool is always allowed.
    ///
    /// A question waits for the user (up to `questionTimeout`) without holding up anyone else: other
    /// callers' calls go on meanwhile, and the app's other calls that need the same question share its
    /// answer (`share`).
    func evaluate(_ strategy: PermissionStrategy, caller: Caller, group: String?) async throws -> PermissionOutcome {
        if caller.isUser { return .allowed }
        evaluation: while true {
            // What is known now: across an await below, another call of the app may have stored an answer.
            // Only the decisions the evaluation reads, found through the app's own.
            let facts = PermissionFacts(
                groupAuthorizations: interaction.groupAuthorizations.decisions(
                    app: caller.appID, strategy: strategy.group, group: group),
                appConsent: interaction.consents[caller.appID] ?? .undetermined, serverPresent: serverOwner != nil)
            var request = PermissionRequest(strategy: strategy, app: caller.appID, group: group, facts: facts)
            // A group the user turned off stays off, whatever the app's strategy, until the user turns it on
            // (or the app's strategy is allow-automatically, which overrides on purpose).
            if let group, interaction.groupAuthorizations[GroupKey(owner: caller.appID, id: group)] == .denied,
                strategy.group == .bypass
            {
                return .deniedOnGroupLevel(.deniedPreviously)
            }
            // A decision the app has no room for is refused before anything is asked.
            if let group, strategy.group.mayStoreDecision {
                try checkAuthorizationCount(adding: GroupKey(owner: caller.appID, id: group))
            }
            var step = request.start()
            while true {
                try await save(step.changes, app: caller.appID)
                if let outcome = step.outcome { return outcome }
                guard let question = step.question else { return .deniedOnSystemLevel(.undetermined) }
                switch await share(question, app: caller.appID, asker: Self.asker(caller)) {
                case .answered(let answer): step = request.answer(answer)
                // `.ask` is not returned: the question was asked.
                case .askAgain, .ask: continue evaluation
                }
            }
        }
    }

    /// Stores the answers a step produced, before its question or outcome.
    private func save(_ changes: [PermissionChange], app: String) async throws {
        guard !changes.isEmpty else { return }
        // A group's first decision takes one of the app's places while it is stored.
        var reserved: [GroupKey] = []
        defer { for key in reserved { releaseAuthorization(of: key) } }
        for case .group(let id, _) in changes {
            let key = GroupKey(owner: app, id: id)
            if try reserveAuthorization(of: key) { reserved.append(key) }
        }
        let now = clock.now()
        try await persisted { store in
            for change in changes {
                switch change {
                case .group(let id, let status):
                    try store.setAuthorization(status, group: GroupKey(owner: app, id: id), now: now)
                case .app(let app, let consent):
                    try store.setConsent(consent, app: app, now: now)
                }
            }
        }
        for change in changes {
            switch change {
            case .group(let id, let status):
                // The user's answer to a question.
                interaction.groupAuthorizations[GroupKey(owner: app, id: id)] = status
                interaction.groupsTurnedOffByTheirApp.remove(GroupKey(owner: app, id: id))
            case .app(let app, let consent): interaction.consents[app] = consent
            }
        }
    }

    /// Who asks a question, for flood control (`QuestionGate`): the calling process, whatever names it owns.
    static func asker(_ caller: Caller) -> String {
        caller.pid.map { "process \($0)" } ?? caller.uniqueName
    }

    /// Asks `question` for `app` on behalf of `asker`, or shares the answer of the same question already
    /// open (at most one per app; `InteractionRouter`).
    func share(_ question: PermissionQuestion, app: String, asker: String) async -> InteractionRouter.QuestionTurn {
        interaction.questionCalls += 1
        let call = interaction.questionCalls
        let turn = await withCheckedContinuation {
            (continuation: CheckedContinuation<InteractionRouter.QuestionTurn, Never>) in
            interaction.questionTurns[call] = continuation
            handle(.questionNeeded(question, app: app, call: call))
        }
        guard turn == .ask else { return turn }
        let answer = await ask(question, app: app, asker: asker)
        handle(.questionAnswered(answer, app: app, call: call))
        return .answered(answer)
    }

    /// Shows a question with Allow and Don't Allow, when flood control lets one of `asker`'s be shown
    /// (`questionTurn`); nil when it was closed, expired, or could not be shown.
    func ask(_ question: PermissionQuestion, app: String, asker: String) async -> Bool? {
        await questionTurn(asker: asker)
        defer { questionEnded(asker: asker) }
        var content: NotificationContent
        switch question {
        case .group(let id, let prompt):
            // Under chimed's own name, which no app may use: no app's popup can pass for a question.
            content = NotificationContent(
                appName: OwnNames.chimedAppName, summary: prompt.title, body: prompt.message,
                actions: [
                    NotificationAction(key: "allow", label: prompt.allowLabel),
                    NotificationAction(key: "deny", label: prompt.denyLabel),
                ])
            content.userInfo = ["group": .string(id)]
        case .system(let app):
            content = NotificationContent(
                appName: OwnNames.chimedAppName, summary: "\(app) wants to schedule notifications",
                body: "Allow \(app) to show you notifications at the times it chooses?",
                actions: [
                    NotificationAction(key: "allow", label: "Allow"),
                    NotificationAction(key: "deny", label: "Don't Allow"),
                ])
        }
        content.expireTimeout = 0
        guard let server else { return nil }
        handle(.questionSent)
        let id: UInt32
        do {
            id = try await server.notify(content)
        } catch {
            handle(.questionNotShown)
            logger.warning("cannot ask \"\(content.summary)\": \(error)")
            return nil
        }
        let summary = content.summary
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Bool?, Never>) in
            let once = Once(continuation)
            interaction.questionAnswers[id] = { once.resume($0) }
            handle(.questionShown(id))
            logger.info("asking \"\(summary)\"", metadata: ["notification": "\(id)"])
            queue.asyncAfter(deadline: .now() + Self.questionTimeout) { [weak self] in
                self?.assumeIsolated { $0.handle(.questionExpired(id)) }
            }
        }
        logger.info(
            "\"\(content.summary)\": \(answer.map { $0 ? "allowed" : "not allowed" } ?? "no answer")")
        Task { try? await server.close(notificationID: id) }
        return answer
    }

    // MARK: - Flood control for questions

    /// Waits until flood control lets a question of `asker` be shown (`QuestionGate`): other callers,
    /// other askers' questions and deliveries go on meanwhile.
    func questionTurn(asker: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            interaction.questions.next += 1
            let request = QuestionGate.Request(id: interaction.questions.next, asker: asker)
            interaction.questions.waiting.append((request, continuation))
            admitQuestions()
        }
    }

    /// `asker`'s question is off the screen: its next may be shown.
    func questionEnded(asker: String) {
        interaction.questions.gate?.closed(asker: asker)
        admitQuestions()
    }

    /// Lets the questions flood control admits now be shown, and arms a wake-up for those waiting for
    /// a token.
    func admitQuestions() {
        let now = clock.now()
        var gate = interaction.questions.gate ?? QuestionGate(flood: settings.flood, now: now)
        let admission = gate.admit(interaction.questions.waiting.map(\.request), flood: settings.flood, now: now)
        interaction.questions.gate = gate
        let admitted = Set(admission.ask)
        let going = interaction.questions.waiting.filter { admitted.contains($0.request.id) }
        interaction.questions.waiting.removeAll { admitted.contains($0.request.id) }
        for waiting in going { waiting.turn.resume() }
        guard let wake = admission.wakeAt, interaction.questions.wakeAt.map({ wake < $0 }) ?? true else { return }
        interaction.questions.wakeAt = wake
        queue.asyncAfter(wallDeadline: clock.wallTime(for: wake)) { [weak self] in
            self?.assumeIsolated { daemon in
                if daemon.interaction.questions.wakeAt == wake { daemon.interaction.questions.wakeAt = nil }
                daemon.admitQuestions()
            }
        }
    }

    /// The error a denied outcome answers with.
    static func denial(_ outcome: PermissionOutcome, app: String, group: String?) -> DBusError {
        let message: String
        switch outcome {
        case .allowed:
            message = "allowed"
        case .deniedOnGroupLevel(let status):
            message =
                "deniedOnGroupLevel (\(status.rawValue)): the user has not allowed group \(group ?? "?") of \(app); "
                + "`chime group enable \(app)/\(group ?? "?")` turns it on"
        case .deniedOnSystemLevel(let status):
            message =
                "deniedOnSystemLevel (\(status.rawValue)): the user has not allowed \(app) to schedule notifications; "
                + "`chime app allow \(app)` allows it"
        }
        return DBusError(name: ChimeBus.ErrorName.permissionDenied, message: message)
    }

    // MARK: - The user's switches

    /// Sets (or, with nil, forgets) an app's consent: `chime app allow|deny|reset`.
    public func setConsent(_ consent: AppConsent?, app: String) async throws {
        let now = clock.now()
        try await persisted { try $0.setConsent(consent, app: app, now: now) }
        interaction.consents[app] = consent
    }

    /// Turns a group on or off: off removes everything it has pending and blocks reschedules until it is
    /// on again; on puts its entries back.
    ///
    /// Both switches set the group's authorization, as NiceNotifications' permission switch does in an
    /// app. A group the user turned off (`byUser`) stays off until the user turns it on; one its app turned
    /// off, the app may turn on again.
    public func setGroupEnabled(_ key: GroupKey, enabled: Bool, byUser: Bool = true) async throws {
        let now = clock.now()
        // The user's "off" stays the user's when the app turns the group off as well.
        let userTurnedItOff =
            interaction.groupAuthorizations[key] == .denied && !interaction.groupsTurnedOffByTheirApp.contains(key)
        // An app may turn on a group it turned off itself, never one the user turned off.
        if !byUser, enabled, userTurnedItOff {
            throw DBusError(
                name: ChimeBus.ErrorName.permissionDenied,
                message: "the user turned group \(key.id) off; only the user can turn it on again")
        }
        if !byUser, !enabled, userTurnedItOff { return }
        // An app's switch of a group it has not made yet (ChimeKit's in-app question stores a "no" before the
        // group is scheduled) takes one of its places; the user's switches are not limited.
        var reserved = false
        if !byUser { reserved = try reserveAuthorization(of: key) }
        defer { if reserved { releaseAuthorization(of: key) } }
        try await persisted {
            try $0.setAuthorization(enabled ? .allowed : .denied, group: key, byApp: !byUser, now: now)
        }
        // Read after the store's await: the group as it is now.
        interaction.groupAuthorizations[key] = enabled ? .allowed : .denied
        if !byUser, !enabled {
            interaction.groupsTurnedOffByTheirApp.insert(key)
        } else {
            interaction.groupsTurnedOffByTheirApp.remove(key)
        }
        guard scheduler.settings(of: key) != nil else { return }
        // The same entries with the group turned on or off, read off the daemon's queue.
        _ = try await replaceTimeline(
            of: key, source: groupSources[key] ?? .api,
            timeline: { scheduler, reader in
                var settings = scheduler.settings(of: key) ?? GroupSettings()
                settings.enabled = enabled
                return TimelineGroup(
                    id: key.id, owner: key.owner, settings: settings,
                    entries: try Self.entries(ofGroup: key, in: scheduler, reader: reader))
            })
        if !enabled {
            endEscalations(of: Set(scheduler.items(of: key).map(\.id)), because: "its group was turned off")
        }
    }

    // MARK: - How many authorizations an app keeps

    /// Refuses a first decision for group `key` when its app keeps as many as `[limits] groups-per-app`,
    /// counting those being stored (`authorizationsBeingStored`). A decision may be stored ahead of the
    /// group (a permission asked before scheduling, an app's switch), so the groups an app has do not bound
    /// its decisions; the user's (owner "") are not limited.
    func checkAuthorizationCount(adding key: GroupKey) throws {
        guard !key.owner.isEmpty, interaction.groupAuthorizations[key] == nil else { return }
        let being = interaction.authorizationsBeingStored[key.owner]
        guard being?[key.id] == nil else { return }
        let count = interaction.groupAuthorizations.count(app: key.owner) + (being?.count ?? 0)
        guard count < settings.groupsPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(key.owner) keeps the authorizations of \(count) groups, the most an app may "
                    + "([limits] groups-per-app is \(settings.groupsPerApp)); none was stored for group \(key.id): "
                    + "remove a group it no longer uses (RemoveGroup forgets its authorization too), or use one "
                    + "of the groups it has")
        }
    }

    /// Checks and takes a place for group `key`'s first decision while it is stored; true when a place was
    /// taken, to give back with `releaseAuthorization(of:)` once the decision is stored or has failed.
    func reserveAuthorization(of key: GroupKey) throws -> Bool {
        guard !key.owner.isEmpty, interaction.groupAuthorizations[key] == nil else { return false }
        try checkAuthorizationCount(adding: key)
        interaction.authorizationsBeingStored[key.owner, default: [:]][key.id, default: 0] += 1
        return true
    }

    /// Gives back a place `reserveAuthorization(of:)` took.
    func releaseAuthorization(of key: GroupKey) {
        guard let calls = interaction.authorizationsBeingStored[key.owner]?[key.id] else { return }
        interaction.authorizationsBeingStored[key.owner]?[key.id] = calls > 1 ? calls - 1 : nil
        if interaction.authorizationsBeingStored[key.owner]?.isEmpty == true {
            interaction.authorizationsBeingStored[key.owner] = nil
        }
    }

    /// Whether a removed group's decision goes with it: all but the user's "no" (a denial its app did not
    /// make), so that removing a group and making it again is no way around the user.
    func goesWithItsGroup(_ key: GroupKey) -> Bool {
        guard let status = interaction.groupAuthorizations[key] else { return false }
        return status != .denied || interaction.groupsTurnedOffByTheirApp.contains(key)
    }

    /// Forgets the decision of removed group `key` as the store did (`ScheduleStore.removeGroup`), unless it
    /// stays (`goesWithItsGroup`).
    func forgetAuthorization(ofRemoved key: GroupKey) {
        guard goesWithItsGroup(key) else { return }
        interaction.groupAuthorizations[key] = nil
        interaction.groupsTurnedOffByTheirApp.remove(key)
    }

    /// Forgets the decision of group `key`, which has no timeline, unless it stays (`goesWithItsGroup`):
    /// `RemoveGroup` of a group only decided about. False when there was nothing to forget.
    func forgetAuthorization(of key: GroupKey) async throws -> Bool {
        guard goesWithItsGroup(key) else { return false }
        guard try await persisted({ try $0.forgetAuthorization(of: key) }) else { return false }
        forgetAuthorization(ofRemoved: key)
        return true
    }

    // MARK: - The server

    /// Reads the name, capabilities and pause state of the server `owner` when it appears, or again
    /// when it did not say what it can.
    func learnAboutServer(owner: String?) {
        guard let server else { return }
        Task {
            let capabilities = try? await server.capabilities()
            let information = try? await server.information()
            let paused = await serverPaused()
            handle(
                .serverInfoArrived(
                    owner: owner, capabilities: capabilities, identity: information, paused: paused))
        }
    }

    /// Asks the server whether the user paused notifications on it (dunst's `paused`, or an `Inhibited`
    /// property where the server has one); nil when the server says neither or does not answer in time.
    /// Asked when a server appears; PropertiesChanged keeps the answer current (`serverPausedState`).
    func serverPaused() async -> Bool? {
        guard let connection else { return nil }
        for (interface, property) in Self.pauseProperties {
            if let reply = try? await connection.call(
                destination: NotificationServer.name, path: NotificationServer.path,
                interface: "org.freedesktop.DBus.Properties", member: "Get", [.string(interface), .string(property)],
                timeout: .seconds(2)),
                case .variant(.boolean(let paused))? = reply.first
            {
                return paused
            }
        }
        return nil
    }
}

/// Resumes a continuation once, whichever of the answer and the timeout comes first.
final class Once: @unchecked Sendable {
    // @unchecked Sendable: `continuation` is taken under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Bool?, Never>?

    init(_ continuation: CheckedContinuation<Bool?, Never>) { self.continuation = continuation }

    func resume(_ value: Bool?) {
        let c = lock.withLock { () -> CheckedContinuation<Bool?, Never>? in
            defer { continuation = nil }
            return continuation
        }
        c?.resume(returning: value)
    }
}

/// The questions waiting for flood control, in the order they came, and its state.
struct QuestionQueue {
    var gate: QuestionGate?
    var waiting: [(request: QuestionGate.Request, turn: CheckedContinuation<Void, Never>)] = []
    var next: UInt64 = 0
    /// The wake-up armed for questions waiting for a token.
    var wakeAt: Date?
}
