import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// User info with property-list values over the bus: handed back with actions as it was given, the old
/// a{ss} still taken, and every limit refused with the key named.
@Suite(.serialized) struct UserInfoTests {
    @Test func everyKindOfValueComesBackWithTheAction() async throws {
        try await Session.run { s in
            let app = try await s.app("org.example.Shop")
            let events = try await app.actionEvents()
            let info: [String: UserInfoValue] = [
                "order": 42, "price": 9.5, "paid": false, "note": "ring twice",
                "due": .date(Date(timeIntervalSince1970: 1_764_000_000)), "receipt": .data(Data([1, 2, 3])),
                "items": .array(["pizza", 2]), "address": .dictionary(["street": "Main", "number": 7]),
            ]
            var content = ChimeCore.NotificationContent(
                summary: "Order", actions: [NotificationAction(key: "open", label: "Open")])
            content.userInfo = info
            let id = try await app.schedule(content)
            try await s.awaitDelivered(notification: 1)
            #expect(try await app.pending(content: true).isEmpty)
            try await s.choose("open", on: 1)
            var iterator = events.makeAsyncIterator()
            let event = try #require(await iterator.next())
            #expect(event.itemID == id && event.userInfo == info)
            // Listed with the notification while it is shown.
            #expect(try await app.delivered().first?.content.userInfo == info)
        }
    }

    @Test func theOldStringMapIsStillTaken() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.Old")
            let info = DBusValue.dictionary(
                key: .string, value: .string, [DBusDictEntry(.string("table"), .string("7"))])
            _ = try await app.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                member: "Schedule",
                [
                    BusAPITests.record([
                        "summary": .string("Old"), "user-info": info,
                        "actions": .array(
                            element: .structure([.string, .string]), [.structure([.string("a"), .string("A")])]),
                    ]),
                    BusAPITests.record([:]),
                ])
            let signals = Recorder<DBusValue>()
            let subscription = try await app.subscribe(
                DBusMatchRule(sender: "io.chime.Chime1", interface: "io.chime.Chime1", member: "ActionInvoked")
            ) { message in
                if message.body.count == 5 { signals.append(message.body[4]) }
            }
            defer { subscription.cancel() }
            try await s.awaitDelivered(notification: 1)
            try await s.choose("a", on: 1)
            try await signals.wait("ActionInvoked reached the app") { !$0.isEmpty }
            // The signal carries a{sv} now.
            #expect(
                signals.elements[0]
                    == .dictionary(
                        key: .string, value: .variant, [DBusDictEntry(.string("table"), .variant(.string("7")))]))
        }
    }

    @Test func userInfoOverItsLimitsIsRefusedNamingTheKey() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.Bad")
            func schedule(_ info: DBusValue) async -> DBusError? {
                do {
                    _ = try await app.call(
                        destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                        member: "Schedule",
                        [BusAPITests.record(["summary": .string("x"), "user-info": info]), BusAPITests.record([:])])
                    return nil
                } catch {
                    return error
                }
            }
            func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue { BusAPITests.record(pairs) }
            var deep = DBusValue.string("leaf")
            for _ in 0..<9 { deep = .array(element: .variant, [.variant(deep)]) }
            var eight = DBusValue.string("leaf")
            for _ in 0..<8 { eight = .array(element: .variant, [.variant(eight)]) }
            let cases: [(DBusValue, String)] = [
                (record(["deep": deep]), "more than 8 deep"),
                (record(["n": .double(.nan)]), "must be finite"),
                (record(["n": record(["inner": .double(.infinity)])]), "n.inner"),
                (record(["big": .array(element: .byte, Array(repeating: .byte(0), count: 16_001))]), "16000"),
                (record(["huge": .uint64(UInt64.max)]), "2^63-1"),
                (record(["when": .structure([.string("day"), .int64(0)])]), "(sx)"),
                (record(["when": .structure([.string("date"), .int64(-1)])]), "a date must be"),
                (record(["path": .objectPath("/x")]), "has type o"),
                (record(["list": .array(element: .string, [.string("a")])]), "has type as"),
                (.dictionary(key: .string, value: .int32, []), "must be a dictionary a{sv}"),
            ]
            for (info, message) in cases {
                let error = await schedule(info)
                #expect(error?.name == "io.chime.Chime1.Error.InvalidArgument", "\(message)")
                #expect(error?.message.contains("content key \"user-info\"") == true, "\(String(describing: error))")
                #expect(error?.message.contains(message) == true, "\(message): \(String(describing: error))")
            }
            #expect(
                await schedule(record(["ok": eight, "n": .int32(5), "d": .structure([.string("date"), .int64(0)])]))
                    == nil)
        }
    }
}
