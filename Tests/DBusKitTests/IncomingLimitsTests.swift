import Foundation
import TestSupport
import Testing

@testable import DBusKit

/// What a connection takes in from others is checked before it is decoded: a call's size against its
/// method's limit, a sender's and everyone's waiting bytes, a reply's size against what the caller takes,
/// and signals against the subscriptions that want them. Real dbus-daemon, two connections.
@Suite(.serialized) struct IncomingLimitsTests {
    static let path: DBusObjectPath = "/io/chime/Limits"
    static let interface = "io.chime.Limits"

    struct Fixture {
        let bus: TestBus
        let service: DBusConnection
        let client: DBusConnection
        /// The sizes of the calls that reached a handler.
        let handled = Recorder<Int>()
        let entered = Recorder<Bool>()
        let release = Recorder<Bool>()

        static func run(
            limits: DBusConnection.IncomingLimits = .init(), _ body: (Fixture) async throws -> Void
        ) async throws {
            let bus = try await TestBus.start()
            let service = try await bus.connect(limits: limits)
            let client = try await bus.connect()
            let fixture = Fixture(bus: bus, service: service, client: client)
            try fixture.export()
            defer { fixture.release.append(true) }
            do {
                try await body(fixture)
            } catch {
                client.close()
                service.close()
                await bus.stop()
                throw error
            }
            client.close()
            service.close()
            await bus.stop()
        }

        func export() throws {
            try service.export(
                [
                    DBusInterface(
                        IncomingLimitsTests.interface,
                        methods: [
                            DBusMethod(
                                "Small", inputs: [DBusArgument("data", .array(.byte))],
                                outputs: [DBusArgument("count", .uint32)], maximumArgumentBytes: 1024
                            ) { [handled] call in
                                guard case .bytes(let bytes) = call.arguments[0] else { return [.uint32(0)] }
                                handled.append(bytes.count)
                                return [.uint32(UInt32(bytes.count))]
                            },
                            DBusMethod(
                                "Sink", inputs: [DBusArgument("data", .array(.byte))], maximumArgumentBytes: 1 << 20
                            ) { [handled] call in
                                handled.append(call.bytes)
                                return []
                            },
                            DBusMethod("Wait") { [entered, release] _ in
                                entered.append(true)
                                try await release.wait("released", timeout: .seconds(30)) { !$0.isEmpty }
                                return []
                            },
                            DBusMethod(
                                "Echo", inputs: [DBusArgument("value", .variant)],
                                outputs: [DBusArgument("value", .variant)]
                            ) { call in call.arguments },
                            DBusMethod(
                                "Count",
                                inputs: [
                                    DBusArgument("label", .string),
                                    DBusArgument("records", .array(.dictionary(key: .string, value: .variant))),
                                ],
                                outputs: [DBusArgument("summary", .string)], streamedArgument: 1
                            ) { call in
                                // The streamed argument is not in `arguments`; its elements come one at a time.
                                guard case .array(_, let placeholder) = call.arguments[1], placeholder.isEmpty,
                                    case .string(let label) = call.arguments[0]
                                else { return [.string("not streamed")] }
                                var count = 0
                                var keys = 0
                                try call.forEachElement { element in
                                    count += 1
                                    if case .dictionary(_, _, let entries) = element { keys += entries.count }
                                }
                                return [.string("\(label): \(count) records, \(keys) keys")]
                            },
                        ])
                ], at: IncomingLimitsTests.path)
        }

        func call(
            _ member: String, _ body: [DBusValue] = [], maximumReplyBytes: Int = DBusConnection.defaultMaximumReplyBytes
        ) async throws(DBusError) -> [DBusValue] {
            try await client.call(
                destination: service.uniqueName, path: IncomingLimitsTests.path,
                interface: IncomingLimitsTests.interface, member: member, body, maximumReplyBytes: maximumReplyBytes)
        }

        func send(
            _ member: String, _ body: [DBusValue],
            completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
        ) {
            client.call(
                DBusMessage.methodCall(
                    destination: service.uniqueName, path: IncomingLimitsTests.path,
                    interface: IncomingLimitsTests.interface, member: member, body: body),
                completion: completion)
        }
    }

    @Test func aCallLargerThanItsMethodTakesIsRefusedUndecoded() async throws {
        try await Fixture.run { f in
            let before = f.service.statistics
            let error = await #expect(throws: DBusError.self) {
                try await f.call("Small", [.bytes(Array(repeating: 1, count: 2000))])
            }
            #expect(error?.is(.limitsExceeded) == true)
            #expect(error?.message.contains("at most 1024 bytes") == true)
            #expect(f.service.statistics.unread == before.unread + 1)
            #expect(f.service.statistics.decoded == before.decoded)
            #expect(f.handled.elements.isEmpty)
            // Within the limit, the same method answers.
            let answered = try await f.call("Small", [.bytes(Array(repeating: 1, count: 500))])
            #expect(answered == [.uint32(500)])
            // A method that declares no limit takes the connection's default, 1 MiB.
            let unknown = await #expect(throws: DBusError.self) {
                try await f.call("NoSuchMethod", [.bytes(Array(repeating: 1, count: 2 << 20))])
            }
            #expect(unknown?.is(.limitsExceeded) == true)
        }
    }

    @Test func aSendersWaitingBytesAreBounded() async throws {
        var limits = DBusConnection.IncomingLimits()
        limits.bytesPerSender = 10_000
        try await Fixture.run(limits: limits) { f in
            let results = Recorder<Result<DBusMessage, DBusError>>()
            f.send("Wait", []) { results.append($0) }
            try await f.entered.wait(forCount: 1)
            // Behind the waiting call, two 4,000-byte calls fit in 10,000 bytes; the third does not.
            for _ in 0..<3 { f.send("Sink", [.bytes(Array(repeating: 2, count: 4000))]) { results.append($0) } }
            try await results.wait("the refused call answered") { $0.count == 1 }
            guard case .failure(let error) = results.elements[0] else {
                Issue.record("the third call was not refused: \(results.elements)")
                return
            }
            #expect(error.is(.limitsExceeded))
            #expect(error.message.contains("10000 bytes"))
            f.release.append(true)
            try await results.wait("every call answered") { $0.count == 4 }
            #expect(f.handled.elements.count == 2)
        }
    }

    @Test func allSendersWaitingBytesAreBounded() async throws {
        var limits = DBusConnection.IncomingLimits()
        limits.bytes = 10_000
        try await Fixture.run(limits: limits) { f in
            let other = try await f.bus.connect()
            defer { other.close() }
            let results = Recorder<Result<DBusMessage, DBusError>>()
            f.send("Wait", []) { results.append($0) }
            try await f.entered.wait(forCount: 1)
            f.send("Sink", [.bytes(Array(repeating: 2, count: 8000))]) { results.append($0) }
            try await Await.polling("the service holds the waiting call") { f.service.methodCalls.bytes >= 8000 }
            // The first client's calls hold 8,000 bytes: another sender's 4,000 do not fit any more.
            let error = await #expect(throws: DBusError.self) {
                try await other.call(
                    destination: f.service.uniqueName, path: Self.path, interface: Self.interface, member: "Sink",
                    [.bytes(Array(repeating: 3, count: 4000))])
            }
            #expect(error?.is(.limitsExceeded) == true)
            f.release.append(true)
            try await results.wait("the first client's calls answered") { $0.count == 2 }
            // Once they are done, the bytes are free again.
            _ = try await other.call(
                destination: f.service.uniqueName, path: Self.path, interface: Self.interface, member: "Sink",
                [.bytes(Array(repeating: 3, count: 4000))])
        }
    }

    @Test func aReplyLargerThanTheCallerTakesIsRefusedUndecoded() async throws {
        try await Fixture.run { f in
            let before = f.client.statistics
            let error = await #expect(throws: DBusError.self) {
                try await f.call("Echo", [.variant(.bytes(Array(repeating: 7, count: 5000)))], maximumReplyBytes: 1000)
            }
            #expect(error?.is(.limitsExceeded) == true)
            #expect(error?.message.contains("more than the 1000") == true)
            #expect(f.client.statistics.decoded == before.decoded)
            let echoed = try await f.call("Echo", [.variant(.bytes([1, 2]))], maximumReplyBytes: 1000)
            #expect(echoed == [.variant(.bytes([1, 2]))])
        }
    }

    @Test func aReplyLargerThanTheServiceMaySendIsAnErrorInstead() async throws {
        var limits = DBusConnection.IncomingLimits()
        limits.replyBytes = 1000
        try await Fixture.run(limits: limits) { f in
            let error = await #expect(throws: DBusError.self) {
                try await f.call("Echo", [.variant(.bytes(Array(repeating: 7, count: 2000)))])
            }
            #expect(error?.is(.limitsExceeded) == true)
            #expect(error?.message.contains("more than the 1000 a reply may carry") == true)
            // The service goes on answering what fits.
            let echoed = try await f.call("Echo", [.variant(.bytes([1]))])
            #expect(echoed == [.variant(.bytes([1]))])
        }
    }

    @Test func signalsNobodyWantsAreDroppedUnread() async throws {
        try await Fixture.run { f in
            let heard = Recorder<Int>()
            let rule = DBusMatchRule(interface: "io.chime.Limits.Events", member: "Happened")
            let subscription = try await f.service.subscribe(rule, maximumBytes: 1000) { message in
                if case .bytes(let bytes)? = message.body.first { heard.append(bytes.count) }
            }
            defer { subscription.cancel() }
            let before = f.service.statistics
            func signal(_ interface: String, _ count: Int) throws {
                try f.client.emitSignal(
                    path: Self.path, interface: interface, member: "Happened",
                    [.bytes(Array(repeating: 0, count: count))],
                    destination: f.service.uniqueName)
            }
            // Addressed to the service, but of an interface nobody there subscribed to; then one too big for the
            // subscription that wants it; then one it takes.
            try signal("io.chime.Limits.Other", 100)
            try signal("io.chime.Limits.Events", 5000)
            try signal("io.chime.Limits.Events", 10)
            try await heard.wait("the small signal delivered") { !$0.isEmpty }
            #expect(heard.elements == [10])
            let after = f.service.statistics
            #expect(after.unread - before.unread == 2)
            #expect(after.decoded - before.decoded == 1)
        }
    }

    /// libdbus reads about 4 KiB at a time; a connection reads on while bytes wait, so a message of 4 MiB
    /// (and whatever waits behind it on the stream) is not read in a thousand wake-ups.
    @Test func aBigMessageIsReadInFewWakeUps() async throws {
        try await Fixture.run { f in
            let heard = Recorder<Int>()
            let rule = DBusMatchRule(interface: "io.chime.Limits.Events", member: "Happened")
            let subscription = try await f.service.subscribe(rule, maximumBytes: 8 << 20) { message in
                if case .bytes(let bytes)? = message.body.first { heard.append(bytes.count) }
            }
            defer { subscription.cancel() }
            let before = f.service.statistics
            try f.client.emitSignal(
                path: Self.path, interface: "io.chime.Limits.Events", member: "Happened",
                [.bytes(Array(repeating: 0, count: 4 << 20))], destination: f.service.uniqueName)
            try await heard.wait("the big signal delivered") { !$0.isEmpty }
            #expect(heard.elements == [4 << 20])
            let wakeUps = f.service.statistics.readEvents - before.readEvents
            // One per 4 KiB would be 1,024; the bus writes at least tens of KiB at a time.
            #expect(wakeUps < 256, "\(wakeUps) wake-ups to read 4 MiB")
        }
    }

    @Test func aStreamedArgumentIsReadOneElementAtATime() async throws {
        try await Fixture.run { f in
            let records: [DBusValue] = (0..<300).map { index in
                .dictionary(
                    key: .string, value: .variant,
                    [
                        DBusDictEntry(.string("n"), .variant(.uint32(UInt32(index)))),
                        DBusDictEntry(.string("s"), .variant(.string("x"))),
                    ])
            }
            let reply = try await f.call(
                "Count", [.string("batch"), .array(element: .dictionary(key: .string, value: .variant), records)])
            #expect(reply == [.string("batch: 300 records, 600 keys")])
        }
    }
}
