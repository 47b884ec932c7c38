import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// The io.chime.Chime1 object as any D-Bus client sees it: the server properties and their
/// PropertiesChanged signals, the error name each kind of bad input gets, and the limits on sizes.
@Suite(.serialized) struct BusAPITests {
    /// An `a{sv}` record.
    static func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue {
        .dictionary(key: .string, value: .variant, pairs.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
    }

    static let empty = record([:])
    static let recordType = DBusType.dictionary(key: .string, value: .variant)

    /// A record's values by key, variants unwrapped.
    static func fields(_ value: DBusValue?) -> [String: DBusValue] {
        guard case .dictionary(_, _, let entries)? = value?.unwrappingVariant else { return [:] }
        var result: [String: DBusValue] = [:]
        for entry in entries {
            if case .string(let key) = entry.key { result[key] = entry.value.unwrappingVariant }
        }
        return result
    }

    /// Calls a member of io.chime.Chime1 (or of `interface`) as this test process, an app.
    static func call(
        _ s: Session, _ member: String, _ arguments: [DBusValue] = [], interface: String = "io.chime.Chime1"
    ) async throws(DBusError) -> [DBusValue] {
        try await s.observer.call(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: interface, member: member, arguments)
    }

    static func property(_ s: Session, _ name: String) async throws -> DBusValue? {
        let reply = try await call(
            s, "Get", [.string("io.chime.Chime1"), .string(name)], interface: "org.freedesktop.DBus.Properties")
        return reply.first?.unwrappingVariant
    }

    /// The PropertiesChanged signals chimed emits, as dictionaries of the changed values.
    static func propertyChanges(_ s: Session) async throws -> (Recorder<[String: DBusValue]>, DBusSubscription) {
        let changes = Recorder<[String: DBusValue]>()
        let subscription = try await s.observer.subscribe(
            DBusMatchRule(
                sender: "io.chime.Chime1", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                path: "/io/chime/Chime1")
        ) { message in
            guard message.body.count == 3, message.body[0] == .string("io.chime.Chime1") else { return }
            changes.append(fields(message.body[1]))
        }
        return (changes, subscription)
    }

    // MARK: - Properties

    @Test func serverInformationAndPausedFollowTheServer() async throws {
        try await Session.run { s in
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            let information = Self.fields(try await Self.property(s, "ServerInformation"))
            #expect(information["present"] == .boolean(true))
            #expect(information["name"] == .string("mock-notify"))
            #expect(information["vendor"] == .string("test vendor"))
            #expect(information["version"] == .string("1.0"))
            #expect(information["spec-version"] == .string("1.1"))
            #expect(
                information["capabilities"]
                    == .array(element: .string, ["actions", "body", "body-markup", "persistence"].map { .string($0) }))
            // The mock has no pause switch: not paused.
            #expect(try await Self.property(s, "Paused") == .boolean(false))
            let all = Self.fields(
                try await Self.call(
                    s, "GetAll", [.string("io.chime.Chime1")], interface: "org.freedesktop.DBus.Properties"
                )
                .first)
            #expect(Set(all.keys) == ["Version", "NotificationServerPresent", "ServerInformation", "Paused"])

            // The server goes: listeners hear it, and the properties say so.
            let (changes, subscription) = try await Self.propertyChanges(s)
            defer { subscription.cancel() }
            await s.server!.stop()
            s.server = nil
            try await changes.wait("chimed announced that the server went") {
                $0.contains { $0["NotificationServerPresent"] == .boolean(false) }
            }
            let gone = try #require(changes.elements.first { $0["NotificationServerPresent"] == .boolean(false) })
            #expect(Self.fields(gone["ServerInformation"]) == ["present": .boolean(false)])
            #expect(try await Self.property(s, "NotificationServerPresent") == .boolean(false))
            #expect(Self.fields(try await Self.property(s, "ServerInformation")) == ["present": .boolean(false)])
            #expect(try await Self.property(s, "Paused") == .boolean(false))

            // A server appears again: announced once chimed knows its name.
            s.server = try await MockNotificationServer.start(on: s.bus, observer: s.observer)
            try await changes.wait("chimed announced the new server") {
                $0.contains { Self.fields($0["ServerInformation"])["name"] == .string("mock-notify") }
            }
            #expect(try await Self.property(s, "NotificationServerPresent") == .boolean(true))
        }
    }

    // MARK: - Error names

    struct ScheduleCase: Sendable, CustomStringConvertible {
        var trigger: DBusValue
        var error: String
        var message: String
        var description: String { message }
    }

    static let invalidRule = "io.chime.Chime1.Error.InvalidRule"
    static let invalidTime = "io.chime.Chime1.Error.InvalidTime"
    static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

    static let scheduleCases: [ScheduleCase] = [
        ScheduleCase(
            trigger: record(["rrule": .string("FREQ=DAILY;BYDAY=XX")]), error: invalidRule,
            message: "invalid RRULE at position 18 (\"XX\")"),
        ScheduleCase(
            trigger: record(["every": .string("every blue moon")]), error: invalidRule, message: "invalid phrase"),
        ScheduleCase(
            trigger: record(["on-calendar": .string("*-02-30")]), error: invalidRule,
            message: "the rule never fires"),
        ScheduleCase(
            trigger: record(["rrule": .string("FREQ=DAILY;UNTIL=20000101T000000Z")]), error: invalidRule,
            message: "the rule never fires"),
        ScheduleCase(
            trigger: record(["on-calendar": .string("2020-01-01 09:00")]), error: invalidRule,
            message: "the rule has no occurrence after now"),
        ScheduleCase(
            trigger: record(["at": .int64(4_102_444_800_000_000), "until": .int64(4_070_908_800_000_000)]),
            error: invalidTime, message: "the item is due after its end (until)"),
        ScheduleCase(
            trigger: record(["every": .string("every day at 9:00"), "until": .int64(1_000_000)]),
            error: invalidTime, message: "is after its end (until)"),
        ScheduleCase(
            trigger: record(["every": .string("every day"), "tz": .string("Mars/Olympus")]),
            error: invalidArgument, message: "unknown time zone"),
    ]

    @Test func schedulingRefusesRulesAndTimesWithTheirOwnErrorNames() async throws {
        try await Session.run { s in
            let content = Self.record(["summary": .string("x")])
            for example in Self.scheduleCases {
                let error = await #expect(throws: DBusError.self, "\(example)") {
                    _ = try await Self.call(s, "Schedule", [content, example.trigger])
                }
                #expect(error?.name == example.error, "\(example)")
                #expect(error?.message.contains(example.message) == true, "\(error?.message ?? "")")
            }
            // ChimeKit counts a rule error as a refusal, like every error of chimed's own.
            let client = try await s.client()
            let refused = await #expect(throws: ChimeError.self) {
                _ = try await client.schedule(
                    ChimeCore.NotificationContent(summary: "x"), rule: .rrule("FREQ=SOMETIMES", dtstart: nil))
            }
            #expect(refused?.kind == .rejected)
            #expect(refused?.dbusName == Self.invalidRule)
            #expect(try await client.pending().isEmpty)
        }
    }

    @Test func reschedulingRefusesBadRulesAlsoInADryRun() async throws {
        try await Session.run { s async throws in
            func reschedule(_ entry: DBusValue, dryRun: Bool) async throws(DBusError) {
                _ = try await Self.call(
                    s, "Reschedule",
                    [
                        .string("g"), Self.empty, .array(element: Self.recordType, [entry]),
                        Self.record(["dry-run": .boolean(dryRun)]),
                    ])
            }
            let content = Self.record(["summary": .string("x")])
            let unreadable = Self.record(["id": .string("e"), "every": .string("every blue moon"), "content": content])
            let never = Self.record(["id": .string("e"), "on-calendar": .string("*-02-30"), "content": content])
            for dryRun in [true, false] {
                for entry in [unreadable, never] {
                    let error = await #expect(throws: DBusError.self) { try await reschedule(entry, dryRun: dryRun) }
                    #expect(error?.name == Self.invalidRule)
                    #expect(error?.message.contains("entry e:") == true, "\(error?.message ?? "")")
                }
            }
            // Two entries with one id: an argument error, not a rule error.
            let twice = Self.record(["id": .string("e"), "every": .string("every day"), "content": content])
            let error = await #expect(throws: DBusError.self) {
                _ = try await Self.call(
                    s, "Reschedule",
                    [.string("g"), Self.empty, .array(element: Self.recordType, [twice, twice]), Self.empty])
            }
            #expect(error?.name == Self.invalidArgument)
            #expect(try await s.client().groups().isEmpty)
        }
    }

    // MARK: - Bad input

    struct BadCall: Sendable, CustomStringConvertible {
        var member: String
        var arguments: [DBusValue]
        var interface = "io.chime.Chime1"
        var error: String
        var message: String
        var description: String { "\(member) → \(error) \(message)" }
    }

    static let megabyte = String(repeating: "m", count: 1 << 20)
    static let tenKilobytes = String(repeating: "g", count: 10_240)

    static var badCalls: [BadCall] {
        let summary = record(["summary": .string("x")])
        let properties = "org.freedesktop.DBus.Properties"
        return [
            // Sizes: each refusal names the key.
            BadCall(
                member: "Schedule", arguments: [record(["summary": .string(megabyte)]), empty], error: invalidArgument,
                message: "content key \"summary\" is 1048576 bytes long, more than the 1000 allowed"),
            BadCall(
                member: "Schedule",
                arguments: [
                    record(["summary": .string("x"), "body": .string(String(repeating: "b", count: 20_000))]), empty,
                ],
                error: invalidArgument, message: "content key \"body\""),
            BadCall(
                member: "Schedule",
                arguments: [record(["summary": .string("x"), "app-name": .string(tenKilobytes)]), empty],
                error: invalidArgument, message: "content key \"app-name\""),
            BadCall(
                member: "Schedule",
                arguments: [
                    record([
                        "summary": .string("x"),
                        "user-info": .dictionary(
                            key: .string, value: .string, [DBusDictEntry(.string("k"), .string(megabyte))]),
                    ]), empty,
                ], error: invalidArgument, message: "content key \"user-info\""),
            BadCall(
                member: "Schedule",
                arguments: [
                    record([
                        "summary": .string("x"),
                        "hints": record([String(repeating: "h", count: 300): .string("v")]),
                    ]), empty,
                ], error: invalidArgument, message: "content key \"hints\" is 300 bytes long, more than the 200 allowed"
            ),
            BadCall(
                member: "Schedule", arguments: [summary, record(["every": .string(tenKilobytes)])],
                error: invalidArgument, message: "trigger key \"every\" is 10240 bytes long"),
            BadCall(
                member: "Schedule", arguments: [record([megabyte: .string("x")]), empty], error: invalidArgument,
                message: "unknown content key \"mmmm"),
            BadCall(
                member: "RemoveGroup", arguments: [.string(tenKilobytes)], error: invalidArgument,
                message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "Reschedule",
                arguments: [.string(tenKilobytes), empty, .array(element: Self.recordType, []), empty],
                error: invalidArgument, message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "Reschedule",
                arguments: [
                    .string("g"), empty,
                    .array(element: Self.recordType, [record(["id": .string(tenKilobytes), "content": summary])]),
                    empty,
                ], error: invalidArgument, message: "entry 1 key \"id\" is 10240 bytes long"),
            BadCall(
                member: "SetGroupEnabled", arguments: [.string(tenKilobytes), .boolean(true)], error: invalidArgument,
                message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "GetAuthorization", arguments: [.string("no spaces please")], error: invalidArgument,
                message: "contains \" \""),
            BadCall(
                member: "RequestPermission", arguments: [.string(tenKilobytes), empty], error: invalidArgument,
                message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "ListPending", arguments: [record(["group": .string(tenKilobytes)])], error: invalidArgument,
                message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "History", arguments: [record(["group": .string(tenKilobytes)])], error: invalidArgument,
                message: "the group id is longer than 200 bytes"),
            BadCall(
                member: "RegisterCategories",
                arguments: [
                    .array(
                        element: Self.recordType,
                        Array(repeating: record(["id": .string("c"), "default": .string("dismiss")]), count: 101))
                ], error: invalidArgument, message: "at most 100 categories"),
            // A hint is one variant around s, i, d, y or b, and given once.
            BadCall(
                member: "Schedule",
                arguments: [
                    record(["summary": .string("x"), "hints": record(["x-k": .variant(.string("v"))])]), empty,
                ], error: invalidArgument, message: "hint \"x-k\" has type v"),
            BadCall(
                member: "Schedule",
                arguments: [
                    .dictionary(
                        key: .string, value: .variant,
                        [
                            DBusDictEntry(.string("summary"), .variant(.string("x"))),
                            DBusDictEntry(
                                .string("hints"),
                                .variant(
                                    .dictionary(
                                        key: .string, value: .variant,
                                        [
                                            DBusDictEntry(.string("x-k"), .variant(.int32(1))),
                                            DBusDictEntry(.string("x-k"), .variant(.int32(1))),
                                        ]))),
                        ]), empty,
                ], error: invalidArgument, message: "hint \"x-k\" appears twice"),
            // Values out of range.
            BadCall(member: "Snooze", arguments: [.uint64(1), .uint32(0)], error: invalidArgument, message: "seconds"),
            BadCall(
                member: "ListPending", arguments: [record(["next": .uint32(0)])], error: invalidArgument,
                message: "\"next\" must be 1 to 100"),
            // Wrong argument counts and types: the dispatcher refuses them before any handler runs.
            BadCall(
                member: "Schedule", arguments: [.string("x")], error: invalidArgs,
                message: "expects arguments of signature 'a{sv}a{sv}', got 's'"),
            BadCall(member: "Cancel", arguments: [], error: invalidArgs, message: "signature 't', got ''"),
            BadCall(
                member: "Snooze", arguments: [.uint64(1), .string("soon")], error: invalidArgs,
                message: "signature 'tu', got 'ts'"),
            BadCall(
                member: "Reschedule", arguments: [.string("g"), empty, empty], error: invalidArgs,
                message: "got 'sa{sv}a{sv}'"),
            BadCall(member: "Status", arguments: [.boolean(true)], error: invalidArgs, message: "got 'b'"),
            BadCall(
                member: "Explode", arguments: [], error: "org.freedesktop.DBus.Error.UnknownMethod",
                message: "no method Explode"),
            BadCall(
                member: "Get", arguments: [.string("io.chime.Chime1")], interface: properties, error: invalidArgs,
                message: "got 's'"),
            BadCall(
                member: "Get", arguments: [.string("io.chime.Chime1"), .string("Volume")], interface: properties,
                error: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property Volume"),
            BadCall(
                member: "Set", arguments: [.string("io.chime.Chime1"), .string("Paused"), .variant(.boolean(true))],
                interface: properties, error: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "read-only"),
            // The user's switches are the user's.
            BadCall(
                member: "ListApps", arguments: [], error: "io.chime.Chime1.Error.PermissionDenied",
                message: "only the user (the chime command) may list apps"),
        ]
    }

    @Test func badCallsGetErrorNamesAndChimedKeepsServing() async throws {
        try await Session.run { s in
            for bad in Self.badCalls {
                let error = await #expect(throws: DBusError.self, "\(bad)") {
                    _ = try await Self.call(s, bad.member, bad.arguments, interface: bad.interface)
                }
                #expect(error?.name == bad.error, "\(bad): \(error?.message ?? "")")
                #expect(error?.message.contains(bad.message) == true, "\(bad): \(error?.message ?? "")")
                #expect((error?.message.utf8.count ?? 0) < 1000, "\(bad): the message repeats the input")
            }
            // The user's tool: an app id longer than any app's.
            let long = try await s.chime(["app", "allow", String(repeating: "a", count: 300)])
            #expect(long.status == 2)
            #expect(long.stderr.contains("app must be an app id of 1 to 255 bytes"), "\(long.stderr)")

            // A string that is not UTF-8 never reaches chimed: the bus drops the connection that sends it.
            #expect(try await Self.sendRaw(s, groupID: "\\xff\\xfe") == "disconnected")
            // The same message with a valid string reaches chimed, which answers it.
            #expect(try await Self.sendRaw(s, groupID: "missing") == "io.chime.Chime1.Error.NotFound")

            #expect(!s.chimed!.hasExited)
            let client = try await s.client()
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "still serving"))
            try await s.server!.notifyCalls.wait(forCount: 1)
            #expect(s.server!.notifyCalls.elements.map(\.summary) == ["still serving"])
        }
    }

    /// Sends `RemoveGroup(groupID)` over a raw socket, marshalled by hand (a Python bytes literal, so
    /// that it can hold bytes that are not UTF-8, which no D-Bus library sends). Returns the error name
    /// of the reply, or "disconnected" when the bus closed the connection instead.
    static func sendRaw(_ s: Session, groupID: String) async throws -> String {
        let script = """
            import os, socket, struct
            address = os.environ["DBUS_SESSION_BUS_ADDRESS"]
            path = dict(kv.split("=", 1) for kv in address[len("unix:"):].split(","))["path"]

            class Writer:
                def __init__(self): self.b = bytearray()
                def align(self, n): self.b += b"\\0" * (-len(self.b) % n)
                def byte(self, v): self.b.append(v)
                def u32(self, v): self.align(4); self.b += struct.pack("<I", v)
                def string(self, s): self.u32(len(s)); self.b += s + b"\\0"
                def signature(self, s): self.byte(len(s)); self.b += s + b"\\0"

            def message(serial, path, interface, member, destination, signature=b"", body=b""):
                w = Writer()
                w.b += b"l"; w.byte(1); w.byte(0); w.byte(1); w.u32(len(body)); w.u32(serial)
                w.u32(0); start = len(w.b)
                fields = [(1, b"o", path), (2, b"s", interface), (3, b"s", member), (6, b"s", destination)]
                if signature: fields.append((8, b"g", signature))
                for code, kind, value in fields:
                    w.align(8); w.byte(code); w.signature(kind)
                    if kind == b"g": w.signature(value)
                    else: w.string(value)
                w.b[12:16] = struct.pack("<I", len(w.b) - start)
                w.align(8)
                return bytes(w.b) + body

            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            s.sendall(b"\\0AUTH EXTERNAL " + str(os.getuid()).encode().hex().encode() + b"\\r\\n")
            assert s.recv(4096).startswith(b"OK")
            s.sendall(b"BEGIN\\r\\n")
            s.sendall(message(1, b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello", b"org.freedesktop.DBus"))
            body = Writer(); body.string(b"\(groupID)")
            s.sendall(message(
                2, b"/io/chime/Chime1", b"io.chime.Chime1", b"RemoveGroup", b"io.chime.Chime1", b"s", bytes(body.b)))
            s.settimeout(10)
            received = b""
            while b"io.chime.Chime1.Error." not in received:
                chunk = s.recv(65536)
                if not chunk: break
                received += chunk
            start = received.find(b"io.chime.Chime1.Error.")
            print("disconnected" if start < 0 else received[start:received.index(b"\\0", start)].decode())
            """
        let process = try ManagedProcess(
            "/usr/bin/python3", ["-c", script], environment: s.bus.environment, directory: s.bus.directory)
        let status = await process.waitForExit(timeout: .seconds(20))
        guard status == 0 else { throw TestFailure("the raw client failed: \(process.stderr)") }
        return process.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
