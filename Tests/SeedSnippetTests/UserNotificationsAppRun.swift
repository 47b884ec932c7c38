import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// Runs the reminders app of UserNotificationsApp.swift, as written, against chimed on a private bus with
/// python-dbusmock as the notification server, and checks what it scheduled and what its delegate heard.
@Suite(.serialized) struct UserNotificationsAppRun {
    static let appID = "org.example.Reminders"

    @Test func theRemindersAppSchedulesThroughChimedAndHearsItsActions() async throws {
        let bus = try await TestBus.start()
        var processes: [ManagedProcess] = []
        let observer = try await bus.connect()
        defer { observer.close() }
        do {
            let server = try await MockNotificationServer.start(
                on: bus, observer: observer, capabilities: "actions action-icons body persistence")
            processes.append(server.process)
            var environment = bus.environment
            environment["TZ"] = ""
            environment["PULSE_SERVER"] = "unix:" + bus.directory.appendingPathComponent("no-sound-server").path
            let state = bus.directory.appendingPathComponent("state").path
            let groups = bus.directory.appendingPathComponent("groups").path
            try FileManager.default.createDirectory(atPath: groups, withIntermediateDirectories: true)
            let chimed = try ManagedProcess(
                Binaries.chimed,
                [
                    "--state-dir", state, "--config", bus.directory.appendingPathComponent("chime.toml").path,
                    "--groups-dir", groups,
                ],
                environment: environment, directory: bus.directory)
            processes.insert(chimed, at: 0)
            try await bus.waitForName("io.chime.Chime1", using: observer)
            // The user allows the app, as `chime app allow` does.
            let allow = try ManagedProcess(
                Binaries.chime, ["app", "allow", Self.appID],
                environment: bus.environment, directory: bus.directory)
            #expect(await allow.waitForExit(timeout: .seconds(30)) == 0, "\(allow.stderr)")
            await LocalNotifications.configure(.init(bus: .bus(bus.address), appID: Self.appID))
            try await run(server: server, observer: observer)
        } catch {
            await LocalNotifications.configure(.init())
            for process in processes { _ = await process.stop() }
            await bus.stop()
            throw error
        }
        await LocalNotifications.configure(.init())
        for process in processes { _ = await process.stop() }
        await bus.stop()
    }

    func run(server: MockNotificationServer, observer: DBusConnection) async throws {
        let app = ReminderNotifications()
        defer { app.center.delegate = nil }
        app.registerCategories()
        #expect(await app.requestAccess())
        #expect(await app.canAlert())

        // A daily reminder at 9:00: pending, with its calendar trigger and content.
        try await app.schedule(
            Reminder(
                id: "water", title: "Water the plants", notes: "The basil too",
                due: DateComponents(hour: 9, minute: 0), repeatsDaily: true, imageURL: nil, isUrgent: false),
            badge: 1)
        #expect(await app.pendingReminderIDs() == ["water"])
        let water = try #require(await app.center.pendingNotificationRequests().first)
        #expect(water.content.filterCriteria == "work" && water.content.badge == 1)
        #expect(water.content.categoryIdentifier == ReminderCategory.reminder)
        #expect((water.trigger as? UNCalendarNotificationTrigger)?.repeats == true)

        // The alarm, with the completion-handler form, fires in a second: critical, its volume, and its
        // "Done" button shown as an icon (the server has action-icons; the reply is left out, as the
        // server takes no typed reply).
        let added = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            app.scheduleAlarm(in: 1) { error in done.resume(returning: error.map { "\($0)" }) }
        }
        #expect(added == nil)
        try await server.notifyCalls.wait("the alarm", timeout: .seconds(10)) { $0.contains { $0.summary == "Alarm" } }
        let alarm = try #require(server.notifyCalls.elements.first { $0.summary == "Alarm" })
        #expect(alarm.hints["urgency"] == .byte(2))
        #expect(alarm.hints["x-chime-sound-volume"] == .double(1))
        #expect(alarm.hints["action-icons"] == .boolean(true))
        #expect(alarm.actions == ["default", "Open", "object-select", "Done"], "\(alarm.actions)")

        // The user presses the icon: the delegate's completion-handler didReceive hears "COMPLETE".
        try await Await.polling("the alarm is listed as delivered") {
            await app.center.deliveredNotifications().contains { $0.request.identifier == "alarm" }
        }
        _ = try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
            [
                .string("org.freedesktop.Notifications"), .string("ActionInvoked"), .string("us"),
                .array(element: .variant, [.variant(.uint32(1)), .variant(.string("object-select"))]),
            ])
        // The delegate removes the completed reminder's notification after noting it: once it is gone, the
        // delegate is done with it.
        try await Await.polling("the delegate removes the completed alarm") {
            await app.center.deliveredNotifications().isEmpty
        }
        #expect(app.delegate.completed == ["alarm"])

        // The badge from the delivered count, with the completion-handler form.
        let badged = await withCheckedContinuation { (done: CheckedContinuation<String?, Never>) in
            app.refreshBadge { error in done.resume(returning: error.map { "\($0)" }) }
        }
        #expect(badged == nil)

        await app.cancelAll()
        #expect(await app.pendingReminderIDs().isEmpty)
        #expect(app.describe(UNError(.notificationsNotAllowed)) == "Turn on notifications for this app")
    }
}
