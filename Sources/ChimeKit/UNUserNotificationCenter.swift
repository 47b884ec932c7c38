import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

/// What an app hears of its notifications: implement either form of each method (the async one wins).
/// `userNotificationCenter(_:didReceive:)` is called for an action chosen, a click (the default action), a
/// dismissal (for categories with `.customDismissAction`) and a text reply, while the app runs; actions
/// chosen while it was not running are handed over when the delegate is set.
public protocol UNUserNotificationCenterDelegate: AnyObject {
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void)
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void)
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        completionHandler([.banner, .list, .sound, .badge])
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification)
        async -> UNNotificationPresentationOptions
    {
        await withCheckedContinuation { continuation in
            let once = OnceFlag()
            userNotificationCenter(center, willPresent: notification) { options in
                if once.claim() { continuation.resume(returning: options) }
            }
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        completionHandler()
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse)
        async
    {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = OnceFlag()
            userNotificationCenter(center, didReceive: response) { if once.claim() { continuation.resume() } }
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?
    ) {}
}

/// UserNotifications' notification center, on chimed: `UNUserNotificationCenter.current()` schedules,
/// lists and removes this app's requests and delivered notifications and tells its delegate what the user
/// did. It uses the connection `LocalNotifications.configure` set up. Each request lives in chimed as a group
/// named `request.<identifier>`, so adding a request with the identifier of a pending one replaces it.
/// Calls without `async` run in the order they were made; their completion handlers are called on no
/// particular thread.
public final class UNUserNotificationCenter: @unchecked Sendable {
    private static let shared = UNUserNotificationCenter()

    /// The app's center.
    public static func current() -> UNUserNotificationCenter { shared }

    private let lock = NSLock()
    private weak var _delegate: (any UNUserNotificationCenterDelegate)?
    private var listening: Task<Void, Never>?
    private var categories: [String: UNNotificationCategory] = [:]
    /// The content of the requests this process added, by identifier: a response hands it back whole.
    private var added: [String: UNNotificationRequest] = [:]
    /// What the app last asked `requestAuthorization` for.
    private var requested: UNAuthorizationOptions = []

    init() {}

    /// The object told of the user's responses (held weakly, as in UserNotifications). Setting it starts
    /// listening to chimed and hands over the actions chosen while the app was not running.
    public var delegate: (any UNUserNotificationCenterDelegate)? {
        get { lock.withLock { _delegate } }
        set {
            lock.withLock {
                _delegate = newValue
                listening?.cancel()
                listening = newValue == nil ? nil : Task { await self.listen() }
            }
        }
    }

    static let requestPrefix = "request."

    /// False: nothing on the desktop runs a notification content extension.
    public var supportsContentExtensions: Bool { false }

    // MARK: Authorization

    /// Asks the user for the app's consent when it was never given; true when given.
    @discardableResult
    public func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        lock.withLock { requested = options }
        do {
            return try await LocalNotifications.requestPermission(.askSystemPermissionIfNeeded).isAllowed
        } catch {
            throw UNError(error)
        }
    }

    public func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping @Sendable (Bool, (any Error)?) -> Void
    ) {
        Task {
            do {
                completionHandler(try await requestAuthorization(options: options), nil)
            } catch {
                completionHandler(false, error)
            }
        }
    }

    /// The app's settings: authorized when the user consented.
    public func notificationSettings() async -> UNNotificationSettings {
        let status: UNAuthorizationStatus
        switch try? await LocalNotifications.SystemAuthorization.current() {
        case .allowed?: status = .authorized
        case .deniedNow?, .deniedPreviously?: status = .denied
        case .undetermined?, nil: status = .notDetermined
        }
        return UNNotificationSettings(
            authorizationStatus: status,
            providesAppNotificationSettings: lock.withLock { requested.contains(.providesAppNotificationSettings) })
    }

    public func getNotificationSettings(completionHandler: @escaping @Sendable (UNNotificationSettings) -> Void) {
        Task { completionHandler(await notificationSettings()) }
    }

    // MARK: Badge

    /// The object path the launcher badge signal is sent from.
    static let launcherEntryPath: DBusObjectPath = "/io/chime/LauncherEntry"

    /// Sets the count on the app's launcher icon (0 clears it): the `com.canonical.Unity.LauncherEntry` signal
    /// chimed sends for a delivered notification's badge, sent at once by the app, for its desktop entry (the
    /// app id `LocalNotifications.configure` set, else the executable's name). Throws `badgeInputInvalid` for
    /// a negative count or one over `Int32.max`, `notificationsNotAllowed` when the user said no to the app.
    public func setBadgeCount(_ newBadgeCount: Int) async throws {
        guard (0...Int(Int32.max)).contains(newBadgeCount) else {
            throw UNError(.badgeInputInvalid, "the badge count \(newBadgeCount) is not from 0 to \(Int32.max)")
        }
        await LocalNotifications.order.drain()
        let client: ChimeClient
        let consent: String
        do {
            client = try await LocalNotifications.client()
            consent = try await client.authorization().system
        } catch {
            throw UNError(error)
        }
        guard AuthorizationStatus(rawValue: consent).map({ $0 != .deniedNow && $0 != .deniedPreviously }) ?? true
        else {
            throw UNError(.notificationsNotAllowed, "notifications are not allowed for this app (chime app allow)")
        }
        let app = await LocalNotifications.center.appID ?? Self.executableName
        guard let id = DesktopFileID.parse(app) else {
            throw UNError(
                .badgeInputInvalid,
                "the app \"\(app)\" is not a desktop entry's name, so no launcher shows its badge; configure an app id")
        }
        let properties = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                DBusDictEntry(.string("count"), .variant(.int64(Int64(newBadgeCount)))),
                DBusDictEntry(.string("count-visible"), .variant(.boolean(newBadgeCount > 0))),
            ])
        do {
            try client.connection.emitSignal(
                path: Self.launcherEntryPath, interface: "com.canonical.Unity.LauncherEntry", member: "Update",
                [.string("application://\(id).desktop"), properties])
        } catch {
            throw UNError(.chimeFailed, "cannot send the badge: \(error)")
        }
    }

    public func setBadgeCount(
        _ newBadgeCount: Int, withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        Task {
            do {
                try await setBadgeCount(newBadgeCount)
                completionHandler?(nil)
            } catch {
                completionHandler?(error)
            }
        }
    }

    /// The executable's file name, which chimed names an app by when it has no app id.
    static var executableName: String {
        let path =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: path).lastPathComponent
    }

    // MARK: Categories

    /// Replaces the app's categories: a notification whose `categoryIdentifier` names one shows its actions.
    public func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        lock.withLock { self.categories = Dictionary(categories.map { ($0.identifier, $0) }) { a, _ in a } }
        let registered = categories.map(\.actionCategory).sorted { $0.id < $1.id }
        LocalNotifications.submit(nil) { () async throws(ChimeError) in
            try await LocalNotifications.client().registerCategories(registered)
        }
    }

    public func notificationCategories() async -> Set<UNNotificationCategory> {
        lock.withLock { Set(categories.values) }
    }

    public func getNotificationCategories(completionHandler: @escaping @Sendable (Set<UNNotificationCategory>) -> Void)
    {
        completionHandler(lock.withLock { Set(categories.values) })
    }

    // MARK: Requests

    /// Schedules the request (replacing a pending one with its identifier). Fails when the app has not been
    /// allowed to notify, and for a repeating time interval under 60 seconds, as iOS does.
    public func add(_ request: UNNotificationRequest) async throws {
        let result = LocalNotifications.order.enqueue { () async throws(ChimeError) in
            do throws(UNError) {
                try await self.schedule(request, strategy: .scheduleIfSystemAllowed)
            } catch {
                throw error.chimeError ?? ChimeError(.rejected, error.message)
            }
        }
        if case .failure(let error) = await result.value { throw UNError(error) }
    }

    public func add(
        _ request: UNNotificationRequest,
        withCompletionHandler completionHandler: (@Sendable ((any Error)?) -> Void)? = nil
    ) {
        LocalNotifications.submit({ result in
            switch result {
            case .scheduledSuccesfully: completionHandler?(nil)
            case .systemError(let error): completionHandler?(error)
            case .deniedOnGroupLevel, .deniedOnSystemLevel:
                completionHandler?(UNError(.notificationsNotAllowed, "notifications are not allowed for this app"))
            }
        }) { () async throws(ChimeError) in
            do throws(UNError) {
                try await self.schedule(request, strategy: .scheduleIfSystemAllowed)
            } catch {
                throw error.chimeError ?? ChimeError(.rejected, error.message)
            }
        }
    }

    /// Sends the request to chimed as the group `request.<identifier>`.
    func schedule(_ request: UNNotificationRequest, strategy: ChimeCore.PermissionStrategy) async throws(UNError) {
        do {
            try TimelineGroup.validateIdentifier(request.identifier, what: "request identifier")
        } catch {
            throw UNError(.contentProvidingInvalid, error.message)
        }
        let content = try request.content.wire()
        let now = Date()
        let resolved = try request.trigger?.resolved(now: now, timeZone: .current) ?? ResolvedTrigger(.at(now))
        let trigger = FixedTrigger(resolved: resolved)
        // With a delegate, chimed asks the app when the request is due (its `willPresent`); when the app is
        // not running, the content is shown as it is.
        let asks = lock.withLock { _delegate != nil }
        let appID = await LocalNotifications.center.appID
        do {
            _ = try await LocalNotifications.center.reschedule(
                id: Self.requestPrefix + request.identifier,
                timeline: NotificationsTimeline { trigger.schedule(content: content) }, settings: GroupSettings(),
                strategy: strategy, entryID: "request", callback: asks ? appID : nil)
        } catch {
            throw UNError(error)
        }
        lock.withLock { added[request.identifier] = request }
    }

    /// The app's pending requests, soonest first. A request of a `LocalNotifications` group is named
    /// `<group>.<entry>`.
    public func pendingNotificationRequests() async -> [UNNotificationRequest] {
        await LocalNotifications.order.drain()  // after the calls made before it
        guard let items = try? await LocalNotifications.client().pending(content: true) else { return [] }
        return items.map { item in
            let identifier = Self.identifier(group: item.group, entry: item.entry, item: item.id)
            let known = lock.withLock { added[identifier] }
            let content =
                item.content.map(UNNotificationContent.from) ?? known?.content
                ?? UNNotificationContent.from(ChimeCore.NotificationContent(summary: item.summary))
            return UNNotificationRequest(
                identifier: identifier, content: content,
                trigger: known?.trigger ?? UNChimeNotificationTrigger(date: item.fireDate, rule: item.rule))
        }
    }

    public func getPendingNotificationRequests(
        completionHandler: @escaping @Sendable ([UNNotificationRequest]) -> Void
    ) {
        Task { completionHandler(await pendingNotificationRequests()) }
    }

    /// Removes the pending requests with these identifiers; unknown ones are ignored.
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        let groups = identifiers.map { Self.requestPrefix + $0 }
        lock.withLock { for id in identifiers { added.removeValue(forKey: id) } }
        LocalNotifications.submit(nil) { () async throws(ChimeError) in
            for group in groups {
                do throws(ChimeError) {
                    try await LocalNotifications.remove(groupIdentifier: group)
                } catch  where error.kind == .notFound {}
            }
        }
    }

    /// Removes every pending request of the app, its NiceNotifications groups' included.
    public func removeAllPendingNotificationRequests() {
        lock.withLock { added.removeAll() }
        LocalNotifications.submit(nil) { () async throws(ChimeError) in
            try await LocalNotifications.client().cancelAll()
        }
    }

    // MARK: Delivered

    /// The app's notifications shown now (delivered and not closed), newest first.
    public func deliveredNotifications() async -> [UNNotification] {
        await LocalNotifications.order.drain()
        guard let shown = try? await LocalNotifications.client().delivered() else { return [] }
        return shown.map { notification in
            UNNotification(
                date: notification.deliveredAt,
                request: UNNotificationRequest(
                    identifier: Self.identifier(
                        group: notification.group, entry: notification.entry, item: notification.itemID),
                    content: UNNotificationContent.from(notification.content), trigger: nil),
                notificationID: notification.notificationID)
        }
    }

    public func getDeliveredNotifications(completionHandler: @escaping @Sendable ([UNNotification]) -> Void) {
        Task { completionHandler(await deliveredNotifications()) }
    }

    /// Closes the app's shown notifications of these requests.
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        let wanted = Set(identifiers)
        LocalNotifications.submit(nil) { () async throws(ChimeError) in
            let client = try await LocalNotifications.client()
            let ids = try await client.delivered().filter {
                wanted.contains(Self.identifier(group: $0.group, entry: $0.entry, item: $0.itemID))
            }.map(\.notificationID)
            if !ids.isEmpty { try await client.closeDelivered(ids) }
        }
    }

    /// Closes all of the app's shown notifications.
    public func removeAllDeliveredNotifications() {
        LocalNotifications.submit(nil) { () async throws(ChimeError) in
            try await LocalNotifications.client().closeAllDelivered()
        }
    }

    // MARK: Responses

    static func identifier(group: String?, entry: String?, item: UInt64) -> String {
        guard let group else { return String(item) }
        if group.hasPrefix(requestPrefix) { return String(group.dropFirst(requestPrefix.count)) }
        return entry.map { "\(group).\($0)" } ?? group
    }

    /// Listens to chimed for this app's actions and closes, and tells the delegate; answers chimed's
    /// question whether a request now due is to be presented.
    private func listen() async {
        guard let client = try? await LocalNotifications.client(), let events = try? await client.itemEvents() else {
            return
        }
        try? client.connection.export([presenter()], at: ContentProviderBus.path)
        for action in (try? await client.takeActions()) ?? [] { await respond(to: action) }
        for await event in events {
            switch event {
            case .action(let action): await respond(to: action)
            case .closed(let closed):
                guard closed.reason == "dismissed by the user" else { continue }
                let identifier = Self.identifier(group: closed.group, entry: closed.entry, item: closed.itemID)
                let request = await self.request(identifier)
                let category = lock.withLock { categories[request.content.categoryIdentifier] }
                guard category?.options.contains(.customDismissAction) == true else { continue }
                await deliver(
                    UNNotificationResponse(
                        notification: UNNotification(date: Date(), request: request),
                        actionIdentifier: UNNotificationDismissActionIdentifier))
            }
        }
    }

    /// `io.chime.ContentProvider1.MakeContent(s group, s entry, x fire_time, u number) → a{sv}`: the
    /// delegate's `willPresent` decides; no banner, alert or list means the occurrence is not shown, no sound
    /// means it is shown silently, no badge means without its badge.
    private func presenter() -> DBusInterface {
        DBusInterface(
            ContentProviderBus.interface,
            methods: [
                DBusMethod(
                    ContentProviderBus.makeContent, inputs: ContentProviderBus.makeContentInputs,
                    outputs: [DBusArgument("content", WireRecord.type)]
                ) { [weak self] call in
                    guard let self, case .string(let group) = call.arguments[0],
                        case .string(let entry) = call.arguments[1],
                        case .int64(let fire) = call.arguments[2]
                    else { throw DBusError(.invalidArgs, "MakeContent takes a group, an entry, a time and a number") }
                    return [try await self.present(group: group, entry: entry, at: WireTime.date(microseconds: fire))]
                }
            ])
    }

    private func present(group: String, entry: String, at date: Date) async throws -> DBusValue {
        let request = await request(Self.identifier(group: group, entry: entry, item: 0))
        var record = WireRecord()
        guard let delegate = lock.withLock({ _delegate }) else {
            record.set("present", true)
            return record.value
        }
        let box = UncheckedBox(delegate)
        let options = await box.value.userNotificationCenter(
            self, willPresent: UNNotification(date: date, request: request))
        guard !options.isDisjoint(with: [.banner, .alert, .list]) else {
            record.set("present", false)
            return record.value
        }
        var content = try request.content.wire()
        if !options.contains(.sound) {
            content.sound = nil
            content.hints["sound-file"] = nil
            content.hints["suppress-sound"] = .boolean(true)
        }
        if !options.contains(.badge) { content.badge = nil }
        return ContentWire.encode(content)
    }

    private func respond(to action: ChimeClient.ActionEvent) async {
        let identifier = Self.identifier(group: action.group, entry: action.entry, item: action.itemID)
        let notification = UNNotification(date: Date(), request: await request(identifier))
        let key = action.action == "default" ? UNNotificationDefaultActionIdentifier : action.action
        if case .string(let reply)? = action.userInfo["reply"] {
            await deliver(
                UNTextInputNotificationResponse(notification: notification, actionIdentifier: key, userText: reply))
        } else {
            await deliver(UNNotificationResponse(notification: notification, actionIdentifier: key))
        }
    }

    /// The request as this process added it, or as chimed has it pending.
    private func request(_ identifier: String) async -> UNNotificationRequest {
        if let known = lock.withLock({ added[identifier] }) { return known }
        if let pending = await pendingNotificationRequests().first(where: { $0.identifier == identifier }) {
            return pending
        }
        return UNNotificationRequest(identifier: identifier, content: UNNotificationContent(), trigger: nil)
    }

    private func deliver(_ response: UNNotificationResponse) async {
        guard let delegate = lock.withLock({ _delegate }) else { return }
        let box = UncheckedBox(delegate)
        await box.value.userNotificationCenter(self, didReceive: response)
    }
}

/// A trigger already resolved (a UserNotifications trigger, made into chimed's terms once).
struct FixedTrigger: NotificationTrigger {
    let resolved: ResolvedTrigger
    func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger { resolved }
}
