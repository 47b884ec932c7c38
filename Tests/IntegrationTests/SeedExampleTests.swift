import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The seeds' two UserNotifications apps as Examples/, run as processes against chimed on a private bus with
/// python-dbusmock as the server (which the tests make invoke actions): seed 004's repeating "Pizza Time"
/// with "Stop Repeat" and its end date, and seed 003's notification manager with its two snoozes.
@Suite(.serialized) struct SeedExampleTests {
    /// Starts an example against the session's bus, allowed by the user first.
    static func start(_ s: Session, _ name: String, appID: String, _ arguments: [String]) async throws
        -> ManagedProcess
    {
        let allowed = try await s.chime(["app", "allow", appID])
        guard allowed.status == 0 else { throw TestFailure("chime app allow failed: \(allowed.stderr)") }
        return try ManagedProcess(
            Binaries.directory.appendingPathComponent(name).path, arguments + ["--app-id", appID],
            environment: s.bus.environment, directory: s.bus.directory)
    }

    /// Runs an example to its end.
    static func run(_ s: Session, _ name: String, appID: String, _ arguments: [String]) async throws
        -> (status: Int32, stdout: String)
    {
        let process = try await start(s, name, appID: appID, arguments)
        let status = await process.waitForExit(timeout: .seconds(30)) ?? -1
        return (status, process.stdout + process.stderr)
    }

    /// A second of the minute a few seconds from now, for a calendar trigger that fires soon.
    static func soonSecond() -> Int {
        (Calendar(identifier: .gregorian).component(.second, from: Date()) + 4) % 60
    }

    static let pizza = "io.chime.examples.PizzaTime"

    /// The actions of a Notify call, by key.
    static func actions(_ call: MockNotificationServer.Call) -> [String: String] {
        var result: [String: String] = [:]
        var keys = call.actions.makeIterator()
        while let key = keys.next(), let label = keys.next() { result[key] = label }
        return result
    }

    /// Runs `body` with the example process, which is stopped afterwards even when `body` throws.
    static func with(_ app: ManagedProcess, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            _ = await app.stop()
            throw TestFailure("\(error)\nthe example said: \(app.stdout)\(app.stderr)")
        }
        _ = await app.stop()
    }

    @Test func pizzaTimeStopsRepeatingOnStopRepeat() async throws {
        try await Session.run { s in
            let app = try await Self.start(
                s, "PizzaTime", appID: Self.pizza,
                ["--schedule", "--second", String(Self.soonSecond()), "--end-after", "600", "--listen", "60"])
            try await Self.with(app) {
                let calls = s.server!.notifyCalls
                try await calls.wait("the first pizza reminder", timeout: .seconds(15)) {
                    $0.contains { $0.summary == "Pizza Time!!" }
                }
                let call = try #require(calls.elements.first)
                #expect(call.body == "Monday is Pizza Day")
                #expect(Self.actions(call)["clear.repeat.action"] == "Stop Repeat", "\(call.actions)")
                let pending = try await s.chimeJSON(["pending"])
                #expect(pending.contains { ($0["group"] as? String) == "request.pizza.reminder" }, "\(pending)")

                try await s.awaitDelivered(notification: 1)
                try await s.choose("clear.repeat.action", on: 1)
                try await InteractionTests.awaitListing(s, ["pending"], "the reminder removed by Stop Repeat") {
                    !$0.contains { ($0["group"] as? String) == "request.pizza.reminder" }
                }
                // The app says so once chimed has answered its removal, a round trip after the listing changed.
                try await app.waitForStdout(containing: "stopped pizza.reminder")
            }
            #expect(app.stdout.contains("Did recieve response: clear.repeat.action on pizza.reminder"), "\(app.stdout)")
        }
    }

    /// An app that has exited is started by an action chosen on its popup, as iOS launches an app to handle
    /// a response: chimed keeps the action and asks the bus to start the app (D-Bus activation of its name,
    /// from its `.service` file), and the app's delegate gets the response as it starts.
    @Test func anExitedAppIsStartedByItsActionAndItsDelegateGetsTheResponse() async throws {
        try await Session.run { s in
            let log = s.bus.directory.appendingPathComponent("pizza-started.log")
            try Data().write(to: log)
            let executable = Binaries.directory.appendingPathComponent("PizzaTime").path
            try """
            [D-BUS Service]
            Name=\(Self.pizza)
            Exec=/bin/sh -c 'exec \(executable) --listen 30 --app-id \(Self.pizza) >> \(log.path) 2>&1'
            """.write(
                to: s.bus.directory.appendingPathComponent("services/\(Self.pizza).service"), atomically: true,
                encoding: .utf8)
            let scheduled = try await Self.run(
                s, "PizzaTime", appID: Self.pizza,
                ["--schedule", "--second", String(Self.soonSecond()), "--end-after", "600"])
            #expect(scheduled.status == 0, "\(scheduled.stdout)")
            try await s.awaitDelivered(notification: 1)
            try await s.choose("clear.repeat.action", on: 1)
            try await Await.condition("the started app stopped the reminder", timeout: .seconds(30), watching: log) {
                ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("stopped pizza.reminder")
            }
            let output = try String(contentsOf: log, encoding: .utf8)
            #expect(output.contains("Did recieve response: clear.repeat.action on pizza.reminder"), "\(output)")
            try await InteractionTests.awaitListing(s, ["pending"], "the reminder removed by the started app") {
                !$0.contains { ($0["group"] as? String) == "request.pizza.reminder" }
            }
            try await s.chimed!.waitForStderr(containing: "started \(Self.pizza) for its action clear.repeat.action")
            // Only the action started it: the occurrence's content was not asked of an app that was not running.
            #expect(!s.chimed!.stderr.contains("did not make the content"), "\(s.chimed!.stderr)")
            // The bus started it, so the test stops it, by the process id the bus knows.
            let bus = try await s.bus.connect()
            let reply = try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetConnectionUnixProcessID", [.string(Self.pizza)])
            guard case .uint32(let pid)? = reply.first else { throw TestFailure("no process id for \(Self.pizza)") }
            #expect(kill(pid_t(pid), SIGTERM) == 0)
            try await Await.polling("the started app exited") {
                !FileManager.default.fileExists(atPath: "/proc/\(pid)")
            }
        }
    }

    @Test func pizzaTimeIsCleanedOnceItsEndDatePassed() async throws {
        try await Session.run { s in
            let scheduled = try await Self.run(
                s, "PizzaTime", appID: Self.pizza,
                ["--schedule", "--second", String(Self.soonSecond()), "--end-after", "2"])
            #expect(scheduled.status == 0, "\(scheduled.stdout)")
            #expect(scheduled.stdout.contains("added notification:pizza.reminder"), "\(scheduled.stdout)")
            let calls = s.server!.notifyCalls
            try await calls.wait("the pizza reminder", timeout: .seconds(15)) {
                $0.contains { $0.summary == "Pizza Time!!" }
            }
            // The end date has passed by now (the reminder came at least two seconds after it was set); the
            // app's next start finds it in userInfo, read back from chimed, and removes the request.
            let restarted = try await Self.run(s, "PizzaTime", appID: Self.pizza, [])
            #expect(restarted.status == 0, "\(restarted.stdout)")
            #expect(restarted.stdout.contains("cleaned pizza.reminder"), "\(restarted.stdout)")
            try await InteractionTests.awaitListing(s, ["pending"], "the expired reminder gone") {
                !$0.contains { ($0["group"] as? String) == "request.pizza.reminder" }
            }
        }
    }

    @Test func aSnoozedNotificationComesBackAfterTenAndSixtySecondsWithItsContentAndActions() async throws {
        try await Session.run { s in
            let app = try await Self.start(
                s, "NotificationManager", appID: "io.chime.examples.NotificationManager",
                ["--title", "Stretch", "--body", "Time to stand up", "--in", "1", "--listen", "100"])
            try await Self.with(app) {
                let calls = s.server!.notifyCalls
                try await calls.wait(forCount: 1, timeout: .seconds(15))
                let first = calls.elements[0]
                #expect(first.summary == "Stretch" && first.body == "Time to stand up")
                #expect(Self.actions(first)["snooze10"] == "Snooze for 10 seconds", "\(first.actions)")
                #expect(Self.actions(first)["snooze60"] == "Snooze for one minute", "\(first.actions)")

                try await s.awaitDelivered(notification: 1)
                let chose10 = Date()
                try await s.choose("snooze10", on: 1)
                try await calls.wait(forCount: 2, timeout: .seconds(20))
                let second = calls.elements[1]
                #expect(second.received.timeIntervalSince(chose10) >= 10)
                #expect(second.summary == first.summary && second.body == first.body && second.actions == first.actions)

                try await s.awaitDelivered(notification: 2)
                let chose60 = Date()
                try await s.choose("snooze60", on: 2)
                try await calls.wait(forCount: 3, timeout: .seconds(75))
                let third = calls.elements[2]
                #expect(third.received.timeIntervalSince(chose60) >= 60)
                #expect(third.summary == first.summary && third.body == first.body && third.actions == first.actions)
            }
            #expect(app.stdout.contains("snoozed 10 s: Stretch") && app.stdout.contains("snoozed 60 s: Stretch"))
        }
    }

    /// Both examples on dunst under Xvfb: their popups show the category's buttons, and choosing one on the
    /// real popup reaches the app.
    @Test func theExamplesOnDunstStopRepeatingAndSnooze() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            s.chimed = try await s.startChimed()

            let pizza = try await Self.start(
                s, "PizzaTime", appID: Self.pizza,
                ["--schedule", "--second", String(Self.soonSecond()), "--end-after", "600", "--listen", "60"])
            try await Self.with(pizza) {
                try await s.delivered.wait(forCount: 1, timeout: .seconds(15))
                try await dunst.waitForDisplayed(atLeast: 1)
                let screenshot = s.bus.directory.appendingPathComponent("pizza-example.png")
                try await dunst.screenshot(to: screenshot)
                try DunstTests.keep(screenshot, as: "dunst-pizza-time-example.png")
                let popup = s.delivered.elements[0].notification
                try await dunst.invokeAction(key: "clear.repeat.action", notificationID: popup)
                #expect(dunst.lastMenu.contains { $0.hasPrefix("#Stop Repeat") }, "\(dunst.lastMenu)")
                try await InteractionTests.awaitListing(s, ["pending"], "the reminder removed by Stop Repeat") {
                    !$0.contains { ($0["group"] as? String) == "request.pizza.reminder" }
                }
                // The app says so once chimed has answered its removal, a round trip after the listing changed.
                try await pizza.waitForStdout(containing: "stopped pizza.reminder")
            }

            let delivered = s.delivered.elements.count
            let manager = try await Self.start(
                s, "NotificationManager", appID: "io.chime.examples.NotificationManager",
                ["--title", "Stretch", "--in", "1", "--listen", "40"])
            try await Self.with(manager) {
                try await s.delivered.wait(forCount: delivered + 1, timeout: .seconds(15))
                let popup = s.delivered.elements[delivered].notification
                try await dunst.waitForDisplayed(atLeast: 1)
                let chose = Date()
                try await dunst.invokeAction(key: "snooze10", notificationID: popup)
                try await s.delivered.wait(forCount: delivered + 2, timeout: .seconds(20))
                #expect(Date().timeIntervalSince(chose) >= 10)
                try await dunst.waitForDisplayed(atLeast: 1)
                try await dunst.invokeAction(
                    key: "snooze60", notificationID: s.delivered.elements[delivered + 1].notification)
                #expect(dunst.lastMenu.contains { $0.hasPrefix("#Snooze for one minute") }, "\(dunst.lastMenu)")
            }
            #expect(manager.stdout.contains("snoozed 10 s: Stretch"), "\(manager.stdout)")
        }
    }
}
