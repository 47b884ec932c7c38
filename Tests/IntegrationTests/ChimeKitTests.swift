import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// ChimeKit's NiceNotifications API against chimed on a private bus: the timeline builder and its
/// `.schedule` overloads, closures made ahead and refreshed, calendar and interval triggers, requests,
/// permissions, action events, and the Daily Quote example.
@Suite(.serialized) struct ChimeKitTests {
    static let appID = "org.example.Kit"

    /// Points LocalNotifications at the session's bus as `appID` (allowed by the user first when `allowed`),
    /// and closes its connection afterwards.
    static func withKit(
        _ s: Session, appID: String = appID, allowed: Bool = true, horizon: TimeInterval = 7 * 86_400,
        _ body: () async throws -> Void
    ) async throws {
        if allowed {
            let result = try await s.chime(["app", "allow", appID])
            guard result.status == 0 else { throw TestFailure("chime app allow failed: \(result.stderr)") }
        }
        await LocalNotifications.configure(.init(bus: .bus(s.bus.address), appID: appID, horizon: horizon))
        do {
            try await body()
        } catch {
            await LocalNotifications.configure(.init())
            throw error
        }
        await LocalNotifications.configure(.init())
    }

    static func wallClock(_ date: Date, in zone: TimeZone) -> DateComponents {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
    }

    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    @Test func theSeedsFirstFridayTimelineIsOneRepeatingEntry() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let group = try await LocalNotifications.schedule(groupIdentifier: nil) {
                    EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20, minute: 15)
                        .schedule(title: "First Friday", body: "Game night")
                }
                #expect(group.groupIdentifier.hasPrefix("timeline-"))
                #expect(group.changes.map(\.kind) == [.added])
                let pending = try await LocalNotifications.client().pending(next: 3, group: group.groupIdentifier)
                let item = try #require(pending.first)
                #expect(pending.count == 1)
                #expect(item.summary == "First Friday")
                #expect(item.rule == "every month on the first Friday at 20:15, 12 times")
                #expect(item.next.count == 3)
                // chimed evaluates the floating rule on its own zone (the session's: Berlin).
                for date in item.next {
                    let c = Self.wallClock(date, in: Self.berlin)
                    #expect(c.weekday == 6 && c.day! <= 7 && c.hour == 20 && c.minute == 15, "\(date)")
                }
                try await LocalNotifications.remove(group)
                #expect(try await LocalNotifications.client().pending(group: group.groupIdentifier).isEmpty)
            }
        }
    }

    @Test func closureContentIsMadePerOccurrenceWithinTheHorizonAndNilSkipsIt() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let made = Recorder<Date>()
                let group = try await LocalNotifications.schedule(groupIdentifier: "quotes") {
                    EveryDay(forDays: 20, starting: .today).at(hour: 9, minute: 0)
                        .schedule(with: { (date: Date) in
                            made.append(date)
                            return NotificationContent(title: "Quote for \(Int(date.timeIntervalSince1970))")
                        })
                    Tomorrow().at(hour: 8, minute: 0).schedule(title: "Fixed", subtitle: "Sub", body: "Body")
                    EveryDay(forDays: 3, starting: .tomorrow).at(hour: 10, minute: 0).schedule(with: { nil })
                }
                let pending = try await LocalNotifications.client().pending(group: group.groupIdentifier)
                let quotes = pending.filter { $0.entry?.hasPrefix("entry-1.") == true }
                // Seven days ahead (the default horizon): 6 or 7 mornings at 09:00, depending on the hour now.
                #expect((6...7).contains(quotes.count), "\(quotes.map(\.fireDate))")
                #expect(made.elements.count == quotes.count)
                for item in quotes {
                    #expect(item.summary == "Quote for \(Int(item.fireDate.timeIntervalSince1970))")
                    #expect(item.rule == nil)
                    let c = Self.wallClock(item.fireDate, in: .current)
                    #expect(c.hour == 9 && c.minute == 0)
                    #expect(item.fireDate.timeIntervalSinceNow <= 7 * 86_400)
                }
                #expect(pending.filter { $0.entry == "entry-2" }.map(\.summary) == ["Fixed"])
                #expect(!pending.contains { $0.entry?.hasPrefix("entry-3") == true })
            }
        }
    }

    @Test func closureEntriesAreMadeAgainBeforeTheHorizonRunsOut() async throws {
        try await Session.run { s in
            try await Self.withKit(s, horizon: 3) {
                try await LocalNotifications.schedule(groupIdentifier: "ticks") {
                    DateBuilder.Interval(everySeconds: 1).schedule(with: { (date: Date) in
                        NotificationContent(title: "tick \(Int(date.timeIntervalSince1970))")
                    })
                }
                // Three seconds are made ahead; more than three arriving means the group was refreshed.
                let calls = s.server!.notifyCalls
                try await calls.wait("six ticks", timeout: .seconds(15)) {
                    Set($0.compactMap(\.summary).filter { $0.hasPrefix("tick ") }).count >= 6
                }
                for call in calls.elements {
                    let second = Int(call.summary?.dropFirst("tick ".count) ?? "") ?? 0
                    #expect(abs(call.received.timeIntervalSince1970 - Double(second)) < 2, "\(call.summary ?? "")")
                }
            }
        }
    }

    @Test func calendarTriggersMatchDateComponentsAsUserNotificationsDoes() throws {
        func event(_ c: DateComponents) throws -> String {
            try CalendarNotificationTrigger(dateMatching: c, repeats: true).calendarEvent()
        }
        #expect(try event(DateComponents(second: 0)) == "*-*-* *:*:00")
        #expect(try event(DateComponents(hour: 11, minute: 30, second: 0, weekday: 2)) == "Mon *-*-* 11:30:00")
        #expect(try event(DateComponents(hour: 9)) == "*-*-* 09:00:00")
        #expect(try event(DateComponents(day: 1)) == "*-*-01 00:00:00")
        #expect(try event(DateComponents(month: 3, day: 15, hour: 8)) == "*-03-15 08:00:00")
        #expect(try event(DateComponents(weekday: 1)) == "Sun *-*-* 00:00:00")
        #expect(
            try event(DateComponents(timeZone: TimeZone(identifier: "Asia/Tokyo"), year: 2027, month: 1, day: 1))
                == "2027-01-01 00:00:00 Asia/Tokyo")
        for bad in [
            DateComponents(), DateComponents(hour: 24), DateComponents(weekday: 8), DateComponents(weekdayOrdinal: 1),
        ] {
            #expect(throws: ChimeError.self) { try event(bad) }
        }
    }

    @Test func calendarAndIntervalTriggersReachChimedAndFire() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let client = try await LocalNotifications.client()
                try await LocalNotifications.directSchedule(
                    UNNotificationRequest(
                        identifier: "minute", content: NotificationContent(title: "Minute"),
                        trigger: UNCalendarNotificationTrigger(dateMatching: DateComponents(second: 0), repeats: true)))
                try await LocalNotifications.directSchedule(
                    UNNotificationRequest(
                        identifier: "monday", content: NotificationContent(title: "Monday"),
                        trigger: UNCalendarNotificationTrigger(
                            dateMatching: DateComponents(hour: 11, minute: 30, weekday: 2), repeats: false)))
                let pending = try await client.pending(next: 3)
                let minute = try #require(pending.first { $0.group == "request.minute" })
                #expect(minute.rule == "OnCalendar=*-*-* *:*:00")
                #expect(zip(minute.next, minute.next.dropFirst()).allSatisfy { $1.timeIntervalSince($0) == 60 })
                #expect(minute.next.allSatisfy { Int($0.timeIntervalSince1970) % 60 == 0 })
                let monday = try #require(pending.first { $0.group == "request.monday" })
                #expect(monday.next.count == 1, "not repeating: one occurrence")
                let c = Self.wallClock(monday.fireDate, in: Self.berlin)
                #expect(c.weekday == 2 && c.hour == 11 && c.minute == 30)

                // A one-off interval fires once after it; a repeating one keeps firing.
                let start = Date()
                try await LocalNotifications.directSchedule(
                    UNNotificationRequest(
                        identifier: "once", content: NotificationContent(title: "Once"),
                        trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
                // (UserNotifications' own interval trigger repeats at most once a minute; ChimeKit's does not.)
                try await LocalNotifications.schedule(groupIdentifier: "again") {
                    TimeIntervalNotificationTrigger(timeInterval: 1, repeats: true).schedule(title: "Again")
                }
                let calls = s.server!.notifyCalls
                try await calls.wait("three repeats", timeout: .seconds(10)) {
                    $0.filter { $0.summary == "Again" }.count >= 3
                }
                let once = calls.elements.filter { $0.summary == "Once" }
                #expect(once.count == 1)
                #expect(once.first.map { $0.received.timeIntervalSince(start) >= 1 } == true)
                #expect(
                    !(await UNUserNotificationCenter.current().pendingNotificationRequests().contains {
                        $0.identifier == "once"
                    }))

                for trigger: UNNotificationTrigger in [
                    UNTimeIntervalNotificationTrigger(timeInterval: 0, repeats: false),
                    UNTimeIntervalNotificationTrigger(timeInterval: 61.5, repeats: true),
                    UNCalendarNotificationTrigger(dateMatching: DateComponents(weekdayOrdinal: 2), repeats: true),
                ] {
                    await #expect(throws: ChimeError.self) {
                        try await LocalNotifications.directSchedule(
                            UNNotificationRequest(
                                identifier: "bad", content: NotificationContent(title: "Bad"), trigger: trigger))
                    }
                }
            }
        }
    }

    @Test func requestsAreListedReplacedAndRemovedByIdentifier() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let center = UNUserNotificationCenter.current()
                let later = UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)
                try await center.add(
                    UNNotificationRequest(identifier: "tea", content: NotificationContent(title: "Tea"), trigger: later)
                )
                try await center.add(
                    UNNotificationRequest(
                        identifier: "tea", content: NotificationContent(title: "Green tea"), trigger: later))
                try await center.add(
                    UNNotificationRequest(
                        identifier: "coffee", content: NotificationContent(title: "Coffee"),
                        trigger: UNCalendarNotificationTrigger(
                            dateMatching: DateComponents(hour: 7, minute: 30), repeats: false)))
                let pending = await center.pendingNotificationRequests()
                #expect(Set(pending.map(\.identifier)) == ["tea", "coffee"])
                #expect(pending.first { $0.identifier == "tea" }?.content.title == "Green tea")

                // The completion-handler forms, in the order they are called.
                center.removePendingNotificationRequests(withIdentifiers: ["tea", "unknown"])
                let left = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
                    center.getPendingNotificationRequests { done.resume(returning: $0.map(\.identifier)) }
                }
                #expect(left == ["coffee"])

                await #expect(throws: UNError.self) {
                    try await center.add(
                        UNNotificationRequest(
                            identifier: "not an id", content: NotificationContent(title: "X"), trigger: later))
                }
                await #expect(throws: UNError.self, "iOS's minimum for a repeating interval") {
                    try await center.add(
                        UNNotificationRequest(
                            identifier: "fast", content: NotificationContent(title: "X"),
                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 59, repeats: true)))
                }
                center.removeAllPendingNotificationRequests()
                #expect(await center.pendingNotificationRequests().isEmpty)
            }
        }
    }

    struct Reminders: NotificationGroup {
        let groupIdentifier = "reminders"
        var timeline: NotificationsTimeline {
            NotificationsTimeline {
                EveryDay().at(hour: 18, minute: 0).schedule(title: "Water the plants").identifier("plants")
                EveryWeek().weekendStartDay.at(hour: 10, minute: 0).schedule(title: "Weekend").identifier("weekend")
            }
        }
    }

    @Test func aGroupIsRescheduledDisabledAndReportsItsAuthorization() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                #expect(try await LocalNotifications.SystemAuthorization.current() == .allowed)
                #expect(
                    try await LocalNotifications.GroupLevelAuthorization.current(forGroup: "reminders") == .notAsked)
                let first = try await LocalNotifications.reschedule(Reminders())
                #expect(first.map(\.kind) == [.added, .added])
                let again = try await LocalNotifications.reschedule(Reminders())
                #expect(again.map(\.kind) == [.unchanged, .unchanged])

                try await LocalNotifications.disable(Reminders())
                #expect(try await LocalNotifications.GroupLevelAuthorization.current(forGroup: "reminders") == .denied)
                #expect(try await LocalNotifications.client().pending(group: "reminders").isEmpty)
                let refused = await #expect(throws: ChimeError.self, "a disabled group is not rescheduled") {
                    try await LocalNotifications.reschedule(Reminders())
                }
                #expect(refused?.isPermissionDenied == true, "\(String(describing: refused))")
                // allowAutomatically turns it on again, as NiceNotifications' strategy does.
                try await LocalNotifications.reschedule(
                    Reminders(),
                    permissionStrategy: .init(groupLevel: .allowAutomatically, systemLevel: .askPermission))
                #expect(try await LocalNotifications.GroupLevelAuthorization.current(forGroup: "reminders") == .allowed)
                #expect(try await LocalNotifications.client().pending(group: "reminders").count == 2)
                // requestPermission runs the app's own asker (for a fresh group), as NiceNotifications runs it.
                for answer in [false, true] {
                    let allowed = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                        let asker = LocalNotifications.ApplicationLevelPermissionAsker { $0(.success(answer)) }
                        LocalNotifications.requestPermission(
                            strategy: .askWithPrePermission(.once, prePermission: asker)
                        ) { done.resume(returning: $0) }
                    }
                    #expect(allowed == answer)
                }
                // The group stays allowed while the user's choice about the app is forgotten: until they are asked
                // again, nothing would be shown.
                #expect(try await s.chime(["app", "reset", Self.appID]).status == 0)
                #expect(try await LocalNotifications.SystemAuthorization.current() == .undetermined)
                #expect(try await LocalNotifications.GroupLevelAuthorization.current(forGroup: "reminders") == .allowed)
                let status = await withCheckedContinuation { (done: CheckedContinuation<String, Never>) in
                    LocalNotifications.currentAuthorizationStatus(forGroup: Reminders()) {
                        done.resume(returning: "\($0)")
                    }
                }
                #expect(status == "disabled")
            }
            // An app the user never allowed: with scheduleIfSystemAllowed nothing is asked and nothing scheduled.
            try await Self.withKit(s, appID: "org.example.Stranger", allowed: false) {
                let system = try await LocalNotifications.SystemAuthorization.current()
                #expect(system == .undetermined)
                let allowed = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
                    LocalNotifications.requestPermission(strategy: .scheduleIfSystemAllowed) {
                        done.resume(returning: $0)
                    }
                }
                #expect(allowed == false)
                let refused = await #expect(throws: ChimeError.self, "an app the user never allowed schedules nothing")
                {
                    try await LocalNotifications.reschedule(
                        Reminders(), permissionStrategy: .scheduleIfSystemAllowed)
                }
                #expect(refused?.isPermissionDenied == true, "\(String(describing: refused))")
            }
        }
    }

    /// Marks the main queue, for `onMainQueue`.
    static let mainQueue: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether this runs on the main queue, where the main actor runs. (Not `Thread.isMainThread`: the test
    /// runner's async `main` lets the main thread go with `dispatchMain()`, and another thread serves the main
    /// queue.)
    static var onMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueue) == true }

    /// Calls `call` with a completion handler of NiceNotifications' type: a stored closure, not `@Sendable` (in
    /// Swift 6 mode, passing it on to a `@Sendable` parameter does not compile). Returns what the handler was
    /// called with, and whether it ran on the main queue.
    static func handled<T: Sendable>(_ call: (@escaping (T) -> Void) -> Void) async -> (value: T, onMain: Bool) {
        await withCheckedContinuation { continuation in
            let handler: (T) -> Void = { continuation.resume(returning: ($0, onMainQueue)) }
            call(handler)
        }
    }

    /// A settings screen on the main actor, as an iOS app has it: its completion handler uses the screen's
    /// state directly, which it may only do on the main actor.
    @MainActor final class SettingsScreen {
        var row = ""
        var refreshedOnMainQueue = false

        func refresh() async {
            await withCheckedContinuation { continuation in
                LocalNotifications.currentAuthorizationStatus(forGroup: Reminders()) { status in
                    self.row = status.isEnabled ? "On" : "Off"
                    self.refreshedOnMainQueue = ChimeKitTests.onMainQueue
                    continuation.resume()
                }
            }
        }
    }

    @Test func niceNotificationsClosuresAreTheirOwnTypesAndRunOnTheMainQueue() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let screen = SettingsScreen()
                await screen.refresh()
                #expect(await screen.row == "Off")
                #expect(await screen.refreshedOnMainQueue)

                // Each call's closures, stored with NiceNotifications' types, and whether they ran on the main
                // queue (this test runs elsewhere, as Swift Testing runs every test).
                var offMain: [String] = []
                func value<T>(_ name: String, _ handled: (value: T, onMain: Bool)) -> T {
                    if !handled.onMain { offMain.append(name) }
                    return handled.value
                }
                let mainQueueCalls = Recorder<String>()
                let byDate: (Date) -> UNMutableNotificationContent? = { date in
                    mainQueueCalls.append("byDate \(Self.onMainQueue)")
                    return NotificationContent(title: "Made for \(Int(date.timeIntervalSince1970))")
                }
                let calledBack: (Date, @escaping (UNMutableNotificationContent?) -> Void) -> Void = { _, completion in
                    mainQueueCalls.append("calledBack \(Self.onMainQueue)")
                    completion(NotificationContent(title: "Called back"))
                }
                let made = value(
                    "schedule",
                    await Self.handled {
                        LocalNotifications.schedule(
                            permissionStrategy: .scheduleIfSystemAllowed, group: "made",
                            {
                                EveryDay(forDays: 2, starting: .tomorrow).at(hour: 9, minute: 0).schedule(with: byDate)
                                Tomorrow().at(hour: 10, minute: 0).schedule(with: calledBack)
                            }, completion: $0)
                    })
                #expect(made.isSuccess)
                let pending = try await LocalNotifications.client().pending(group: "made")
                #expect(pending.count == 3)
                #expect(mainQueueCalls.elements.sorted() == ["byDate true", "byDate true", "calledBack true"])

                let later = NotificationsTimeline { Tomorrow().at(hour: 8, minute: 0).schedule(title: "Later") }
                let timeline = value(
                    "schedule(timeline:)",
                    await Self.handled {
                        LocalNotifications.schedule(
                            timeline: later, group: "later", permissionStrategy: .scheduleIfSystemAllowed,
                            completion: $0)
                    })
                #expect(timeline.isSuccess)
                let content = value(
                    "schedule(content:at:)",
                    await Self.handled {
                        LocalNotifications.schedule(
                            content: NotificationContent(title: "Once"), at: Tomorrow().at(hour: 7, minute: 0),
                            permissionStrategy: .scheduleIfSystemAllowed, completion: $0)
                    })
                #expect(content.isSuccess)
                let rescheduled = value(
                    "reschedule",
                    await Self.handled {
                        LocalNotifications.reschedule(
                            group: Reminders(), permissionStrategy: .scheduleIfSystemAllowed, completion: $0)
                    })
                #expect(rescheduled)
                let direct = value(
                    "directSchedule",
                    await Self.handled {
                        LocalNotifications.directSchedule(
                            request: UNNotificationRequest(
                                identifier: "direct", content: NotificationContent(title: "Direct"),
                                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)),
                            permissionStrategy: .scheduleIfSystemAllowed, completion: $0)
                    })
                #expect(direct.isSuccess)
                #expect(
                    value(
                        "requestPermission",
                        await Self.handled {
                            LocalNotifications.requestPermission(strategy: .scheduleIfSystemAllowed, completion: $0)
                        }))

                // A custom asker: run on the main queue, from the strategy and when asked directly.
                let ask: (@escaping (Result<Bool, any Error>) -> Void) -> Void = { completion in
                    mainQueueCalls.append("ask \(Self.onMainQueue)")
                    completion(.success(true))
                }
                let asker = LocalNotifications.ApplicationLevelPermissionAsker(askPermission: ask)
                let perform: () -> Void = { mainQueueCalls.append("perform \(Self.onMainQueue)") }
                let permission = value(
                    "withPermission",
                    await Self.handled {
                        LocalNotifications.withPermission(
                            strategy: .askWithPrePermission(.once, prePermission: asker), group: "reminders",
                            perform: perform, completion: $0)
                    })
                #expect(permission == .allowed)
                let answer = value("askPermission", await Self.handled { asker.askPermission(completion: $0) })
                #expect((try? answer.get()) == true)
                #expect(
                    mainQueueCalls.elements.filter { !$0.hasPrefix("byDate") && !$0.hasPrefix("calledBack") } == [
                        "ask true", "perform true", "ask true",
                    ])

                let status = value(
                    "currentAuthorizationStatus",
                    await Self.handled {
                        LocalNotifications.currentAuthorizationStatus(forGroup: Reminders(), completion: $0)
                    })
                #expect(status == .enabled)
                let system = value(
                    "SystemAuthorization.getCurrent",
                    await Self.handled { LocalNotifications.SystemAuthorization.getCurrent($0) })
                #expect(system == .allowed)
                let authorized = value(
                    "authorizeWithSystem",
                    await Self.handled { LocalNotifications.SystemAuthorization.authorizeWithSystem($0) })
                #expect((try? authorized.get()) == .allowed)
                let lines = value("getTimeline", await Self.handled { Reminders().getTimeline(completion: $0) })
                #expect(lines.entries.count == 2)
                #expect(offMain.isEmpty, "ran off the main queue: \(offMain)")
            }
        }
    }

    @Test func theAppHearsOfActionsChosenOnItsNotifications() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let client = try await LocalNotifications.client()
                try await client.registerCategories([
                    ActionCategory(id: "tea", actions: [CategoryAction(id: "brew", title: "Brew")])
                ])
                let events = try await LocalNotifications.actionEvents()
                try await LocalNotifications.schedule(groupIdentifier: "kitchen") {
                    ExactlyAt(Date()).schedule(title: "Kettle", body: "Boiled").identifier("kettle").category("tea")
                }
                let calls = s.server!.notifyCalls
                try await calls.wait(forCount: 1, timeout: .seconds(10))
                #expect(calls.elements[0].actions == ["brew", "Brew"])
                try await s.awaitDelivered(notification: 1)
                try await s.choose("brew", on: 1)
                var iterator = events.makeAsyncIterator()
                let event = try #require(await iterator.next())
                #expect(event.action == "brew" && event.group == "kitchen" && event.entry == "kettle")
            }
        }
    }

    /// Presents what its `willPresent` is told to, and remembers what it was asked about.
    final class Presenter: UNUserNotificationCenterDelegate, @unchecked Sendable {
        let asked = Recorder<String>()

        func userNotificationCenter(_ center: UNUserNotificationCenter, willPresent notification: UNNotification)
            async -> UNNotificationPresentationOptions
        {
            asked.append(notification.request.identifier)
            switch notification.request.identifier {
            case "quiet": return []
            case "silent": return [.list]
            default: return [.banner, .sound]
            }
        }
    }

    @Test func theDelegateDecidesHowARequestDueWhileTheAppRunsIsPresented() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let center = UNUserNotificationCenter.current()
                let presenter = Presenter()
                center.delegate = presenter
                defer { center.delegate = nil }
                for name in ["loud", "quiet", "silent"] {
                    let content = UNMutableNotificationContent()
                    content.title = name
                    content.sound = .default
                    try await center.add(
                        UNNotificationRequest(
                            identifier: name, content: content,
                            trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
                }
                try await presenter.asked.wait("willPresent for the three", timeout: .seconds(15)) {
                    Set($0) == ["loud", "quiet", "silent"]
                }
                let calls = s.server!.notifyCalls
                try await calls.wait("loud and silent shown", timeout: .seconds(10)) {
                    Set($0.compactMap(\.summary)) == ["loud", "silent"]
                }
                let loud = try #require(calls.elements.first { $0.summary == "loud" })
                let silent = try #require(calls.elements.first { $0.summary == "silent" })
                #expect(loud.hints["sound-name"] != nil && loud.hints["suppress-sound"] == nil, "\(loud.hints)")
                #expect(silent.hints["sound-name"] == nil && silent.hints["suppress-sound"] != nil, "\(silent.hints)")
                try await InteractionTests.awaitListing(s, ["history"], "the quiet one suppressed") {
                    $0.contains {
                        $0["event"] as? String == "suppressed"
                            && ($0["detail"] as? String)?.contains("the app chose not to present it") == true
                    }
                }
                #expect(!calls.elements.contains { $0.summary == "quiet" })
            }
        }
    }

    /// Remembers every response, as `didReceive` gets it.
    final class Responder: UNUserNotificationCenterDelegate, @unchecked Sendable {
        let responses = Recorder<UNNotificationResponse>()

        func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse)
            async
        {
            responses.append(response)
        }
    }

    @Test func userNotificationsContentRoundTripsThroughChimedToTheDelegate() async throws {
        try await Session.run { s in
            try await Self.withKit(s) {
                let center = UNUserNotificationCenter.current()
                let responder = Responder()
                center.delegate = responder
                defer { center.delegate = nil }
                center.setNotificationCategories([
                    UNNotificationCategory(
                        identifier: "note",
                        actions: [UNNotificationAction(identifier: "done", title: "Done", options: [.destructive])],
                        intentIdentifiers: [])
                ])
                let when = Date(timeIntervalSince1970: 1_800_000_000.25)
                let info: [AnyHashable: Any] = [
                    "when": when, "count": 3, "ratio": 0.5, "flag": true, "blob": Data([1, 2, 3]),
                    "nested": ["list": [1, "two"] as [Any]] as [String: Any],
                ]
                func content(_ title: String) -> UNMutableNotificationContent {
                    let content = UNMutableNotificationContent()
                    content.title = title
                    content.subtitle = "Sub"
                    content.body = "Body"
                    content.badge = 4
                    content.threadIdentifier = "thread-1"
                    content.categoryIdentifier = "note"
                    content.userInfo = info
                    return content
                }
                func expectInfo(_ got: [AnyHashable: Any]) {
                    #expect((got["when"] as? Date)?.timeIntervalSince1970 == when.timeIntervalSince1970)
                    #expect(got["count"] as? Int == 3 && got["ratio"] as? Double == 0.5 && got["flag"] as? Bool == true)
                    #expect(got["blob"] as? Data == Data([1, 2, 3]))
                    let list = (got["nested"] as? [String: Any])?["list"] as? [Any]
                    #expect(list?.first as? Int == 1 && list?.last as? String == "two", "\(got)")
                }
                try await center.add(
                    UNNotificationRequest(
                        identifier: "later", content: content("Later"),
                        trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3600, repeats: false)))
                let later = try #require(await center.pendingNotificationRequests().first { $0.identifier == "later" })
                #expect(later.content.subtitle == "Sub" && later.content.badge == 4)
                #expect(later.content.threadIdentifier == "thread-1" && later.content.categoryIdentifier == "note")
                expectInfo(later.content.userInfo)

                try await center.add(
                    UNNotificationRequest(
                        identifier: "now", content: content("Now"),
                        trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false)))
                let calls = s.server!.notifyCalls
                try await calls.wait("the notification", timeout: .seconds(10)) { $0.contains { $0.summary == "Now" } }
                let call = try #require(calls.elements.first { $0.summary == "Now" })
                #expect(call.actions.contains("done") && call.actions.contains("default"), "\(call.actions)")
                #expect(call.body == "Sub\nBody")
                try await s.awaitDelivered(notification: 1)
                #expect(await center.deliveredNotifications().map(\.request.identifier) == ["now"])

                try await s.choose("default", on: 1)
                try await responder.responses.wait(forCount: 1, timeout: .seconds(10))
                let click = responder.responses.elements[0]
                #expect(click.actionIdentifier == UNNotificationDefaultActionIdentifier)
                #expect(click.notification.request.identifier == "now")
                #expect(click.notification.request.content.title == "Now")
                expectInfo(click.notification.request.content.userInfo)

                center.removeDeliveredNotifications(withIdentifiers: ["now"])
                #expect(await center.deliveredNotifications().isEmpty)
            }
        }
    }

    @Test func theDailyQuoteExampleSchedulesOnlyEnabledQuotesAndHandlesItsActions() async throws {
        try await Session.run { s in
            let allowed = try await s.chime(["app", "allow", "io.chime.examples.DailyQuote"])
            #expect(allowed.status == 0)
            let example = Binaries.directory.appendingPathComponent("DailyQuote").path
            func run(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
                let process = try ManagedProcess(
                    example, arguments, environment: s.bus.environment, directory: s.bus.directory)
                let status = await process.waitForExit(timeout: .seconds(30)) ?? -1
                return (status, process.stdout, process.stderr)
            }
            let kept = "What we think, we become. — Buddha"
            let scheduled = try await run([
                "--every-seconds", "1", "--disable", "Storms", "--disable", "Well", "--disable", "Hitch", "--disable",
                "The best",
            ])
            #expect(scheduled.status == 0, "\(scheduled.stderr)")
            #expect(scheduled.stdout.contains("dailyQuote: 10 added"), "\(scheduled.stdout)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            for call in calls.elements.prefix(2) {
                #expect(call.summary == kept)
                #expect(call.appName == "Daily Quote")
                #expect(call.actions == ["another", "Another one", "stop", "No more quotes"])
            }
            // "No more quotes" chosen while the app is not running waits for it; its next start removes the group.
            try await s.awaitDelivered(notification: 1)
            try await s.choose("stop", on: 1)
            try await InteractionTests.awaitListing(s, ["history"], "the kept action") {
                $0.contains { $0["event"] as? String == "action" }
            }
            let stopped = try await run([])
            #expect(stopped.status == 0, "\(stopped.stderr)")
            #expect(stopped.stdout.contains("no more quotes: removed the group dailyQuote"), "\(stopped.stdout)")
            #expect(
                !(try await s.chimeJSON(["groups"]).contains { ($0["id"] as? String)?.contains("dailyQuote") == true }))
            let bad = try await run(["--at", "25:00"])
            #expect(bad.status != 0 && bad.stderr.contains("--at takes HH:MM"), "\(bad.stderr)")
        }
    }
}
