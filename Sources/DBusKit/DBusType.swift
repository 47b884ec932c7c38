/// A single complete D-Bus type, as one signature element describes it.
///
/// `DBusType` is the parsed form of a signature such as `a{sv}`; `DBusSignature` is a sequence of them.
public indirect enum DBusType: Hashable, Sendable, CustomStringConvertible {
    case byte
    case boolean
    case int16
    case uint16
    case int32
    case uint32
    case int64
    case uint64
    case double
    case string
    case objectPath
    case signature
    case unixFD
    case variant
    case array(DBusType)
    /// `a{KV}`: a dictionary. The spec only allows dict entries as array elements with a basic key.
    case dictionary(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The signature text of this one type, e.g. `a{sv}`.
    public var description: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.description
        case .dictionary(let key, let value): "a{\(key)\(value)}"
        case .structure(let fields): "(" + fields.map(\.description).joined() + ")"
        }
    }

    /// True for the types the spec calls basic: every fixed type, strings, paths, signatures and fds.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictionary, .structure: false
        default: true
        }
    }

    /// The type parsed from a signature that must hold exactly one complete type.
    public init(parsing text: String) throws(DBusSignatureError) {
        let signature = try DBusSignature(parsing: text)
        guard signature.types.count == 1 else {
            throw DBusSignatureError(signature: text, offset: 0, reason: "expected exactly one complete type")
        }
        self = signature.types[0]
    }
}

/// A signature that is not valid D-Bus: where it went wrong and why.
public struct DBusSignatureError: Error, Hashable, Sendable, CustomStringConvertible {
    public var signature: String
    /// 0-based offset of the offending character.
    public var offset: Int
    public var reason: String

    public var description: String {
        "invalid D-Bus signature \"\(signature)\" at offset \(offset): \(reason)"
    }
}

/// A D-Bus signature: zero or more complete types, as the `g` type and message bodies carry them.
public struct DBusSignature: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    public var types: [DBusType]

    public init(_ types: [DBusType]) { self.types = types }

    /// Parses and validates a signature: length ≤ 255, nesting ≤ 32 arrays and 32 structs,
    /// dict entries only directly inside arrays with a basic key, no empty structs.
    public init(parsing text: String) throws(DBusSignatureError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= 255 else {
            throw DBusSignatureError(signature: text, offset: 255, reason: "longer than 255 bytes")
        }
        var parser = SignatureParser(text: text, bytes: bytes)
        var types: [DBusType] = []
        while parser.index < bytes.count {
            types.append(try parser.parseOne(arrayDepth: 0, structDepth: 0))
        }
        self.types = types
    }

    /// A literal signature; it traps when the literal is not valid, which is a programming error.
    public init(stringLiteral value: String) {
        do { try self.init(parsing: value) } catch { preconditionFailure("\(error)") }
    }

    public var description: String { types.map(\.description).joined() }
}

private struct SignatureParser {
    let text: String
    let bytes: [UInt8]
    var index = 0

    func fail(_ reason: String) -> DBusSignatureError {
        DBusSignatureError(signature: text, offset: index, reason: reason)
    }

    mutating func parseOne(arrayDepth: Int, structDepth: Int) throws(DBusSignatureError) -> DBusType {
        guard index < bytes.count else { throw fail("expected a complete type, found the end of the signature") }
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < 32 else {
                index -= 1
                throw fail("arrays nested deeper than 32")
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "{") {
                index += 1
                let keyStart = index
                let key = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard key.isBasic else {
                    index = keyStart
                    throw fail("a dictionary key must be a basic type, not \(key)")
                }
                let value = try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth + 1)
                guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                    throw fail("expected '}' closing a dictionary entry of exactly two types")
                }
                index += 1
                return .dictionary(key: key, value: value)
            }
            return .array(try parseOne(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < 32 else {
                index -= 1
                throw fail("structs nested deeper than 32")
            }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw fail("expected ')' closing a struct") }
                if bytes[index] == UInt8(ascii: ")") {
                    guard !fields.isEmpty else { throw fail("a struct must hold at least one type") }
                    index += 1
                    return .structure(fields)
                }
                fields.append(try parseOne(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
        case UInt8(ascii: "}"), UInt8(ascii: ")"):
            index -= 1
            throw fail("expected a complete type, found '\(Unicode.Scalar(c))'")
        case UInt8(ascii: "{"):
            index -= 1
            throw fail("a dictionary entry '{' may only appear directly after 'a'")
        default:
            index -= 1
            let shown = Unicode.Scalar(c).escaped(asASCII: true)
            throw fail("'\(shown)' is not a D-Bus type code (expected one of ybnqiuxtdsoghv, a, ( or a{)")
        }
    }
}
