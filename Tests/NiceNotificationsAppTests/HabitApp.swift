import ChimeKit
import Foundation

// A habit tracker's notification code, written against NiceNotifications' public API as an iOS app uses it
// (github.com/dreymonde/NiceNotifications at dc24879): groups whose timelines are built from parts, permission
// strategies of every kind, completion handlers, identifiers, and the test seams an app's own tests replace.
// Only the import differs. The tests in this target compile it and run it against chimed.

struct Habit {
    var name: String
    var hour: Int
    var minute: Int
}

enum HabitStore {
    static var habits = [Habit(name: "Drink water", hour: 11, minute: 0), Habit(name: "Read", hour: 21, minute: 30)]
    static var streak = 4
}

/// The morning routine: a fortnight of stretches, the habits tomorrow, a check-in in an hour, and a weekly review.
final class MorningRoutineGroup: LocalNotificationsGroup {
    let groupIdentifier = "morningRoutine"
    var preferredExecutionContext: LocalNotificationsGroupContextPreference { .canRunOnAnyQueue }

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        let stretches = NotificationsTimeline {
            EveryDay(forDays: 14, starting: .today)
                .at(hour: 7, minute: 30)
                .schedule(title: "Stretch", body: "Two minutes, then coffee")
                .withCategory("habit")
        }
        let habits = NotificationsTimeline(
            requests: HabitStore.habits.map { habit in
                Tomorrow().at(hour: habit.hour, minute: habit.minute)
                    .schedule(title: habit.name, sound: nil)
                    .withTargetContentIdentifier("habit/\(habit.name)")
            })
        var timeline = NotificationsTimeline(combining: stretches, habits)
        timeline.requests.append(
            UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false).schedule(title: "Check in"))
        var review = DateComponents()
        review.weekday = 1
        review.hour = 18
        review.minute = 0
        timeline.requests.append(
            UNCalendarNotificationTrigger(dateMatching: review, repeats: true)
                .schedule(with: NotificationContent(title: "Weekly review", body: "How did the week go?")))
        completion(timeline)
    }

    func __shouldRemoveDeliveredNotification(notification: UNNotification, completion: @escaping (Bool) -> ()) {
        // Yesterday's stretch reminder is stale once the routine is rescheduled.
        completion(notification.request.content.title == "Stretch")
    }
}

/// Streak messages made per occurrence: the content depends on the day it is for.
final class StreakGroup: LocalNotificationsGroup {
    let groupIdentifier = "streak"

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        completion(
            NotificationsTimeline {
                EveryDay(forDays: 3, starting: .tomorrow)
                    .at(hour: 20, minute: 0)
                    .schedule { (trigger: LocalNotifications.Trigger, completion) in
                        let days = HabitStore.streak + 1
                        let content = NotificationContent(title: "Day \(days) of your streak")
                        content.userInfo = ["occurrence": trigger.identifier.rawValue]
                        completion(trigger.rawTrigger is UNCalendarNotificationTrigger ? content : nil)
                    }
                if HabitStore.streak > 3 {
                    Today().at(hour: 23, minute: 59).schedule(with: { (date: Date) in
                        NotificationContent.muted(title: "Streak safe until \(date)")
                    })
                }
            })
    }
}

/// A launch countdown from lines built elsewhere; a line that may be nil adds nothing.
@TimelineBuilder
func launchCountdown() -> [LocalNotifications.NotificationRequest] {
    Tomorrow().at(hour: 9, minute: 0).schedule(title: "Launch soon", subtitle: "Countdown")
    AfterToday(days: 2, at: TimeOfDay(hour: 9, minute: 0)).schedule(title: "Launch soon", subtitle: "Countdown")
    NotificationsTimeline.empty.requests.first
}

/// The days the user picked for watering, as the app's own `NotificationsScheduling` type.
struct WateringDays: NotificationsScheduling {
    var daysAfterToday: [Int]
    var hour: Int

    static var keyPathForTriggerSet: (WateringDays) -> LocalNotifications.NotificationTriggerSet {
        { watering in
            [DateBuilder.ResolvedDate].keyPathForTriggerSet(
                watering.daysAfterToday.map { AfterToday(days: $0, at: TimeOfDay(hour: watering.hour, minute: 0)) })
        }
    }
}

/// Plants: the user's watering days, and fertiliser on three dates the app worked out.
@TimelineBuilder
func plantCare() -> [LocalNotifications.NotificationRequest] {
    WateringDays(daysAfterToday: [1, 3], hour: 19).schedule(title: "Water the plants")
    [
        Tomorrow().at(hour: 8, minute: 0), AfterToday(days: 15, at: TimeOfDay(hour: 8, minute: 0)),
        Today().addingDays(-2).at(hour: 8, minute: 0), AfterToday(days: 29, at: TimeOfDay(hour: 8, minute: 0)),
    ]
    .schedule(with: { (date: Date) in NotificationContent(title: "Fertilise", body: "\(date)") })
}

enum HabitNotifications {
    static let prePermission = LocalNotifications.ApplicationLevelPermissionAsker { completion in
        // The app's own pre-permission screen would ask here.
        completion(.success(true))
    }

    static let routineStrategy = LocalNotifications.PermissionStrategy.askWithPrePermission(
        .once, prePermission: prePermission)

    static let tipsStrategy = LocalNotifications.PermissionStrategy(
        groupLevel: .ifAllowed(other: MorningRoutineGroup()), systemLevel: .ifAlreadyAllowed)

    static func describe(_ level: LocalNotifications.PermissionStrategy.GroupLevel) -> String {
        switch level {
        case .allowAutomatically: return "automatic"
        case .askPermission(let mode, _): return mode == .once ? "ask once" : "ask until allowed"
        case .ifAlreadyAllowed: return "if allowed"
        case .ifAllowed(other: let group): return "if \(group.groupIdentifier) is allowed"
        case .bypass: return "bypass"
        }
    }

    static func describe(_ result: LocalNotifications.SchedulingResult) -> String {
        switch result {
        case .scheduledSuccesfully: return "scheduled"
        case .systemError(let error): return "error: \(error)"
        case .deniedOnGroupLevel: return "denied for the group"
        case .deniedOnSystemLevel: return "denied for the app"
        }
    }

    static func enableLogging(into log: @escaping (String) -> Void) {
        LocalNotifications.Log.info = { message in log("\(message)") }
    }

    static func scheduleRoutine(completion: @escaping (Bool) -> Void) {
        LocalNotifications.reschedule(group: MorningRoutineGroup(), permissionStrategy: routineStrategy) { success in
            completion(success)
        }
    }

    @discardableResult
    static func scheduleCountdown(completion: @escaping (LocalNotifications.SchedulingResult) -> Void)
        -> LocalNotificationsGroup
    {
        LocalNotifications.schedule(
            timeline: NotificationsTimeline(launchCountdown), group: "countdown",
            permissionStrategy: .askSystemPermissionIfNeeded, completion: completion)
    }

    static func scheduleStreak(completion: @escaping (LocalNotifications.SchedulingResult) -> Void) {
        let group = LocalNotifications.schedule(permissionStrategy: .scheduleIfSystemAllowed, group: "streakOnce") {
            Today().at(hour: 23, minute: 0).schedule(title: "Log today's habits")
        } completion: { result in
            completion(result)
        }
        _ = group.groupIdentifier
    }

    static func setRoutineAllowed(_ allowed: Bool) {
        LocalNotifications.GroupLevelAuthorization.setIsAllowed(allowed, forGroup: "morningRoutine")
    }

    static func routineIsOn() -> Bool {
        LocalNotifications.GroupLevelAuthorization.getCurrent(forGroup: "morningRoutine").isAllowed
    }

    static func settingsRow(completion: @escaping (String) -> Void) {
        LocalNotifications.currentAuthorizationStatus(forGroup: MorningRoutineGroup()) { status in
            switch status {
            case .enabled: completion("On")
            case .disabled: completion("Off")
            case .systemDenied: completion("Turned off in Settings")
            }
        }
    }

    static func askTheSystem(completion: @escaping (LocalNotifications.SystemAuthorization.Status?) -> Void) {
        LocalNotifications.SystemAuthorization.authorizeWithSystem(options: [.alert, .sound]) { result in
            switch result {
            case .success(let status): completion(status)
            case .failure: completion(nil)
            }
        }
    }

    static func withTipsPermission(
        perform: @escaping () -> Void, completion: @escaping (LocalNotifications.SchedulingResult) -> Void
    ) {
        LocalNotifications.withPermission(strategy: tipsStrategy, group: "tips", perform: perform) { result in
            completion(result.asSchedulingResult)
        }
    }

    /// Onboarding asks once, for no group in particular.
    static func onboarding(completion: @escaping (Bool) -> Void) {
        LocalNotifications.withPermission(strategy: routineStrategy, perform: {}) { result in
            completion(result.isAllowed)
        }
    }

    static func sendNow(completion: @escaping (LocalNotifications.SchedulingResult) -> Void) {
        let content = UNMutableNotificationContent()
        content.title = "Nice work"
        let request = UNNotificationRequest(
            identifier: LocalNotifications.NotificationContentIdentifier.makeRandom().rawValue, content: content,
            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false))
        LocalNotifications.directSchedule(
            request: request, permissionStrategy: .scheduleIfSystemAllowed, completion: completion)
    }

    static func cancel(_ group: LocalNotificationsGroup) {
        LocalNotifications.remove(group: group)
    }

    static func refresh(_ group: LocalNotificationsGroup) {
        LocalNotifications.reschedule(group: group, permissionStrategy: .scheduleIfSystemAllowed)
    }

    static func stopRoutine() {
        LocalNotifications.disable(group: MorningRoutineGroup())
    }

    /// What an app's own unit tests do: route NiceNotifications' calls to stubs that record and answer.
    static func installStubs(added: @escaping (UNNotificationRequest) -> Void, systemAllows: Bool) {
        LocalNotifications.Env.addNotificationRequest = { request, completion in
            added(request)
            completion?(nil)
        }
        LocalNotifications.Env.removePendingNotificationRequests = { _ in }
        LocalNotifications.Env.removeDeliveredNotifications = { _ in }
        LocalNotifications.Env.getPendingNotificationRequests = { completion in completion([]) }
        LocalNotifications.Env.getDeliveredNotifications = { completion in completion([]) }
        LocalNotifications.SystemAuthorization.Env.requestAuthorization = { _, completion in
            completion(systemAllows, nil)
        }
        let defaults = UserDefaults(suiteName: "habit-tests") ?? .standard
        LocalNotifications.GroupLevelAuthorization.Env.setUserDefaults(defaults)
        LocalNotifications.GroupLevelAuthorization.Env.setValue(
            true, LocalNotifications.GroupLevelAuthorization._userDefaultsKey(forGroup: "tips"))
    }
}

extension HabitNotifications {
    /// The same calls made from `async` code (a task started when the app becomes active): NiceNotifications'
    /// completion-handler forms, written without `try` or `await` as there.
    static func refreshWhenActive(group: LocalNotificationsGroup) async {
        await Task.yield()
        LocalNotifications.schedule(permissionStrategy: .scheduleIfSystemAllowed) {
            Tomorrow().at(hour: 9, minute: 0).schedule(title: "Plan the day")
        }
        LocalNotifications.reschedule(group: group, permissionStrategy: .scheduleIfSystemAllowed)
        LocalNotifications.directSchedule(
            request: UNNotificationRequest(
                identifier: "nudge", content: NotificationContent(title: "Nudge"), trigger: nil),
            permissionStrategy: .scheduleIfSystemAllowed)
        LocalNotifications.requestPermission(strategy: routineStrategy)
        LocalNotifications.disable(group: group)
        LocalNotifications.remove(group: group)
        let either: LocalNotificationsGroup = Bool.random() ? MorningRoutineGroup() : StreakGroup()
        LocalNotifications.currentAuthorizationStatus(forGroup: Bool.random() ? either : group) { _ in }
    }
}
