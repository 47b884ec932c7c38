// swift-format-ignore-file
import ChimeKit
import Foundation

// NiceNotifications README (seed 001): "Other available .schedule overloads", each used once.

func overloads() -> [LocalNotifications.NotificationRequest] {
    let day = Tomorrow().at(hour: 9, minute: 0)
    func plain() -> UNMutableNotificationContent? { NotificationContent(title: "plain") }
    func byTrigger(_ trigger: LocalNotifications.Trigger) -> UNMutableNotificationContent? {
        NotificationContent(title: "\(trigger.nextTriggerDate)")
    }
    func byDate(_ nextTriggerDate: Date) -> UNMutableNotificationContent? {
        NotificationContent(title: "\(nextTriggerDate)")
    }
    func asyncByTrigger(
        _ trigger: LocalNotifications.Trigger, _ completion: @escaping (UNMutableNotificationContent?) -> Void
    ) { completion(NotificationContent(title: trigger.identifier.rawValue)) }
    func asyncByDate(_ nextTriggerDate: Date, _ completion: @escaping (UNMutableNotificationContent?) -> Void) {
        completion(NotificationContent(title: "\(nextTriggerDate)"))
    }
    func asyncPlain(_ completion: @escaping (UNMutableNotificationContent?) -> Void) {
        completion(NotificationContent(title: "async"))
    }
    return [
        day.schedule(title: "t", subtitle: "s", body: "b", sound: .default),
        day.schedule(with: plain),
        day.schedule(with: byTrigger),
        day.schedule(with: byDate),
        day.schedule(with: asyncByTrigger),
        day.schedule(with: asyncByDate),
        day.schedule(with: asyncPlain),
        day.schedule(with: NotificationContent(title: "autoclosure")),
    ]
}
