import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// An app manages what it has scheduled: lists it with its content and trigger, and cancels all of it.
@Suite(.serialized) struct ManageItemsTests {
    @Test func listPendingWithContentGivesEachItemsContentAndTrigger() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Plants")
            let at = Date(timeIntervalSince1970: 4_102_444_800)
            var content = ChimeCore.NotificationContent(
                summary: "Water the plants", body: "The ferns first", urgency: .critical,
                actions: [NotificationAction(key: "done", label: "Done")], category: "chores")
            content.userInfo = ["plant": "fern", "room": "kitchen"]
            let once = try await app.schedule(content, at: at)
            let until = Date(timeIntervalSince1970: 4_070_908_800)
            let repeating = try await app.schedule(
                ChimeCore.NotificationContent(summary: "Stand up"),
                trigger: TriggerWire(
                    rule: .rrule("FREQ=DAILY;BYHOUR=10;BYMINUTE=0", dtstart: nil), timeZone: "Europe/Berlin",
                    until: until, count: 12))

            let listed = try await app.pending(content: true)
            let first = try #require(listed.first { $0.id == once })
            #expect(first.content == content)
            #expect(first.trigger == TriggerWire(at: at))
            let second = try #require(listed.first { $0.id == repeating })
            #expect(second.content == ChimeCore.NotificationContent(summary: "Stand up"))
            #expect(
                second.trigger
                    == TriggerWire(
                        rule: .rrule("FREQ=DAILY;BYHOUR=10;BYMINUTE=0", dtstart: nil), timeZone: "Europe/Berlin",
                        until: until, count: 12))
            // Without the option, neither.
            #expect(try await app.pending().allSatisfy { $0.content == nil && $0.trigger == nil })

            // On the wire: the keys, and a refused value names the key.
            let reply = try await s.observer.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                member: "ListPending", [BusAPITests.record(["content": .boolean(true)])])
            #expect(reply.count == 1)
            do {
                _ = try await s.observer.call(
                    destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                    member: "ListPending", [BusAPITests.record(["content": .string("yes")])])
                Issue.record("a string for content was accepted")
            } catch let error as DBusError {
                #expect(error.name == "io.chime.Chime1.Error.InvalidArgument")
                #expect(error.message.contains("content"))
            }
        }
    }

    /// With content, a page holds the soonest 256 items and says where the next one starts; ChimeKit
    /// follows the pages, in order, to the last item.
    @Test func listPendingWithContentComesInPagesOf256() async throws {
        try await Session.run { s in
            let raw = try await s.appConnection("org.example.Many")
            let start = Int64((Date().timeIntervalSince1970 + 3600) * 1_000_000)
            let entries = (0..<300).map { index in
                ListingIsolationTests.entry(
                    "e\(index)", summary: "Item \(index)", trigger: ["at": .int64(start + Int64(index) * 1_000_000)])
            }
            try await ListingIsolationTests.reschedule(raw, group: "many", entries: entries)
            let first = try await HostileAppTests.call(
                raw, "ListPending", [BusAPITests.record(["content": .boolean(true)])])
            guard case .array(_, let records)? = first.first else {
                Issue.record("ListPending gave no list")
                return
            }
            #expect(records.count == 257)
            #expect(BusAPITests.fields(records.last).keys.sorted() == ["next-page"])
            #expect(BusAPITests.fields(records[255])["summary"] == .string("Item 255"))
            // The same app through ChimeKit.
            try await raw.releaseName("org.example.Many")
            let app = try await s.app("org.example.Many", allowed: false)
            #expect(try await app.pending().count == 300)
            let listed = try await app.pending(content: true)
            #expect(listed.map(\.content?.summary) == (0..<300).map { "Item \($0)" })
            #expect(try await app.pending(content: true, limit: 10).map(\.entry) == (0..<10).map { "e\($0)" })
        }
    }
}

extension ManageItemsTests {
    /// CancelAll takes an app's items on their own, its snoozes and its groups, and nothing of another
    /// app's; with a group, that group's only. History says `cancelled` and `removed`.
    @Test func cancelAllRemovesTheCallersItemsAndGroupsOnly() async throws {
        try await Session.run { s in
            let mine = try await s.app("org.example.Mine")
            let other = try await s.app("org.example.Other")
            let later = Date().addingTimeInterval(3600)
            let single = try await mine.schedule(ChimeCore.NotificationContent(summary: "Mine alone"), at: later)
            let snooze = try await mine.snooze(single, seconds: 600)
            for id in ["a", "b"] {
                try await mine.reschedule(
                    TimelineGroup(
                        id: "group-\(id)",
                        entries: [
                            TimelineEntry(
                                id: "e", trigger: .rule(.phrase("every day at 9:00"), timeZone: nil),
                                content: .fixed(ChimeCore.NotificationContent(summary: "Mine \(id)")))
                        ]))
            }
            let theirs = try await other.schedule(ChimeCore.NotificationContent(summary: "Theirs"), at: later)
            try await other.reschedule(
                TimelineGroup(
                    id: "group-a",
                    entries: [
                        TimelineEntry(
                            id: "e", trigger: .at(later),
                            content: .fixed(ChimeCore.NotificationContent(summary: "Theirs a")))
                    ]))
            #expect(try await mine.pending().count == 4)

            // One group only.
            #expect(try await mine.cancelAll(group: "group-b") == 1)
            #expect(Set(try await mine.pending().map(\.summary)) == ["Mine alone", "Mine a"])
            #expect(try await mine.groups().map(\.id) == ["group-a"])

            // Everything else of this app's.
            #expect(try await mine.cancelAll() == 3)
            #expect(try await mine.pending().isEmpty)
            #expect(try await mine.groups().isEmpty)
            #expect(try await mine.cancelAll() == 0)

            // The other app's are untouched.
            #expect(Set(try await other.pending().map(\.summary)) == ["Theirs", "Theirs a"])
            #expect(try await other.groups().map(\.id) == ["group-a"])
            #expect(try await other.pending().contains { $0.id == theirs })

            let history = try await mine.history()
            #expect(history.contains { $0.itemID == single && $0.event == "cancelled" })
            #expect(history.contains { $0.itemID == snooze && $0.event == "cancelled" })
            #expect(history.filter { $0.event == "removed" }.count == 2)
        }
    }

    /// The user's `chime cancel --all` leaves a group file's group alone, and refuses to name it.
    @Test func cancelAllLeavesGroupFilesAlone() async throws {
        try await Session.run(
            groups: ["plants.toml": "[[entry]]\nid = \"water\"\nevery = \"every day at 9:00\"\nsummary = \"Water\"\n"]
        ) { s in
            try await InteractionTests.awaitListing(s, ["pending"], "the group file's entry") { $0.count == 1 }
            #expect(try await s.chime(["send", "--in", "1h", "Mine"]).status == 0)
            let all = try await s.chime(["cancel", "--all"])
            #expect(all.status == 0 && all.stdout == "cancelled 1 item\n", "\(all)")
            #expect(try await s.chimeJSON(["pending"]).compactMap { $0["summary"] as? String } == ["Water"])
            let named = try await s.chime(["cancel", "--all", "--group", "plants"])
            #expect(named.status == 2 && named.stderr.contains("comes from its file"), "\(named)")
        }
    }
}

extension ManageItemsTests {
    /// ListDelivered lists an app's own notifications that are shown now, newest first; CloseDelivered
    /// closes its own (the server's NotificationClosed comes back to the app), and ignores unknown ids and
    /// another app's alike.
    @Test func anAppListsAndClosesItsShownNotifications() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Mail")
            let other = try await s.app("org.example.Other")
            let closed = try await app.closedEvents()
            var items: [UInt64] = []
            for (index, summary) in ["One", "Two", "Three"].enumerated() {
                var content = ChimeCore.NotificationContent(summary: summary, body: "Body \(summary)")
                content.userInfo = ["n": .string("\(index)")]
                items.append(try await app.schedule(content))
                try await s.awaitDelivered(notification: UInt32(index + 1))
            }
            let theirs = try await other.schedule(ChimeCore.NotificationContent(summary: "Theirs"))
            try await s.awaitDelivered(notification: 4)

            let shown = try await app.delivered()
            #expect(shown.map(\.notificationID) == [3, 2, 1])
            #expect(shown.map(\.itemID) == items.reversed())
            #expect(shown.map(\.content.summary) == ["Three", "Two", "One"])
            #expect(shown.last?.content.userInfo == ["n": "0"] && shown.last?.content.body == "Body One")
            #expect(shown.allSatisfy { abs($0.deliveredAt.timeIntervalSinceNow) < 60 })
            #expect(shown[0].deliveredAt >= shown[2].deliveredAt)
            let othersShown = try await other.delivered()
            #expect(othersShown.map(\.notificationID) == [4] && othersShown.first?.itemID == theirs)

            // Another app's notification is ignored as an unknown id is: it stays (the last check below).
            try await app.closeDelivered([4])

            // Its own, and an id that is not shown (ignored).
            try await app.closeDelivered([2, 999])
            var events = closed.makeAsyncIterator()
            let first = try #require(await events.next())
            #expect(first.itemID == items[1] && first.reason == "closed by a call to CloseNotification")
            #expect(try await app.delivered().map(\.notificationID) == [3, 1])

            // One the user dismissed on the server is no longer listed.
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(3), .uint32(2)])
            let dismissed = try #require(await events.next())
            #expect(dismissed.itemID == items[2] && dismissed.reason == "dismissed by the user")
            #expect(try await app.delivered().map(\.notificationID) == [1])

            try await app.closeAllDelivered()
            let last = try #require(await events.next())
            #expect(last.itemID == items[0])
            #expect(try await app.delivered().isEmpty)
            #expect(s.server!.closeCalls.elements.sorted() == [1, 2])
            // The other app's is still shown.
            #expect(try await other.delivered().map(\.notificationID) == [4])
        }
    }

    /// The options of CloseDelivered and ListDelivered are checked, with the key named.
    @Test func closeDeliveredOptionsAreChecked() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.Raw")
            func call(_ member: String, _ options: DBusValue) async throws -> DBusError? {
                do {
                    _ = try await app.call(
                        destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                        member: member, [options])
                    return nil
                } catch {
                    return error
                }
            }
            let neither = try await call("CloseDelivered", BusAPITests.record([:]))
            #expect(neither?.name == "io.chime.Chime1.Error.InvalidArgument")
            let both = try await call(
                "CloseDelivered",
                BusAPITests.record(["all": .boolean(true), "notifications": .array(element: .uint32, [.uint32(1)])]))
            #expect(both?.name == "io.chime.Chime1.Error.InvalidArgument")
            let wrongType = try await call("CloseDelivered", BusAPITests.record(["notifications": .string("1")]))
            #expect(wrongType?.message.contains("notifications") == true)
            let tooMany = try await call(
                "CloseDelivered",
                BusAPITests.record([
                    "notifications": .array(element: .uint32, (0..<10_001).map { DBusValue.uint32(UInt32($0)) })
                ]))
            #expect(tooMany?.message.contains("10000") == true)
            let unknown = try await call("ListDelivered", BusAPITests.record(["group": .string("x")]))
            #expect(unknown?.name == "io.chime.Chime1.Error.InvalidArgument")
            #expect(try await call("CloseDelivered", BusAPITests.record(["all": .boolean(true)])) == nil)
        }
    }
}
