// swift-format-ignore-file
// App code written against Apple's UserNotifications as an iOS 17 app uses it (not one of the seeds'
// snippets): a reminders app's notification layer with async/await and completion-handler forms, a delegate
// with completion handlers, settings, badges, text input, action icons, attachments, sounds, categories and
// UNError. Only the import differs from the app's; it has to compile in Swift 5 mode, as an app would.

import ChimeKit
import Foundation

enum ReminderCategory {
    static let reminder = "REMINDER"
    static let message = "MESSAGE"
    static let alarm = "ALARM"
}

enum ReminderAction {
    static let complete = "COMPLETE"
    static let snooze = "SNOOZE"
    static let reply = "REPLY"
    static let delete = "DELETE"
}

struct Reminder {
    var id: String
    var title: String
    var notes: String
    var due: DateComponents
    var repeatsDaily: Bool
    var imageURL: URL?
    var isUrgent: Bool
}

/// The delegate an iOS app writes: completion-handler forms, as most apps still have them.
final class ReminderNotificationDelegate: NSObject, UNUserNotificationCenterDelegate {
    var completed: [String] = []
    var replies: [String: String] = [:]
    var snoozed: [String] = []

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let content = notification.request.content
        if content.interruptionLevel == .passive {
            completionHandler([.list])
        } else if content.categoryIdentifier == ReminderCategory.alarm {
            completionHandler([.banner, .list, .sound, .badge])
        } else {
            completionHandler([.banner, .sound])
        }
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let request = response.notification.request
        let reminderID = request.content.userInfo["reminderID"] as? String ?? request.identifier
        if request.trigger is UNPushNotificationTrigger {
            completionHandler()
            return
        }
        switch response.actionIdentifier {
        case ReminderAction.complete:
            completed.append(reminderID)
            center.removeDeliveredNotifications(withIdentifiers: [request.identifier])
        case ReminderAction.snooze:
            snoozed.append(reminderID)
            let content = request.content.mutableCopy() as! UNMutableNotificationContent
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)
            center.add(UNNotificationRequest(identifier: reminderID + ".snoozed", content: content, trigger: trigger))
        case ReminderAction.reply:
            if let textResponse = response as? UNTextInputNotificationResponse {
                replies[reminderID] = textResponse.userText
            }
        case UNNotificationDefaultActionIdentifier, UNNotificationDismissActionIdentifier:
            break
        default:
            break
        }
        completionHandler()
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

/// The app's notification layer, the async/await way.
final class ReminderNotifications {
    let center = UNUserNotificationCenter.current()
    let delegate = ReminderNotificationDelegate()

    init() {
        center.delegate = delegate
    }

    func registerCategories() {
        let complete = UNNotificationAction(
            identifier: ReminderAction.complete, title: "Done", options: [],
            icon: UNNotificationActionIcon(systemImageName: "checkmark"))
        let snooze = UNNotificationAction(
            identifier: ReminderAction.snooze, title: "In 10 minutes",
            icon: UNNotificationActionIcon(templateImageName: "snooze"))
        let delete = UNNotificationAction(
            identifier: ReminderAction.delete, title: "Delete", options: [.destructive, .authenticationRequired])
        let reply = UNTextInputNotificationAction(
            identifier: ReminderAction.reply, title: "Reply", options: [],
            icon: UNNotificationActionIcon(systemImageName: "arrowshape.turn.up.left"),
            textInputButtonTitle: "Send", textInputPlaceholder: "Message")
        let plainReply = UNTextInputNotificationAction(
            identifier: ReminderAction.reply, title: "Reply", options: .foreground,
            textInputButtonTitle: "Send", textInputPlaceholder: "Message")

        let reminder = UNNotificationCategory(
            identifier: ReminderCategory.reminder, actions: [complete, snooze, delete], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: "%u reminders", categorySummaryFormat: "%u more reminders from %@",
            options: [.customDismissAction, .hiddenPreviewsShowTitle])
        let message = UNNotificationCategory(
            identifier: ReminderCategory.message, actions: [reply], intentIdentifiers: [],
            hiddenPreviewsBodyPlaceholder: "Message", options: .allowInCarPlay)
        let alarm = UNNotificationCategory(
            identifier: ReminderCategory.alarm, actions: [complete, plainReply], intentIdentifiers: [], options: [])
        center.setNotificationCategories([reminder, message, alarm])
        _ = reminder.categorySummaryFormat.isEmpty
        _ = complete.icon
    }

    @discardableResult
    func requestAccess() async -> Bool {
        do {
            return try await center.requestAuthorization(
                options: [.alert, .sound, .badge, .criticalAlert, .providesAppNotificationSettings])
        } catch UNError.notificationsNotAllowed {
            return false
        } catch let error as UNError {
            print("UNError \(error.code.rawValue) in \(UNError.errorDomain): \(error.localizedDescription)")
            return false
        } catch {
            return false
        }
    }

    func canAlert() async -> Bool {
        let settings = await center.notificationSettings()
        switch settings.authorizationStatus {
        case .authorized, .provisional, .ephemeral:
            break
        case .denied, .notDetermined:
            return false
        @unknown default:
            return false
        }
        guard settings.alertSetting == .enabled, settings.alertStyle != .none else { return false }
        if settings.showPreviewsSetting == .never { return false }
        let extras: [UNNotificationSetting] = [
            settings.soundSetting, settings.badgeSetting, settings.notificationCenterSetting,
            settings.lockScreenSetting, settings.carPlaySetting, settings.criticalAlertSetting,
            settings.announcementSetting, settings.timeSensitiveSetting, settings.scheduledDeliverySetting,
            settings.directMessagesSetting,
        ]
        _ = extras.filter { $0 == .notSupported }
        _ = settings.providesAppNotificationSettings
        _ = center.supportsContentExtensions
        return true
    }

    func content(for reminder: Reminder, badge: Int) -> UNMutableNotificationContent {
        let content = UNMutableNotificationContent()
        content.title = reminder.title
        content.subtitle = "Reminder"
        content.body = reminder.notes
        content.badge = NSNumber(value: badge)
        content.categoryIdentifier = ReminderCategory.reminder
        content.threadIdentifier = "reminders"
        content.targetContentIdentifier = reminder.id
        content.filterCriteria = "work"
        content.relevanceScore = reminder.isUrgent ? 1 : 0.5
        content.userInfo = ["reminderID": reminder.id, "due": reminder.due.hour ?? 0]
        if reminder.isUrgent {
            content.interruptionLevel = .critical
            content.sound = .defaultCriticalSound(withAudioVolume: 0.8)
        } else {
            content.interruptionLevel = .timeSensitive
            content.sound = .default
        }
        if let url = reminder.imageURL {
            do {
                let attachment = try UNNotificationAttachment(
                    identifier: "image", url: url,
                    options: [
                        UNNotificationAttachmentOptionsTypeHintKey: "public.png",
                        UNNotificationAttachmentOptionsThumbnailHiddenKey: false,
                        UNNotificationAttachmentOptionsThumbnailClippingRectKey: ["X": 0, "Y": 0, "Width": 1, "Height": 1],
                        UNNotificationAttachmentOptionsThumbnailTimeKey: 0,
                    ])
                content.attachments = [attachment]
            } catch UNError.attachmentInvalidURL {
                content.attachments = []
            } catch {
                content.attachments = []
            }
        }
        return content
    }

    func schedule(_ reminder: Reminder, badge: Int) async throws {
        let trigger = UNCalendarNotificationTrigger(dateMatching: reminder.due, repeats: reminder.repeatsDaily)
        let request = UNNotificationRequest(
            identifier: reminder.id, content: content(for: reminder, badge: badge), trigger: trigger)
        do {
            try await center.add(request)
        } catch UNError.notificationsNotAllowed {
            throw UNError(.notificationsNotAllowed)
        } catch let error as NSError where error.domain == UNErrorDomain {
            throw error
        }
    }

    /// The completion-handler way, as code from before Swift concurrency has it.
    func scheduleAlarm(in seconds: TimeInterval, completion: @escaping (Error?) -> Void) {
        let content = UNMutableNotificationContent()
        content.title = "Alarm"
        content.body = "Time is up"
        content.sound = .criticalSoundNamed(UNNotificationSoundName("alarm-clock-elapsed"), withAudioVolume: 1.0)
        content.categoryIdentifier = ReminderCategory.alarm
        let ringing: [UNNotificationSound] = [
            .defaultCritical, .defaultRingtone, .ringtoneSoundNamed(UNNotificationSoundName(rawValue: "bell")),
            .criticalSoundNamed(UNNotificationSoundName("bell")),
            UNNotificationSound(named: UNNotificationSoundName("complete")),
        ]
        _ = ringing
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
        let request = UNNotificationRequest(identifier: "alarm", content: content, trigger: trigger)
        center.add(request) { error in
            if let error = error as? UNError, error.code == .notificationsNotAllowed {
                completion(error)
            } else {
                completion(error)
            }
        }
    }

    func refreshBadge(completion: @escaping (Error?) -> Void) {
        center.getDeliveredNotifications { delivered in
            self.center.setBadgeCount(delivered.count) { error in
                completion(error)
            }
        }
    }

    func clearBadge() async {
        do {
            try await center.setBadgeCount(0)
        } catch UNError.badgeInputInvalid {
        } catch {
        }
    }

    func pendingReminderIDs() async -> [String] {
        let pending = await center.pendingNotificationRequests()
        var ids: [String] = []
        for request in pending {
            if let calendar = request.trigger as? UNCalendarNotificationTrigger {
                _ = calendar.nextTriggerDate()
                _ = calendar.dateComponents
            } else if let interval = request.trigger as? UNTimeIntervalNotificationTrigger {
                _ = interval.timeInterval
            } else if request.trigger is UNPushNotificationTrigger {
                continue
            }
            ids.append(request.identifier)
        }
        return ids
    }

    func pendingCount(completion: @escaping (Int) -> Void) {
        center.getPendingNotificationRequests { requests in
            completion(requests.count)
        }
    }

    func cancel(_ reminderID: String) {
        center.removePendingNotificationRequests(withIdentifiers: [reminderID])
        center.removeDeliveredNotifications(withIdentifiers: [reminderID])
    }

    func cancelAll() async {
        center.removeAllPendingNotificationRequests()
        center.removeAllDeliveredNotifications()
        let categories = await center.notificationCategories()
        _ = categories.map(\.identifier)
        center.getNotificationCategories { _ in }
        center.getNotificationSettings { settings in
            _ = settings.authorizationStatus == .denied
        }
        center.requestAuthorization(options: [.alert, .provisional]) { granted, error in
            _ = (granted, error)
        }
        let delivered = await center.deliveredNotifications()
        _ = delivered.map { ($0.date, $0.request.content.title) }
    }

    func describe(_ error: Error) -> String {
        let nsError = error as NSError
        guard nsError.domain == UNErrorDomain, let code = UNError.Code(rawValue: nsError.code) else {
            return error.localizedDescription
        }
        switch code {
        case .notificationsNotAllowed: return "Turn on notifications for this app"
        case .attachmentInvalidURL, .attachmentUnrecognizedType, .attachmentInvalidFileSize,
            .attachmentNotInDataStore, .attachmentMoveIntoDataStoreFailed, .attachmentCorrupt:
            return "The picture could not be attached"
        case .notificationInvalidNoDate, .notificationInvalidNoContent: return "The reminder is incomplete"
        case .contentProvidingObjectNotAllowed, .contentProvidingInvalid: return "Not a message"
        case .badgeInputInvalid: return "Bad badge"
        default: return error.localizedDescription
        }
    }
}

/// The async delegate form, as apps written for Swift concurrency have it.
final class AsyncReminderDelegate: NSObject, UNUserNotificationCenterDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification) async
        -> UNNotificationPresentationOptions
    {
        notification.request.content.sound == nil ? [.banner, .list] : [.banner, .list, .sound]
    }

    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        if response.actionIdentifier == UNNotificationDismissActionIdentifier { return }
        try? await center.setBadgeCount(0)
    }
}
