// swift-format-ignore-file
import ChimeKit
import Foundation
import Testing

// NiceNotifications README (seed 001): "Other available .schedule overloads", each used once, on anything
// NiceNotifications schedules: a date, a list of dates, an app's own `NotificationsScheduling` type.

func overloads<Day: NotificationsScheduling>(on day: Day) -> [LocalNotifications.NotificationRequest] {
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

/// An app's own scheduling type: the mornings of the next few days.
struct NextMornings: NotificationsScheduling {
    var days: Int

    static var keyPathForTriggerSet: (NextMornings) -> LocalNotifications.NotificationTriggerSet {
        { mornings in
            (1...mornings.days).map { AfterToday(days: $0, at: TimeOfDay(hour: 9, minute: 0)) }.triggerSet
        }
    }
}

@Test func everyScheduleOverloadTakesEveryKindOfSchedulingValue() {
    let lines = [
        overloads(on: Tomorrow().at(hour: 9, minute: 0)),
        // Two times of day: no counted run makes this list.
        overloads(on: [Tomorrow().at(hour: 9, minute: 0), AfterToday(days: 2, at: TimeOfDay(hour: 10, minute: 30))]),
        overloads(on: EveryMonth(forMonths: 3, starting: .nextMonth).firstDay.at(hour: 9, minute: 0)),
        overloads(on: NextMornings(days: 2)),
    ]
    #expect(lines.map(\.count) == [8, 8, 8, 8])
    // A date and a list stay themselves, a counted list too but is scheduled as its run, an app's type travels
    // as its trigger set.
    #expect(lines[0].allSatisfy { $0.trigger is DateBuilder.ResolvedDate })
    #expect(lines[1].allSatisfy { $0.trigger is [DateBuilder.ResolvedDate] })
    #expect(lines[2].allSatisfy { line in
        guard let list = line.trigger as? [DateBuilder.ResolvedDate],
            case .rule(.dateRule, _)? = try? list.resolve(now: Date(), timeZone: DateBuilder.calendar.timeZone).trigger
        else { return false }
        return true
    })
    #expect(lines[3].allSatisfy { ($0.trigger as? LocalNotifications.NotificationTriggerSet)?.triggers.count == 2 })
}
