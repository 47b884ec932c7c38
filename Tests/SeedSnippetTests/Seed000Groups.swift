// swift-format-ignore-file
import ChimeKit
import Foundation

// NiceNotifications README (seeds 000, 001): the advanced guide. The three `DailyQuoteGroup`s of the
// README are numbered here so they can live in one module.

final class DailyQuoteGroup1: LocalNotificationsGroup {
    let groupIdentifier: String = "dailyQuote"

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        let timeline = NotificationsTimeline {
            EveryDay(forDays: 50, starting: .today)
                .at(hour: 9, minute: 00)
                .schedule(title: "Storms make oaks take deeper root.")
        }
        completion(timeline)
    }
}

final class DailyQuoteGroup: LocalNotificationsGroup {
    let groupIdentifier: String = "dailyQuote"

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        let timeline = NotificationsTimeline {
            EveryDay(forDays: 50, starting: .today)
                .at(hour: 9, minute: 00)
                .schedule(with: makeRandomQuoteContent)
        }
        completion(timeline)
    }

    private func makeRandomQuoteContent() -> NotificationContent? {
        guard let randomQuote = QuoteStore.enabledQuotes.randomElement() else {
            return nil
        }

        return NotificationContent(
            title: randomQuote,
            body: "Tap here for more daily inspiration"
        )
    }
}

func rescheduling() {
    LocalNotifications.reschedule(
        group: DailyQuoteGroup(),
        permissionStrategy: .askSystemPermissionIfNeeded
    ) // completion is optional

    QuoteStore.disableQuote(userDisabledQuote)

    LocalNotifications.reschedule(
        group: DailyQuoteGroup(),
        permissionStrategy: .scheduleIfSystemAllowed
    )
}

func customAsker() {
    let permissionAsker = LocalNotifications.ApplicationLevelPermissionAsker { (completion) in
        // ask permission, then call completion with Result<Bool, Error>
        completion(.success(true))  // placeholder
    }
    _ = permissionAsker
}

func disabling() {
    LocalNotifications.disable(group: DailyQuoteGroup())
}

func groupStatus() {
    let status = LocalNotifications.GroupLevelAuthorization.getCurrent(forGroup: DailyQuoteGroup().groupIdentifier)

    switch status {
    case .allowed: /* ... */ break  // placeholder
    case .denied: /* ... */ break
    case .notAsked: /* ... */ break
    }
}

final class DailyQuoteGroup3: LocalNotificationsGroup {
    let groupIdentifier: String = "dailyQuote"

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        let timeline = NotificationsTimeline {
            EveryDay(forDays: 50, starting: .today)
                .at(hour: 9, minute: 00)
                .schedule(with: makeRandomQuoteContent(completion:))
        }
        completion(timeline)
    }

    private func makeRandomQuoteContent(completion: @escaping (NotificationContent) -> ()) {
        QuoteStore.fetchRandom { (quote) in
            let content = NotificationContent(
                title: quote,
                body: "Open app for more quotes",
                sound: .default
            )
            completion(content)
        }
    }
}

final class DailyQuoteGroup4: LocalNotificationsGroup {
    let groupIdentifier: String = "dailyQuote"

    var preferredExecutionContext: LocalNotificationsGroupContextPreference {
        return .canRunOnAnyQueue
    }

    func getTimeline(completion: @escaping (NotificationsTimeline) -> ()) {
        completion(NotificationsTimeline {})  // placeholder for the README's `...`
    }
}
