import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// An app manages what it has scheduled: lists it with its content and trigger.
@Suite(.serialized) struct ManageItemsTests {
    @Test func listPendingWithContentGivesEachItemsContentAndTrigger() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Plants")
            let at = Date(timeIntervalSince1970: 4_102_444_800)
            var content = NotificationContent(
                summary: "Water the plants", body: "The ferns first", urgency: .critical,
                actions: [NotificationAction(key: "done", label: "Done")], category: "chores")
            content.userInfo = ["plant": "fern", "room": "kitchen"]
            let once = try await app.schedule(content, at: at)
            let until = Date(timeIntervalSince1970: 4_070_908_800)
            let repeating = try await app.schedule(
                NotificationContent(summary: "Stand up"),
                trigger: TriggerWire(
                    rule: .rrule("FREQ=DAILY;BYHOUR=10;BYMINUTE=0", dtstart: nil), timeZone: "Europe/Berlin",
                    until: until, count: 12))

            let listed = try await app.pending(content: true)
            let first = try #require(listed.first { $0.id == once })
            #expect(first.content == content)
            #expect(first.trigger == TriggerWire(at: at))
            let second = try #require(listed.first { $0.id == repeating })
            #expect(second.content == NotificationContent(summary: "Stand up"))
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

    @Test func listPendingWithContentGivesTheSoonestItemsOnly() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Many")
            let start = Date().addingTimeInterval(3600)
            let entries = (0..<300).map { index in
                TimelineEntry(
                    id: "e\(index)", trigger: .at(start.addingTimeInterval(Double(index))),
                    content: .fixed(NotificationContent(summary: "Item \(index)")))
            }
            try await app.reschedule(TimelineGroup(id: "many", entries: entries))
            #expect(try await app.pending().count == 300)
            let listed = try await app.pending(content: true)
            #expect(listed.count == 256)
            #expect(listed.map(\.content?.summary) == (0..<256).map { "Item \($0)" })
            #expect(listed.last?.entry == "e255")
        }
    }
}
