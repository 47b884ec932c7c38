import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

/// A notification group: one experience of an app (a daily quote, a weekly report) with its own timeline
/// and its own permission, like NiceNotifications' `LocalNotificationsGroup`.
///
/// ```swift
/// struct DailyQuoteGroup: NotificationGroup {
///     let groupIdentifier = "dailyQuote"
///     var timeline: NotificationsTimeline {
///         NotificationsTimeline {
///             EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 0).schedule(with: Self.randomQuote)
///         }
///     }
/// }
/// try await ChimeNotifications.reschedule(group: DailyQuoteGroup(), permissionStrategy: .askSystemPermissionIfNeeded)
/// ```
public protocol NotificationGroup: Sendable {
    /// Letters, digits, `-`, `_` and `.`; unique among the app's groups.
    var groupIdentifier: String { get }
    /// The whole timeline, made fresh each time the group is rescheduled.
    var timeline: NotificationsTimeline { get async }
    /// What happens to occurrences missed while chimed could not deliver them; nil: chimed's default.
    var missedPolicy: MissedPolicy? { get }
}

extension NotificationGroup {
    public var missedPolicy: MissedPolicy? { nil }
}

/// A group made in one call by `ChimeNotifications.schedule { … }`; keep it to remove or reschedule it.
public struct ScheduledGroup: NotificationGroup {
    public let groupIdentifier: String
    let entries: [NotificationsTimeline.Entry]
    /// What the scheduling changed, entry by entry.
    public let changes: [EntryChange]

    public var timeline: NotificationsTimeline { NotificationsTimeline(entries: entries) }
}

/// One fully specified notification, like `UNNotificationRequest`: scheduling a request with the identifier
/// of a pending one replaces it.
public struct NotificationRequest: Sendable {
    /// Letters, digits, `-`, `_` and `.`, at most 190 characters.
    public var identifier: String
    public var content: NotificationContent
    /// When it fires; nil: now.
    public var trigger: (any NotificationTrigger)?

    public init(identifier: String, content: NotificationContent, trigger: (any NotificationTrigger)?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// A request waiting in chimed.
public struct PendingRequest: Hashable, Sendable {
    public var identifier: String
    public var itemID: UInt64
    public var summary: String
    public var nextDate: Date
    /// The rule in words, for a repeating request.
    public var rule: String?
}

/// The NiceNotifications API against chimed: groups with declarative timelines, permission strategies,
/// direct requests and action events. Every call has an async form and a completion-handler form.
///
/// Calls go over the bus `Configuration.bus`, as the app `Configuration.appID` when one is set (the
/// connection then owns that name; chimed knows the app by it), otherwise as the executable.
public enum ChimeNotifications {
    /// Where and how ChimeKit talks to chimed.
    public struct Configuration: Sendable {
        /// The bus chimed serves.
        public var bus: DBusConnection.Address
        /// The app's reverse-DNS id (`org.example.Quote`); nil: chimed names the app after the executable.
        public var appID: String?
        /// How far ahead content made by closures is made and sent.
        public var horizon: TimeInterval
        /// At most this many occurrences per closure entry are made ahead.
        public var materializationLimit: Int
        /// While the app runs, reschedule groups with closure content before their horizon runs out.
        public var refreshesWhileRunning: Bool

        public init(
            bus: DBusConnection.Address = .session, appID: String? = nil, horizon: TimeInterval = 7 * 86_400,
            materializationLimit: Int = 64, refreshesWhileRunning: Bool = true
        ) {
            self.bus = bus
            self.appID = appID
            self.horizon = horizon
            self.materializationLimit = materializationLimit
            self.refreshesWhileRunning = refreshesWhileRunning
        }
    }

    static let center = Center()

    /// Sets where the calls go; closes an earlier connection and stops its refreshes.
    public static func configure(_ configuration: Configuration) async {
        await center.configure(configuration)
    }

    /// The connection the calls use (made on first use), for ChimeClient's fuller API.
    public static func client() async throws(ChimeError) -> ChimeClient {
        try await center.client()
    }

    // MARK: Groups

    /// Schedules a timeline as a new group and returns it (keep it to remove or reschedule it later). Without
    /// an identifier the group gets a fresh one (`timeline-UUID`).
    /// The timeline is built on the caller's actor (on the main actor when called from there).
    @discardableResult
    nonisolated(nonsending) public static func schedule(
        groupIdentifier: String? = nil, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded,
        @NotificationsTimelineBuilder _ timeline: () -> [NotificationsTimeline.Entry]
    ) async throws(ChimeError) -> ScheduledGroup {
        let id = groupIdentifier ?? "timeline-\(UUID().uuidString.lowercased())"
        let entries = timeline()
        let changes = try await center.reschedule(
            id: id, timeline: NotificationsTimeline(entries: entries), missedPolicy: nil, strategy: permissionStrategy)
        return ScheduledGroup(groupIdentifier: id, entries: entries, changes: changes)
    }

    /// Schedules one notification at `trigger` (NiceNotifications' `schedule(content:at:permissionStrategy:)`).
    @discardableResult
    public static func schedule(
        content: NotificationContent, at trigger: some NotificationTrigger,
        permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) -> ScheduledGroup {
        try await schedule(permissionStrategy: permissionStrategy) { trigger.schedule(content: content) }
    }

    /// Replaces the group's whole timeline with a fresh one from `group.timeline`; entries whose id and
    /// definition did not change keep their state. When the strategy says no, the error's
    /// `isPermissionDenied` is true.
    @discardableResult
    public static func reschedule(
        group: some NotificationGroup, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) -> [EntryChange] {
        try await center.reschedule(
            id: group.groupIdentifier, timeline: await group.timeline, missedPolicy: group.missedPolicy,
            strategy: permissionStrategy)
    }

    /// Removes the group and everything it has pending.
    public static func remove(group: some NotificationGroup) async throws(ChimeError) {
        try await remove(groupIdentifier: group.groupIdentifier)
    }

    /// Removes the group and everything it has pending.
    public static func remove(groupIdentifier: String) async throws(ChimeError) {
        try await center.remove(groupIdentifier)
    }

    /// Turns the group off: nothing of it stays pending and reschedules are refused until the user (or a
    /// strategy with `allowAutomatically`, or `enable`) turns it on again.
    public static func disable(group: some NotificationGroup) async throws(ChimeError) {
        try await center.setEnabled(group.groupIdentifier, false)
    }

    /// Turns the group on again (not possible for a group the user turned off).
    public static func enable(group: some NotificationGroup) async throws(ChimeError) {
        try await center.setEnabled(group.groupIdentifier, true)
    }

    // MARK: Permissions

    /// Runs `strategy` without scheduling (the user may be asked; this waits for the answer); true when
    /// allowed. With a group, its group level is evaluated too.
    public static func requestPermission(
        strategy: PermissionStrategy = .askSystemPermissionIfNeeded, group: String? = nil
    ) async throws(ChimeError) -> Bool {
        try await client().requestPermission(strategy, group: group).outcome == "allowed"
    }

    /// The app's system-level permission: whether the user allows it to schedule at all.
    public enum SystemAuthorization {
        public static func current() async throws(ChimeError) -> AuthorizationStatus {
            let text = try await client().authorization().system
            guard let status = AuthorizationStatus(rawValue: text) else {
                throw ChimeError(.protocolError, "chimed answered an unknown status \"\(text)\"")
            }
            return status
        }

        /// The status, or `.undetermined` when chimed cannot be asked.
        public static func getCurrent(completion: @escaping @Sendable (AuthorizationStatus) -> Void) {
            Task { completion((try? await current()) ?? .undetermined) }
        }
    }

    /// A group's permission: whether the user enabled it.
    public enum GroupLevelAuthorization {
        public static func current(forGroup group: String) async throws(ChimeError) -> GroupAuthorization {
            switch try await client().authorization(group: group).group {
            case AuthorizationStatus.allowed.rawValue: return .allowed
            case AuthorizationStatus.deniedPreviously.rawValue, AuthorizationStatus.deniedNow.rawValue: return .denied
            case AuthorizationStatus.undetermined.rawValue: return .notAsked
            case let other: throw ChimeError(.protocolError, "chimed answered an unknown status \"\(other ?? "")\"")
            }
        }

        /// The status, or `.notAsked` when chimed cannot be asked.
        public static func getCurrent(
            forGroup group: String, completion: @escaping @Sendable (GroupAuthorization) -> Void
        ) {
            Task { completion((try? await current(forGroup: group)) ?? .notAsked) }
        }
    }

    // MARK: Requests

    /// The group a request lives in: one per request, so a request is replaced or removed on its own.
    static let requestPrefix = "request."

    /// Schedules one request (replacing a pending one with the same identifier); returns its item id.
    @discardableResult
    public static func directSchedule(
        _ request: NotificationRequest, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) -> UInt64 {
        do {
            try TimelineGroup.validateIdentifier(request.identifier, what: "request identifier")
        } catch {
            throw ChimeError(.rejected, error.message)
        }
        let trigger = request.trigger ?? ExactlyAt(Date())
        let group = requestPrefix + request.identifier
        _ = try await center.reschedule(
            id: group, timeline: NotificationsTimeline { trigger.schedule(content: request.content) },
            missedPolicy: nil, strategy: permissionStrategy, entryID: "request")
        guard let item = try await client().pending(group: group).first else {
            throw ChimeError(.failed, "request \(request.identifier) was accepted but is not pending")
        }
        return item.id
    }

    /// The requests waiting, soonest first.
    public static func pendingRequests() async throws(ChimeError) -> [PendingRequest] {
        try await client().pending().compactMap { item in
            guard let group = item.group, group.hasPrefix(requestPrefix) else { return nil }
            return PendingRequest(
                identifier: String(group.dropFirst(requestPrefix.count)), itemID: item.id, summary: item.summary,
                nextDate: item.fireDate, rule: item.rule)
        }
    }

    /// Removes the pending requests with these identifiers (unknown ones are ignored).
    public static func removePendingRequests(withIdentifiers identifiers: [String]) async throws(ChimeError) {
        let pending = Set(try await pendingRequests().map(\.identifier))
        for identifier in identifiers where pending.contains(identifier) {
            try await remove(groupIdentifier: requestPrefix + identifier)
        }
    }

    // MARK: Events

    /// The actions chosen on this app's notifications from now on.
    public static func actionEvents() async throws(ChimeError) -> AsyncStream<ChimeClient.ActionEvent> {
        try await client().actionEvents()
    }
}

// Completion-handler forms of the calls above.
extension ChimeNotifications {
    static func complete<T: Sendable>(
        _ completion: (@Sendable (Result<T, ChimeError>) -> Void)?,
        _ work: @escaping @Sendable () async throws(ChimeError) -> T
    ) {
        Task {
            do throws(ChimeError) {
                let value = try await work()
                completion?(.success(value))
            } catch {
                completion?(.failure(error))
            }
        }
    }

    public static func reschedule(
        group: some NotificationGroup, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded,
        completion: (@Sendable (Result<[EntryChange], ChimeError>) -> Void)?
    ) {
        complete(completion) { () async throws(ChimeError) in
            try await reschedule(group: group, permissionStrategy: permissionStrategy)
        }
    }

    public static func remove(
        group: some NotificationGroup, completion: (@Sendable (Result<Void, ChimeError>) -> Void)?
    ) {
        complete(completion) { () async throws(ChimeError) in try await remove(group: group) }
    }

    public static func disable(
        group: some NotificationGroup, completion: (@Sendable (Result<Void, ChimeError>) -> Void)?
    ) {
        complete(completion) { () async throws(ChimeError) in try await disable(group: group) }
    }

    /// `completion(true)` when allowed; false when denied or chimed cannot be asked.
    public static func requestPermission(
        strategy: PermissionStrategy = .askSystemPermissionIfNeeded, completion: @escaping @Sendable (Bool) -> Void
    ) {
        Task { completion((try? await requestPermission(strategy: strategy)) ?? false) }
    }

    public static func directSchedule(
        _ request: NotificationRequest, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded,
        completion: (@Sendable (Result<UInt64, ChimeError>) -> Void)?
    ) {
        complete(completion) { () async throws(ChimeError) in
            try await directSchedule(request, permissionStrategy: permissionStrategy)
        }
    }

    public static func pendingRequests(completion: @escaping @Sendable (Result<[PendingRequest], ChimeError>) -> Void) {
        complete(completion) { () async throws(ChimeError) in try await pendingRequests() }
    }

    public static func removePendingRequests(
        withIdentifiers identifiers: [String], completion: (@Sendable (Result<Void, ChimeError>) -> Void)?
    ) {
        complete(completion) { () async throws(ChimeError) in
            try await removePendingRequests(withIdentifiers: identifiers)
        }
    }
}

extension ChimeNotifications {
    /// The shared state: the configuration, the connection, and the refresh of groups with closure content.
    actor Center {
        var configuration = Configuration()
        var connection: ChimeClient?
        var refreshes: [String: Task<Void, Never>] = [:]

        func configure(_ configuration: Configuration) {
            connection?.close()
            connection = nil
            for task in refreshes.values { task.cancel() }
            refreshes = [:]
            self.configuration = configuration
        }

        func client() async throws(ChimeError) -> ChimeClient {
            if let connection { return connection }
            let made =
                if let appID = configuration.appID {
                    try await ChimeClient.connect(configuration.bus, owning: appID)
                } else {
                    try await ChimeClient.connect(configuration.bus)
                }
            if let connection {  // another call connected meanwhile
                made.close()
                return connection
            }
            connection = made
            return made
        }

        func reschedule(
            id: String, timeline: NotificationsTimeline, missedPolicy: MissedPolicy?, strategy: PermissionStrategy,
            entryID: String? = nil
        ) async throws(ChimeError) -> [EntryChange] {
            let now = Date()
            let (entries, refreshBy) = try await timeline.materialize(
                now: now, timeZone: .current, horizon: configuration.horizon,
                limit: configuration.materializationLimit)
            let named =
                entryID.map { id in
                    entries.map {
                        var e = $0; e.id = id; return e
                    }
                } ?? entries
            let group = TimelineGroup(id: id, settings: GroupSettings(missedPolicy: missedPolicy), entries: named)
            let changes = try await client().reschedule(group, permission: strategy)
            refreshes.removeValue(forKey: id)?.cancel()
            if let refreshBy, configuration.refreshesWhileRunning {
                let wait = max(1, refreshBy.timeIntervalSince(now) / 2)
                refreshes[id] = Task { [weak self] in
                    try? await Task.sleep(for: .seconds(wait))
                    guard !Task.isCancelled, let self else { return }
                    // The user was asked (or not) the first time; a refresh never asks again.
                    _ = try? await self.reschedule(
                        id: id, timeline: timeline, missedPolicy: missedPolicy, strategy: .scheduleIfSystemAllowed)
                }
            }
            return changes
        }

        func remove(_ id: String) async throws(ChimeError) {
            refreshes.removeValue(forKey: id)?.cancel()
            try await client().removeGroup(id)
        }

        func setEnabled(_ id: String, _ enabled: Bool) async throws(ChimeError) {
            if !enabled { refreshes.removeValue(forKey: id)?.cancel() }
            try await client().setGroupEnabled(id, enabled)
        }
    }
}
