import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// The io.chime.Chime1 object as any D-Bus client sees it: the server properties and their
/// PropertiesChanged signals, and the error name each kind of bad input gets.
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
                    NotificationContent(summary: "x"), rule: .rrule("FREQ=SOMETIMES", dtstart: nil))
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
}
