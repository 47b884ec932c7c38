import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// Interaction end to end with python-dbusmock as the server: built-in verbs, app actions, categories,
/// permissions, ownership and quotas. The user's choices on a popup are the mock's ActionInvoked signals.
@Suite(.serialized) struct InteractionTests {
    /// Asks `chime ARGS --json` again (each run takes a few milliseconds) until `matches` holds.
    static func awaitListing(_ s: Session, _ arguments: [String], _ what: String, matches: ([[String: Any]]) -> Bool)
        async throws
    {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if matches(try await s.chimeJSON(arguments)) { return }
        }
        throw TestFailure(
            "chime \(arguments.joined(separator: " ")) never showed \(what); chimed said:\n\(s.chimed?.stderr.suffix(2000) ?? "")"
        )
    }

    @Test func stopRepeatEndsARepeatingItem() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "--every", "every 2 seconds", "-A", "stop-repeat=Stop Repeat", "-A", "snooze:10m=Snooze 10 min",
                "Pizza Time",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            #expect(calls.elements[0].actions == ["stop-repeat", "Stop Repeat", "snooze:10m", "Snooze 10 min"])
            let item = try #require(try await s.chimeJSON(["pending"]).first?["id"] as? Int)
            try await s.awaitDelivered(notification: 1)
            try await s.choose("stop-repeat", on: 1)
            try await s.chimed!.waitForStderr(containing: "stop-repeat: stopped its repeats")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            let history = try await s.chimeJSON(["history", "--item", "\(item)"])
            #expect(history.first?["event"] as? String == "action")
            #expect(history.first?["detail"] as? String == "stop-repeat: stopped its repeats")
            #expect(history.contains { $0["event"] as? String == "finished" && $0["detail"] as? String == "stopped" })
        }
    }

    /// The popup a snooze brought back acts on the repeating item it came from, though the snooze itself
    /// is over once it is shown: Stop Repeat on it ends the item.
    @Test func stopRepeatOnAPopupASnoozeBroughtBackEndsTheRepeatingItem() async throws {
        try await Session.run { s in
            let utc = TimeZone(identifier: "UTC")!
            let sent = try await s.chime([
                "send", "--rrule", "FREQ=HOURLY", "--dtstart",
                GroupTests.local(Date().addingTimeInterval(4), zone: utc),
                "--tz", "UTC", "-A", "stop-repeat=Stop Repeat", "-A", "snooze:1s=Snooze", "Stretch",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let item = try #require(try await s.chimeJSON(["pending"]).first?["id"] as? Int)
            let calls = s.server!.notifyCalls
            // Its first occurrence is a few whole seconds ahead (the start is written to the second).
            try await calls.wait(forCount: 1, timeout: .seconds(15))
            try await s.awaitDelivered(notification: 1)
            try await s.choose("snooze:1s", on: 1)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            #expect(calls.elements[1].replacesID == 1)
            try await s.delivered.wait("the snooze delivered") { $0.count == 2 }
            try await s.choose("stop-repeat", on: 1)
            try await s.chimed!.waitForStderr(containing: "stop-repeat: stopped its repeats")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            let history = try await s.chimeJSON(["history", "--item", "\(item)"])
            #expect(history.contains { $0["event"] as? String == "finished" && $0["detail"] as? String == "stopped" })
        }
    }

    @Test func snoozeBringsTheNotificationBackOnceWithItsActionsReplacingItsPopup() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "-A", "snooze:5s=Snooze 5 s", "-A", "open=Open", "Pizza Time", "Hot"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            try await s.awaitDelivered(notification: 1)
            let chosen = Date()
            try await s.choose("snooze:5s", on: 1)
            try await s.chimed!.waitForStderr(containing: "snooze:5s: snoozed until")
            // It waits in pending meanwhile.
            #expect(try await s.chimeJSON(["pending"]).map { $0["summary"] as? String } == ["Pizza Time"])
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            let again = calls.elements[1]
            #expect(again.received.timeIntervalSince(chosen) >= 5)
            #expect(again.summary == "Pizza Time" && again.body == "Hot")
            #expect(again.actions == calls.elements[0].actions)
            #expect(again.replacesID == 1)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
        }
    }

    @Test func anAppActionReachesTheAppAndIsKeptWhileTheAppIsGone() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Pizza")
            let events = try await app.actionEvents()
            var content = ChimeCore.NotificationContent(
                summary: "Pizza", actions: [NotificationAction(key: "order", label: "Order")])
            content.userInfo = ["table": "7"]
            let id = try await app.schedule(content)
            try await s.awaitDelivered(notification: 1)
            try await s.choose("order", on: 1)
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.itemID == id && event.action == "order" && event.userInfo == ["table": "7"])

            // The app quits; an action chosen meanwhile waits for it.
            let later = try await app.schedule(
                ChimeCore.NotificationContent(summary: "Later", actions: [.init(key: "eat", label: "Eat")]))
            try await s.awaitDelivered(notification: 2)
            app.close()
            try await Self.awaitListing(s, ["apps"], "the app gone") { apps in
                apps.contains { $0["app"] as? String == "org.example.Pizza" && $0["connected"] as? Bool == false }
            }
            try await s.choose("eat", on: 2)
            try await Self.awaitListing(s, ["history", "--item", "\(later)"], "the kept action") { history in
                history.contains { ($0["detail"] as? String)?.hasPrefix("eat: kept for org.example.Pizza") == true }
            }
            let back = try await s.app("org.example.Pizza", allowed: false)
            let kept = try await back.takeActions()
            #expect(kept.map(\.action) == ["eat"])
            #expect(kept.map(\.itemID) == [later])
            #expect(try await back.takeActions().isEmpty)
        }
    }

    @Test func theSystemQuestionAnsweredAllowThenDontAllow() async throws {
        try await Session.run { s in
            let calls = s.server!.notifyCalls
            // A new app asks: chimed shows its question and the call waits for the answer.
            let newApp = try await s.app("org.example.New", allowed: false)
            async let scheduled = newApp.schedule(ChimeCore.NotificationContent(summary: "Hello from a new app"))
            try await calls.wait(forCount: 1)
            #expect(calls.elements[0].summary == "org.example.New wants to schedule notifications")
            #expect(calls.elements[0].actions == ["allow", "Allow", "deny", "Don't Allow"])
            try await s.chimed!.waitForStderr(containing: "asking \"org.example.New wants")
            try await s.choose("allow", on: 1)
            _ = try await scheduled
            try await calls.wait(forCount: 2)
            #expect(calls.elements[1].summary == "Hello from a new app")
            let apps = try await s.chimeJSON(["apps"])
            #expect(apps.first { $0["app"] as? String == "org.example.New" }?["consent"] as? String == "allowed")

            let other = try await s.app("org.example.Nope", allowed: false)
            async let refused = other.schedule(ChimeCore.NotificationContent(summary: "Should not show"))
            try await calls.wait(forCount: 3)
            try await s.chimed!.waitForStderr(containing: "asking \"org.example.Nope wants")
            try await s.choose("deny", on: 3)
            do {
                _ = try await refused
                Issue.record("scheduling was allowed after Don't Allow")
            } catch let error as ChimeError {
                #expect(error.dbusName == "io.chime.Chime1.Error.PermissionDenied")
                #expect(error.message.hasPrefix("deniedOnSystemLevel (denied-now)"))
            }
            // Asked once: the next call is refused without a question.
            await #expect(throws: ChimeError.self) {
                try await other.schedule(ChimeCore.NotificationContent(summary: "Again"))
            }
            #expect(calls.elements.count == 3)
            // The user changes their mind.
            #expect(try await s.chime(["app", "allow", "org.example.Nope"]).status == 0)
            _ = try await other.schedule(ChimeCore.NotificationContent(summary: "Now allowed"))
            try await calls.wait(forCount: 4)
        }
    }

    @Test func aGroupQuestionWithTheAppsTextsAndOnceMeansOnce() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Quotes")
            let strategy = PermissionStrategy(
                group: .askPermission(
                    .once,
                    PermissionPrompt(
                        title: "Daily quotes?", message: "One quote every morning.", allowLabel: "Yes please",
                        denyLabel: "No thanks")),
                system: .askPermission)
            let group = TimelineGroup(
                id: "morning",
                entries: [
                    TimelineEntry(
                        id: "quote", trigger: .rule(.phrase("every day at 9:00"), timeZone: nil),
                        content: .fixed(ChimeCore.NotificationContent(summary: "Quote")))
                ])
            async let answer = app.reschedule(group, permission: strategy)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            #expect(calls.elements[0].summary == "Daily quotes?")
            #expect(calls.elements[0].actions == ["allow", "Yes please", "deny", "No thanks"])
            try await s.chimed!.waitForStderr(containing: "asking \"Daily quotes?\"")
            try await s.choose("deny", on: 1)
            do {
                _ = try await answer
                Issue.record("the reschedule was allowed after No thanks")
            } catch let error as ChimeError {
                #expect(error.message.hasPrefix("deniedOnGroupLevel (denied-now)"))
            }
            await #expect(throws: ChimeError.self) { try await app.reschedule(group, permission: strategy) }
            #expect(calls.elements.count == 1)
            #expect(try await app.authorization(group: "morning") == ("allowed", "denied-previously"))
        }
    }

    @Test func oneAppCannotSeeOrChangeAnothersItemsAndGroups() async throws {
        try await Session.run { s in
            let a = try await s.app("org.example.A")
            let b = try await s.app("org.example.B")
            let item = try await a.schedule(
                ChimeCore.NotificationContent(summary: "A's"), at: Date().addingTimeInterval(3600))
            try await a.reschedule(
                TimelineGroup(
                    id: "g",
                    entries: [
                        TimelineEntry(
                            id: "e", trigger: .at(Date().addingTimeInterval(3600)),
                            content: .fixed(ChimeCore.NotificationContent(summary: "A's group")))
                    ]))
            #expect(try await b.pending().isEmpty)
            #expect(try await b.groups().isEmpty)
            do {
                try await b.cancel(item)
                Issue.record("B cancelled A's item")
            } catch let error as ChimeError {
                // As for an item that does not exist: B learns nothing of A's.
                #expect(error.dbusName == "io.chime.Chime1.Error.NotFound")
            }
            await #expect(throws: ChimeError.self) { try await b.removeGroup("g") }
            #expect(try await a.pending().count == 2)
            // The user's tool sees both apps' and names A's group as APP/GROUP.
            #expect(try await s.chimeJSON(["pending"]).count == 2)
            #expect(try await s.chime(["remove", "org.example.A/g"]).status == 0)
            #expect(try await a.groups().isEmpty)
        }
    }

    @Test func quotasOnItemsAndOnCallsPerApp() async throws {
        try await Session.run(settings: "[limits]\nentries-per-app = 3\ncalls-per-second = 0.01\ncall-burst = 6\n") {
            s in
            let app = try await s.app("org.example.Busy")
            let far = Date().addingTimeInterval(3600)
            for n in 0..<3 { _ = try await app.schedule(ChimeCore.NotificationContent(summary: "n\(n)"), at: far) }
            do {
                _ = try await app.schedule(ChimeCore.NotificationContent(summary: "one too many"), at: far)
                Issue.record("a fourth item was accepted")
            } catch let error as ChimeError {
                #expect(error.dbusName == "io.chime.Chime1.Error.LimitsExceeded")
                #expect(error.message.contains("more than the 3 an app may have"))
            }
            // Four calls so far, one refused; two more use up the burst of six.
            _ = try await app.pending()
            _ = try await app.pending()
            do {
                _ = try await app.pending()
                Issue.record("a seventh quick call was accepted")
            } catch let error as ChimeError {
                #expect(error.dbusName == "io.chime.Chime1.Error.LimitsExceeded")
                #expect(error.message.contains("times a second"))
            }
            // The user's tool is not limited.
            #expect(try await s.chime(["send", "--in", "1h", "mine"]).status == 0)
        }
    }

    @Test func categoriesAddTheirActionsAndTheDefaultActionMapsAClick() async throws {
        try await Session.run { s in
            let app = try await pizzaFriday(
                s, first: CategoryAction(id: "stop-repeat", title: "Stop Repeat", options: [.destructive]), in: 0.5)
            let events = try await app.actionEvents()
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            #expect(
                calls.elements[0].actions == [
                    "default", "Order now", "order", "Order now", "stop-repeat", "Stop Repeat",
                ])
            // A click on the popup itself is the category's default action.
            try await s.choose("default", on: 1)
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.action == "order" && event.group == "friday" && event.entry == "pizza")
        }
    }

    /// A category named by the content (the `category` key, also the freedesktop hint) adds the app's
    /// category's actions as an entry's `category` does, for `Schedule` and for a `Reschedule` entry, and
    /// the action chosen reaches the app.
    @Test func aCategoryNamedByTheContentAddsItsActions() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Mail")
            try await app.registerCategories([
                ActionCategory(
                    id: "mail",
                    actions: [
                        CategoryAction(id: "archive", title: "Archive"), CategoryAction(id: "reply", title: "Reply"),
                    ])
            ])
            let events = try await app.actionEvents()
            let calls = s.server!.notifyCalls
            let item = try await app.schedule(ChimeCore.NotificationContent(summary: "New mail", category: "mail"))
            try await calls.wait(forCount: 1)
            #expect(calls.elements[0].actions == ["archive", "Archive", "reply", "Reply"])
            #expect(calls.elements[0].hints["category"] == .string("mail"))
            try await s.awaitDelivered(notification: 1)
            try await s.choose("reply", on: 1)
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.itemID == item && event.action == "reply")

            // A Reschedule entry without a category of its own, whose content names one.
            try await app.reschedule(
                TimelineGroup(
                    id: "inbox",
                    entries: [
                        TimelineEntry(
                            id: "digest", trigger: .at(Date().addingTimeInterval(0.3)),
                            content: .fixed(ChimeCore.NotificationContent(summary: "Mail digest", category: "mail")))
                    ]))
            try await calls.wait(forCount: 2)
            #expect(calls.elements[1].actions == ["archive", "Archive", "reply", "Reply"])
            try await s.awaitDelivered(notification: 2)
            try await s.choose("archive", on: 2)
            let second = try #require(await iterator.next())
            #expect(second.action == "archive" && second.group == "inbox" && second.entry == "digest")

            // A content category the app did not register is only the hint.
            _ = try await app.schedule(ChimeCore.NotificationContent(summary: "Other", category: "email.arrived"))
            try await calls.wait(forCount: 3)
            #expect(calls.elements[2].actions.isEmpty)
            #expect(calls.elements[2].hints["category"] == .string("email.arrived"))
        }
    }

    /// A snooze shows the notification again as it first came: with its category's actions, from the
    /// popup's button and from `chime snooze`, and with the actions added once.
    @Test func aSnoozedNotificationComesBackWithItsCategorysActions() async throws {
        try await Session.run { s in
            _ = try await pizzaFriday(s, first: CategoryAction(id: "snooze:1s", title: "Later"), in: 0.2)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            let actions = ["default", "Order now", "snooze:1s", "Later", "order", "Order now"]
            #expect(calls.elements[0].actions == actions)
            try await s.awaitDelivered(notification: 1)
            try await s.choose("snooze:1s", on: 1)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            #expect(calls.elements[1].summary == "Pizza Friday")
            #expect(calls.elements[1].actions == actions)
            #expect(calls.elements[1].replacesID == 1)
            // From the command line, by the item the popup came from (the snooze's).
            try await s.delivered.wait("the snooze delivered") { $0.count == 2 }
            let snoozed = try await s.chime(["snooze", "\(s.delivered.elements[1].item)", "1s"])
            #expect(snoozed.status == 0, "\(snoozed.stderr)")
            try await calls.wait(forCount: 3, timeout: .seconds(10))
            #expect(calls.elements[2].actions == actions)
        }
    }

    @Test func aServerWithoutActionButtonsGetsTheChoicesInTheBody() async throws {
        try await Session.run(withServer: false) { s in
            s.server = try await MockNotificationServer.start(on: s.bus, observer: s.observer, capabilities: "body")
            try await s.chimed!.waitForStderr(containing: "capabilities: body")
            #expect(try await s.chime(["send", "-A", "a=Alpha", "-A", "b=Beta", "Choose", "Which one?"]).status == 0)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            #expect(calls.elements[0].actions.isEmpty)
            #expect(
                calls.elements[0].body
                    == "Which one?\n\nChoices (this notification server shows no buttons): Alpha, Beta")
        }
    }

    @Test func theUserTurnsAnAppsGroupOffAndOnAgain() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Quotes")
            let group = TimelineGroup(
                id: "daily",
                entries: [
                    TimelineEntry(
                        id: "q", trigger: .rule(.phrase("every day at 9:00"), timeZone: nil),
                        content: .fixed(ChimeCore.NotificationContent(summary: "Quote")))
                ])
            try await app.reschedule(group)
            #expect(try await app.pending().count == 1)
            #expect(try await s.chime(["group", "disable", "daily"]).status == 0)
            #expect(try await app.pending().isEmpty)
            do {
                try await app.reschedule(group)
                Issue.record("a disabled group was rescheduled")
            } catch let error as ChimeError {
                #expect(error.message.hasPrefix("deniedOnGroupLevel (denied-previously)"))
            }
            await #expect(throws: ChimeError.self) { try await app.setGroupEnabled("daily", true) }
            #expect(try await s.chime(["group", "enable", "daily"]).status == 0)
            #expect(try await app.pending().count == 1)
        }
    }

    @Test func statusNamesTheServerAndItsCapabilities() async throws {
        try await Session.run { s in
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            let result = try await s.chime(["status", "--json"])
            #expect(result.status == 0)
            let status = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            #expect(status?["server-name"] as? String == "mock-notify")
            #expect((status?["capabilities"] as? [String])?.contains("actions") == true)
            #expect(status?["pending"] as? Int == 0)
        }
    }
}

/// The rest of interaction: group-file commands, a locked session, inline replies, server quirks, the
/// CLI's snooze, Skip Next, and callers of another user.
@Suite(.serialized) struct MoreInteractionTests {
    @Test func aGroupFileActionRunsItsCommand() async throws {
        let marker = FileManager.default.temporaryDirectory.appendingPathComponent("chime-ordered-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: marker) }
        let file = """
            [[entry]]
            id = "pizza"
            at = "\(GroupTests.local(Date().addingTimeInterval(1.5), zone: TimeZone(identifier: "Europe/Berlin")!))"
            summary = "Pizza Time"
            category = "pizza"

            [category.pizza]
            [[category.pizza.action]]
            id = "order"
            title = "Order"
            run = ["touch", "\(marker.path)"]
            """
        try await Session.run(groups: ["friday.toml": file]) { s in
            try await s.awaitDelivered(notification: 1)
            #expect((try await s.server!.notifyCalls.element(0)).actions == ["order", "Order"])
            try await s.choose("order", on: 1)
            try await s.chimed!.waitForStderr(containing: "order: ran touch")
            #expect(FileManager.default.fileExists(atPath: marker.path))
        }
    }

    @Test func anActionNeedingAuthenticationWaitsForTheUnlock() async throws {
        try await Session.run(startChimed: false) { s in
            let logind = try ManagedProcess(
                "/usr/bin/python3", ["-m", "dbusmock", "--template", "logind"],
                environment: ["DBUS_SYSTEM_BUS_ADDRESS": s.bus.address], directory: s.bus.directory)
            s.extraProcesses.append(logind)
            try await s.bus.waitForName("org.freedesktop.login1", using: s.observer)
            func logindCall(_ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue])
                async throws
            {
                _ = try await s.observer.call(
                    destination: "org.freedesktop.login1", path: path, interface: interface, member: member, body)
            }
            try await logindCall(
                "/org/freedesktop/login1", "org.freedesktop.DBus.Mock", "AddSession",
                [.string("c1"), .string("seat0"), .uint32(getuid()), .string("me"), .boolean(true)])
            let session: DBusObjectPath = "/org/freedesktop/login1/session/c1"
            try await logindCall(session, "org.freedesktop.login1.Session", "SetLockedHint", [.boolean(true)])
            s.chimedEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = s.bus.address
            s.chimed = try await s.startChimed()
            try await s.chimed!.waitForStderr(containing: "watching whether session")
            let app = try await s.app("org.example.Bank")
            try await app.registerCategories([
                ActionCategory(
                    id: "pay", actions: [CategoryAction(id: "pay", title: "Pay", options: [.authenticationRequired])])
            ])
            let events = try await app.actionEvents()
            try await app.reschedule(
                oneEntry(group: "bills", entry: "rent", in: 0.5, summary: "Rent is due", category: "pay"))
            try await s.awaitDelivered(notification: 1)
            try await s.choose("pay", on: 1)
            try await s.chimed!.waitForStderr(containing: "action pay needs the session unlocked; it waits")
            try await logindCall(session, "org.freedesktop.login1.Session", "SetLockedHint", [.boolean(false)])
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.action == "pay" && event.group == "bills")
        }
    }

    @Test func aTextInputActionIsAnInlineReplyWhereTheServerHasOne() async throws {
        try await Session.run(capabilities: "actions body inline-reply") { s in
            let app = try await s.app("org.example.Chat")
            try await app.registerCategories([
                ActionCategory(
                    id: "message", actions: [CategoryAction(id: "reply", title: "Reply", options: [.textInput])])
            ])
            let events = try await app.actionEvents()
            try await app.reschedule(
                oneEntry(group: "chat", entry: "ping", in: 0.5, summary: "Sam: lunch?", category: "message"))
            try await s.awaitDelivered(notification: 1)
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(call.actions == ["inline-reply", "Reply"])
            #expect(call.hints["x-kde-reply-placeholder-text"] == .string("Reply"))
            try await s.serverEmits("NotificationReplied", "us", [.uint32(1), .string("yes, 12:30")])
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.action == "reply" && event.userInfo["reply"] == "yes, 12:30")
        }
    }

    @Test func withoutInlineRepliesATextInputActionIsLeftOutAndSaidSo() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Chat")
            try await app.registerCategories([
                ActionCategory(
                    id: "message",
                    actions: [
                        CategoryAction(id: "reply", title: "Reply", options: [.textInput]),
                        CategoryAction(id: "read", title: "Mark read"),
                    ])
            ])
            let id = try await app.schedule(
                ChimeCore.NotificationContent(summary: "Sam: lunch?"),
                trigger: TriggerWire(at: Date().addingTimeInterval(0.3)))
            _ = id
            try await app.reschedule(
                oneEntry(group: "chat", entry: "ping", in: 0.5, summary: "Sam: dinner?", category: "message"))
            try await s.awaitDelivered(notification: 2)
            #expect((try await s.server!.notifyCalls.element(1)).actions == ["read", "Mark read"])
            let history = try await s.chimeJSON(["history", "--group", "org.example.Chat/chat"])
            let delivered = try #require(history.first { $0["event"] as? String == "delivered" })
            #expect((delivered["detail"] as? String)?.contains("Reply: the server takes no typed reply") == true)
        }
    }

    @Test func chimeSnoozeClosesThePopupAndTheCloseIsRecordedAsChimedsDespiteTheMocksCode() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "--print-id", "-A", "open=Open", "Tea", "Steeped"])
            #expect(sent.status == 0)
            let item = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.awaitDelivered(notification: 1)
            let snoozed = try await s.chime(["snooze", "\(item)", "2s"])
            #expect(snoozed.status == 0, "\(snoozed.stderr)")
            let snooze = try #require(UInt64(snoozed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            // The mock reports the close as expired (1); chimed knows it asked.
            try await s.server!.closeCalls.wait(forCount: 1)
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(item)"], "the close") { history in
                history.contains {
                    $0["event"] as? String == "closed"
                        && $0["detail"] as? String == "closed by a call to CloseNotification"
                }
            }
            // The snooze came back (it is the user's, so no Delivered reaches anyone once chime exited).
            try await s.server!.notifyCalls.wait(forCount: 2, timeout: .seconds(10))
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(snooze)"], "the snooze delivered") {
                $0.contains { $0["event"] as? String == "delivered" }
            }
            let again = try #require(s.server!.notifyCalls.elements.last)
            #expect(again.summary == "Tea" && again.actions == ["open", "Open"] && again.replacesID == 1)
        }
    }

    @Test func skipNextSkipsOneOccurrence() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "--every", "every 2 seconds", "-A", "skip-next=Skip the next one", "Water break",
            ])
            #expect(sent.status == 0)
            try await s.awaitDelivered(notification: 1)
            let before = try #require(GroupTests.date(try await s.chimeJSON(["pending"]).first?["at"] as? String))
            try await s.choose("skip-next", on: 1)
            try await s.chimed!.waitForStderr(containing: "skip-next: skipped the next occurrence")
            let after = try #require(GroupTests.date(try await s.chimeJSON(["pending"]).first?["at"] as? String))
            #expect(after.timeIntervalSince(before) >= 2)
        }
    }

    @Test func aCallerOfAnotherUserIsRefused() async throws {
        try await Session.run(allowOtherUsers: true) { s in
            let intruder = try ManagedProcess(
                "/usr/bin/setpriv",
                [
                    "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/gdbus", "call", "--address",
                    s.bus.address, "--dest", "io.chime.Chime1", "--object-path", "/io/chime/Chime1", "--method",
                    "io.chime.Chime1.ListPending", "{}",
                ], directory: s.bus.directory)
            let status = await intruder.waitForExit()
            #expect(status != 0)
            #expect(intruder.stderr.contains("org.freedesktop.DBus.Error.AccessDenied"), "\(intruder.stderr)")
            #expect(intruder.stderr.contains("calls from user 65534 are refused"))
            // chimed still serves its own user.
            #expect(try await s.chime(["pending"]).status == 0)
        }
    }
}

/// What goes to an app beyond its actions, and the user's remaining switches.
@Suite(.serialized) struct AppEventTests {
    @Test func aForegroundActionActivatesTheAppThroughItsDesktopEntryWhenItIsNotRunning() async throws {
        try await Session.run { s in
            // The app's desktop side: org.freedesktop.Application at its desktop id, as D-Bus activation gives.
            let desktop = try await s.bus.connect()
            defer { desktop.close() }
            let activations = Recorder<[DBusValue]>()
            try desktop.export(
                [
                    DBusInterface(
                        "org.freedesktop.Application",
                        methods: [
                            DBusMethod(
                                "ActivateAction",
                                inputs: [
                                    DBusArgument("action_name", .string), DBusArgument("parameter", .array(.variant)),
                                    DBusArgument("platform_data", .dictionary(key: .string, value: .variant)),
                                ]
                            ) { call in
                                activations.append(call.arguments)
                                return []
                            }
                        ])
                ], at: "/org/example/Pizza/Desktop")
            try await desktop.requestName("org.example.Pizza.Desktop")

            let app = try await s.app("org.example.Pizza")
            try await app.registerCategories([
                ActionCategory(
                    id: "pizza", actions: [CategoryAction(id: "order", title: "Order", options: [.foreground])])
            ])
            var content = ChimeCore.NotificationContent(summary: "Pizza Time")
            // A desktop file of the app's own: its id and a dot first (docs/security.md).
            content.desktopEntry = "org.example.Pizza.Desktop"
            let id = try await app.reschedule(
                TimelineGroup(
                    id: "friday",
                    entries: [
                        TimelineEntry(
                            id: "pizza", trigger: .at(Date().addingTimeInterval(0.5)), content: .fixed(content),
                            category: "pizza")
                    ]))
            _ = id
            try await s.awaitDelivered(notification: 1)
            #expect(
                (try await s.server!.notifyCalls.element(0)).hints["desktop-entry"]
                    == .string("org.example.Pizza.Desktop"))
            app.close()
            try await InteractionTests.awaitListing(s, ["apps"], "the app gone") { apps in
                apps.contains { $0["app"] as? String == "org.example.Pizza" && $0["connected"] as? Bool == false }
            }
            try await s.serverEmits("ActivationToken", "us", [.uint32(1), .string("token-42")])
            try await s.choose("order", on: 1)
            try await activations.wait(forCount: 1)
            let call = activations.elements[0]
            #expect(call[0] == .string("order"))
            guard case .dictionary(_, _, let platform) = call[2] else {
                Issue.record("no platform data")
                return
            }
            #expect(
                platform.contains { $0.key == .string("activation-token") && $0.value == .variant(.string("token-42")) }
            )
        }
    }

    @Test func theAppHearsOfItsNotificationClosingAndGetsTheActivationToken() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Chat")
            let closed = try await app.closedEvents()
            let actions = try await app.actionEvents()
            let first = try await app.schedule(
                ChimeCore.NotificationContent(summary: "One", actions: [NotificationAction(key: "open", label: "Open")])
            )
            try await s.awaitDelivered(notification: 1)
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(2)])
            var closedIterator = closed.makeAsyncIterator()
            let event = try #require(await closedIterator.next())
            #expect(event.itemID == first && event.reason == "dismissed by the user")

            _ = try await app.schedule(
                ChimeCore.NotificationContent(summary: "Two", actions: [NotificationAction(key: "open", label: "Open")])
            )
            try await s.awaitDelivered(notification: 2)
            try await s.serverEmits("ActivationToken", "us", [.uint32(2), .string("xdg-token")])
            try await s.choose("open", on: 2)
            var actionIterator = actions.makeAsyncIterator()
            let action = try #require(await actionIterator.next())
            #expect(action.userInfo["activation-token"] == "xdg-token")
        }
    }

    @Test func withTwoButtonsACategoryShowsItsMinimalActions() async throws {
        try await Session.run(settings: "[delivery]\nmax-actions = 2\n") { s in
            let app = try await s.app("org.example.Mail")
            try await app.registerCategories([
                ActionCategory(
                    id: "mail",
                    actions: [
                        CategoryAction(id: "reply", title: "Reply"), CategoryAction(id: "archive", title: "Archive"),
                        CategoryAction(id: "spam", title: "Spam", options: [.destructive]),
                    ], minimalActions: ["archive"])
            ])
            try await app.reschedule(
                oneEntry(group: "inbox", entry: "new", in: 0.5, summary: "New mail", category: "mail"))
            try await s.awaitDelivered(notification: 1)
            #expect((try await s.server!.notifyCalls.element(0)).actions == ["archive", "Archive"])
        }
    }

    @Test func theUserDeniesAnAppAndResetsItSoItIsAskedAgain() async throws {
        try await Session.run { s in
            #expect(try await s.chime(["app", "deny", "org.example.Nag"]).status == 0)
            let nag = try await s.app("org.example.Nag", allowed: false)
            do {
                _ = try await nag.schedule(ChimeCore.NotificationContent(summary: "Buy now"))
                Issue.record("a denied app scheduled")
            } catch let error as ChimeError {
                #expect(error.message.hasPrefix("deniedOnSystemLevel (denied-previously)"))
            }
            #expect(s.server!.notifyCalls.elements.isEmpty)
            #expect(try await s.chime(["app", "reset", "org.example.Nag"]).status == 0)
            async let asked = nag.schedule(ChimeCore.NotificationContent(summary: "Buy now"))
            try await s.server!.notifyCalls.wait(forCount: 1)
            #expect(
                (try await s.server!.notifyCalls.element(0)).summary
                    == "org.example.Nag wants to schedule notifications")
            try await s.chimed!.waitForStderr(containing: "asking \"org.example.Nag wants")
            try await s.choose("deny", on: 1)
            do {
                _ = try await asked
                Issue.record("scheduling went through after Don't Allow")
            } catch let error as ChimeError {
                #expect(error.message.hasPrefix("deniedOnSystemLevel (denied-now)"))
            }
            let apps = try await s.chimeJSON(["apps"])
            #expect(apps.first { $0["app"] as? String == "org.example.Nag" }?["consent"] as? String == "denied")
        }
    }
}

/// A group with one one-off entry `seconds` from now, showing `summary` with the actions of `category`.
/// The app org.example.Pizza with its category "pizza" (`first`, then "Order now", the default action) and
/// its group "friday" of one entry, "Pizza Friday", of that category, due in `seconds`.
func pizzaFriday(_ s: Session, first: CategoryAction, in seconds: TimeInterval) async throws -> ChimeClient {
    let app = try await s.app("org.example.Pizza")
    try await app.registerCategories([
        ActionCategory(
            id: "pizza",
            actions: [first, CategoryAction(id: "order", title: "Order now", options: [.foreground])],
            defaultAction: "order")
    ])
    try await app.reschedule(
        oneEntry(group: "friday", entry: "pizza", in: seconds, summary: "Pizza Friday", category: "pizza"))
    return app
}

func oneEntry(group: String, entry: String, in seconds: TimeInterval, summary: String, category: String)
    -> TimelineGroup
{
    TimelineGroup(
        id: group,
        entries: [
            TimelineEntry(
                id: entry, trigger: .at(Date().addingTimeInterval(seconds)),
                content: .fixed(ChimeCore.NotificationContent(summary: summary)), category: category)
        ])
}
