import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// The habit tracker's NiceNotifications code (HabitApp.swift): what its timelines schedule, and the app run
/// against chimed on a private bus.
@Suite(.serialized) struct HabitAppTests {
    static let appID = "org.example.Habits"

    static func lines(of group: LocalNotificationsGroup) -> NotificationsTimeline {
        var made: NotificationsTimeline?
        group.getTimeline { made = $0 }
        return made ?? .empty
    }

    static func materialize(_ timeline: NotificationsTimeline, now: Date) async throws -> [TimelineEntry] {
        try await timeline.materialize(now: now, timeZone: .current, horizon: 7 * 86_400, limit: 64).entries
    }

    static func date(daysAfterToday days: Int, hour: Int, minute: Int) -> Date {
        let calendar = Calendar.current
        let day = calendar.date(byAdding: .day, value: days, to: calendar.startOfDay(for: Date()))!
        return calendar.date(bySettingHour: hour, minute: minute, second: 0, of: day)!
    }

    static func title(_ entry: TimelineEntry) -> String? {
        if case .fixed(let content) = entry.content { return content.summary }
        return nil
    }

    @Test func theRoutineTimelineIsBuiltFromItsParts() async throws {
        let now = Date()
        let entries = try await Self.materialize(Self.lines(of: MorningRoutineGroup()), now: now)
        #expect(entries.map(\.id) == ["entry-1", "entry-2", "entry-3", "entry-4", "entry-5"])
        #expect(entries.map(Self.title) == ["Stretch", "Drink water", "Read", "Check in", "Weekly review"])
        // The fortnight of stretches is one rule, not fourteen one-offs.
        guard case .rule(.dateRule, nil) = entries[0].trigger else {
            Issue.record("the stretches are \(entries[0].trigger)")
            return
        }
        #expect(entries[0].category == "habit")
        #expect(entries[1].trigger == .at(Self.date(daysAfterToday: 1, hour: 11, minute: 0)))
        #expect(entries[2].trigger == .at(Self.date(daysAfterToday: 1, hour: 21, minute: 30)))
        if case .fixed(let content) = entries[1].content {
            #expect(content.hints["x-chime-target-content-id"] == .string("habit/Drink water"))
            #expect(content.sound == nil)
        }
        #expect(entries[3].trigger == .at(now.addingTimeInterval(3600)))
        #expect(entries[4].trigger == .rule(.onCalendar("Sun *-*-* 18:00:00"), timeZone: nil))
    }

    @Test func aBuilderFunctionsLinesAreScheduledAndANilLineAddsNothing() async throws {
        let entries = try await Self.materialize(NotificationsTimeline(launchCountdown), now: Date())
        let dates = [
            Self.date(daysAfterToday: 1, hour: 9, minute: 0), Self.date(daysAfterToday: 2, hour: 9, minute: 0),
        ]
        #expect(entries.map(\.trigger) == dates.map { .at($0) })
        #expect(entries.map(\.id) == ["entry-1", "entry-2"])
        for entry in entries {
            guard case .fixed(let content) = entry.content else { continue }
            #expect(content.summary == "Launch soon" && content.subtitle == "Countdown")
        }
    }

    @Test func anArrayOfDatesIsAOneOffPerDateThroughItsTriggerSet() async throws {
        let now = Date()
        let days: [DateBuilder.ResolvedDate] = [
            Tomorrow().at(hour: 9, minute: 0), Today().addingDays(-1).at(hour: 9, minute: 0),
        ]
        let set = [DateBuilder.ResolvedDate].keyPathForTriggerSet(days)
        // The past date is left out, as NiceNotifications leaves it.
        let tomorrow = Self.date(daysAfterToday: 1, hour: 9, minute: 0)
        #expect(set.triggers.map(\.nextTriggerDate) == [tomorrow])
        #expect(set.triggers.first?.rawTrigger is UNCalendarNotificationTrigger)
        let made = Recorder<String>()
        let timeline = NotificationsTimeline {
            set.schedule(title: "Fixed")
            set.schedule(with: { (trigger: LocalNotifications.Trigger) in
                made.append(trigger.identifier.rawValue)
                return NotificationContent(title: "Made")
            })
        }
        let entries = try await Self.materialize(timeline, now: now)
        let epoch = String(Int64(tomorrow.timeIntervalSince1970))
        #expect(entries.map(\.id) == ["entry-1.\(epoch)", "entry-2.\(epoch)"])
        #expect(entries.map(\.trigger) == [.at(tomorrow), .at(tomorrow)])
        #expect(made.elements == [epoch])
        // A counted run written as NiceNotifications writes it stays one rule.
        let run = try await Self.materialize(
            NotificationsTimeline {
                EveryDay(forDays: 30, starting: .today).at(hour: 9, minute: 0).schedule(title: "Run")
            },
            now: now)
        #expect(run.count == 1)
        guard case .rule(.dateRule, nil) = run.first?.trigger else {
            Issue.record("the run is \(String(describing: run.first?.trigger))")
            return
        }
    }

    @Test func anAppsOwnSchedulingTypeAndAListOfDatesAreScheduledByTheirDates() async throws {
        let now = Date()
        let entries = try await Self.materialize(NotificationsTimeline(plantCare), now: now)
        // The app's own type: a one-off per member of its trigger set.
        let watering = [1, 3].map { Self.date(daysAfterToday: $0, hour: 19, minute: 0) }
        #expect(entries.filter { $0.id.hasPrefix("entry-1.") }.map(\.trigger) == watering.map { .at($0) })
        // The list: its dates still ahead, one item, content made per date within the horizon (a week).
        let fertiliser = entries.filter { $0.id.hasPrefix("entry-2") }
        #expect(
            fertiliser.map(\.id) == [
                "entry-2.\(Int64(Self.date(daysAfterToday: 1, hour: 8, minute: 0).timeIntervalSince1970))"
            ])
        let item = try #require(
            try? [
                Tomorrow().at(hour: 8, minute: 0), AfterToday(days: 15, at: TimeOfDay(hour: 8, minute: 0)),
                Today().addingDays(-2).at(hour: 8, minute: 0), AfterToday(days: 29, at: TimeOfDay(hour: 8, minute: 0)),
            ].resolve(now: now, timeZone: .current))
        guard case .rule(let rule, nil) = item.trigger else {
            Issue.record("the list is \(item.trigger)")
            return
        }
        let recurrence = try Recurrence.parse(rule, now: now, timeZone: .floating, systemTimeZone: .current)
        var dates: [Date] = []
        var cursor = now
        while dates.count < 5, let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: .current) {
            dates.append(next)
            cursor = next
        }
        #expect(dates == [1, 15, 29].map { Self.date(daysAfterToday: $0, hour: 8, minute: 0) })
    }

    @Test func streakMessagesAreMadePerOccurrenceFromTheirTrigger() async throws {
        let now = Date()
        let entries = try await Self.materialize(Self.lines(of: StreakGroup()), now: now)
        let streak = entries.filter { $0.id.hasPrefix("entry-1.") }
        let dates = (1...3).map { Self.date(daysAfterToday: $0, hour: 20, minute: 0) }
        #expect(streak.map(\.trigger) == dates.map { .at($0) })
        for (entry, date) in zip(streak, dates) {
            guard case .fixed(let content) = entry.content else { continue }
            #expect(content.summary == "Day 5 of your streak")
            #expect(content.userInfo["occurrence"] == .string(String(Int64(date.timeIntervalSince1970))))
        }
        let safe = entries.filter { $0.id.hasPrefix("entry-2.") }
        #expect(safe.count == (Self.date(daysAfterToday: 0, hour: 23, minute: 59) > now ? 1 : 0))
    }

    @Test func strategiesAndResultsReadAsTheAppNamesThem() {
        #expect(
            HabitNotifications.describe(HabitNotifications.tipsStrategy.groupLevel) == "if morningRoutine is allowed")
        #expect(HabitNotifications.describe(HabitNotifications.routineStrategy.groupLevel) == "ask once")
        #expect(
            HabitNotifications.describe(LocalNotifications.PermissionResult.deniedOnGroupLevel.asSchedulingResult)
                == "denied for the group")
        #expect(
            HabitNotifications.describe(LocalNotifications.PermissionResult.allowed.asSchedulingResult) == "scheduled")
    }

    @Test func archivedContentIsNotReadHere() {
        #expect(NotificationContent(coder: NSKeyedArchiver(requiringSecureCoding: false)) == nil)
    }

    @Test func theAppRunsAgainstChimed() async throws {
        try await ChimedOnABus.run(appID: Self.appID) { _, _ in
            let log = Recorder<String>()
            HabitNotifications.enableLogging(into: { log.append($0) })
            defer { LocalNotifications.Log.info = { _ in } }

            // The routine: the app's own asker says yes, and the user allowed the app.
            #expect(await callBack(HabitNotifications.scheduleRoutine))
            let routine = try await LocalNotifications.client().pending(group: "morningRoutine")
            #expect(Set(routine.compactMap(\.entry)) == ["entry-1", "entry-2", "entry-3", "entry-4", "entry-5"])
            let stretches = try #require(routine.first { $0.entry == "entry-1" })
            #expect(stretches.rule?.hasSuffix("14 times") == true, "\(stretches.rule ?? "")")
            #expect(routine.first { $0.entry == "entry-5" }?.rule != nil)
            #expect(log.elements.contains("rescheduling group morningRoutine"))
            #expect(await callBack(HabitNotifications.settingsRow) == "On")

            let countdown = await callBack { HabitNotifications.scheduleCountdown(completion: $0) }
            #expect(HabitNotifications.describe(countdown) == "scheduled")
            let launch = try await LocalNotifications.client().pending(group: "countdown")
            #expect(launch.count == 2 && launch.allSatisfy { $0.summary == "Launch soon" })

            // The tips follow the routine's permission; the work runs only when allowed.
            let ran = Recorder<Bool>()
            let tips = await callBack {
                HabitNotifications.withTipsPermission(perform: { ran.append(true) }, completion: $0)
            }
            #expect(HabitNotifications.describe(tips) == "scheduled" && ran.elements == [true])

            #expect(await callBack(HabitNotifications.askTheSystem) == .allowed)
            #expect(await callBack(HabitNotifications.onboarding))

            // Turning the routine off: its decision is stored in chimed, its notifications go.
            HabitNotifications.setRoutineAllowed(false)
            // A direct request is scheduled after the change (calls keep their order), so once it is, the change is made.
            #expect(HabitNotifications.describe(await callBack(HabitNotifications.sendNow)) == "scheduled")
            #expect(!HabitNotifications.routineIsOn())
            #expect(await callBack(HabitNotifications.settingsRow) == "Off")
            #expect(try await LocalNotifications.client().pending(group: "morningRoutine").isEmpty)
            let refused = await callBack {
                HabitNotifications.withTipsPermission(perform: { ran.append(false) }, completion: $0)
            }
            #expect(HabitNotifications.describe(refused) == "denied for the group" && ran.elements == [true])

            // authorizeWithSystem goes through the replaceable UserNotifications calls.
            let saved = LocalNotifications.SystemAuthorization.Env.requestAuthorization
            defer { LocalNotifications.SystemAuthorization.Env.requestAuthorization = saved }
            HabitNotifications.installStubs(added: { _ in }, systemAllows: false)
            #expect(await callBack(HabitNotifications.askTheSystem) == .deniedNow)
        }
    }

    @Test func aRescheduleClosesTheNotificationsTheGroupCallsStale() async throws {
        try await ChimedOnABus.run(appID: Self.appID) { chimed, server in
            let soon = NotificationsTimeline {
                UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false).schedule(title: "Stretch")
                UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false).schedule(title: "Drink water")
            }
            let scheduled = await callBack {
                LocalNotifications.schedule(
                    timeline: soon, group: "morningRoutine", permissionStrategy: .scheduleIfSystemAllowed,
                    completion: $0)
            }
            #expect(scheduled.isSuccess)
            try await chimed.waitForStderr(containing: "delivered \"Stretch\"")
            try await chimed.waitForStderr(containing: "delivered \"Drink water\"")
            let shown = try await LocalNotifications.client().delivered()
            let stretch = try #require(shown.first { $0.content.summary == "Stretch" }).notificationID
            let water = try #require(shown.first { $0.content.summary == "Drink water" }).notificationID

            // The routine says a stretch reminder still shown is stale once it is rescheduled.
            #expect(await callBack(HabitNotifications.scheduleRoutine))
            try await server.closeCalls.wait("the stretch reminder closed") { $0.contains(stretch) }
            #expect(!server.closeCalls.elements.contains(water))
        }
    }
}

/// Waits for a completion handler.
func callBack<T>(_ call: (@escaping (T) -> Void) -> Void) async -> T {
    await withCheckedContinuation { continuation in call { continuation.resume(returning: $0) } }
}

/// A private bus with chimed on it and the app allowed by the user; LocalNotifications talks to it as the app
/// while `body` runs. Both processes are stopped afterwards.
enum ChimedOnABus {
    static func run(appID: String, _ body: (ManagedProcess, MockNotificationServer) async throws -> Void)
        async throws
    {
        let bus = try await TestBus.start()
        var chimed: ManagedProcess?
        var server: MockNotificationServer?
        do {
            let directory = bus.directory
            var environment = bus.environment
            // No sound server is reached from a test.
            environment["PULSE_SERVER"] = "unix:" + directory.appendingPathComponent("no-sound-server").path
            let observer = try await bus.connect()
            let mock = try await MockNotificationServer.start(on: bus, observer: observer)
            server = mock
            let started = try ManagedProcess(
                binary("chimed"),
                [
                    "--log-level", "debug",
                    "--state-dir", directory.appendingPathComponent("state").path, "--config",
                    directory.appendingPathComponent("chime.toml").path, "--groups-dir",
                    directory.appendingPathComponent("groups").path,
                ], environment: environment, directory: directory)
            chimed = started
            try await bus.waitForName("io.chime.Chime1", using: observer)
            let allow = try ManagedProcess(
                binary("chime"), ["app", "allow", appID], environment: bus.environment, directory: directory)
            guard await allow.waitForExit(timeout: .seconds(30)) == 0 else {
                throw ChimeError(.rejected, "chime app allow failed: \(allow.stderr)")
            }
            await LocalNotifications.configure(.init(bus: .bus(bus.address), appID: appID))
            try await body(started, mock)
        } catch {
            await stop(chimed, server, bus)
            throw error
        }
        await stop(chimed, server, bus)
    }

    static func stop(_ chimed: ManagedProcess?, _ server: MockNotificationServer?, _ bus: TestBus) async {
        await LocalNotifications.configure(.init())
        _ = await chimed?.stop()
        await server?.stop()
        await bus.stop()
    }

    /// An executable `swift build` put beside the test bundle.
    static func binary(_ name: String) -> String {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return ".build/debug/" + name
    }
}
