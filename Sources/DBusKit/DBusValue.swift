#if canImport(Glibc)
    import Glibc
#endif

/// One D-Bus value of any type, with any nesting.
///
/// Containers carry their element types so that empty arrays and dictionaries still marshal with
/// the right signature.
public indirect enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    case unixFD(DBusUnixFD)
    /// A value that carries its own type.
    case variant(DBusValue)
    /// An array whose elements all have type `element`.
    case array(element: DBusType, [DBusValue])
    /// An array of bytes (`ay`), kept as bytes: every `ay` that arrives is decoded into this case, never into
    /// `.array(element: .byte, …)`, so that a megabyte costs a megabyte and not one boxed value per byte.
    case bytes([UInt8])
    /// An array of dict entries; key order is kept as sent.
    case dictionary(key: DBusType, value: DBusType, [DBusDictEntry])
    case structure([DBusValue])

    /// The type of this value, e.g. `.dictionary(key: .string, value: .variant)`.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .bytes: .array(.byte)
        case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    /// The most containers (arrays, dict entries, structs, variants) a value may sit in, counted from a
    /// message's body: the specification lets arrays and structs nest 32 deep each, and libdbus holds
    /// variants to the same total when it reads a message. The bus drops a connection that sends more.
    public static let maximumNesting = 64

    /// Checks that containers hold what their declared types say, that every signature is valid (at most
    /// 255 bytes, arrays and structs nested at most 32 deep each) and that values nest at most
    /// `maximumNesting` containers deep, recursively. Marshalling a value that fails this would make
    /// libdbus abort the process, or the bus drop the connection, so DBusKit checks first.
    public func validate() throws(DBusError) {
        try Self.checkSignature(of: type)
        try validate(depth: 0)
    }

    private static func checkSignature(of type: DBusType) throws(DBusError) {
        do {
            _ = try DBusSignature(parsing: type.description)
        } catch {
            throw DBusError(.invalidSignature, error.description)
        }
    }

    /// `depth`: how many containers hold this value.
    private func validate(depth: Int) throws(DBusError) {
        switch self {
        case .array, .dictionary, .structure, .variant:
            guard depth < Self.maximumNesting else {
                throw DBusError(.invalidArgs, "values nested deeper than \(Self.maximumNesting) containers")
            }
        default:
            break
        }
        switch self {
        case .array(let element, let items):
            for item in items {
                guard item.type == element else {
                    throw DBusError(.invalidArgs, "array of \(element) holds a value of type \(item.type)")
                }
                try item.validate(depth: depth + 1)
            }
        case .dictionary(let key, let value, let entries):
            guard key.isBasic else { throw DBusError(.invalidArgs, "dictionary key type \(key) is not basic") }
            // The array, then the dict entry, hold a key or a value.
            if !entries.isEmpty, depth + 1 >= Self.maximumNesting {
                throw DBusError(.invalidArgs, "values nested deeper than \(Self.maximumNesting) containers")
            }
            for entry in entries {
                guard entry.key.type == key, entry.value.type == value else {
                    throw DBusError(
                        .invalidArgs,
                        "dictionary a{\(key)\(value)} holds an entry of types \(entry.key.type), \(entry.value.type)")
                }
                try entry.key.validate(depth: depth + 2)
                try entry.value.validate(depth: depth + 2)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "a struct must hold at least one value") }
            for field in fields { try field.validate(depth: depth + 1) }
        case .variant(let inner):
            // A variant carries its own signature, with the same limits as a message's.
            try Self.checkSignature(of: inner.type)
            try inner.validate(depth: depth + 1)
        case .string(let s):
            guard !s.utf8.contains(0) else { throw DBusError(.invalidArgs, "a D-Bus string may not contain NUL") }
        default:
            break
        }
    }
}

/// One key/value pair of a D-Bus dictionary.
public struct DBusDictEntry: Hashable, Sendable {
    public var key: DBusValue
    public var value: DBusValue

    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A valid D-Bus object path such as `/io/chime/Chime1`.
public struct DBusObjectPath: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByStringLiteral {
    public let rawValue: String

    /// Validates `/`-separated elements of `[A-Za-z0-9_]`, no empty element, no trailing `/` except the root.
    public init(_ rawValue: String) throws(DBusError) {
        guard DBusObjectPath.isValid(rawValue) else {
            throw DBusError(
                .invalidArgs,
                "\"\(rawValue)\" is not a valid object path: use /-separated elements of letters, digits and _")
        }
        self.rawValue = rawValue
    }

    /// A literal path; it traps when the literal is not valid, which is a programming error.
    public init(stringLiteral value: String) {
        precondition(DBusObjectPath.isValid(value), "invalid object path literal \(value)")
        self.rawValue = value
    }

    public static let root: DBusObjectPath = "/"

    public static func isValid(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = false
        for b in bytes.dropFirst() {
            if b == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
                continue
            }
            previousSlash = false
            let ok =
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
                || b == UInt8(ascii: "_")
            if !ok { return false }
        }
        return !previousSlash
    }

    /// The path elements; empty for the root.
    public var elements: [Substring] { rawValue.split(separator: "/") }

    public var description: String { rawValue }

    public static func < (a: DBusObjectPath, b: DBusObjectPath) -> Bool { a.rawValue < b.rawValue }
}

/// A Unix file descriptor carried by a message. It owns the descriptor and closes it when released.
///
/// libdbus duplicates a descriptor when it is appended to a message and hands the receiver a fresh
/// duplicate, so each `DBusUnixFD` has exactly one owner: this object.
public final class DBusUnixFD: Hashable, Sendable, CustomStringConvertible {
    /// The descriptor number; valid while this object lives.
    public let fileDescriptor: Int32

    /// Takes ownership of `fileDescriptor`.
    public init(taking fileDescriptor: Int32) { self.fileDescriptor = fileDescriptor }

    /// Duplicates `fileDescriptor` (the caller keeps its own) and owns the duplicate.
    public convenience init(duplicating fileDescriptor: Int32) throws(DBusError) {
        let copy = fcntl(fileDescriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw DBusError(.failed, "cannot duplicate file descriptor \(fileDescriptor)") }
        self.init(taking: copy)
    }

    deinit { close(fileDescriptor) }

    /// Identity equality: two messages' descriptors are different resources even when they name one file.
    public static func == (a: DBusUnixFD, b: DBusUnixFD) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "fd \(fileDescriptor)" }
}

extension DBusValue {
    /// About how many bytes this value takes in a message, padding included, erring high: what a service
    /// counts to keep a reply well within what a message may carry before it builds the message.
    public var estimatedWireBytes: Int {
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .unixFD: 8
        case .string(let text): 8 + text.utf8.count
        case .objectPath(let path): 8 + path.rawValue.utf8.count
        case .signature(let signature): 2 + signature.description.utf8.count
        case .variant(let inner): 8 + inner.type.description.utf8.count + inner.estimatedWireBytes
        case .bytes(let bytes): 8 + bytes.count
        case .array(_, let items): items.reduce(8) { $0 + $1.estimatedWireBytes }
        case .dictionary(_, _, let entries):
            entries.reduce(8) { $0 + 8 + $1.key.estimatedWireBytes + $1.value.estimatedWireBytes }
        case .structure(let fields): fields.reduce(8) { $0 + $1.estimatedWireBytes }
        }
    }
}
