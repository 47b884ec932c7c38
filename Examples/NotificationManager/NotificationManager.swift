import ChimeKit

/// Seed 003's local-notification manager on the desktop: a `LocalNotification` value, a manager that
/// authorizes, registers the "snooze" category (snooze for 10 seconds, snooze for a minute), schedules and
/// lists requests, and, as its `UNUserNotificationCenterDelegate`, brings a snoozed notification back with the
/// same content and actions. The code is the write-up's, with UIKit's and Combine's parts left out.
///
/// Usage: `NotificationManager [--app-id ID] [--title T] [--body B] [--in SECONDS] [--listen SECONDS]`.
/// It schedules one notification in the "snooze" category, then answers snoozes while it runs.
struct LocalNotification {
    enum ScheduleType {
        case calendar, timeInterval
    }

    var identifier: String
    var title: String
    var subtitle: String?
    var body: String
    var scheduleType: ScheduleType
    var dateComponents: DateComponents?
    var timeInterval: Double?  // in seconds
    var repeats: Bool
    var userInfo: [AnyHashable: Any]?
    var categoryIdentifier: String?

    init(identifier: String, title: String, body: String, timeInterval: Double, repeats: Bool) {
        scheduleType = .timeInterval
        self.identifier = identifier
        self.title = title
        self.body = body
        self.timeInterval = timeInterval
        dateComponents = nil
        self.repeats = repeats
    }
}

@MainActor
final class LocalNotificationManager: NSObject, UNUserNotificationCenterDelegate {
    var granted: Bool?
    var pendingRequests: [UNNotificationRequest] = []

    static let shared = LocalNotificationManager()

    let notificationCenter = UNUserNotificationCenter.current()

    private override init() {
        super.init()
        notificationCenter.delegate = self
    }

    func authorize() async throws {
        try await notificationCenter.requestAuthorization(options: [.alert, .badge, .sound])
        registerActions()
        await updateGranted()
    }

    func schedule(notification: LocalNotification) async throws {
        let content = UNMutableNotificationContent()
        content.title = notification.title
        if let subtitle = notification.subtitle {
            content.subtitle = subtitle
        }
        content.body = notification.body
        content.sound = .default
        if let userInfo = notification.userInfo {
            content.userInfo = userInfo
        }
        if let categoryIdentifier = notification.categoryIdentifier {
            content.categoryIdentifier = categoryIdentifier
        }

        let trigger: UNNotificationTrigger
        switch notification.scheduleType {
        case .calendar:
            guard let dateComponents = notification.dateComponents else { return }
            trigger = UNCalendarNotificationTrigger(dateMatching: dateComponents, repeats: notification.repeats)
        case .timeInterval:
            guard let timeInterval = notification.timeInterval else { return }
            trigger = UNTimeIntervalNotificationTrigger(timeInterval: timeInterval, repeats: notification.repeats)
        }

        let request = UNNotificationRequest(identifier: notification.identifier, content: content, trigger: trigger)
        try await notificationCenter.add(request)
        await updatePendingRequests()
    }

    func updateGranted() async {
        let settings = await notificationCenter.notificationSettings()
        granted = settings.authorizationStatus == .authorized
    }

    func updatePendingRequests() async {
        pendingRequests = await notificationCenter.pendingNotificationRequests()
    }

    func registerActions() {
        let snooze10Action = UNNotificationAction(identifier: "snooze10", title: "Snooze for 10 seconds")
        let snooze60Action = UNNotificationAction(identifier: "snooze60", title: "Snooze for one minute")
        let snoozeCategory = UNNotificationCategory(
            identifier: "snooze", actions: [snooze10Action, snooze60Action], intentIdentifiers: [])
        notificationCenter.setNotificationCategories([snoozeCategory])
    }

    func userNotificationCenter(_: UNUserNotificationCenter, willPresent _: UNNotification) async
        -> UNNotificationPresentationOptions
    {
        await updatePendingRequests()
        return [.banner, .sound]
    }

    // The write-up's snooze, which it leaves commented out, running: a snoozed notification is added again
    // with the same content (its category, so its actions, included) after 10 or 60 seconds.
    func userNotificationCenter(_: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let snoozeInterval: Double =
            response.actionIdentifier == "snooze10" ? 10 : response.actionIdentifier == "snooze60" ? 60 : 0
        print("response: \(response.actionIdentifier) on \(response.notification.request.identifier)")
        guard snoozeInterval != 0 else { return }
        let content = response.notification.request.content
        guard let newContent = content.mutableCopy() as? UNMutableNotificationContent else { return }
        let newTrigger = UNTimeIntervalNotificationTrigger(timeInterval: snoozeInterval, repeats: false)
        let request = UNNotificationRequest(identifier: UUID().uuidString, content: newContent, trigger: newTrigger)
        do {
            try await notificationCenter.add(request)
            await updatePendingRequests()
            print("snoozed \(Int(snoozeInterval)) s: \(newContent.title)")
        } catch {
            print("cannot snooze: \(error.localizedDescription)")
        }
    }
}

@main
struct NotificationManagerExample {
    static func main() async {
        var options: [String: String] = [:]
        var arguments = CommandLine.arguments.dropFirst()
        while let flag = arguments.popFirst() {
            guard ["--app-id", "--title", "--body", "--in", "--listen"].contains(flag), let value = arguments.popFirst()
            else {
                print(
                    "usage: NotificationManager [--app-id ID] [--title T] [--body B] [--in SECONDS] [--listen SECONDS]")
                exit(2)
            }
            options[flag] = value
        }
        guard let delay = Double(options["--in"] ?? "1"), delay > 0, let listen = Double(options["--listen"] ?? "0"),
            listen >= 0
        else {
            print("--in takes a number of seconds above 0, --listen one of 0 or more")
            exit(2)
        }
        await LocalNotifications.configure(.init(appID: options["--app-id"] ?? "io.chime.examples.NotificationManager"))
        let manager = LocalNotificationManager.shared
        do {
            try await manager.authorize()
            guard manager.granted == true else {
                print("notifications are not allowed; allow them with `chime app allow`")
                exit(1)
            }
            var notification = LocalNotification(
                identifier: UUID().uuidString, title: options["--title"] ?? "Stretch",
                body: options["--body"] ?? "Time to stand up", timeInterval: delay, repeats: false)
            notification.categoryIdentifier = "snooze"
            try await manager.schedule(notification: notification)
            print("scheduled \(notification.title) in \(delay) s; \(manager.pendingRequests.count) pending")
        } catch {
            print("error: \(error.localizedDescription)")
            exit(1)
        }
        if listen > 0 { try? await Task.sleep(for: .seconds(listen)) }
    }
}

/// Writes a line at once (Swift's `print` buffers when the output is a file, and the tests read it).
func print(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}
