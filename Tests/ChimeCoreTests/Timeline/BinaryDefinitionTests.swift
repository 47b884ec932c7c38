import Foundation
import Testing

@testable import ChimeCore

/// The binary encoding of definitions (`BinaryDefinition`): every kind of entry and rule survives it, equal
/// values encode to equal bytes, and anything else than a definition it wrote is refused with a reason
/// instead of being decoded.
@Suite struct BinaryDefinitionTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let utc = Zone(identifier: "UTC")!

    /// Entries of every trigger, content source and optional field.
    var entries: [TimelineEntry] {
        var content = NotificationContent(summary: "Stand up", body: "<b>now</b> — 10 ‰ ☕")
        content.userInfo = ["n": .integer(-7), "list": .array([.string("a"), .bool(true)]), "d": .double(0.25)]
        content.hints["x-nan"] = .double(.nan)
        content.hints["x-low"] = .int(Int32.min)
        content.hints["x-byte"] = .byte(255)
        var entries = [
            TimelineEntry(id: "at", trigger: .at(t0), content: .fixed(NotificationContent(summary: "once"))),
            TimelineEntry(
                id: "rrule", trigger: .rule(.rrule("FREQ=WEEKLY;BYDAY=MO,FR", dtstart: nil), timeZone: "Asia/Kolkata"),
                content: .template(content), category: "meeting", endDate: t0 + 86_400 * 90, maximumOccurrences: 12,
                escalation: Escalation(every: 300, times: 3), offset: OccurrenceOffset(days: -1, seconds: 1_800),
                wake: true),
            TimelineEntry(
                id: "calendar", trigger: .rule(.onCalendar("Mon..Fri 09:00"), timeZone: nil),
                content: .pool(
                    ContentPool(
                        base: content, items: [.init(body: "one"), .init(summary: "two", body: "2", enabled: false)],
                        order: .inOrder))),
            TimelineEntry(
                id: "phrase", trigger: .rule(.phrase("every second tuesday at 8pm"), timeZone: nil),
                content: .command(CommandSource(arguments: ["/bin/echo", "hi"], base: content))),
            TimelineEntry(
                id: "", trigger: .at(Date(timeIntervalSince1970: -1e9)),
                content: .callback(CallbackSource(busName: "org.example.App", fallback: content))),
        ]
        entries[0].escalationStep = EscalationStep(of: 9, step: 2, escalation: Escalation(every: 60), group: "g")
        return entries
    }

    var recurrences: [Recurrence] {
        get throws {
            let rules: [WrittenRule] = [
                .rrule("FREQ=MONTHLY;BYDAY=1FR;BYHOUR=20;BYMINUTE=15;COUNT=12", dtstart: nil),
                .onCalendar("*-*-01 12:00:00"), .phrase("every weekday at 9"), .phrase("every 90 minutes"),
            ]
            return try rules.map {
                try Recurrence.parse($0, now: t0, timeZone: .named("Europe/Berlin"), systemTimeZone: utc)
            }
        }
    }

    /// The entry with its content's NaN hint (not equal to itself) left out.
    func withoutNaN(_ entry: TimelineEntry) -> TimelineEntry {
        func clean(_ content: NotificationContent) -> NotificationContent {
            var content = content
            content.hints["x-nan"] = nil
            return content
        }
        var entry = entry
        switch entry.content {
        case .fixed(let content): entry.content = .fixed(clean(content))
        case .template(let content): entry.content = .template(clean(content))
        case .pool(var pool):
            pool.base = clean(pool.base)
            entry.content = .pool(pool)
        case .command(var command):
            command.base = clean(command.base)
            entry.content = .command(command)
        case .callback(var callback):
            callback.fallback = clean(callback.fallback)
            entry.content = .callback(callback)
        }
        return entry
    }

    @Test func everyKindOfEntryAndRuleReadsBackAsWritten() throws {
        for entry in entries {
            let bytes = DefinitionCoding.encode(entry)
            #expect(bytes.first == BinaryDefinition.version)
            let read = try DefinitionCoding.decode(TimelineEntry.self, bytes)
            // The NaN hint is not equal to itself; everything else compares as it is.
            #expect(DefinitionCoding.encode(read) == bytes, "entry \(entry.id)")
            #expect(withoutNaN(read) == withoutNaN(entry), "entry \(entry.id)")
            // The same value as JSON, the encoding of earlier versions, gives.
            let json = try DefinitionCoding.decodeJSON(
                TimelineEntry.self, Array(DefinitionCoding.encodeJSON(entry).utf8))
            #expect(DefinitionCoding.encode(json) == bytes, "entry \(entry.id)")
        }
        for recurrence in try recurrences {
            let bytes = DefinitionCoding.encode(recurrence)
            #expect(try DefinitionCoding.decode(Recurrence.self, bytes) == recurrence)
        }
    }

    /// Smaller than the JSON it replaces.
    @Test func theEncodingIsSmallerThanJSON() {
        for entry in entries {
            #expect(DefinitionCoding.encode(entry).count < DefinitionCoding.encodeJSON(entry).utf8.count)
        }
    }

    /// Dictionaries filled in different orders (and so iterated in different orders) encode equally.
    @Test func equalValuesEncodeToEqualBytes() {
        var small: [String: UserInfoValue] = [:]
        var large: [String: UserInfoValue] = [:]
        large.reserveCapacity(4_096)
        let keys = (0..<40).map { "k\($0)" } + ["", "é", "Z", "a\u{0}b"]
        for key in keys { small[key] = .string(key) }
        for key in keys.reversed() { large[key] = .string(key) }
        #expect(Array(small.keys) != Array(large.keys))
        #expect(DefinitionCoding.encode(small) == DefinitionCoding.encode(large))
    }

    /// A small container and a caller's large dictionary (thousands of keys) encode in key order whatever
    /// order they were filled in, and a key encoded twice keeps its last value.
    @Test func containersOfEverySizeAreWrittenInKeyOrder() throws {
        for count in [3, 16, 17, 5_000] {
            let keys = (0..<count).map { "k\($0)" }
            var forward: [String: UserInfoValue] = [:]
            var backward: [String: UserInfoValue] = [:]
            backward.reserveCapacity(count * 4)
            for key in keys { forward[key] = .string(key) }
            for key in keys.reversed() { backward[key] = .string(key) }
            let bytes = DefinitionCoding.encode(forward)
            #expect(DefinitionCoding.encode(backward) == bytes, "\(count) keys")
            #expect(try DefinitionCoding.decode([String: UserInfoValue].self, bytes) == forward)
        }
        struct Twice: Encodable {
            enum Key: String, CodingKey { case b, a }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(1, forKey: .b)
                try container.encode(2, forKey: .a)
                try container.encode(3, forKey: .b)
            }
        }
        struct Read: Codable, Equatable { var a: Int, b: Int }
        let twice = DefinitionCoding.encode(Twice())
        #expect(try DefinitionCoding.decode(Read.self, twice) == Read(a: 2, b: 3))
        #expect(twice == DefinitionCoding.encode(Read(a: 2, b: 3)))
    }

    /// A list read one value after another moves on only past a value that decoded, and says so when it
    /// has no more.
    @Test func aListMovesOnOnlyPastWhatDecoded() throws {
        struct Either: Decodable {
            var values: [String] = []
            init(from decoder: any Decoder) throws {
                var list = try decoder.unkeyedContainer()
                while !list.isAtEnd {
                    if let number = try? list.decode(Int.self) {
                        values.append("\(number)")
                    } else if try list.decodeNil() {
                        values.append("nil")
                    } else {
                        values.append(try list.decode(String.self))
                    }
                }
                #expect(throws: DecodingError.self) { _ = try list.decodeNil() }
                #expect(throws: DecodingError.self) { _ = try list.decode(Int.self) }
            }
        }
        let bytes = DefinitionCoding.encode([UserInfoValue?.some(.string("a")), nil, .some(.string("b"))])
        #expect(try DefinitionCoding.decode(Either.self, bytes).values == ["a", "nil", "b"])
    }

    /// A number too large for a Float is refused, not read as infinity; a date at the edge of what user
    /// info holds encodes again instead of trapping.
    @Test func valuesAtTheEdgesOfTheirTypes() throws {
        #expect(throws: DecodingError.self) {
            _ = try DefinitionCoding.decode(Float.self, DefinitionCoding.encode(Double.greatestFiniteMagnitude))
        }
        #expect(try DefinitionCoding.decode(Float.self, DefinitionCoding.encode(Double.infinity)) == .infinity)
        struct Stored: Encodable {
            enum Key: String, CodingKey { case date }
            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: Key.self)
                try container.encode(Int64.max, forKey: .date)
            }
        }
        let edge = try DefinitionCoding.decode(UserInfoValue.self, DefinitionCoding.encode(Stored()))
        #expect(try DefinitionCoding.decode(UserInfoValue.self, DefinitionCoding.encode(edge)) == edge)
    }

    /// Integers at their limits, and numbers JSON cannot hold.
    @Test func numbersKeepTheirValues() throws {
        struct Numbers: Codable, Equatable {
            var values: [Int64]
            var unsigned: [UInt64]
            var small: Int8
            var doubles: [Double]
        }
        let numbers = Numbers(
            values: [0, 1, -1, 63, -64, 64, Int64.max, Int64.min], unsigned: [0, 127, 128, UInt64.max], small: -128,
            doubles: [0, -0.0, .infinity, -.infinity, .ulpOfOne, .greatestFiniteMagnitude])
        let read = try DefinitionCoding.decode(Numbers.self, DefinitionCoding.encode(numbers))
        #expect(read == numbers)
        #expect(read.doubles[1].sign == .minus)
    }

    /// Every wrong definition is an error naming what is wrong, never a crash or a value.
    @Test(
        arguments: [
            ([UInt8](), "empty"),
            ([2, 0], "version 2"),
            ([1], "ends inside a value"),
            ([1, 0, 0], "1 byte after the value"),
            ([1, 0, 0, 0], "2 bytes after the value"),
            ([1, 9], "unknown type tag 9"),
            ([1, 3, 0x80], "ends inside a value"),
            ([1, 3, 0x80, 0x00], "shortest form"),
            ([1, 4] + [UInt8](repeating: 0xff, count: 10) + [1], "longer than 64 bits"),
            ([1, 6, 5, 0x61], "longer than the 1 bytes left"),
            ([1, 6, 2, 0xc3, 0x28], "not UTF-8"),
            ([1, 7, 2, 1, 0x62, 0, 1, 0x61, 0], "out of order"),
            ([1, 7, 2, 1, 0x61, 0, 1, 0x61, 0], "out of order"),
            ([1, 8, 0xff, 0xff, 0xff, 0xff, 0x0f], "longer than"),
            ([1, 5, 0, 0, 0], "ends inside a number"),
        ] as [([UInt8], String)])
    func aDamagedDefinitionIsRefusedWithItsReason(bytes: [UInt8], reason: String) {
        #expect {
            _ = try DefinitionCoding.decode(UserInfoValue.self, bytes)
        } throws: { error in
            "\(error)".contains(reason)
        }
    }

    @Test func nestingDeeperThanTheLimitIsRefused() throws {
        var value = UserInfoValue.array([])
        for _ in 0..<BinaryDefinition.maximumDepth { value = .array([value]) }
        let bytes = DefinitionCoding.encode(value)
        #expect {
            _ = try DefinitionCoding.decode(UserInfoValue.self, bytes)
        } throws: { error in
            "\(error)".contains("nested deeper than \(BinaryDefinition.maximumDepth)")
        }
    }

    /// Every prefix of a good definition is refused; a one-byte change of it is refused or decodes to an
    /// entry whose encoding reads back as that entry.
    @Test func truncatedAndAlteredDefinitionsAreRefusedOrRead() throws {
        let bytes = DefinitionCoding.encode(entries[1])
        for length in 0..<bytes.count {
            #expect(throws: DecodingError.self) {
                _ = try DefinitionCoding.decode(TimelineEntry.self, Array(bytes[..<length]))
            }
        }
        let plain = DefinitionCoding.encode(entries[0])
        var random = SplitMix64(seed: 33)
        var refused = 0
        for _ in 0..<2_000 {
            var altered = plain
            altered[Int(random.next() % UInt64(plain.count))] = UInt8(truncatingIfNeeded: random.next())
            guard let read = try? DefinitionCoding.decode(TimelineEntry.self, altered) else {
                refused += 1
                continue
            }
            #expect(try DefinitionCoding.decode(TimelineEntry.self, DefinitionCoding.encode(read)) == read)
        }
        #expect(refused > 0)
    }

    /// The type a value was written as is the type it reads as: a string is not read as a number, a list
    /// not as a keyed container, and an integer out of a type's range is refused.
    @Test func aValueOfAnotherTypeIsRefused() {
        #expect(throws: DecodingError.self) { _ = try DefinitionCoding.decode(Int.self, DefinitionCoding.encode("1")) }
        #expect(throws: DecodingError.self) {
            _ = try DefinitionCoding.decode([String: Int].self, DefinitionCoding.encode([1, 2]))
        }
        #expect(throws: DecodingError.self) {
            _ = try DefinitionCoding.decode(UInt8.self, DefinitionCoding.encode(256))
        }
        #expect(throws: DecodingError.self) { _ = try DefinitionCoding.decode(UInt.self, DefinitionCoding.encode(-1)) }
    }
}
