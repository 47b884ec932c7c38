// swift-format-ignore-file
import ChimeKit
import Foundation

// NiceNotifications README (seeds 000, 001): the showcase and the basics guide.

func showcase() {
    LocalNotifications.schedule(permissionStrategy: .askSystemPermissionIfNeeded) {
        EveryMonth(forMonths: 12, starting: .thisMonth)
            .first(.friday)
            .at(hour: 20, minute: 15)
            .schedule(title: "First Friday", body: "Oakland let's go!")
    }
}

func oneOff() {
    // `NotificationContent` is a subclass of `UNNotificationContent`.
    // You can also use `UNNotificationContent` directly
    let content = NotificationContent(
        title: "Test Notification",
        body: "This one is for a README",
        sound: .default
    )

    LocalNotifications.schedule(
        content: content,
        at: Tomorrow().at(hour: 20, minute: 15),
        permissionStrategy: .scheduleIfSystemAllowed
    )
}

func dateBuilderReference() {
    Today()
        .at(hour: 20, minute: 15)

    NextWeek()
        .weekday(.saturday)
        .at(hour: 18, minute: 50)

    EveryWeek(forWeeks: 10, starting: .thisWeek)
        .weekendStartDay
        .at(hour: 9, minute: 00)

    EveryDay(forDays: 30, starting: .today)
        .at(hour: 19, minute: 15)

    ExactlyAt(account.createdAt)
        .addingDays(15)

    WeekOf(account.createdAt)
        .addingWeeks(1)
        .lastDay
        .at(hour: 10, minute: 00)

    EveryMonth(forMonths: 12, starting: .thisMonth)
        .lastDay
        .at(hour: 23, minute: 50)

    NextYear().addingYears(2)
        .firstMonth.addingMonths(3) // April (in Gregorian)
        .first(.thursday)

    ExactDay(year: 2020, month: 10, day: 5)
        .at(hour: 10, minute: 15)

    ExactYear(year: 2020)
        .lastMonth
        .lastDay
}

func multiple() {
    LocalNotifications.schedule(permissionStrategy: .scheduleIfSystemAllowed) {
        Today()
            .at(hour: 20, minute: 30)
            .schedule(title: "Hello today", sound: .default)
        Tomorrow()
            .at(hour: 20, minute: 45)
            .schedule(title: "Hello tomorrow", sound: .default)
    } completion: { result in
        if result.isSuccess {
            print("Scheduled!")
        }
    }
}

func randomContent() -> NotificationContent {
    return NotificationContent(title: String(Int.random(in: 0...100)))
}

func recurring() {
    LocalNotifications.schedule(permissionStrategy: .askSystemPermissionIfNeeded) {
        EveryDay(forDays: 30, starting: .today)
            .at(hour: 20, minute: 30, second: 30)
            .schedule(with: randomContent)
    }
}

func content(forTriggerDate date: Date) -> NotificationContent {
    // create content based on date
    return NotificationContent(title: "\(date)")  // placeholder
}

func recurringByDate() {
    LocalNotifications.schedule(permissionStrategy: .askSystemPermissionIfNeeded) {
        EveryDay(forDays: 30, starting: .today)
            .at(hour: 20, minute: 30, second: 30)
            .schedule(with: content(forTriggerDate:))
    }
}

func cancelling() {
    let group = LocalNotifications.schedule(permissionStrategy: .askSystemPermissionIfNeeded) {
        EveryDay(forDays: 30, starting: .today)
            .at(hour: 15, minute: 30)
            .schedule(title: "Hello!")
    }

    // later:

    LocalNotifications.remove(group: group)
}

func askingWithoutScheduling() {
    LocalNotifications.requestPermission(strategy: .askSystemPermissionIfNeeded) { success in
        if success {
            print("Allowed")
        }
    }
}

func systemStatus() {
    LocalNotifications.SystemAuthorization.getCurrent { status in
        switch status {
        case .allowed:
            print("allowed")
        case .deniedNow:
            print("denied")
        case .deniedPreviously:
            print("denied and needs to enable in settings")
        case .undetermined:
            print("not asked yet")
        }
        if status.isAllowed {
            print("can schedule!")
        }
    }
}

func direct() {
    let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 360, repeats: true)

    let content = UNMutableNotificationContent()
    content.title = "Repeating"
    content.body = "Every 6 minutes"
    content.sound = .default

    let request = UNNotificationRequest(
        identifier: "repeating_360",
        content: content,
        trigger: trigger
    )

    LocalNotifications.directSchedule(
        request: request,
        permissionStrategy: .askSystemPermissionIfNeeded
    ) // completion is optional
}
