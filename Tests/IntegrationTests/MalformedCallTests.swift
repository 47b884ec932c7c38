import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation
import TestSupport
import Testing

/// A thousand generated bad calls, each answered with an error of a documented name, and chimed serving
/// on as the same process afterwards: wrong signatures, wrong types inside records, strings over the
/// documented limits, values nested as deep as D-Bus allows, unknown members, interfaces and objects,
/// empty and giant records, and keys given twice. Replay a run with `CHIME_MALFORMED_SEED=SEED`.
@Suite(.serialized) struct MalformedCallTests {
    static let count = 1000

    static let chime = "io.chime.Chime1."
    static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
    static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// docs/dbus-api.md's errors of chimed's own; anything else must be one of the bus's.
    static let documented: Set<String> = [
        "InvalidArgument", "InvalidRule", "InvalidTime", "NotFound", "PermissionDenied", "LimitsExceeded", "Conflict",
        "Storage",
    ]

    /// The interface's methods and their input signatures.
    static let methods: [(name: String, signature: String)] = [
        ("Schedule", "a{sv}a{sv}"), ("ListPending", "a{sv}"), ("Cancel", "t"), ("Snooze", "tu"),
        ("Reschedule", "sa{sv}aa{sv}a{sv}"), ("ListGroups", ""), ("ListGroupsPaged", "a{sv}"),
        ("SetGroupEnabled", "sb"), ("RemoveGroup", "s"),
        ("History", "a{sv}"), ("RegisterCategories", "aa{sv}"), ("TakeActions", ""), ("RequestPermission", "sa{sv}"),
        ("GetAuthorization", "s"), ("ListApps", ""), ("SetAppConsent", "ss"), ("Status", ""),
    ]

    /// Each record key the API documents, with its type and, for strings, its limit in bytes.
    struct Key: Sendable {
        var name: String
        var type: DBusType
        var limit: Int?
    }

    static let contentKeys: [Key] = [
        Key(name: "summary", type: .string, limit: 1000), Key(name: "subtitle", type: .string, limit: 1000),
        Key(name: "body", type: .string, limit: 16000), Key(name: "app-name", type: .string, limit: 1000),
        Key(name: "icon", type: .string, limit: 4096), Key(name: "sound", type: .string, limit: 1000),
        Key(name: "urgency", type: .byte), Key(name: "expire-timeout", type: .int32),
        Key(name: "actions", type: .array(.structure([.string, .string]))),
        Key(name: "category", type: .string, limit: 200),
        Key(name: "user-info", type: .dictionary(key: .string, value: .string)),
        Key(name: "desktop-entry", type: .string, limit: 1000),
        Key(name: "hints", type: .dictionary(key: .string, value: .variant)),
    ]
    static let triggerKeys: [Key] = [
        Key(name: "at", type: .int64), Key(name: "every", type: .string, limit: 1000),
        Key(name: "rrule", type: .string, limit: WrittenRule.maximumRRuleSetBytes),
        Key(name: "dtstart", type: .string, limit: 255),
        Key(name: "on-calendar", type: .string, limit: 1000), Key(name: "date-rule", type: .string, limit: 16384),
        Key(name: "tz", type: .string, limit: 255), Key(name: "until", type: .int64), Key(name: "count", type: .uint32),
        Key(name: "replaces-id", type: .uint32),
    ]

    /// One generated call and the error it must get.
    struct Call: Sendable, CustomStringConvertible {
        var kind: String
        var path: DBusObjectPath = "/io/chime/Chime1"
        var interface = "io.chime.Chime1"
        var member: String
        var arguments: [DBusValue]
        var expected: Set<String>
        var description: String {
            "\(kind): \(interface).\(member.prefix(40))(\(DBusSignature(arguments.map(\.type)).description.prefix(60)))"
        }
    }

    /// The most bytes of arguments chimed takes for `member` (docs/security.md).
    static func maximumBytes(_ member: String) -> Int {
        switch member {
        case "Schedule": ChimeBus.maximumScheduleBytes
        case "Reschedule": ChimeBus.maximumRescheduleBytes
        case "RegisterCategories": ChimeBus.maximumCategoriesBytes
        default: ChimeBus.maximumCallBytes
        }
    }

    static let settings = """
        [limits]
        calls-per-second = 100000
        call-burst = 100000
        """

    @Test func aThousandMalformedCallsGetDocumentedErrorsAndChimedKeepsServing() async throws {
        let seed = SplitMix64.seed(from: "CHIME_MALFORMED_SEED")
        print("MalformedCallTests: seed \(seed) (CHIME_MALFORMED_SEED=\(seed) replays this run)")
        var random = SplitMix64(seed: seed)
        try await Session.run(settings: Self.settings) { s in
            let pid = try await s.observer.unixProcessID(of: "io.chime.Chime1")
            #expect(pid == UInt32(s.chimed!.pid))
            var kinds: [String: Int] = [:]
            var bytes = 0
            for index in 0..<Self.count {
                let call = Self.generate(&random)
                kinds[call.kind, default: 0] += 1
                let message = DBusMessage.methodCall(
                    destination: "io.chime.Chime1", path: call.path, interface: call.interface, member: call.member,
                    body: call.arguments)
                bytes += (try? message.serialized().count) ?? 0
                do throws(DBusError) {
                    let reply = try await s.observer.call(message, timeout: .seconds(20))
                    Issue.record(
                        "call \(index) \(call) succeeded: \(reply.body.prefix(3)) for \(String(describing: call.arguments).prefix(600))"
                    )
                } catch {
                    let known =
                        error.name.hasPrefix("org.freedesktop.DBus.Error.")
                        || (error.name.hasPrefix(Self.chime + "Error.")
                            && Self.documented.contains(String(error.name.dropFirst((Self.chime + "Error.").count))))
                    #expect(known, "call \(index) \(call): undocumented error \(error.name)")
                    // A call larger than its method takes is refused before it is read, whatever is wrong inside.
                    let tooBig =
                        error.name == DBusError.Name.limitsExceeded.rawValue
                        && ((try? message.serialized().count) ?? 0) > Self.maximumBytes(call.member)
                    #expect(
                        call.expected.contains(error.name) || tooBig,
                        "call \(index) \(call): \(error.name) \(error.message.prefix(200))")
                    #expect(error.message.utf8.count < 1000, "call \(index) \(call): the message repeats the input")
                }
            }
            print(
                "MalformedCallTests: \(Self.count) calls, \(bytes / 1024) kB: "
                    + kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))

            // The same chimed serves on, and none of the calls changed anything.
            #expect(!s.chimed!.hasExited)
            #expect(try await s.observer.unixProcessID(of: "io.chime.Chime1") == pid)
            let pending = try await BusAPITests.call(s, "ListPending", [BusAPITests.empty])
            #expect(pending.first == .array(element: BusAPITests.recordType, []))
            _ = try await FaultTests.schedule(s, "still serving")
            try await s.server!.notifyCalls.wait("a good call after the bad ones was delivered") {
                $0.map(\.summary) == ["still serving"]
            }
        }
    }

    // MARK: - Generating calls

    static func generate(_ r: inout SplitMix64) -> Call {
        switch r.int(0...9) {
        case 0: wrongSignature(&r)
        case 1, 2: wrongType(&r)
        case 3: hugeString(&r)
        case 4: deepNesting(&r)
        case 5: unknownMember(&r)
        case 6: emptyOrGiant(&r)
        case 7: duplicateKeys(&r)
        case 8: badValues(&r)
        default: r.chance(0.5) ? wrongType(&r) : hugeString(&r)
        }
    }

    static func record(_ entries: [(String, DBusValue)]) -> DBusValue {
        .dictionary(key: .string, value: .variant, entries.map { DBusDictEntry(.string($0.0), .variant($0.1)) })
    }

    /// The right number and types of arguments never arrive: InvalidArgs before chimed looks at a value.
    static func wrongSignature(_ r: inout SplitMix64) -> Call {
        let method = r.pick(methods)
        var arguments: [DBusValue] = []
        repeat {
            arguments = (0..<r.int(0...4)).map { _ in randomValue(&r, depth: 0) }
            // Sometimes the right types, with one argument more or one missing.
            if r.chance(0.2), let expected = try? DBusSignature(parsing: method.signature) {
                arguments = expected.types.map { value(of: $0, &r) }
                if arguments.isEmpty || r.chance(0.5) {
                    arguments.append(randomValue(&r, depth: 0))
                } else {
                    arguments.removeLast()
                }
            }
        } while DBusSignature(arguments.map(\.type)).description == method.signature
        return Call(kind: "wrong signature", member: method.name, arguments: arguments, expected: [invalidArgs])
    }

    /// A documented key with a value of another type.
    static func wrongType(_ r: inout SplitMix64) -> Call {
        let summary = ("summary", DBusValue.string("x"))
        switch r.int(0...4) {
        case 0:
            let key = r.pick(contentKeys)
            var bad = valueOtherThan(key.type, &r)
            // user-info takes a{sv} as well as the a{ss} of older clients.
            while key.name == "user-info", bad.type == .dictionary(key: .string, value: .variant) {
                bad = valueOtherThan(key.type, &r)
            }
            let content = key.name == "summary" ? [(key.name, bad)] : [summary, (key.name, bad)]
            return Call(
                kind: "wrong type in a record", member: "Schedule", arguments: [record(content), record([])],
                expected: [invalidArgument])
        case 1:
            let key = r.pick(triggerKeys)
            return Call(
                kind: "wrong type in a record", member: "Schedule",
                arguments: [record([summary]), record([(key.name, valueOtherThan(key.type, &r))])],
                expected: [invalidArgument])
        case 2:
            let (member, keys): (String, [Key]) = r.pick([
                ("ListPending", [Key(name: "next", type: .uint32), Key(name: "group", type: .string)]),
                ("ListGroupsPaged", [Key(name: "after", type: .string)]),
                (
                    "History",
                    [
                        Key(name: "limit", type: .uint32), Key(name: "group", type: .string),
                        Key(name: "item", type: .uint64), Key(name: "since", type: .int64),
                    ]
                ),
            ])
            let key = r.pick(keys)
            return Call(
                kind: "wrong type in a record", member: member,
                arguments: [record([(key.name, valueOtherThan(key.type, &r))])], expected: [invalidArgument])
        case 3:
            // A hint of a type the specification does not have.
            let hint = valueOtherThan(r.pick([.string, .int32, .double, .byte, .boolean]), &r)
            guard ![DBusType.string, .int32, .double, .byte, .boolean].contains(hint.type) else {
                return wrongType(&r)
            }
            return Call(
                kind: "wrong type in a record", member: "Schedule",
                arguments: [record([summary, ("hints", record([("x-hint", hint)]))]), record([])],
                expected: [invalidArgument])
        default:
            let key = r.pick([
                Key(name: "missed", type: .string), Key(name: "late-window", type: .double),
                Key(name: "enabled", type: .boolean),
            ])
            return Call(
                kind: "wrong type in a record", member: "Reschedule",
                arguments: [
                    .string("g"), record([(key.name, valueOtherThan(key.type, &r))]),
                    .array(element: BusAPITests.recordType, []), record([]),
                ], expected: [invalidArgument])
        }
    }

    /// A string over its documented limit, in a record or as a group id.
    static func hugeString(_ r: inout SplitMix64) -> Call {
        let summary = ("summary", DBusValue.string("x"))
        switch r.int(0...3) {
        case 0:
            let key = r.pick(contentKeys.filter { $0.limit != nil })
            let text = string(over: key.limit!, &r)
            let content = key.name == "summary" ? [(key.name, text)] : [summary, (key.name, text)]
            return Call(
                kind: "string over its limit", member: "Schedule", arguments: [record(content), record([])],
                expected: [invalidArgument])
        case 1:
            let key = r.pick(triggerKeys.filter { $0.limit != nil })
            return Call(
                kind: "string over its limit", member: "Schedule",
                arguments: [record([summary]), record([(key.name, string(over: key.limit!, &r))])],
                expected: [invalidArgument])
        case 2:
            let group = string(over: 200, &r)
            let (member, arguments): (String, [DBusValue]) = r.pick([
                ("RemoveGroup", [group]), ("SetGroupEnabled", [group, .boolean(true)]),
                ("GetAuthorization", [group]), ("RequestPermission", [group, record([])]),
                ("Reschedule", [group, record([]), .array(element: BusAPITests.recordType, []), record([])]),
            ])
            return Call(
                kind: "string over its limit", member: member, arguments: arguments, expected: [invalidArgument])
        default:
            // Any string in a record: at most 16384 bytes, also for a key chimed does not know.
            return Call(
                kind: "string over its limit", member: r.pick(["ListPending", "History"]),
                arguments: [record([("group", string(over: 16384, &r))])], expected: [invalidArgument])
        }
    }

    /// Values nested as deep as D-Bus allows: variants in variants, arrays of arrays, structs in
    /// structs, records in records; where a string belongs, or as an argument of the wrong signature.
    static func deepNesting(_ r: inout SplitMix64) -> Call {
        let core = DBusValue.string("core")
        var nested: DBusValue
        var recordLevels = 0
        switch r.int(0...3) {
        case 0:
            // The record's variant sits 2 deep and holds the chain: at most 64 around the string.
            nested = core
            for _ in 0..<r.int(1...61) { nested = .variant(nested) }
        case 1:
            nested = core
            var type = DBusType.string
            for _ in 0..<r.int(1...32) {
                nested = .array(element: type, [nested])
                type = .array(type)
            }
        case 2:
            nested = core
            for _ in 0..<r.int(1...32) { nested = .structure([nested]) }
        default:
            // Records in variants in records: three containers each, 21 of them in the outer record. At least
            // two: one record of strings is a well-formed `hints`.
            nested = core
            recordLevels = r.int(2...20)
            for _ in 0..<recordLevels { nested = record([("k", nested)]) }
        }
        if r.chance(0.25) {
            // As an argument of its own: a signature no method has.
            return Call(
                kind: "deep nesting", member: r.pick(["Cancel", "RemoveGroup", "Status"]), arguments: [nested],
                expected: [invalidArgs])
        }
        // User info takes dictionaries 8 deep: records 10 deep and more only are too deep for it.
        let key = r.pick(
            ["summary", "body", "hints", "actions"] + (recordLevels == 0 || recordLevels > 9 ? ["user-info"] : []))
        let content = key == "summary" ? [(key, nested)] : [("summary", .string("x")), (key, nested)]
        return Call(
            kind: "deep nesting", member: "Schedule", arguments: [record(content), record([])],
            expected: [invalidArgument])
    }

    /// Members, interfaces and objects that do not exist.
    static func unknownMember(_ r: inout SplitMix64) -> Call {
        switch r.int(0...3) {
        case 0:
            var name = ""
            repeat { name = identifier(&r, length: r.int(1...255)) } while methods.contains { $0.name == name }
            return Call(
                kind: "unknown method", member: name,
                arguments: (0..<r.int(0...2)).map { _ in randomValue(&r, depth: 0) },
                expected: ["org.freedesktop.DBus.Error.UnknownMethod"])
        case 1:
            let interface = (0..<r.int(2...5)).map { _ in identifier(&r, length: r.int(1...20)) }.joined(separator: ".")
            return Call(
                kind: "unknown interface", interface: interface, member: r.pick(methods).name,
                arguments: [record([("summary", .string("x"))]), record([])],
                expected: ["org.freedesktop.DBus.Error.UnknownInterface"])
        case 2:
            let path = try! DBusObjectPath(
                "/" + (0..<r.int(1...4)).map { _ in identifier(&r, length: r.int(1...12)) }.joined(separator: "/"))
            return Call(
                kind: "unknown object", path: path, member: "Schedule",
                arguments: [record([("summary", .string("x"))]), record([])],
                expected: ["org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod"])
        default:
            // The properties interface: members it lacks, properties and interfaces that do not exist.
            let properties = "org.freedesktop.DBus.Properties"
            return r.pick([
                Call(
                    kind: "unknown property", interface: properties, member: "Get",
                    arguments: [.string("io.chime.Chime1"), .string(identifier(&r, length: 12))],
                    expected: ["org.freedesktop.DBus.Error.UnknownProperty"]),
                Call(
                    kind: "unknown interface", interface: properties, member: "GetAll",
                    arguments: [.string("io.chime.Nope" + identifier(&r, length: 4))],
                    expected: ["org.freedesktop.DBus.Error.UnknownInterface"]),
                Call(
                    kind: "unknown method", interface: properties, member: "Schedule",
                    arguments: [record([]), record([])], expected: ["org.freedesktop.DBus.Error.UnknownMethod"]),
                Call(
                    kind: "read-only property", interface: properties, member: "Set",
                    arguments: [.string("io.chime.Chime1"), .string("Version"), .variant(.string("9"))],
                    expected: ["org.freedesktop.DBus.Error.PropertyReadOnly"]),
            ])
        }
    }

    /// Records with nothing in them where something is required, and records with thousands of keys.
    static func emptyOrGiant(_ r: inout SplitMix64) -> Call {
        if r.chance(0.5) {
            return r.pick([
                Call(
                    kind: "empty record", member: "Schedule", arguments: [record([]), record([])],
                    expected: [invalidArgument]),
                Call(
                    kind: "empty record", member: "Reschedule",
                    arguments: [
                        .string("g"), record([]), .array(element: BusAPITests.recordType, [record([])]), record([]),
                    ],
                    expected: [invalidArgument]),
                Call(
                    kind: "empty record", member: "RegisterCategories",
                    arguments: [.array(element: BusAPITests.recordType, [record([])])], expected: [invalidArgument]),
                Call(
                    kind: "empty record", member: "Schedule",
                    arguments: [record([("summary", .string(""))]), record([])], expected: [invalidArgument]),
            ])
        }
        // Thousands of keys nobody knows, or more entries than a call may hold.
        let size = r.chance(0.8) ? r.int(100...5000) : r.int(5001...100_000)
        if r.chance(0.2) {
            let entries = Array(repeating: record([]), count: 100_001)
            return Call(
                kind: "giant record", member: "Reschedule",
                arguments: [.string("g"), record([]), .array(element: BusAPITests.recordType, entries), record([])],
                expected: [invalidArgument])
        }
        let giant = record((0..<size).map { ("key-\($0)", DBusValue.string("v")) })
        return r.pick([
            Call(
                kind: "giant record", member: "Schedule", arguments: [giant, record([])], expected: [invalidArgument]),
            Call(kind: "giant record", member: "History", arguments: [giant], expected: [invalidArgument]),
            Call(
                kind: "giant record", member: "Schedule",
                arguments: [record([("summary", .string("x")), ("hints", giant)]), record([])],
                expected: [invalidArgument]),
        ])
    }

    /// A record that gives one key twice, even with the same value.
    static func duplicateKeys(_ r: inout SplitMix64) -> Call {
        let key = r.pick(["summary", "body", "icon"])
        var entries = [("summary", DBusValue.string("x")), ("body", .string("b")), ("icon", .string("i"))]
        entries.insert((key, r.chance(0.5) ? .string("again") : entries.first { $0.0 == key }!.1), at: r.int(0...3))
        let summary = ("summary", DBusValue.string("x"))
        switch r.int(0...3) {
        case 0:
            return Call(
                kind: "duplicate key", member: "Schedule", arguments: [record(entries), record([])],
                expected: [invalidArgument])
        case 1:
            return Call(
                kind: "duplicate key", member: "Schedule",
                arguments: [record([summary]), record([("at", .int64(1)), ("at", .int64(2))])],
                expected: [invalidArgument])
        case 2:
            let hints = record([("x-a", .string("1")), ("x-b", .int32(2)), ("x-a", .string(r.pick(["1", "2"])))])
            return Call(
                kind: "duplicate key", member: "Schedule",
                arguments: [record([summary, ("hints", hints)]), record([])],
                expected: [invalidArgument])
        default:
            let info = DBusValue.dictionary(
                key: .string, value: .string,
                [DBusDictEntry(.string("k"), .string("1")), DBusDictEntry(.string("k"), .string("1"))])
            return Call(
                kind: "duplicate key", member: "Schedule",
                arguments: [record([summary, ("user-info", info)]), record([])],
                expected: [invalidArgument])
        }
    }

    /// Right types, values out of range.
    static func badValues(_ r: inout SplitMix64) -> Call {
        r.pick([
            Call(
                kind: "value out of range", member: "Snooze",
                arguments: [.uint64(1), .uint32(r.pick([0, 31_622_401]))],
                expected: [invalidArgument]),
            Call(
                kind: "value out of range", member: "ListPending",
                arguments: [record([("next", .uint32(r.pick([0, 101])))])],
                expected: [invalidArgument]),
            Call(
                kind: "value out of range", member: "Schedule",
                arguments: [
                    record([("summary", .string("x")), ("urgency", .byte(UInt8(r.int(3...255))))]), record([]),
                ],
                expected: [invalidArgument]),
            Call(
                kind: "value out of range", member: "RemoveGroup",
                arguments: [.string(r.pick(["", "a b", "ä", "a/b"]))],
                expected: [invalidArgument]),
            Call(
                kind: "unknown key", member: "Schedule",
                arguments: [
                    record([("summary", .string("x")), (identifier(&r, length: 9), .string("?"))]), record([]),
                ],
                expected: [invalidArgument]),
        ])
    }

    // MARK: - Values

    static let basicTypes: [DBusType] = [
        .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature,
    ]

    /// A value of any type, containers at most `depth` 3 deep.
    static func randomValue(_ r: inout SplitMix64, depth: Int) -> DBusValue {
        guard depth < 3, r.chance(0.4) else { return value(of: r.pick(basicTypes), &r) }
        switch r.int(0...3) {
        case 0: return .variant(randomValue(&r, depth: depth + 1))
        case 1:
            let element = r.pick(basicTypes)
            return .array(element: element, (0..<r.int(0...3)).map { _ in value(of: element, &r) })
        case 2:
            let key = r.pick(basicTypes)
            return .dictionary(
                key: key, value: .variant,
                (0..<r.int(0...3)).map { _ in
                    DBusDictEntry(value(of: key, &r), .variant(randomValue(&r, depth: depth + 1)))
                })
        default:
            return .structure((0..<r.int(1...3)).map { _ in randomValue(&r, depth: depth + 1) })
        }
    }

    /// A value of `type` (containers empty or with one element).
    static func value(of type: DBusType, _ r: inout SplitMix64) -> DBusValue {
        switch type {
        case .byte: .byte(UInt8(truncatingIfNeeded: r.next()))
        case .boolean: .boolean(r.chance(0.5))
        case .int16: .int16(Int16(truncatingIfNeeded: r.next()))
        case .uint16: .uint16(UInt16(truncatingIfNeeded: r.next()))
        case .int32: .int32(Int32(truncatingIfNeeded: r.next()))
        case .uint32: .uint32(UInt32(truncatingIfNeeded: r.next()))
        case .int64: .int64(Int64(bitPattern: r.next()))
        case .uint64: .uint64(r.next())
        case .double: .double(r.pick([0, -1.5, .infinity, .nan, 1e308, Double(r.int(0...1000))]))
        case .string: .string(text(&r, bytes: r.int(0...40)))
        case .objectPath: .objectPath(r.pick(["/", "/io/chime/Chime1", "/a/b_c/D9"]))
        case .signature: .signature(r.pick(["", "a{sv}", "(iu)as"]))
        case .unixFD: .uint32(0)
        case .variant: .variant(value(of: r.pick(basicTypes), &r))
        case .array(let element): .array(element: element, r.chance(0.5) ? [] : [value(of: element, &r)])
        case .dictionary(let key, let value):
            .dictionary(
                key: key, value: value,
                r.chance(0.5) ? [] : [DBusDictEntry(Self.value(of: key, &r), Self.value(of: value, &r))])
        case .structure(let fields): .structure(fields.map { value(of: $0, &r) })
        }
    }

    /// A value whose type is not `type`.
    static func valueOtherThan(_ type: DBusType, _ r: inout SplitMix64) -> DBusValue {
        var candidate: DBusValue
        repeat { candidate = randomValue(&r, depth: 0) } while candidate.type == type
        return candidate
    }

    /// Valid UTF-8 of exactly `bytes` bytes: ASCII, Latin, CJK and emoji mixed.
    static func text(_ r: inout SplitMix64, bytes: Int) -> String {
        var scalars = String.UnicodeScalarView()
        var used = 0
        while used < bytes {
            let left = bytes - used
            let scalar: Unicode.Scalar
            switch r.int(0...9) {
            case 0 where left >= 4: scalar = Unicode.Scalar(UInt32(r.int(0x1F600...0x1F64F)))!
            case 1 where left >= 3: scalar = Unicode.Scalar(UInt32(r.int(0x4E00...0x9FFF)))!
            case 2 where left >= 2: scalar = Unicode.Scalar(UInt32(r.int(0xC0...0x17F)))!
            default: scalar = Unicode.Scalar(UInt8(r.int(0x20...0x7E)))
            }
            scalars.append(scalar)
            used += String(scalar).utf8.count
        }
        return String(scalars)
    }

    /// A string longer than `limit` bytes: mostly just over it, sometimes far over (up to a megabyte).
    static func string(over limit: Int, _ r: inout SplitMix64) -> DBusValue {
        let size =
            switch r.int(0...9) {
            case 0..<6: limit + r.int(1...64)
            case 6..<9: limit + r.int(65...max(66, limit * 3))
            default: r.int(max(limit + 1, 100_000)...(1 << 20))
            }
        return .string(text(&r, bytes: size))
    }

    /// A valid D-Bus name element: letters, digits and `_`, not starting with a digit.
    static func identifier(_ r: inout SplitMix64, length: Int) -> String {
        let first = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        let rest = first + Array("0123456789")
        return String(r.pick(first)) + String((1..<max(1, length)).map { _ in r.pick(rest) })
    }
}
