import Foundation
import TestSupport
import Testing

@testable import DBusKit

#if canImport(FoundationXML)
    import FoundationXML
#endif

#if canImport(Glibc)
    import Glibc
#endif

/// DBusKit against a real dbus-daemon on a private bus, with gdbus as an independent peer.
@Suite(.serialized) struct BusTests {
    static let path: DBusObjectPath = "/io/chime/Test"
    static let interface = "io.chime.Test"

    /// A service exporting one interface with methods, a signal and properties.
    static func exportTestObject(on service: DBusConnection, volume: PropertyBox) throws {
        try service.export(
            [
                DBusInterface(
                    interface,
                    methods: [
                        DBusMethod(
                            "Echo", inputs: [DBusArgument("value", .variant)],
                            outputs: [DBusArgument("value", .variant)]
                        ) { call in call.arguments },
                        DBusMethod(
                            "Describe",
                            inputs: [
                                DBusArgument("name", .string),
                                DBusArgument("options", .dictionary(key: .string, value: .variant)),
                            ],
                            outputs: [DBusArgument("summary", .string)]
                        ) { call in
                            let (name, options) = try call.arguments.decode(String.self, [String: DBusVariant].self)
                            return [.string("\(name):\(options.keys.sorted().joined(separator: ","))")]
                        },
                        DBusMethod("Fail") { _ in
                            throw DBusError(name: "io.chime.Test.Error.Refused", message: "refused on purpose")
                        },
                        DBusMethod("Crash") { _ in
                            struct NotADBusError: Error {}
                            throw NotADBusError()
                        },
                        DBusMethod(
                            "ReadFD", inputs: [DBusArgument("fd", .unixFD)], outputs: [DBusArgument("text", .string)]
                        ) {
                            call in
                            guard case .unixFD(let fd) = call.arguments[0] else { return [] }
                            var buffer = [UInt8](repeating: 0, count: 64)
                            let n = read(fd.fileDescriptor, &buffer, buffer.count)
                            return [.string(String(decoding: buffer.prefix(max(0, n)), as: UTF8.self))]
                        },
                        DBusMethod("Emit", inputs: [DBusArgument("text", .string)]) { call in
                            try call.connection.emitSignal(
                                path: path, interface: interface, member: "Said", [call.arguments[0]])
                            return []
                        },
                    ],
                    signals: [DBusSignalDeclaration("Said", arguments: [DBusArgument("text", .string)])],
                    properties: [
                        DBusProperty("Version", type: .string) { .string("1.0") },
                        DBusProperty(
                            "Volume", type: .uint32, get: { .uint32(volume.value) },
                            set: { value in
                                guard case .uint32(let v) = value, v <= 100 else {
                                    throw DBusError(.invalidArgs, "Volume must be 0…100")
                                }
                                volume.value = v
                            }),
                    ])
            ], at: path)
        try service.export([DBusInterface("io.chime.Child")], at: "/io/chime/Test/child")
    }

    final class PropertyBox: @unchecked Sendable {
        // @unchecked Sendable: only the service's serial method-call worker touches it.
        var value: UInt32 = 5
    }

    struct Fixture {
        let bus: TestBus
        let service: DBusConnection
        let client: DBusConnection
        let volume = PropertyBox()

        /// Runs `body` with a bus and a service, and stops both afterwards, also when `body` fails.
        static func run(_ body: (Fixture) async throws -> Void) async throws {
            let fixture = try await start()
            do {
                try await body(fixture)
            } catch {
                await fixture.stop()
                throw error
            }
            await fixture.stop()
        }

        static func start() async throws -> Fixture {
            let bus = try await TestBus.start()
            let service = try await bus.connect()
            let client = try await bus.connect()
            let fixture = Fixture(bus: bus, service: service, client: client)
            try exportTestObject(on: service, volume: fixture.volume)
            try await service.requestName("io.chime.Test")
            return fixture
        }

        func call(
            _ member: String, _ body: [DBusValue] = [], interface: String? = BusTests.interface,
            path: DBusObjectPath = BusTests.path
        ) async throws(DBusError) -> [DBusValue] {
            try await client.call(destination: "io.chime.Test", path: path, interface: interface, member: member, body)
        }

        func stop() async {
            client.close()
            service.close()
            await bus.stop()
        }

        /// Runs gdbus (an independent D-Bus implementation) against the test bus.
        func gdbus(_ arguments: [String]) async throws -> (status: Int32, output: String) {
            let process = try ManagedProcess(
                "/usr/bin/gdbus", arguments, environment: bus.environment, directory: bus.directory)
            let status = await process.waitForExit() ?? -1
            defer { process.removeFiles() }
            return (status, process.stdout + process.stderr)
        }
    }

    @Test func connectsAndGetsAUniqueName() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            #expect(f.client.uniqueName?.hasPrefix(":") == true)
            #expect(f.client.uniqueName != f.service.uniqueName)
        }
    }

    @Test func sessionAndSystemBusesAreFoundThroughTheEnvironment() async throws {
        let bus = try await TestBus.start()
        let saved = (
            getenv("DBUS_SESSION_BUS_ADDRESS").map { String(cString: $0) },
            getenv("DBUS_SYSTEM_BUS_ADDRESS").map { String(cString: $0) }
        )
        setenv("DBUS_SESSION_BUS_ADDRESS", bus.address, 1)
        setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
        defer {
            if let s = saved.0 {
                setenv("DBUS_SESSION_BUS_ADDRESS", s, 1)
            } else {
                unsetenv("DBUS_SESSION_BUS_ADDRESS")
            }
            if let s = saved.1 { setenv("DBUS_SYSTEM_BUS_ADDRESS", s, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        }
        let session = try await DBusConnection.connect(.session)
        let system = try await DBusConnection.connect(.system)
        #expect(session.uniqueName != nil && system.uniqueName != nil && session.uniqueName != system.uniqueName)
        // Both are private connections on the same bus: each can reach the other.
        try session.export(
            [DBusInterface("io.chime.Ping", methods: [DBusMethod("Pong") { _ in [.string("pong")] }])], at: "/p")
        #expect(
            try await system.call(
                destination: session.uniqueName, path: "/p", interface: "io.chime.Ping", member: "Pong") == [
                    .string("pong")
                ])
        session.close()
        system.close()
        let bad = await #expect(throws: DBusError.self) {
            try await DBusConnection.connect(.bus("unix:path=/nonexistent/socket"))
        }
        #expect(bad?.message.isEmpty == false)
        await bus.stop()
    }

    @Test func methodCallsCarryEveryValueBothWays() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            for value in MarshallingTests.basicValues {
                let reply = try await f.call("Echo", [.variant(value)])
                #expect(reply == [.variant(value)])
            }
            let nested = DBusValue.dictionary(
                key: .string, value: .variant,
                [
                    DBusDictEntry(
                        .string("k"), .variant(.structure([.array(element: .int64, [.int64(1)]), .boolean(false)])))
                ])
            #expect(try await f.call("Echo", [.variant(nested)]) == [.variant(nested)])
            #expect(
                try await f.call(
                    "Describe", [.string("n"), ["b": DBusVariant(1 as Int32), "a": DBusVariant("x")].dbusValue]) == [
                        .string("n:a,b")
                    ])
        }
    }

    @Test func errorsFromTheServiceKeepTheirNames() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            await #expect(throws: DBusError(name: "io.chime.Test.Error.Refused", message: "refused on purpose")) {
                try await f.call("Fail")
            }
            let crash = await #expect(throws: DBusError.self) { try await f.call("Crash") }
            #expect(crash?.is(.failed) == true)
            // The service keeps serving after both.
            #expect(try await f.call("Echo", [.variant(.int32(1))]) == [.variant(.int32(1))])
        }
    }

    @Test func unknownTargetsGetTheStandardErrors() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let noMethod = await #expect(throws: DBusError.self) { try await f.call("Nope") }
            #expect(noMethod?.is(.unknownMethod) == true)
            let noInterface = await #expect(throws: DBusError.self) {
                try await f.call("Echo", interface: "io.chime.Other")
            }
            #expect(noInterface?.is(.unknownInterface) == true)
            let noObject = await #expect(throws: DBusError.self) { try await f.call("Echo", path: "/nowhere") }
            #expect(noObject?.is(.unknownObject) == true)
            let wrongSignature = await #expect(throws: DBusError.self) {
                try await f.call("Echo", [.string("not a variant")])
            }
            #expect(wrongSignature?.is(.invalidArgs) == true)
            #expect(wrongSignature?.message.contains("'v'") == true)
            let noService = await #expect(throws: DBusError.self) {
                try await f.client.call(destination: "io.chime.Absent", path: "/", interface: "a.b", member: "M")
            }
            #expect(noService?.is(.serviceUnknown) == true)
            // A member without an interface finds the method on any interface of the object.
            #expect(try await f.call("Echo", [.variant(.byte(1))], interface: nil) == [.variant(.byte(1))])
        }
    }

    @Test func anIndependentClientGetsAnswersAndErrors() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let ok = try await f.gdbus([
                "call", "--session", "--dest", "io.chime.Test", "--object-path", "/io/chime/Test", "--method",
                "io.chime.Test.Describe", "hello", "{'x': <1>, 'a': <'b'>}",
            ])
            #expect(ok.status == 0)
            #expect(ok.output.contains("hello:a,x"))
            let bad = try await f.gdbus([
                "call", "--session", "--dest", "io.chime.Test", "--object-path", "/io/chime/Test", "--method",
                "io.chime.Test.Describe", "42",
            ])
            #expect(bad.status != 0)
            #expect(bad.output.contains("InvalidArgs"))
            let ping = try await f.gdbus([
                "call", "--session", "--dest", "io.chime.Test", "--object-path", "/io/chime/Test", "--method",
                "org.freedesktop.DBus.Peer.Ping",
            ])
            #expect(ping.status == 0)
        }
    }

    @Test func introspectionDescribesWhatIsRegistered() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            guard
                case .string(let xml)? = try await f.call(
                    "Introspect", interface: "org.freedesktop.DBus.Introspectable"
                )
                .first
            else {
                Issue.record("Introspect returned no string")
                return
            }
            let parsed = try IntrospectionSummary(xml: xml)
            #expect(parsed.interfaces.contains("io.chime.Test"))
            #expect(
                parsed.interfaces.isSuperset(of: [
                    "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                    "org.freedesktop.DBus.Peer",
                ]))
            #expect(
                parsed.members["io.chime.Test"] == [
                    "Crash", "Describe", "Echo", "Emit", "Fail", "ReadFD", "Said", "Version", "Volume",
                ])
            #expect(parsed.children == ["child"])
            #expect(xml.contains("<arg name=\"options\" type=\"a{sv}\" direction=\"in\"/>"))
            #expect(xml.contains("<property name=\"Volume\" type=\"u\" access=\"readwrite\"/>"))
            #expect(xml.contains("<property name=\"Version\" type=\"s\" access=\"read\"/>"))
            // Parent nodes list their children even with no object of their own.
            guard
                case .string(let parent)? = try await f.call(
                    "Introspect", interface: "org.freedesktop.DBus.Introspectable", path: "/io/chime"
                ).first
            else { return }
            #expect(try IntrospectionSummary(xml: parent).children == ["Test"])
            // gdbus reads the same document.
            let g = try await f.gdbus([
                "introspect", "--session", "--dest", "io.chime.Test", "--object-path", "/io/chime/Test",
            ])
            #expect(g.status == 0)
            #expect(g.output.contains("Describe(in  s name,"))
            #expect(g.output.contains("readwrite u Volume"))
        }
    }

    @Test func propertiesGetGetAllSetAndChangeSignals() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let changes = Recorder<DBusMessage>()
            let sub = try await f.client.subscribe(
                DBusMatchRule(
                    sender: "io.chime.Test", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")
            ) { changes.append($0) }
            let props = "org.freedesktop.DBus.Properties"
            #expect(
                try await f.call("Get", [.string(Self.interface), .string("Version")], interface: props) == [
                    .variant(.string("1.0"))
                ])
            let all = try await f.call("GetAll", [.string(Self.interface)], interface: props)
            let dict = try all[0].decode([String: DBusVariant].self)
            #expect(dict == ["Version": DBusVariant(.string("1.0")), "Volume": DBusVariant(.uint32(5))])
            _ = try await f.call(
                "Set", [.string(Self.interface), .string("Volume"), .variant(.uint32(42))], interface: props)
            #expect(f.volume.value == 42)
            try await changes.wait(forCount: 1)
            let change = changes.elements[0]
            #expect(change.body[0] == .string(Self.interface))
            #expect(try change.body[1].decode([String: DBusVariant].self) == ["Volume": DBusVariant(.uint32(42))])
            let readOnly = await #expect(throws: DBusError.self) {
                try await f.call(
                    "Set", [.string(Self.interface), .string("Version"), .variant(.string("2"))], interface: props)
            }
            #expect(readOnly?.is(.propertyReadOnly) == true)
            let wrongType = await #expect(throws: DBusError.self) {
                try await f.call(
                    "Set", [.string(Self.interface), .string("Volume"), .variant(.string("loud"))], interface: props)
            }
            #expect(wrongType?.is(.invalidArgs) == true)
            let refused = await #expect(throws: DBusError.self) {
                try await f.call(
                    "Set", [.string(Self.interface), .string("Volume"), .variant(.uint32(101))], interface: props)
            }
            #expect(refused?.message == "Volume must be 0…100")
            let unknown = await #expect(throws: DBusError.self) {
                try await f.call("Get", [.string(Self.interface), .string("Nope")], interface: props)
            }
            #expect(unknown?.is(.unknownProperty) == true)
            #expect(f.volume.value == 42)
            sub.cancel()
        }
    }

    @Test func signalsReachOnlyMatchingSubscriptions() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let hello = Recorder<String>()
            let everything = Recorder<String>()
            let helloSub = try await f.client.subscribe(
                DBusMatchRule(
                    sender: "io.chime.Test", interface: Self.interface, member: "Said", arguments: [0: "hello"])
            ) { message in
                if case .string(let s)? = message.body.first { hello.append(s) }
            }
            let allSub = try await f.client.subscribe(DBusMatchRule(interface: Self.interface, member: "Said")) {
                message in
                if case .string(let s)? = message.body.first { everything.append(s) }
            }
            for word in ["hello", "other", "hello"] { _ = try await f.call("Emit", [.string(word)]) }
            try await everything.wait(forCount: 3)
            #expect(everything.elements == ["hello", "other", "hello"])
            #expect(hello.elements == ["hello", "hello"])
            // After cancel, a later signal reaches only the remaining subscription; signals on one
            // connection arrive in order, so "late" reaching `everything` proves it was not held back.
            helloSub.cancel()
            _ = try await f.call("Emit", [.string("hello")])
            _ = try await f.call("Emit", [.string("late")])
            try await everything.wait(forCount: 5)
            #expect(hello.elements == ["hello", "hello"])
            allSub.cancel()
        }
    }

    @Test func aSignalAddressedToAnotherConnectionReachesOnlyAnEavesdroppingRule() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let addressee = try await f.bus.connect()
            let overheard = Recorder<String>()
            let broadcastOnly = Recorder<String>()
            let eavesdropping = try await f.client.subscribe(
                DBusMatchRule(interface: Self.interface, member: "Said", eavesdrop: true)
            ) { message in
                if case .string(let s)? = message.body.first { overheard.append(s) }
            }
            let plain = try await f.client.subscribe(DBusMatchRule(interface: Self.interface, member: "Said")) {
                message in
                if case .string(let s)? = message.body.first { broadcastOnly.append(s) }
            }
            try f.service.emitSignal(
                path: Self.path, interface: Self.interface, member: "Said", [.string("whispered")],
                destination: addressee.uniqueName)
            try f.service.emitSignal(path: Self.path, interface: Self.interface, member: "Said", [.string("aloud")])
            // Signals from one connection arrive in order: once "aloud" is here, "whispered" was handled.
            try await overheard.wait(forCount: 2)
            try await broadcastOnly.wait(forCount: 1)
            #expect(overheard.elements == ["whispered", "aloud"])
            #expect(broadcastOnly.elements == ["aloud"])
            eavesdropping.cancel()
            plain.cancel()
            addressee.close()
        }
    }

    @Test func aSignalIsEmittedWithoutWaitingForTheConnectionsQueue() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let heard = Recorder<String>()
            let sub = try await f.client.subscribe(DBusMatchRule(interface: Self.interface, member: "Said")) {
                message in
                if case .string(let s)? = message.body.first { heard.append(s) }
            }
            // The service's queue is busy, as it is while it reads a message of some MiB.
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            f.service.queue.async {
                holding.signal()
                release.wait()
            }
            holding.wait()
            let emitted = DispatchSemaphore(value: 0)
            let emitter = Thread { [service = f.service] in
                try? service.emitSignal(path: Self.path, interface: Self.interface, member: "Said", [.string("now")])
                emitted.signal()
            }
            emitter.start()
            let returned = emitted.wait(timeout: .now() + 10) == .success
            release.signal()
            #expect(returned, "emitSignal waited for the connection's queue")
            if !returned { emitted.wait() }
            // And the signal goes out once the queue is free.
            try await heard.wait(forCount: 1)
            #expect(heard.elements == ["now"])
            sub.cancel()
        }
    }

    /// A connection's last reference may go on any thread while its sources have events on their way
    /// (signals arriving, a call's reply, libdbus's timeouts); each such event must find the connection
    /// gone and touch nothing, rather than read a freed object.
    @Test func aConnectionLetGoWhileMessagesArriveIsFreedSafely() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            for _ in 0..<150 {
                let heard = Recorder<String>()
                do {
                    let connection = try await f.bus.connect()
                    let subscription = try await connection.subscribe(
                        DBusMatchRule(interface: Self.interface, member: "Said")
                    ) { _ in heard.append("x") }
                    for _ in 0..<300 {
                        try f.service.emitSignal(
                            path: Self.path, interface: Self.interface, member: "Said", [.string("x")])
                    }
                    try await heard.wait(forCount: 1)
                    // Let go with signals still streaming in: the connection's deinit runs on this task's
                    // thread while its read source has events on the connection's queue.
                    withExtendedLifetime(subscription) {}
                }
            }
            // The bus and the service are still served: a call is answered.
            let answer = try await f.call("Echo", [.variant(.string("still here"))])
            #expect(answer == [.variant(.string("still here"))])
        }
    }

    @Test func signalsFromAWellKnownNameFollowItsOwner() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let got = Recorder<String?>()
            let sub = try await f.client.subscribe(DBusMatchRule(sender: "io.chime.Test", member: "Said")) {
                got.append($0.sender)
            }
            // A different connection emitting the same signal is not io.chime.Test.
            let impostor = try await f.bus.connect()
            try impostor.emitSignal(path: Self.path, interface: Self.interface, member: "Said", [.string("fake")])
            await impostor.flush()
            _ = try await f.call("Emit", [.string("real")])
            try await got.wait(forCount: 1)
            #expect(got.elements == [f.service.uniqueName])
            sub.cancel()
            impostor.close()
        }
    }

    @Test func nameOwnerChangesAreWatched() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let owners = Recorder<String?>()
            let watch = try await f.client.watchNameOwner("io.chime.Watched") { owners.append($0) }
            try await owners.wait(forCount: 1)
            #expect(owners.elements == [nil])
            let owner = try await f.bus.connect()
            try await owner.requestName("io.chime.Watched")
            try await owners.wait(forCount: 2)
            #expect(owners.elements == [nil, owner.uniqueName])
            #expect(try await f.client.nameHasOwner("io.chime.Watched"))
            owner.close()
            try await owners.wait(forCount: 3)
            #expect(owners.elements == [nil, owner.uniqueName, nil])
            watch.cancel()
        }
    }

    @Test func aTakenNameIsAClearError() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            let second = try await f.bus.connect()
            let error = await #expect(throws: DBusError.self) { try await second.requestName("io.chime.Test") }
            #expect(error?.name == DBusError.nameTaken)
            #expect(error?.message.contains("already owned by \(f.service.uniqueName!)") == true)
            #expect(error?.message.contains("pid \(getpid())") == true)
            let invalid = await #expect(throws: DBusError.self) { try await second.requestName("not a name") }
            #expect(invalid?.is(.invalidArgs) == true)
            second.close()
        }
    }

    @Test func unixFileDescriptorsCrossTheBus() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            var fds: [Int32] = [0, 0]
            #expect(pipe(&fds) == 0)
            let text = "through a pipe"
            _ = text.withCString { write(fds[1], $0, strlen($0)) }
            close(fds[1])
            let readEnd = DBusUnixFD(taking: fds[0])
            #expect(try await f.call("ReadFD", [.unixFD(readEnd)]) == [.string(text)])
        }
    }

    /// A service whose one method answers only when the test releases it, to hold calls open.
    struct SlowService {
        let bus: TestBus
        let service: DBusConnection
        let client: DBusConnection
        /// One element per call that reached the handler.
        let entered = Recorder<Bool>()
        let release = Recorder<Bool>()
        /// The numbers of the Append calls, in the order their handlers finished.
        let handled = Recorder<UInt32>()

        static func run(_ body: (SlowService) async throws -> Void) async throws {
            let bus = try await TestBus.start()
            let service = try await bus.connect()
            let client = try await bus.connect()
            let slow = SlowService(bus: bus, service: service, client: client)
            try service.export(
                [
                    DBusInterface(
                        "io.chime.Slow",
                        methods: [
                            DBusMethod("Wait") { [entered = slow.entered, release = slow.release] _ in
                                entered.append(true)
                                try await release.wait("released", timeout: .seconds(30)) { !$0.isEmpty }
                                return []
                            },
                            DBusMethod("Quick", outputs: [DBusArgument("sender", .string)]) { call in
                                [.string(call.sender ?? "")]
                            },
                            DBusMethod("Append", inputs: [DBusArgument("number", .uint32)]) {
                                [handled = slow.handled] call in
                                // A handler that suspends a varying number of times: calls handled
                                // concurrently would finish out of order.
                                guard case .uint32(let number) = call.arguments[0] else { return [] }
                                for _ in 0..<(number * 7 % 5) { await Task.yield() }
                                handled.append(number)
                                return []
                            },
                        ])
                ], at: "/slow")
            do {
                try await body(slow)
            } catch {
                slow.release.append(true)
                client.close()
                service.close()
                await bus.stop()
                throw error
            }
            slow.release.append(true)
            client.close()
            service.close()
            await bus.stop()
        }

        func call(timeout: Duration = .seconds(25)) async throws(DBusError) -> [DBusValue] {
            try await client.call(
                destination: service.uniqueName, path: "/slow", interface: "io.chime.Slow", member: "Wait",
                timeout: timeout)
        }
    }

    @Test func callsTimeOutAndCanBeCancelled() async throws {
        try await SlowService.run { slow in
            let start = ContinuousClock.now
            let timeout = await #expect(throws: DBusError.self) { try await slow.call(timeout: .milliseconds(200)) }
            #expect(timeout?.is(.noReply) == true)
            #expect(ContinuousClock.now - start >= .milliseconds(200))
            // The service is still busy with the first call (it answers one call at a time), so this one
            // waits for its reply until it is cancelled, before or after it was sent.
            let task = Task { try await slow.call() }
            task.cancel()
            let cancelled = await #expect(throws: DBusError.self) { try await task.value }
            #expect(cancelled?.message == "the call was cancelled")
        }
    }

    @Test func aWaitingCallHoldsUpOnlyItsOwnSender() async throws {
        try await SlowService.run { slow in
            let waiting = Task { try await slow.call() }
            try await slow.entered.wait(forCount: 1)
            // Another connection's call is answered while the first one's handler still waits.
            let other = try await slow.bus.connect()
            let reply = try await other.call(
                destination: slow.service.uniqueName, path: "/slow", interface: "io.chime.Slow", member: "Quick")
            #expect(reply == [.string(other.uniqueName ?? "?")])
            #expect(slow.release.elements.isEmpty)
            other.close()
            slow.release.append(true)
            _ = try await waiting.value
        }
    }

    @Test func oneSendersCallsAreHandledInTheOrderSent() async throws {
        try await SlowService.run { slow in
            let count: UInt32 = 40
            for number in 0..<count {
                slow.client.call(
                    DBusMessage.methodCall(
                        destination: slow.service.uniqueName, path: "/slow", interface: "io.chime.Slow",
                        member: "Append", body: [.uint32(number)])
                ) { _ in }
            }
            try await slow.handled.wait(forCount: Int(count))
            #expect(slow.handled.elements == Array(0..<count))
        }
    }

    @Test func aSenderWithTooManyCallsWaitingIsRefusedTheRest() async throws {
        try await SlowService.run { slow in
            let limit = DBusConnection.maximumCallsPerSender
            let results = Recorder<Result<DBusMessage, DBusError>>()
            // The first call waits in its handler; the lane fills up behind it.
            for _ in 0..<(limit + 5) {
                slow.client.call(
                    DBusMessage.methodCall(
                        destination: slow.service.uniqueName, path: "/slow", interface: "io.chime.Slow",
                        member: "Wait")
                ) { results.append($0) }
            }
            try await results.wait("the refused calls answered") { $0.count == 5 }
            for result in results.elements {
                guard case .failure(let error) = result else {
                    Issue.record("a call was answered before the first was released")
                    continue
                }
                #expect(error.is(.limitsExceeded))
                #expect(error.message.contains("\(limit) calls"))
            }
            slow.release.append(true)
            try await results.wait("every call answered", timeout: .seconds(30)) { $0.count == limit + 5 }
            let answered = results.elements.dropFirst(5)
            #expect(answered.allSatisfy { if case .success = $0 { true } else { false } })
        }
    }

    @Test func closingFailsPendingCallsAndLaterSends() async throws {
        try await SlowService.run { slow in
            let pending = Task { try await slow.call() }
            // The handler was entered, so the call is on the wire and waiting for its reply.
            try await slow.entered.wait(forCount: 1)
            slow.client.close()
            let error = await #expect(throws: DBusError.self) { try await pending.value }
            #expect(error?.is(.disconnected) == true)
            #expect(throws: DBusError.self) { try slow.client.emitSignal(path: "/x", interface: "a.b", member: "C") }
        }
    }

    @Test func theBusAnswersThePeerInterface() async throws {
        try await Fixture.run { (f: Fixture) async throws in
            // The bus itself answers the standard Peer interface, over a connection made by address.
            let reply = try await f.client.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer",
                member: "GetMachineId")
            guard case .string(let id)? = reply.first else {
                Issue.record("no machine id")
                return
            }
            #expect(id.count == 32)
        }
    }
}

/// The parts of an introspection document the tests check, read with an XML parser.
struct IntrospectionSummary {
    var interfaces: Set<String> = []
    var members: [String: [String]] = [:]
    var children: [String] = []

    init(xml: String) throws {
        let delegate = Delegate()
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        guard parser.parse() else { throw parser.parserError ?? DBusError(.failed, "invalid XML") }
        interfaces = Set(delegate.members.keys)
        members = delegate.members.mapValues { $0.sorted() }
        children = delegate.children
    }

    final class Delegate: NSObject, XMLParserDelegate {
        var depth = 0
        var current: String?
        var members: [String: [String]] = [:]
        var children: [String] = []

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            depth += 1
            switch name {
            case "interface":
                current = attributes["name"]
                if let current { members[current] = [] }
            case "method", "signal", "property":
                if let current, let n = attributes["name"] { members[current]?.append(n) }
            case "node" where depth == 2:
                if let n = attributes["name"] { children.append(n) }
            default: break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            depth -= 1
            if name == "interface" { current = nil }
        }
    }
}
