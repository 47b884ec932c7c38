import Testing

@testable import DBusKit

@Suite struct SignatureTests {
    @Test(arguments: [
        ("", [DBusType]()),
        ("y", [.byte]),
        (
            "ybnqiuxtdsoghv",
            [
                .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath,
                .signature, .unixFD, .variant,
            ]
        ),
        ("as", [.array(.string)]),
        ("a{sv}", [.dictionary(key: .string, value: .variant)]),
        (
            "(ia{s(ybv)})",
            [.structure([.int32, .dictionary(key: .string, value: .structure([.byte, .boolean, .variant]))])]
        ),
        ("aay", [.array(.array(.byte))]),
        (
            "a{oa{sa{sv}}}",
            [
                .dictionary(
                    key: .objectPath,
                    value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)))
            ]
        ),
        (
            "susssasa{sv}i",
            [
                .string, .uint32, .string, .string, .string, .array(.string),
                .dictionary(key: .string, value: .variant), .int32,
            ]
        ),
    ])
    func parsesValidSignatures(text: String, expected: [DBusType]) throws {
        let signature = try DBusSignature(parsing: text)
        #expect(signature.types == expected)
        #expect(signature.description == text)
    }

    @Test(arguments: [
        ("z", 0, "not a D-Bus type code"),
        ("a", 1, "expected a complete type"),
        ("(", 1, "expected ')'"),
        ("()", 1, "at least one type"),
        ("{sv}", 0, "only appear directly after 'a'"),
        ("a{vs}", 2, "key must be a basic type"),
        ("a{s}", 3, "expected a complete type"),
        ("a{sss}", 4, "expected '}'"),
        ("ii)", 2, "expected a complete type"),
    ])
    func rejectsInvalidSignatures(text: String, offset: Int, reason: String) {
        #expect {
            try DBusSignature(parsing: text)
        } throws: { error in
            guard let error = error as? DBusSignatureError else { return false }
            return error.offset == offset && error.reason.contains(reason)
        }
    }

    @Test func enforcesNestingAndLengthLimits() throws {
        _ = try DBusSignature(parsing: String(repeating: "a", count: 32) + "y")
        #expect(throws: DBusSignatureError.self) { try DBusSignature(parsing: String(repeating: "a", count: 33) + "y") }
        _ = try DBusSignature(parsing: String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32))
        #expect(throws: DBusSignatureError.self) {
            try DBusSignature(parsing: String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33))
        }
        _ = try DBusSignature(parsing: String(repeating: "i", count: 255))
        #expect(throws: DBusSignatureError.self) { try DBusSignature(parsing: String(repeating: "i", count: 256)) }
    }

    @Test func singleTypeParsingNeedsExactlyOneType() throws {
        #expect(try DBusType(parsing: "a{sv}") == .dictionary(key: .string, value: .variant))
        #expect(throws: DBusSignatureError.self) { try DBusType(parsing: "ii") }
        #expect(throws: DBusSignatureError.self) { try DBusType(parsing: "") }
    }
}
