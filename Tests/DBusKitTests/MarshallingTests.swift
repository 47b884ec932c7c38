import Foundation
import Testing

@testable import DBusKit

/// Round trips through the D-Bus wire format (libdbus marshal and demarshal).
@Suite struct MarshallingTests {
    static func roundTrip(_ values: [DBusValue]) throws -> [DBusValue] {
        let message = DBusMessage.methodCall(
            destination: "io.chime.Test", path: "/io/chime/Test", interface: "io.chime.Test", member: "Echo",
            body: values)
        let bytes = try message.serialized()
        let decoded = try DBusMessage(serialized: bytes)
        #expect(decoded.signature == message.signature)
        #expect(decoded.member == "Echo")
        #expect(decoded.interface == "io.chime.Test")
        #expect(decoded.path == "/io/chime/Test")
        return decoded.body
    }

    static let basicValues: [DBusValue] = [
        .byte(0), .byte(255),
        .boolean(true), .boolean(false),
        .int16(.min), .int16(.max), .uint16(0), .uint16(.max),
        .int32(.min), .int32(-1), .int32(.max), .uint32(.max),
        .int64(.min), .int64(.max), .uint64(0), .uint64(.max),
        .double(0), .double(-1.5), .double(.greatestFiniteMagnitude), .double(.infinity),
        .double(-.leastNonzeroMagnitude),
        .string(""), .string("Hello"), .string("Grüße, 世界 🎉"), .string(String(repeating: "x", count: 100_000)),
        .objectPath("/"), .objectPath("/io/chime/Chime1"),
        .signature(""), .signature("a{sv}(iu)"),
    ]

    @Test(arguments: basicValues)
    func basicValueSurvivesTheWire(value: DBusValue) throws {
        #expect(try Self.roundTrip([value]) == [value])
    }

    @Test func everyBasicTypeInOneBody() throws {
        #expect(try Self.roundTrip(Self.basicValues) == Self.basicValues)
    }

    @Test func containers() throws {
        let values: [DBusValue] = [
            .array(element: .int32, []),
            .array(element: .string, [.string("a"), .string("b")]),
            .bytes((0...255).map { UInt8($0) }),
            .bytes([]),
            .dictionary(key: .string, value: .variant, []),
            .dictionary(
                key: .string, value: .variant,
                [
                    DBusDictEntry(.string("urgency"), .variant(.byte(2))),
                    DBusDictEntry(.string("nested"), .variant(.variant(.array(element: .double, [.double(1)])))),
                ]),
            .dictionary(key: .uint64, value: .objectPath, [DBusDictEntry(.uint64(7), .objectPath("/a"))]),
            .structure([.int32(1), .string("two"), .structure([.boolean(true)])]),
            .array(
                element: .structure([.string, .string]),
                [
                    .structure([.string("stop"), .string("Stop Repeat")]),
                    .structure([.string("snooze"), .string("Snooze")]),
                ]),
            .variant(.structure([.uint32(3), .array(element: .variant, [.variant(.string("x"))])])),
        ]
        #expect(try Self.roundTrip(values) == values)
    }

    /// The size read before decoding is the body's size on the wire: the whole message less its header,
    /// within the padding of each value, for small and large bodies of every container.
    @Test(arguments: [1, 100, 20_000])
    func theSizeOfABodyIsKnownBeforeItIsDecoded(records: Int) throws {
        let record = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                DBusDictEntry(.string("summary"), .variant(.string(String(repeating: "s", count: 40)))),
                DBusDictEntry(.string("data"), .variant(.bytes(Array(repeating: 1, count: 50)))),
                DBusDictEntry(.string("at"), .variant(.structure([.string("date"), .int64(5)]))),
            ])
        let body: [DBusValue] = [
            .string("group"), .array(element: record.type, Array(repeating: record, count: records)),
            .variant(.structure([.uint32(1), .string("x")])), .uint64(9),
        ]
        let empty = try DBusMessage.methodCall(
            destination: "io.chime.Test", path: "/io/chime/Test", interface: "io.chime.Test", member: "Echo"
        ).serialized().count
        var message = DBusMessage.methodCall(
            destination: "io.chime.Test", path: "/io/chime/Test", interface: "io.chime.Test", member: "Echo", body: body
        )
        message.serial = 1
        let wire = try message.serialized()
        let measured = try Marshalling.bodyBytes(serialized: wire)
        // The header grows by the signature's bytes; values are padded to at most 8 bytes each at the top.
        let bodyOnWire = wire.count - empty
        #expect(measured >= bodyOnWire - 64)
        #expect(measured <= bodyOnWire + 64)
    }

    /// An `ay` is read as bytes, whichever way it was written: one value, not one per byte.
    @Test func aByteArrayArrivesAsBytes() throws {
        let written: [DBusValue] = [
            .array(element: .byte, [.byte(1), .byte(2), .byte(255)]),
            .array(element: .array(.byte), [.array(element: .byte, [.byte(9)]), .bytes([])]),
            .variant(.array(element: .byte, [])),
        ]
        #expect(
            try Self.roundTrip(written) == [
                .bytes([1, 2, 255]), .array(element: .array(.byte), [.bytes([9]), .bytes([])]), .variant(.bytes([])),
            ])
        #expect(try [UInt8](dbusValue: .bytes([4, 5])) == [4, 5])
        #expect([UInt8]([4, 5]).dbusValue == .bytes([4, 5]))
    }

    @Test func deepNestingAtTheSpecificationLimits() throws {
        var arrays = DBusValue.bytes([7])
        var type = DBusType.array(.byte)
        for _ in 0..<31 {
            arrays = .array(element: type, [arrays])
            type = .array(type)
        }
        var structs = DBusValue.int32(1)
        for _ in 0..<32 { structs = .structure([structs, .string("s")]) }
        var variants = DBusValue.string("core")
        for _ in 0..<20 { variants = .variant(variants) }
        let values = [arrays, structs, variants]
        #expect(try Self.roundTrip(values) == values)
    }

    @Test func nestingBeyondTheLimitIsRefusedNotFatal() throws {
        var value = DBusValue.byte(7)
        var type = DBusType.byte
        for _ in 0..<33 {
            value = .array(element: type, [value])
            type = .array(type)
        }
        // libdbus would abort the process on such a signature; DBusKit must refuse it with an error.
        #expect(throws: (any Error).self) { try Self.roundTrip([value]) }
    }

    /// `count` variants, one inside the other, around a string.
    static func variants(_ count: Int) -> DBusValue {
        var value = DBusValue.string("core")
        for _ in 0..<count { value = .variant(value) }
        return value
    }

    @Test func variantsNestAsDeepAsLibdbusReadsAndNoDeeper() throws {
        // 64 containers around a value is what libdbus accepts when it reads a message.
        #expect(try Self.roundTrip([Self.variants(64)]) == [Self.variants(64)])
        // In a record a{sv} the array and the dict entry count as well.
        let record = DBusValue.dictionary(
            key: .string, value: .variant, [DBusDictEntry(.string("k"), Self.variants(62))])
        #expect(try Self.roundTrip([record]) == [record])
        // One more, and the bus would drop the connection that sent it: refused before it is sent.
        #expect(throws: DBusError.self) { try Self.variants(65).validate() }
        let deeper = DBusValue.dictionary(
            key: .string, value: .variant, [DBusDictEntry(.string("k"), Self.variants(63))])
        #expect(throws: DBusError.self) { try deeper.validate() }
        #expect(throws: DBusError.self) { try Self.roundTrip([.variant(Self.variants(64))]) }
    }

    @Test func aBodySignatureLongerThan255BytesIsRefused() throws {
        let body = Array(repeating: DBusValue.structure([.byte(1), .byte(2)]), count: 64)
        #expect(throws: DBusError.self) { try Self.roundTrip(body) }
        #expect(try Self.roundTrip(Array(body.prefix(63))).count == 63)
    }

    @Test func mistypedContainersAreRefused() {
        #expect(throws: DBusError.self) { try Self.roundTrip([.array(element: .string, [.int32(1)])]) }
        #expect(throws: DBusError.self) {
            try Self.roundTrip([.dictionary(key: .string, value: .int32, [DBusDictEntry(.string("a"), .string("b"))])])
        }
        #expect(throws: DBusError.self) { try Self.roundTrip([.structure([])]) }
        #expect(throws: DBusError.self) { try Self.roundTrip([.string("nul\u{0}inside")]) }
    }

    @Test func invalidHeaderFieldsAreRefused() {
        var message = DBusMessage.methodCall(destination: "io.chime.Test", path: "/p", interface: "bad", member: "M")
        #expect(throws: DBusError.self) { try message.serialized() }
        message = .methodCall(destination: "io.chime.Test", path: "/p", interface: "a.b", member: "1x")
        #expect(throws: DBusError.self) { try message.serialized() }
        message = .methodCall(destination: "not valid", path: "/p", interface: "a.b", member: "M")
        #expect(throws: DBusError.self) { try message.serialized() }
    }

    @Test(arguments: ["", "a", "/a/", "//", "/a//b", "/a-b", "/ä"])
    func invalidObjectPathsAreRefused(path: String) {
        #expect(throws: DBusError.self) { try DBusObjectPath(path) }
    }

    @Test func garbageBytesAreAnErrorNotACrash() {
        #expect(throws: DBusError.self) { try DBusMessage(serialized: [0x6C, 1, 0, 1, 0, 0, 0, 0]) }
        #expect(throws: DBusError.self) { try DBusMessage(serialized: Array(repeating: 0xFF, count: 64)) }
    }

    @Test func errorAndSignalMessagesKeepTheirHeaders() throws {
        let call = DBusMessage.methodCall(destination: "a.b", path: "/x", interface: "a.b", member: "M")
        var error = call.makeError(DBusError(name: "io.chime.Chime1.Error.NotFound", message: "no item 3"))
        error.replySerial = 9
        let back = try DBusMessage(serialized: try error.serialized())
        #expect(back.kind == .error)
        #expect(back.error == DBusError(name: "io.chime.Chime1.Error.NotFound", message: "no item 3"))
        #expect(back.replySerial == 9)
        let signal = DBusMessage.signal(path: "/x", interface: "a.b", member: "Changed", body: [.uint32(1)])
        let backSignal = try DBusMessage(serialized: try signal.serialized())
        #expect(backSignal.kind == .signal && backSignal.member == "Changed" && backSignal.body == [.uint32(1)])
    }
}

@Suite struct RepresentableTests {
    @Test func swiftValuesMapToTheirDBusTypes() throws {
        #expect(UInt8.dbusType == .byte)
        #expect([String].dbusType == .array(.string))
        #expect([String: DBusVariant].dbusType == .dictionary(key: .string, value: .variant))
        #expect([[Int32]].dbusType == .array(.array(.int32)))
        let dict: [String: DBusVariant] = ["urgency": DBusVariant(UInt8(2)), "x": DBusVariant("y")]
        let back = try [String: DBusVariant](dbusValue: dict.dbusValue)
        #expect(back == dict)
        let nested: [UInt32: [String]] = [1: ["a"], 2: []]
        #expect(try [UInt32: [String]](dbusValue: nested.dbusValue) == nested)
    }

    @Test func decodingABodyIntoATuple() throws {
        let body: [DBusValue] = [.string("chime"), .uint32(3), .array(element: .string, [.string("a")])]
        let (name, id, list) = try body.decode(String.self, UInt32.self, [String].self)
        #expect(name == "chime" && id == 3 && list == ["a"])
        #expect(throws: DBusError.self) { try body.decode(String.self, String.self, [String].self) }
        #expect(throws: DBusError.self) { try body.decode(String.self) }
    }

    @Test func allBasicSwiftTypesRoundTrip() throws {
        #expect(try Bool(dbusValue: true.dbusValue) == true)
        #expect(try Int16(dbusValue: Int16.min.dbusValue) == .min)
        #expect(try UInt16(dbusValue: UInt16.max.dbusValue) == .max)
        #expect(try Int32(dbusValue: Int32(-5).dbusValue) == -5)
        #expect(try Int64(dbusValue: Int64.max.dbusValue) == .max)
        #expect(try UInt64(dbusValue: UInt64.max.dbusValue) == .max)
        #expect(try Double(dbusValue: 2.5.dbusValue) == 2.5)
        #expect(try DBusObjectPath(dbusValue: DBusObjectPath("/a").dbusValue) == "/a")
        #expect(try DBusSignature(dbusValue: DBusSignature("as").dbusValue) == "as")
        #expect(throws: DBusError.self) { try Int32(dbusValue: .uint32(1)) }
    }
}
