import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// The io.chime.Chime1 object as any D-Bus client sees it: the error name each kind of bad input gets.
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
