import ChimeCore
import ChimeProtocol
import DBusKit
@_exported import Foundation
import Foundation

/// Where a group's `getTimeline` runs: on the main queue (the default, as NiceNotifications has it), or on
/// any queue.
public enum LocalNotificationsGroupContextPreference: Sendable {
    case mainQueueOnly
    case canRunOnAnyQueue
}

/// A notification group: one experience of an app (a daily quote, a weekly report) with its own timeline
/// and its own permission, as NiceNotifications has it.
///
/// ```swift
/// final class DailyQuoteGroup: LocalNotificationsGroup {
///     let groupIdentifier: String = "dailyQuote"
///     func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
///         completion(NotificationsTimeline {
///             EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 00).schedule(title: "Storms make oaks take deeper root.")
///         })
///     }
/// }
/// LocalNotifications.reschedule(group: DailyQuoteGroup(), permissionStrategy: .askSystemPermissionIfNeeded)
/// ```
public protocol LocalNotificationsGroup {
    /// Letters, digits, `-`, `_` and `.`; unique among the app's groups.
    var groupIdentifier: String { get }
    /// Where `getTimeline` is called; `.mainQueueOnly` by default (the main queue runs while an async `main`
    /// waits, or under `dispatchMain()`).
    var preferredExecutionContext: LocalNotificationsGroupContextPreference { get }
    /// Makes the whole timeline, fresh each time the group is rescheduled; call `completion` once.
    func getTimeline(completion: @escaping (NotificationsTimeline) -> Void)
    /// What happens to occurrences missed while chimed could not deliver them; nil: chimed's default.
    var missedPolicy: MissedPolicy? { get }
    /// Policies for occurrences missed for one cause (`.machineOff`, `.suspended`, `.notRunning`), before
    /// `missedPolicy`; empty by default.
    var missedPolicyByCause: [MissedCause: MissedPolicy] { get }
    /// Asked, after each successful reschedule, for every notification of the group still shown: `true`
    /// closes it. Never by default.
    func __shouldRemoveDeliveredNotification(notification: UNNotification, completion: @escaping (Bool) -> Void)
}

extension LocalNotificationsGroup {
    public var preferredExecutionContext: LocalNotificationsGroupContextPreference { .mainQueueOnly }
    public var missedPolicy: MissedPolicy? { nil }
    public var missedPolicyByCause: [MissedCause: MissedPolicy] { [:] }
    public func __shouldRemoveDeliveredNotification(
        notification: UNNotification, completion: @escaping (Bool) -> Void
    ) {
        completion(false)
    }
}

/// A group whose timeline is made by async code, for apps written with Swift concurrency.
public protocol NotificationGroup: LocalNotificationsGroup, Sendable {
    /// The whole timeline, made fresh each time the group is rescheduled.
    var timeline: NotificationsTimeline { get async }
}

extension NotificationGroup {
    public var preferredExecutionContext: LocalNotificationsGroupContextPreference { .canRunOnAnyQueue }

    /// Calls `completion` with `timeline` on the main queue.
    public func getTimeline(completion: @escaping (NotificationsTimeline) -> Void) {
        let handler = MainQueueClosure(completion)
        Task { handler.call(await timeline) }
    }
}

/// A group made in one call by `LocalNotifications.schedule { … }`; keep it to remove or reschedule it.
public struct ScheduledGroup: NotificationGroup {
    public let groupIdentifier: String
    let entries: [NotificationsTimeline.Entry]
    /// What the scheduling changed, entry by entry (the async `schedule` fills it in).
    public internal(set) var changes: [EntryChange] = []

    public var timeline: NotificationsTimeline { NotificationsTimeline(entries: entries) }
}

/// The NiceNotifications API against chimed: groups with declarative timelines, permission strategies and
/// direct requests. Every call has a completion-handler form, as NiceNotifications has it, and an async form.
/// The closures NiceNotifications' calls take (completion handlers, `perform:`, content makers, askers) are not
/// `@Sendable`, as there, and are called on the main queue (`MainQueueClosure`), as NiceNotifications calls its
/// completion handlers; the main queue runs while an async `main` waits, or under `dispatchMain()`. The closures
/// of ChimeKit's own additions are `@Sendable` and called on no particular thread.
///
/// Calls go over the bus `Configuration.bus`, as the app `Configuration.appID` when one is set (the
/// connection then owns that name; chimed knows the app by it), otherwise as the executable.
public enum LocalNotifications {
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
    static let order = CallOrder()

    /// Sets where the calls go; closes an earlier connection and stops its refreshes.
    public static func configure(_ configuration: Configuration) async {
        await center.configure(configuration)
    }

    /// The connection the calls use (made on first use), for ChimeClient's fuller API.
    public static func client() async throws(ChimeError) -> ChimeClient {
        try await center.client()
    }

    // MARK: Scheduling

    /// Schedules a timeline as a new group and returns it (keep it to remove or reschedule it later). With a nil
    /// identifier the group gets a fresh one (`timeline-UUID`). The identifier has no default, so that
    /// NiceNotifications' `schedule(permissionStrategy:) { … }` written in an `async` function still means the
    /// completion-handler form (Swift prefers an `async` overload there); the same holds for the other `async`
    /// forms below, whose first argument has no label where NiceNotifications' form has one.
    @discardableResult
    nonisolated(nonsending) public static func schedule(
        groupIdentifier: String?, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded,
        @NotificationsTimelineBuilder _ timeline: () -> [NotificationsTimeline.Entry]
    ) async throws(ChimeError) -> ScheduledGroup {
        var group = ScheduledGroup(
            groupIdentifier: groupIdentifier ?? "timeline-\(UUID().uuidString.lowercased())", entries: timeline())
        group.changes = try await reschedule(group, permissionStrategy: permissionStrategy)
        return group
    }

    /// Schedules a timeline as a new group; returns the group at once and reports the outcome to `completion`.
    @discardableResult
    public static func schedule(
        permissionStrategy: PermissionStrategy, group: String? = nil,
        @NotificationsTimelineBuilder _ timeline: () -> [NotificationsTimeline.Entry],
        completion: @escaping (SchedulingResult) -> Void = { _ in }
    ) -> any LocalNotificationsGroup {
        let group = ScheduledGroup(
            groupIdentifier: group ?? "timeline-\(UUID().uuidString.lowercased())", entries: timeline())
        let handler = MainQueueClosure(completion)
        submit({ handler.call($0) }) { () async throws(ChimeError) in
            _ = try await reschedule(group, permissionStrategy: permissionStrategy)
        }
        return group
    }

    /// Schedules a timeline built elsewhere (`NotificationsTimeline(combining: …)`) as a new group; returns the
    /// group at once and reports the outcome to `completion`.
    @discardableResult
    public static func schedule(
        timeline: NotificationsTimeline, group: String? = nil, permissionStrategy: PermissionStrategy,
        completion: @escaping (SchedulingResult) -> Void = { _ in }
    ) -> any LocalNotificationsGroup {
        schedule(permissionStrategy: permissionStrategy, group: group, { timeline.entries }, completion: completion)
    }

    /// Schedules one notification at `trigger` (`Tomorrow().at(hour: 20, minute: 15)`).
    @discardableResult
    public static func schedule(
        content: UNNotificationContent, at trigger: some NotificationTrigger,
        permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) -> ScheduledGroup {
        let fixed = try fixedContent(content)
        return try await schedule(groupIdentifier: nil, permissionStrategy: permissionStrategy) {
            trigger.schedule(content: fixed)
        }
    }

    /// Schedules one notification at `trigger`; returns its group at once and reports the outcome.
    @discardableResult
    public static func schedule(
        content: UNNotificationContent, at trigger: some NotificationTrigger, permissionStrategy: PermissionStrategy,
        completion: @escaping (SchedulingResult) -> Void = { _ in }
    ) -> any LocalNotificationsGroup {
        let snapshot = content.mutableCopy() as? UNMutableNotificationContent
        return schedule(
            permissionStrategy: permissionStrategy, { trigger.schedule(with: snapshot) }, completion: completion)
    }

    /// Replaces the group's whole timeline with a fresh one from the group; entries whose id and definition
    /// did not change keep their state. When the strategy says no, the error's `isPermissionDenied` is true.
    @discardableResult
    public static func reschedule(
        _ group: some LocalNotificationsGroup, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) -> [EntryChange] {
        let id = group.groupIdentifier
        Log.info("rescheduling group \(id)")
        guard let strategy = try await permissionStrategy.resolve(group: id) else {
            Log.info("group \(id): denied on the group level")
            throw ChimeError(
                .rejected, "deniedOnGroupLevel: the app's asker did not allow group \(id)",
                dbusName: ChimeBus.ErrorName.permissionDenied)
        }
        let timeline = await timeline(of: group)
        let changes: [EntryChange]
        do {
            changes = try await center.reschedule(
                id: id, timeline: timeline,
                settings: GroupSettings(
                    missedPolicy: group.missedPolicy, missedPolicyByCause: group.missedPolicyByCause),
                strategy: strategy)
        } catch {
            Log.info("group \(id): not scheduled: \(error.message)")
            throw error
        }
        Log.info("group \(id): scheduled \(timeline.entries.count) lines")
        await closeDelivered(of: group)
        return changes
    }

    /// Asks the group about each of its notifications still shown, and closes those it says to.
    private static func closeDelivered(of group: some LocalNotificationsGroup) async {
        // A group made by `schedule { … }` never closes any (the default answer), so nothing is listed for it.
        if group is ScheduledGroup { return }
        let id = group.groupIdentifier
        guard let client = try? await client(), let shown = try? await client.delivered() else { return }
        let box = UncheckedBox(group)
        var close: [UInt32] = []
        for notification in shown where notification.group == id {
            let request = UNNotificationRequest(
                identifier: UNUserNotificationCenter.identifier(
                    group: notification.group, entry: notification.entry, item: notification.itemID),
                content: UNNotificationContent.from(notification.content), trigger: nil)
            let delivered = UNNotification(
                date: notification.deliveredAt, request: request, notificationID: notification.notificationID)
            let yes = await withCheckedContinuation { continuation in
                let once = OnceFlag()
                box.value.__shouldRemoveDeliveredNotification(notification: delivered) { yes in
                    if once.claim() { continuation.resume(returning: yes) }
                }
            }
            if yes { close.append(notification.notificationID) }
        }
        if !close.isEmpty { try? await client.closeDelivered(close) }
    }

    /// Replaces the group's whole timeline; `completion(true)` when it was scheduled.
    public static func reschedule(
        group: any LocalNotificationsGroup, permissionStrategy: PermissionStrategy,
        completion: @escaping (Bool) -> Void = { _ in }
    ) {
        rescheduleLater(UncheckedBox(group), permissionStrategy, MainQueueClosure(completion))
    }

    private static func rescheduleLater(
        _ box: UncheckedBox<any LocalNotificationsGroup>, _ permissionStrategy: PermissionStrategy,
        _ handler: MainQueueClosure<(Bool) -> Void>
    ) {
        submit({ handler.call($0.isSuccess) }) { () async throws(ChimeError) in
            _ = try await reschedule(box.value, permissionStrategy: permissionStrategy)
        }
    }

    /// Schedules a UserNotifications request as it is, after the permission strategy allows it.
    public static func directSchedule(
        _ request: UNNotificationRequest, permissionStrategy: PermissionStrategy = .askSystemPermissionIfNeeded
    ) async throws(ChimeError) {
        guard let strategy = try await permissionStrategy.resolve(group: nil) else {
            throw ChimeError(
                .rejected, "deniedOnGroupLevel: the app's asker did not allow it",
                dbusName: ChimeBus.ErrorName.permissionDenied)
        }
        do {
            try await UNUserNotificationCenter.current().schedule(request, strategy: strategy)
        } catch {
            throw error.chimeError ?? ChimeError(.rejected, error.message)
        }
    }

    /// Schedules a UserNotifications request as it is; reports the outcome to `completion`.
    public static func directSchedule(
        request: UNNotificationRequest, permissionStrategy: PermissionStrategy,
        completion: @escaping (SchedulingResult) -> Void = { _ in }
    ) {
        let handler = MainQueueClosure(completion)
        submit({ handler.call($0) }) { () async throws(ChimeError) in
            try await directSchedule(request, permissionStrategy: permissionStrategy)
        }
    }

    /// Removes the group and everything it has pending.
    public static func remove(_ group: some LocalNotificationsGroup) async throws(ChimeError) {
        try await remove(groupIdentifier: group.groupIdentifier)
    }

    /// Removes the group and everything it has pending.
    public static func remove(group: any LocalNotificationsGroup) {
        let id = group.groupIdentifier
        submit(nil) { () async throws(ChimeError) in try await remove(groupIdentifier: id) }
    }

    /// Removes the group and everything it has pending.
    public static func remove(groupIdentifier: String) async throws(ChimeError) {
        try await center.remove(groupIdentifier)
    }

    /// Turns the group off: nothing of it stays pending and reschedules are refused until it is allowed
    /// again (by a strategy with `allowAutomatically`, the user, or `enable`).
    public static func disable(_ group: some LocalNotificationsGroup) async throws(ChimeError) {
        try await center.setEnabled(group.groupIdentifier, false)
    }

    /// Turns the group off.
    public static func disable(group: any LocalNotificationsGroup) {
        let id = group.groupIdentifier
        submit(nil) { () async throws(ChimeError) in try await center.setEnabled(id, false) }
    }

    /// Turns the group on again (not possible for a group the user turned off).
    public static func enable(_ group: some LocalNotificationsGroup) async throws(ChimeError) {
        try await center.setEnabled(group.groupIdentifier, true)
    }

    // MARK: Permissions

    /// Runs `strategy` without scheduling (the user may be asked; this waits for the answer), for `group`. Without
    /// a group, a strategy with a group level (anything but `.bypass`) runs for a fresh group that is forgotten
    /// afterwards, as NiceNotifications runs it, so the app's own asker (`askWithPrePermission`) is shown.
    public static func requestPermission(_ strategy: PermissionStrategy, group: String? = nil) async throws(ChimeError)
        -> PermissionResult
    {
        if group == nil, !strategy.groupLevel.isBypass {
            let fresh = "permission-\(UUID().uuidString.lowercased())"
            let result: Result<PermissionResult, ChimeError>
            do { result = .success(try await requestPermission(strategy, group: fresh)) } catch {
                result = .failure(error)
            }
            // A fresh group's decision is of no use later; forgetting it keeps the app's stored decisions bounded.
            try? await center.remove(fresh)
            return try result.get()
        }
        guard let resolved = try await strategy.resolve(group: group) else { return .deniedOnGroupLevel }
        switch try await client().requestPermission(resolved, group: group).outcome {
        case "allowed": return .allowed
        case "deniedOnGroupLevel": return .deniedOnGroupLevel
        default: return .deniedOnSystemLevel
        }
    }

    /// Runs `strategy` without scheduling, as `withPermission` does; `completion(true)` when allowed, false when
    /// denied or chimed cannot be asked.
    public static func requestPermission(
        strategy: PermissionStrategy, completion: @escaping (Bool) -> Void = { _ in }
    ) {
        withPermission(strategy: strategy, perform: {}, completion: { completion($0.isAllowed) })
    }

    /// Runs `strategy` for `group` (a fresh one when nil, forgotten afterwards), then `perform` if it allowed, then
    /// `completion` with the result; chimed not answering counts as `.deniedOnSystemLevel`.
    public static func withPermission(
        strategy: PermissionStrategy, group: String? = nil, perform: @escaping () -> Void,
        completion: @escaping (_ isAllowed: PermissionResult) -> Void = { _ in }
    ) {
        let handler = MainQueueClosure { (result: PermissionResult) in
            if result.isAllowed { perform() }
            completion(result)
        }
        Task { handler.call((try? await requestPermission(strategy, group: group)) ?? .deniedOnSystemLevel) }
    }

    /// Whether the group's notifications would be shown now: allowed by the user at both levels (`.disabled` while
    /// the app's consent was never asked for).
    public static func currentAuthorizationStatus(
        forGroup group: any LocalNotificationsGroup,
        completion: @escaping (FinalAuthorizationStatus) -> Void
    ) {
        let id = group.groupIdentifier
        let handler = MainQueueClosure(completion)
        Task {
            guard let both = try? await client().authorization(group: id) else { return handler.call(.disabled) }
            switch both.system {
            case AuthorizationStatus.allowed.rawValue:
                handler.call(both.group == AuthorizationStatus.allowed.rawValue ? .enabled : .disabled)
            // Not asked yet: nothing would be shown now, as NiceNotifications answers.
            case AuthorizationStatus.undetermined.rawValue: handler.call(.disabled)
            default: handler.call(.systemDenied)
            }
        }
    }

    /// The app's system-level permission: whether the user allows it to notify at all.
    public enum SystemAuthorization {
        public typealias Status = AuthorizationStatus

        public static func current() async throws(ChimeError) -> Status {
            let text = try await client().authorization().system
            guard let status = AuthorizationStatus(rawValue: text) else {
                throw ChimeError(.protocolError, "chimed answered an unknown status \"\(text)\"")
            }
            return status
        }

        /// The status, or `.undetermined` when chimed cannot be asked.
        public static func getCurrent(_ completion: @escaping (Status) -> Void) {
            let handler = MainQueueClosure(completion)
            Task { handler.call((try? await current()) ?? .undetermined) }
        }

        /// Asks the user for the app's consent unless they said no before (`.deniedPreviously`, not asked
        /// again): `.allowed` or `.deniedNow`. Goes through `Env`, as NiceNotifications does; `options` are
        /// passed on (the desktop asks one question for all of them).
        public static func authorizeWithSystem(
            options: UNAuthorizationOptions = [.alert, .badge, .sound],
            _ completion: @escaping (Result<Status, any Error>) -> Void
        ) {
            let handler = MainQueueClosure(completion)
            Env.getNotificationSettings { settings in
                switch settings.authorizationStatus {
                case .authorized, .notDetermined:
                    Env.requestAuthorization(options) { isAllowed, error in
                        if let error { return handler.call(.failure(error)) }
                        handler.call(.success(isAllowed ? .allowed : .deniedNow))
                    }
                case .denied: handler.call(.success(.deniedPreviously))
                default: handler.call(.success(.undetermined))
                }
            }
        }

        /// The UserNotifications calls `authorizeWithSystem` makes; replaceable (in tests).
        public enum Env {
            private static let settings = Replaceable<(@escaping (UNNotificationSettings) -> Void) -> Void> {
                completion in
                let box = UncheckedBox(completion)
                UNUserNotificationCenter.current().getNotificationSettings { box.value($0) }
            }
            private static let authorization = Replaceable<
                (UNAuthorizationOptions, @escaping (Bool, (any Error)?) -> Void) -> Void
            > { options, completion in
                let box = UncheckedBox(completion)
                UNUserNotificationCenter.current().requestAuthorization(options: options) { box.value($0, $1) }
            }

            public static var getNotificationSettings: (@escaping (UNNotificationSettings) -> Void) -> Void {
                get { settings.value }
                set { settings.value = newValue }
            }
            public static var requestAuthorization:
                (UNAuthorizationOptions, @escaping (Bool, (any Error)?) -> Void) -> Void
            {
                get { authorization.value }
                set { authorization.value = newValue }
            }
        }
    }

    /// A group's permission: whether it is enabled. Kept in chimed, not in `UserDefaults` (see `Env`).
    public enum GroupLevelAuthorization {
        public typealias Status = GroupAuthorization

        public static func current(forGroup group: String) async throws(ChimeError) -> Status {
            switch try await client().authorization(group: group).group {
            case AuthorizationStatus.allowed.rawValue: return .allowed
            case AuthorizationStatus.deniedPreviously.rawValue, AuthorizationStatus.deniedNow.rawValue: return .denied
            case AuthorizationStatus.undetermined.rawValue: return .notAsked
            case let other: throw ChimeError(.protocolError, "chimed answered an unknown status \"\(other ?? "")\"")
            }
        }

        /// The status, read from chimed before returning (this blocks the calling thread for the round trip,
        /// at most 5 s); `.notAsked` when chimed cannot be asked.
        public static func getCurrent(forGroup group: String) -> Status {
            blocking(timeout: 5, fallback: .notAsked) { try? await current(forGroup: group) }
        }

        /// The status, or `.notAsked` when chimed cannot be asked.
        public static func getCurrent(forGroup group: String, completion: @escaping @Sendable (Status) -> Void) {
            Task { completion((try? await current(forGroup: group)) ?? .notAsked) }
        }

        /// Stores the group's decision in chimed, after the calls made before it. chimed keeps one switch per
        /// group: disallowing turns the group off as `disable(group:)` does (nothing of it stays pending);
        /// allowing turns it on, except a group the user turned off.
        public static func setIsAllowed(_ isAllowed: Bool, forGroup groupIdentifier: String) {
            Log.info("group \(groupIdentifier): auth updated to isAllowed - \(isAllowed)")
            submit(nil) { () async throws(ChimeError) in
                try await center.setEnabled(groupIdentifier, isAllowed)
            }
        }

        /// The key NiceNotifications stores a group's decision under in `UserDefaults`; chimed keeps the
        /// decision here, so nothing is stored under it.
        public static func _userDefaultsKey(forGroup groupIdentifier: String) -> String {
            "___np_local_notifications_app_permission_group:\(groupIdentifier)"
        }

        /// NiceNotifications' `UserDefaults` access for group decisions. chimed keeps the decisions here, so
        /// ChimeKit never calls these; they are kept so code that replaces them compiles.
        public enum Env {
            private static let read = Replaceable<(String) -> Any?> { UserDefaults.standard.object(forKey: $0) }
            private static let write = Replaceable<(Any?, String) -> Void> { UserDefaults.standard.set($0, forKey: $1) }

            public static var valueForKey: (String) -> Any? {
                get { read.value }
                set { read.value = newValue }
            }
            public static var setValue: (Any?, String) -> Void {
                get { write.value }
                set { write.value = newValue }
            }

            public static func setUserDefaults(_ userDefaults: UserDefaults) {
                valueForKey = { userDefaults.object(forKey: $0) }
                setValue = { userDefaults.set($0, forKey: $1) }
            }
        }
    }

    // MARK: Events

    /// The actions chosen on this app's notifications from now on.
    public static func actionEvents() async throws(ChimeError) -> AsyncStream<ChimeClient.ActionEvent> {
        try await client().actionEvents()
    }
}

// MARK: - Results

extension LocalNotifications {
    /// How a scheduling call ended.
    public enum SchedulingResult: Sendable {
        case scheduledSuccesfully
        case systemError(any Error)
        case deniedOnGroupLevel
        case deniedOnSystemLevel

        public var isSuccess: Bool {
            if case .scheduledSuccesfully = self { return true }
            return false
        }

        init(_ result: Result<Void, ChimeError>) {
            switch result {
            case .success: self = .scheduledSuccesfully
            case .failure(let error) where error.isPermissionDenied:
                // chimed's denial (and ChimeKit's own) names the level first.
                self = error.message.hasPrefix("deniedOnGroupLevel") ? .deniedOnGroupLevel : .deniedOnSystemLevel
            case .failure(let error): self = .systemError(error)
            }
        }
    }

    /// How a permission request ended.
    public enum PermissionResult: Sendable {
        case allowed
        case deniedOnSystemLevel
        case deniedOnGroupLevel

        public var isAllowed: Bool { self == .allowed }
        public var isDenied: Bool { !isAllowed }

        /// The scheduling result a scheduling call reports for it.
        public var asSchedulingResult: SchedulingResult {
            switch self {
            case .allowed: .scheduledSuccesfully
            case .deniedOnGroupLevel: .deniedOnGroupLevel
            case .deniedOnSystemLevel: .deniedOnSystemLevel
            }
        }
    }

    /// Both levels at once, for a group.
    public enum FinalAuthorizationStatus: Sendable {
        case enabled
        case disabled
        case systemDenied

        public var isEnabled: Bool { self == .enabled }
    }
}

// MARK: - Permission strategies

extension LocalNotifications {
    /// NiceNotifications' permission strategy: the group level first, then, if it passes, the system level.
    public struct PermissionStrategy: Sendable {
        public var groupLevel: GroupLevel
        public var systemLevel: SystemLevel

        public init(groupLevel: GroupLevel, systemLevel: SystemLevel) {
            self.groupLevel = groupLevel
            self.systemLevel = systemLevel
        }

        /// Ask for the app's consent when it was never given; schedule when given.
        public static let askSystemPermissionIfNeeded = PermissionStrategy(
            groupLevel: .bypass, systemLevel: .askPermission)
        /// Schedule only when the app's consent was given before; never ask.
        public static let scheduleIfSystemAllowed = PermissionStrategy(
            groupLevel: .bypass, systemLevel: .ifAlreadyAllowed)

        /// Ask for the group with `prePermission`, then for the app's consent if needed.
        public static func askWithPrePermission(
            _ mode: GroupLevel.AskPermissionMode, prePermission: ApplicationLevelPermissionAsker
        ) -> PermissionStrategy {
            PermissionStrategy(groupLevel: .askPermission(mode, prePermission), systemLevel: .askPermission)
        }

        /// The system level.
        public enum SystemLevel: Sendable {
            /// Ask for the app's consent if it is undetermined.
            case askPermission
            /// Go on only if the app's consent was given before.
            case ifAlreadyAllowed
        }

        /// The group level. (`@unchecked Sendable`: of the group in `.ifAllowed(other:)` only its identifier is
        /// read, once, when the strategy is resolved.)
        public enum GroupLevel: @unchecked Sendable {
            /// Store the group as allowed (overwriting a denial), then go on.
            case allowAutomatically
            /// Go on if the group is allowed; otherwise ask (as the mode permits), store the answer, go on if yes.
            case askPermission(AskPermissionMode, ApplicationLevelPermissionAsker)
            /// Go on only if the group was allowed before.
            case ifAlreadyAllowed
            /// Go on only if the other group is allowed.
            case ifAllowed(other: any LocalNotificationsGroup)
            /// Skip the group level, leaving its stored decision alone.
            case bypass

            public typealias AskPermissionMode = ChimeCore.AskPermissionMode

            /// Go on only if the group with this identifier is allowed.
            public static func ifAllowedGroup(_ groupIdentifier: String) -> GroupLevel {
                .ifAllowed(other: NamedGroup(groupIdentifier: groupIdentifier))
            }

            var isBypass: Bool {
                if case .bypass = self { return true }
                return false
            }
        }

        /// A group known by its identifier only, for `ifAllowedGroup(_:)`.
        struct NamedGroup: LocalNotificationsGroup {
            let groupIdentifier: String
            func getTimeline(completion: @escaping (NotificationsTimeline) -> Void) { completion(.empty) }
        }

        /// The strategy as chimed evaluates it, or nil when an app-side asker said no. An asker with a
        /// closure is run here, in the app; the answer is stored in chimed as the group's switch.
        func resolve(group: String?) async throws(ChimeError) -> ChimeCore.PermissionStrategy? {
            let system: SystemPermissionStrategy = systemLevel == .askPermission ? .askPermission : .ifAlreadyAllowed
            let level: GroupPermissionStrategy
            switch groupLevel {
            case .allowAutomatically: level = .allowAutomatically
            case .ifAlreadyAllowed: level = .ifAlreadyAllowed
            case .ifAllowed(let other): level = .ifAllowed(otherGroup: other.groupIdentifier)
            case .bypass: level = .bypass
            case .askPermission(let mode, let asker):
                switch asker.kind {
                case .prompt(let prompt): level = .askPermission(mode, prompt)
                case .custom(let ask):
                    guard let group else { level = .bypass; break }
                    switch try await GroupLevelAuthorization.current(forGroup: group) {
                    case .allowed: level = .ifAlreadyAllowed
                    case .denied where mode == .once: return nil
                    case .denied, .notAsked:
                        let yes = await withCheckedContinuation { continuation in
                            let once = OnceFlag()
                            // On the main queue, where NiceNotifications asks (it asserts the main thread).
                            ask.async { ask in
                                ask { result in
                                    if once.claim() { continuation.resume(returning: (try? result.get()) ?? false) }
                                }
                            }
                        }
                        guard yes else {
                            try? await center.setEnabled(group, false)
                            return nil
                        }
                        level = .allowAutomatically
                    }
                }
            }
            return ChimeCore.PermissionStrategy(group: level, system: system)
        }
    }

    /// Asks the user whether a group may notify. `.defaultAlert` and `.alert(…)` have chimed ask with a
    /// notification with two buttons (the desktop has no view controller to present an alert on); a custom
    /// asker runs in the app, on the main queue, and calls back with the answer (from any thread).
    public struct ApplicationLevelPermissionAsker: Sendable {
        enum Kind: Sendable {
            case prompt(PermissionPrompt)
            case custom(MainQueueClosure<(@escaping (Result<Bool, any Error>) -> Void) -> Void>)
        }

        let kind: Kind

        /// An asker of the app's own: ask, then call `completion` with the answer. It is run on the main queue.
        public init(askPermission: @escaping (_ completion: @escaping (Result<Bool, any Error>) -> Void) -> Void) {
            kind = .custom(MainQueueClosure(askPermission))
        }

        init(prompt: PermissionPrompt) { kind = .prompt(prompt) }

        /// chimed's question in English: "Allow notifications?".
        public static let defaultAlert = ApplicationLevelPermissionAsker(prompt: PermissionPrompt())

        /// chimed's question with these texts.
        public static func alert(
            title: String, message: String, noActionTitle: String = PermissionPrompt.defaultDenyLabel,
            yesActionTitle: String = PermissionPrompt.defaultAllowLabel
        ) -> ApplicationLevelPermissionAsker {
            ApplicationLevelPermissionAsker(
                prompt: PermissionPrompt(
                    title: title, message: message, allowLabel: yesActionTitle, denyLabel: noActionTitle))
        }

        /// chimed's question with these texts. There is no view controller to present an alert on here;
        /// `vc` is not used.
        public static func alert(
            on vc: Any, title: String?, message: String?, noActionTitle: String, yesActionTitle: String
        ) -> ApplicationLevelPermissionAsker {
            alert(
                title: title ?? PermissionPrompt.defaultTitle, message: message ?? PermissionPrompt.defaultMessage,
                noActionTitle: noActionTitle, yesActionTitle: yesActionTitle)
        }

        /// chimed's question in English; `vc` is not used.
        public static func defaultAlert(on vc: Any) -> ApplicationLevelPermissionAsker { defaultAlert }

        /// Asks (for a custom asker: runs it on the main queue); `completion` runs on the main queue.
        public func askPermission(completion: @escaping (Result<Bool, any Error>) -> Void) {
            let handler = MainQueueClosure(completion)
            switch kind {
            case .custom(let ask): ask.async { ask in ask { handler.call($0) } }
            case .prompt: handler.call(.failure(ChimeError(.rejected, "chimed asks this question itself")))
            }
        }
    }
}

// MARK: - Log and Env

extension LocalNotifications {
    /// Where ChimeKit reports what it does with groups (rescheduling, denials, results); silent by default.
    public enum Log {
        private static let sink = Replaceable<(Any) -> Void> { _ in }

        public static var info: (Any) -> Void {
            get { sink.value }
            set { sink.value = newValue }
        }
    }

    /// The UserNotifications calls NiceNotifications routes through, replaceable (in tests); by default the
    /// `UNUserNotificationCenter.current()` methods. ChimeKit sends a group's timeline to chimed whole, so its own
    /// calls do not go through them.
    public enum Env {
        private static let add = Replaceable<(UNNotificationRequest, (((any Error)?) -> Void)?) -> Void> {
            request, completion in
            let box = UncheckedBox(completion)
            UNUserNotificationCenter.current().add(request) { box.value?($0) }
        }
        private static let removeDelivered = Replaceable<([String]) -> Void>(
            UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers:))
        private static let removePending = Replaceable<([String]) -> Void>(
            UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers:))
        private static let pending = Replaceable<(@escaping ([UNNotificationRequest]) -> Void) -> Void> {
            completion in
            let box = UncheckedBox(completion)
            UNUserNotificationCenter.current().getPendingNotificationRequests { box.value($0) }
        }
        private static let delivered = Replaceable<(@escaping ([UNNotification]) -> Void) -> Void> { completion in
            let box = UncheckedBox(completion)
            UNUserNotificationCenter.current().getDeliveredNotifications { box.value($0) }
        }

        public static var addNotificationRequest: (UNNotificationRequest, (((any Error)?) -> Void)?) -> Void {
            get { add.value }
            set { add.value = newValue }
        }
        public static var removeDeliveredNotifications: ([String]) -> Void {
            get { removeDelivered.value }
            set { removeDelivered.value = newValue }
        }
        public static var removePendingNotificationRequests: ([String]) -> Void {
            get { removePending.value }
            set { removePending.value = newValue }
        }
        public static var getPendingNotificationRequests: (@escaping ([UNNotificationRequest]) -> Void) -> Void {
            get { pending.value }
            set { pending.value = newValue }
        }
        public static var getDeliveredNotifications: (@escaping ([UNNotification]) -> Void) -> Void {
            get { delivered.value }
            set { delivered.value = newValue }
        }
    }
}

/// A value any thread may read or replace (`Log.info`, the `Env` calls).
final class Replaceable<Value>: @unchecked Sendable {
    // @unchecked Sendable: `stored` is only read and written under `lock`.
    private let lock = NSLock()
    private var stored: Value

    init(_ value: Value) { stored = value }

    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

// MARK: - Plumbing

extension LocalNotifications {
    /// Runs `work` after every call submitted before it (so `setNotificationCategories` then `add` happen in
    /// that order, as the code reads), then reports to `completion`.
    static func submit(
        _ completion: (@Sendable (SchedulingResult) -> Void)?,
        _ work: @escaping @Sendable () async throws(ChimeError) -> Void
    ) {
        let task = order.enqueue(work)
        Task { completion?(SchedulingResult(await task.value)) }
    }

    /// The group's timeline, made where the group prefers.
    static func timeline(of group: any LocalNotificationsGroup) async -> NotificationsTimeline {
        if let group = group as? any NotificationGroup { return await group.timeline }
        let box = UncheckedBox(group)
        let onMain = group.preferredExecutionContext == .mainQueueOnly
        return await withCheckedContinuation { continuation in
            let once = OnceFlag()
            let make: @Sendable () -> Void = {
                box.value.getTimeline { timeline in
                    if once.claim() { continuation.resume(returning: timeline) }
                }
            }
            if onMain { DispatchQueue.main.async(execute: make) } else { DispatchQueue.global().async(execute: make) }
        }
    }

    static func fixedContent(_ content: UNNotificationContent) throws(ChimeError) -> ChimeCore.NotificationContent {
        do {
            return try content.wire()
        } catch {
            throw error.chimeError ?? ChimeError(.rejected, error.message)
        }
    }

    /// Waits on this thread for `work`, at most `timeout` seconds.
    static func blocking<T: Sendable>(timeout: TimeInterval, fallback: T, _ work: @escaping @Sendable () async -> T?)
        -> T
    {
        let result = UncheckedBox<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            result.value = await work()
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return fallback }
        return result.value ?? fallback
    }
}

extension LocalNotifications {
    /// The shared state: the configuration, the connection, the order of calls, and the refresh of groups
    /// with closure content.
    actor Center {
        var configuration = Configuration()
        var connection: ChimeClient?
        var connecting: Task<Result<ChimeClient, ChimeError>, Never>?
        var refreshes: [String: Task<Void, Never>] = [:]

        func configure(_ configuration: Configuration) {
            connection?.close()
            connection = nil
            connecting = nil
            for task in refreshes.values { task.cancel() }
            refreshes = [:]
            self.configuration = configuration
        }

        func client() async throws(ChimeError) -> ChimeClient {
            if let connection { return connection }
            // One connection, however many calls ask for it while it is being made (a second connection
            // could not own the app's name).
            let connecting =
                self.connecting
                ?? Task { [configuration] () -> Result<ChimeClient, ChimeError> in
                    do throws(ChimeError) {
                        if let appID = configuration.appID {
                            return .success(try await ChimeClient.connect(configuration.bus, owning: appID))
                        }
                        return .success(try await ChimeClient.connect(configuration.bus))
                    } catch {
                        return .failure(error)
                    }
                }
            self.connecting = connecting
            defer { if self.connecting == connecting { self.connecting = nil } }
            let made = try await connecting.value.get()
            if connection == nil { connection = made }
            return made
        }

        var appID: String? { configuration.appID }

        func reschedule(
            id: String, timeline: NotificationsTimeline, settings: GroupSettings,
            strategy: ChimeCore.PermissionStrategy, entryID: String? = nil, callback: String? = nil
        ) async throws(ChimeError) -> [EntryChange] {
            let now = Date()
            let (entries, refreshBy) = try await timeline.materialize(
                now: now, timeZone: .current, horizon: configuration.horizon,
                limit: configuration.materializationLimit)
            let named = entries.map {
                var e = $0
                if let entryID { e.id = entryID }
                // Asked for again when due, so the running app decides how it is presented.
                if let callback, case .fixed(let content) = e.content {
                    e.content = .callback(CallbackSource(busName: callback, timeout: 2, fallback: content))
                }
                return e
            }
            let group = TimelineGroup(id: id, settings: settings, entries: named)
            let changes = try await client().reschedule(group, permission: strategy)
            refreshes.removeValue(forKey: id)?.cancel()
            if let refreshBy, configuration.refreshesWhileRunning {
                let wait = max(1, refreshBy.timeIntervalSince(now) / 2)
                refreshes[id] = Task { [weak self] in
                    try? await Task.sleep(for: .seconds(wait))
                    guard !Task.isCancelled, let self else { return }
                    // The user was asked (or not) the first time; a refresh never asks again.
                    _ = try? await self.reschedule(
                        id: id, timeline: timeline, settings: settings,
                        strategy: .scheduleIfSystemAllowed)
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

/// Runs submitted work one after another, in the order `enqueue` was called (which is the order of the
/// calls, as enqueueing happens before a call returns).
final class CallOrder: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Task<Void, Never>?

    func enqueue(_ work: @escaping @Sendable () async throws(ChimeError) -> Void) -> Task<
        Result<Void, ChimeError>, Never
    > {
        lock.withLock {
            let previous = last
            let task = Task<Result<Void, ChimeError>, Never> {
                await previous?.value
                do throws(ChimeError) {
                    try await work()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            last = Task { _ = await task.value }
            return task
        }
    }

    /// Waits for everything enqueued so far.
    func drain() async {
        _ = await enqueue { () async throws(ChimeError) in }.value
    }
}

/// Carries a value the compiler cannot prove sendable across an isolation boundary. Used where the
/// vocabulary's contract already says where the value is used (a group's `getTimeline` on the main queue; a
/// result written before a semaphore is signalled and read after).
final class UncheckedBox<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

extension GroupAuthorization {
    /// Whether the group is allowed.
    public var isAllowed: Bool { self == .allowed }
}
