import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// `chime send`'s notify-send flags, each checked where it arrives: at the notification server.
@Suite(.serialized) struct SendFlagTests {
    @Test func everyFieldArrivesIntact() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "-u", "critical", "-t", "5000", "-a", "myapp", "-i", "dialog-information", "-c",
                "im.received", "-h", "string:x-k:v", "-A", "ok=OK", "--in", "1s", "S", "B",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            try await s.awaitDelivered(notification: 1)
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(call.appName == "myapp" && call.summary == "S" && call.body == "B")
            #expect(call.arguments[2].unwrappingVariant == .string("dialog-information"))
            #expect(call.expireTimeout == 5000)
            #expect(call.actions == ["ok", "OK"])
            #expect(call.hints["urgency"] == .byte(2))
            #expect(call.hints["category"] == .string("im.received"))
            #expect(call.hints["x-k"] == .string("v"))
        }
    }

    @Test func hintsOfEveryTypeTransientPrintIDAndReplaceID() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "-p", "-e", "-r", "41", "-h", "int:value:50", "-h", "double:x-d:0.5", "-h", "byte:x-b:7",
                "-h", "boolean:x-flag:true", "Volume",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("delivered") { $0.contains { $0.item == id } }
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(call.replacesID == 41)
            #expect(call.hints["transient"] == .boolean(true))
            #expect(call.hints["value"] == .int32(50))
            #expect(call.hints["x-d"] == .double(0.5))
            #expect(call.hints["x-b"] == .byte(7))
            #expect(call.hints["x-flag"] == .boolean(true))
        }
    }

    @Test func theHintsChimedHasFieldsForReachTheServerAndTheOptionsWin() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "-h", "string:desktop-entry:org.gnome.Calendar", "-h", "string:sound-name:message-new-instant",
                "-h", "byte:urgency:0", "-h", "string:category:x.first", "Meeting",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            try await s.awaitDelivered(notification: 1)
            let hints = (try await s.server!.notifyCalls.element(0)).hints
            #expect(hints["desktop-entry"] == .string("org.gnome.Calendar"))
            #expect(hints["sound-name"] == .string("message-new-instant"))
            #expect(hints["urgency"] == .byte(0) && hints["category"] == .string("x.first"))
            let both = try await s.chime([
                "send", "-h", "byte:urgency:0", "-u", "critical", "-h", "string:category:a", "-c", "b", "x",
            ])
            #expect(both.status == 0, "\(both.stderr)")
            try await s.awaitDelivered(notification: 2)
            let second = (try await s.server!.notifyCalls.element(1)).hints
            #expect(second["urgency"] == .byte(2) && second["category"] == .string("b"))
        }
    }

    @Test(arguments: [
        (["send", "-h", "int:category:3", "x"], "-h: the category hint is a string: string:category:VALUE"),
        (["send", "-h", "byte:urgency:7", "x"], "-h: the urgency hint is a byte 0, 1 or 2"),
        (["send", "-h", "nope", "x"], "-h: the hint \"nope\" is not TYPE:NAME:VALUE"),
        (["send", "-h", "colour:x:red", "x"], "-h: the hint type \"colour\" is not one of"),
        (["send", "-h", "int:x:many", "x"], "-h: the hint value \"many\" is not a int"),
    ])
    func badHintsAreRefused(arguments: [String], message: String) async throws {
        try await Session.run { s in
            let result = try await s.chime(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    @Test func waitPrintsTheChosenActionAndEndsWhenTheNotificationCloses() async throws {
        try await Session.run { s in
            let waiting = try ManagedProcess(
                Binaries.chime, ["send", "-w", "-A", "yes=Yes", "-A", "no=No", "Deploy?"],
                environment: s.bus.environment, directory: s.bus.directory)
            try await s.awaitDelivered(notification: 1)
            try await s.choose("yes", on: 1)
            try await waiting.waitForStdout(containing: "yes\n")
            #expect(waiting.hasExited == false)
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(2)])
            #expect(await waiting.waitForExit() == 0)
            #expect(waiting.stdout == "yes\n")
        }
    }

    /// With escalation an expiry is no answer: --wait goes on to the next showing, and ends after the last.
    @Test func waitFollowsAnEscalationToItsLastShowing() async throws {
        try await Session.run { s in
            let waiting = try ManagedProcess(
                Binaries.chime,
                ["send", "-w", "--escalate-every", "1m", "--escalate-times", "1", "-A", "ok=OK", "Pill"],
                environment: s.bus.environment, directory: s.bus.directory)
            try await s.awaitDelivered(notification: 1)
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(1)])
            try s.setClock(offset: 61)
            try await s.server!.notifyCalls.wait(forCount: 2)
            #expect(waiting.hasExited == false, "the first expiry did not end the wait")
            try await s.choose("ok", on: 1)
            try await waiting.waitForStdout(containing: "ok\n")
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(1)])
            #expect(await waiting.waitForExit() == 0)
        }
    }

    @Test func groupPutsTheItemInTheGroupUntilTheGroupIsRescheduled() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "--group", "standup", "-p", "--in", "1h", "Bring the notes"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(Int(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let daily = try await s.chime(["send", "--group", "standup", "--every", "every day at 9:00", "Stand-up"])
            #expect(daily.status == 0, "\(daily.stderr)")
            #expect(try await s.chime(["send", "--in", "1h", "on its own"]).status == 0)
            let listed = try await s.chimeJSON(["pending", "--group", "standup"])
            #expect(Set(listed.compactMap { $0["summary"] as? String }) == ["Bring the notes", "Stand-up"])
            let first = try #require(listed.first { $0["id"] as? Int == id })
            #expect(first["group"] as? String == "standup" && first["entry"] as? String == "item-\(id)")
            let groups = try await s.chimeJSON(["groups"])
            #expect(groups.count == 1)
            #expect(groups.first?["id"] as? String == "standup" && groups.first?["pending"] as? Int == 2)
            #expect(groups.first?["source"] as? String == "api")

            // Stored before the reply: a restart keeps it in its group.
            s.chimed!.kill(SIGKILL)
            _ = await s.chimed!.waitForExit()
            s.chimed = try await s.startChimed()
            #expect(try await s.chimeJSON(["pending", "--group", "standup"]).count == 2)

            // Rescheduling the group replaces its whole timeline, the sent items included.
            let file = s.bus.directory.appendingPathComponent("standup.toml").path
            try """
            [[entry]]
            id = "morning"
            every = "every day at 9:30"
            summary = "Stand-up at half past"
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let changes = try await s.chimeJSON(["reschedule", "--file", file])
            #expect(
                Set(changes.compactMap { change in (change["entry"] as? String).map { "\($0) \(change["change"]!)" } })
                    == ["morning added", "item-\(id) removed", "item-\(id + 1) removed"])
            #expect(
                try await s.chimeJSON(["pending", "--group", "standup"]).compactMap { $0["entry"] as? String } == [
                    "morning"
                ])

            // Joining again adds to that timeline; removing the group takes everything it has.
            #expect(try await s.chime(["send", "--group", "standup", "--in", "2h", "One more"]).status == 0)
            #expect(try await s.chimeJSON(["pending", "--group", "standup"]).count == 2)
            #expect(try await s.chime(["remove", "standup"]).status == 0)
            #expect(try await s.chimeJSON(["pending"]).compactMap { $0["summary"] as? String } == ["on its own"])
        }
    }

    @Test func anItemSentToAGroupIsDeliveredAsTheGroupsEntry() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "--group", "tea", "-p", "Tea is ready"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("delivered") { $0.contains { $0.item == id } }
            try await s.server!.notifyCalls.wait(forCount: 1)
            #expect(s.server!.notifyCalls.elements.map(\.summary) == ["Tea is ready"])
            let history = try await s.chimeJSON(["history", "--group", "tea"])
            #expect(
                history.contains { $0["event"] as? String == "delivered" && $0["entry"] as? String == "item-\(id)" })
        }
    }

    @Test func anAppsItemJoinsTheAppsOwnGroup() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Tea")
            let id = try await app.schedule(
                ChimeCore.NotificationContent(summary: "Steep"),
                trigger: TriggerWire(at: Date().addingTimeInterval(3600), group: "kettle"))
            let pending = try await app.pending(group: "kettle")
            #expect(pending.map(\.id) == [id] && pending.first?.entry == "item-\(id)")
            let groups = try await s.chimeJSON(["groups"])
            #expect(
                groups.first?["owner"] as? String == "org.example.Tea" && groups.first?["id"] as? String == "kettle")
            #expect(try await s.chime(["group", "disable", "org.example.Tea/kettle"]).status == 0)
            do {
                _ = try await app.schedule(
                    ChimeCore.NotificationContent(summary: "Again"), trigger: TriggerWire(group: "kettle"))
                Issue.record("an item joined a group the user turned off")
            } catch let error as ChimeError {
                #expect(error.message.hasPrefix("deniedOnGroupLevel"), "\(error.message)")
            }
            await #expect(throws: ChimeError.self) {
                _ = try await app.schedule(
                    ChimeCore.NotificationContent(summary: "x"), trigger: TriggerWire(group: "no/slash"))
            }
        }
    }

    @Test(arguments: [
        (["send", "--group", "my group", "x"], "--group: the group id \"my group\" contains \" \""),
        (["send", "--group", "daily", "x"], "the group daily comes from its file in the groups folder"),
        (["send", "--group", "off", "x"], "the group off is turned off; turn it on with `chime group enable off`"),
    ])
    func groupsThatCannotTakeTheItemAreRefused(arguments: [String], message: String) async throws {
        let daily = """
            [[entry]]
            id = "quote"
            every = "every day at 9:00"
            summary = "Quote"
            """
        try await Session.run(groups: ["daily.toml": daily]) { s in
            #expect(try await s.chime(["send", "--group", "off", "--in", "1h", "first"]).status == 0)
            #expect(try await s.chime(["group", "disable", "off"]).status == 0)
            let result = try await s.chime(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(try await s.chimeJSON(["pending", "--group", "daily"]).count == 1)
        }
    }

    @Test func categoryAlsoAddsTheActionsOfTheUsersCategoryOfThatID() async throws {
        let menu = """
            [[entry]]
            id = "friday"
            every = "every friday at 12:00"
            summary = "Pizza Friday"
            category = "pizza"

            [category.pizza]
            default = "order"

            [[category.pizza.action]]
            id = "stop-repeat"
            title = "Stop Repeat"
            options = ["destructive"]

            [[category.pizza.action]]
            id = "order"
            title = "Order"
            run = ["true"]
            """
        try await Session.run(groups: ["menu.toml": menu]) { s in
            #expect(try await s.chime(["send", "-c", "pizza", "-A", "later=Later", "Pizza Time"]).status == 0)
            try await s.awaitDelivered(notification: 1)
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(
                call.actions == ["default", "Order", "later", "Later", "order", "Order", "stop-repeat", "Stop Repeat"])
            #expect(call.hints["category"] == .string("pizza"))
            // The category's own actions work as on a group's entry: a click is its default action.
            try await s.choose("default", on: 1)
            try await s.chimed!.waitForStderr(containing: "order: ran true")
            // Without such a category it is the hint alone.
            #expect(try await s.chime(["send", "-c", "email.arrived", "Mail"]).status == 0)
            try await s.awaitDelivered(notification: 2)
            let plain = (try await s.server!.notifyCalls.element(1))
            #expect(plain.actions.isEmpty && plain.hints["category"] == .string("email.arrived"))
        }
    }

    @Test func anAppsItemGetsTheActionsOfTheCategoryItRegistered() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Pizza")
            try await app.registerCategories([
                ActionCategory(
                    id: "pizza", actions: [CategoryAction(id: "order", title: "Order now")])
            ])
            let events = try await app.actionEvents()
            var content = ChimeCore.NotificationContent(summary: "Pizza Time")
            content.category = "pizza"
            let id = try await app.schedule(content, trigger: TriggerWire())
            try await s.awaitDelivered(notification: 1)
            #expect((try await s.server!.notifyCalls.element(0)).actions == ["order", "Order now"])
            try await s.choose("order", on: 1)
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.action == "order" && event.itemID == id)
        }
    }
}
