import ArgumentParser
import ChimeKit
import Foundation

/// The "Daily Quote" case study: a different quote from a list every morning, with quotes the user can
/// turn off, as a ChimeKit notification group.
@main
struct DailyQuote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "DailyQuote",
        abstract: "Schedules a random quote every morning through chimed (a ChimeKit example).",
        discussion: """
            Each run reschedules the group `dailyQuote`: every day at --at for --days days, each day a random \
            quote among the enabled ones (--disable turns one off; rescheduling drops it from what is pending). \
            The notifications carry the actions "Another one" (a new quote at once) and "No more quotes" \
            (the group is removed). Actions chosen while the app is not running wait in chimed and are \
            handled at its next start. With --every-seconds the quotes come every few seconds instead, and \
            with --listen the app stays running: it answers actions as they come and refreshes the quotes \
            made ahead before they run out.
            """)

    @Option(help: ArgumentHelp("The time of the daily quote, HH:MM.", valueName: "HH:MM"))
    var at = "09:00"

    @Option(help: "For how many days.")
    var days = 50

    @Option(help: ArgumentHelp("Instead of daily: a quote every N seconds (for trying it out).", valueName: "N"))
    var everySeconds: Int?

    @Option(help: ArgumentHelp("Turn a quote off (repeatable; its first words are enough).", valueName: "TEXT"))
    var disable: [String] = []

    @Flag(help: "Remove the group and exit.")
    var remove = false

    @Option(help: ArgumentHelp("Stay running this many seconds, answering actions.", valueName: "SECONDS"))
    var listen: Int?

    @Option(help: "The app id the connection owns.")
    var appID = "io.chime.examples.DailyQuote"

    func run() async throws {
        let time = try parsedTime()
        guard days > 0 else { throw ValidationError("--days must be at least 1") }
        if let everySeconds, everySeconds < 1 { throw ValidationError("--every-seconds must be at least 1") }
        await LocalNotifications.configure(
            .init(appID: appID, horizon: everySeconds.map { TimeInterval($0 * 10) } ?? 7 * 86_400))
        do {
            if remove {
                try await LocalNotifications.remove(groupIdentifier: DailyQuoteGroup.identifier)
                print("removed the group \(DailyQuoteGroup.identifier)")
                return
            }
            let client = try await LocalNotifications.client()
            try await client.registerCategories([DailyQuoteGroup.category])
            let store = QuoteStore(disabled: disable)
            for event in try await client.takeActions() {
                if try await handle(event.action, store: store) { return }
            }
            let group = DailyQuoteGroup(
                store: store, hour: time.hour, minute: time.minute, days: days,
                everySeconds: everySeconds)
            let changes = try await LocalNotifications.reschedule(
                group, permissionStrategy: .askSystemPermissionIfNeeded)
            let counts = Dictionary(grouping: changes, by: \.kind).mapValues(\.count)
            print(
                "dailyQuote: \(counts[.added] ?? 0) added, \(counts[.changed] ?? 0) changed, "
                    + "\(counts[.removed] ?? 0) removed, \(counts[.unchanged] ?? 0) unchanged")
            for item in try await client.pending(group: DailyQuoteGroup.identifier).prefix(3) {
                print("next: \(ISO8601DateFormatter().string(from: item.fireDate))  \(item.summary)")
            }
            if let listen { try await answerActions(for: listen, store: store) }
        } catch let error as ChimeError {
            throw CleanExit.message(error.isPermissionDenied ? "not allowed: \(error.message)" : error.message)
        }
    }

    /// Answers actions as they come, for `seconds`.
    func answerActions(for seconds: Int, store: QuoteStore) async throws {
        let events = try await LocalNotifications.actionEvents()
        print("listening for \(seconds) s")
        let listening = Task {
            for await event in events {
                if (try? await handle(event.action, store: store)) == true { return }
            }
        }
        try await Task.sleep(for: .seconds(seconds))
        listening.cancel()
    }

    /// Carries out an action; true when the group is gone.
    func handle(_ action: String, store: QuoteStore) async throws -> Bool {
        switch action {
        case "another":
            guard let content = store.randomContent() else { return false }
            try await LocalNotifications.directSchedule(
                UNNotificationRequest(identifier: "another-quote", content: content, trigger: nil),
                permissionStrategy: .scheduleIfSystemAllowed)
            print("another quote: \(content.title)")
            return false
        case "stop":
            try await LocalNotifications.remove(groupIdentifier: DailyQuoteGroup.identifier)
            print("no more quotes: removed the group \(DailyQuoteGroup.identifier)")
            return true
        default:
            return false
        }
    }

    func parsedTime() throws -> (hour: Int, minute: Int) {
        let parts = at.split(separator: ":").map { Int($0) }
        guard parts.count == 2, let hour = parts[0], let minute = parts[1], (0...23).contains(hour),
            (0...59).contains(minute)
        else { throw ValidationError("--at takes HH:MM, such as 09:00 (got \"\(at)\")") }
        return (hour, minute)
    }
}

/// The quotes, some of which the user turned off.
struct QuoteStore: Sendable {
    static let all = [
        "Storms make oaks take deeper root. — George Herbert",
        "Well begun is half done. — Aristotle",
        "Hitch your wagon to a star. — Ralph Waldo Emerson",
        "The best way out is always through. — Robert Frost",
        "What we think, we become. — Buddha",
    ]

    var disabled: [String]

    var enabledQuotes: [String] {
        Self.all.filter { quote in !disabled.contains { !$0.isEmpty && quote.hasPrefix($0) } }
    }

    func randomContent() -> NotificationContent? {
        guard let quote = enabledQuotes.randomElement() else { return nil }
        let content = NotificationContent(title: quote, body: "Open Daily Quote for more inspiration")
        content.appName = "Daily Quote"
        content.icon = "emblem-favorite"
        return content
    }
}

/// NiceNotifications' DailyQuoteGroup: a random enabled quote every morning for `days` days.
struct DailyQuoteGroup: NotificationGroup {
    static let identifier = "dailyQuote"
    static let category = ActionCategory(
        id: "quote",
        actions: [
            CategoryAction(id: "another", title: "Another one"),
            CategoryAction(id: "stop", title: "No more quotes", options: [.destructive]),
        ])

    let store: QuoteStore
    let hour: Int
    let minute: Int
    let days: Int
    let everySeconds: Int?

    var groupIdentifier: String { Self.identifier }
    var missedPolicy: MissedPolicy? { .coalesce }

    var timeline: NotificationsTimeline {
        let store = store
        return NotificationsTimeline {
            if let everySeconds {
                DateBuilder.Interval(everySeconds: everySeconds)
                    .schedule(with: { store.randomContent() })
                    .identifier("quote").category("quote")
            } else {
                EveryDay(forDays: days, starting: .today).at(hour: hour, minute: minute)
                    .schedule(with: { store.randomContent() })
                    .identifier("quote").category("quote")
            }
        }
    }
}
