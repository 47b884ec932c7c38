import Foundation

// The binary encoding of definitions (docs/architecture.md, "Persistence"): what the store keeps of an entry and
// of its parsed rule. Any `Codable` value encodes; the bytes are canonical (a keyed container's fields in
// ascending order of their keys' UTF-8 bytes, each key once, integers in their shortest form), so that
// equal values encode to equal bytes and a reschedule compares definitions by their fingerprints.
//
//     definition := version value          version: 1
//     value      := 0                      nil
//                 | 1 | 2                  false, true
//                 | 3 varint               a signed integer, zigzag-encoded
//                 | 4 varint               an unsigned integer
//                 | 5 8 bytes              a floating-point number, IEEE 754 binary64, little-endian
//                 | 6 varint bytes         a string: its UTF-8 length, then its bytes
//                 | 7 varint (key value)*  keyed: the count, then each key (as a string, without the
//                                          tag) and its value, keys strictly ascending
//                 | 8 varint value*        unkeyed: the count, then the values
//     varint     := LEB128, at most 10 bytes, without trailing zero groups
//
// A value is read whole and checked before any of it is decoded: every length against the bytes left,
// every string as UTF-8, keys in order, nesting at most `BinaryDefinition.maximumDepth` deep.

/// A value of the encoding: written from an `Encodable` value's containers, read before it is decoded.
enum BinaryNode {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case keyed(BinaryFields)
    case unkeyed(BinaryItems)
    /// A super-encoder's value, known once its encoding is over (written, never read).
    case deferred(BinaryEncoding)
}

/// A keyed container's fields, in the order they were encoded (written) or in key order (read).
final class BinaryFields {
    var fields: [(key: String, value: BinaryNode)] = []

    func set(_ key: String, _ value: BinaryNode) { fields.append((key, value)) }

    var keys: [String] { fields.map(\.key) }

    /// The value of a key, in fields read (keys ascending): a binary search by UTF-8 bytes.
    func value(of key: String) -> BinaryNode? {
        var low = 0
        var high = fields.count
        while low < high {
            let middle = (low + high) / 2
            let probe = fields[middle].key
            if probe == key { return fields[middle].value }
            if BinaryDefinition.precedes(probe, key) { low = middle + 1 } else { high = middle }
        }
        return nil
    }
}

/// An unkeyed container's values.
final class BinaryItems {
    var values: [BinaryNode] = []
}

/// Entry points and the format's constants.
public enum BinaryDefinition {
    /// The first byte of every definition; a reader refuses any other.
    public static let version: UInt8 = 1
    /// The deepest nesting of containers a definition may have (an entry's is under 20).
    public static let maximumDepth = 128

    enum Tag: UInt8 {
        case null = 0, `false`, `true`, int, uint, double, string, keyed, unkeyed
    }

    /// Whether `a`'s UTF-8 bytes order before `b`'s: the order of a definition's keys.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    /// The canonical encoding of a value.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = try BinaryEncoding.node(value, parent: nil, key: nil)
        var writer = BinaryWriter()
        writer.bytes.reserveCapacity(256)
        writer.bytes.append(version)
        writer.write(root)
        return writer.bytes
    }

    /// A value decoded from its encoding; a `DecodingError` that says what is wrong and where (the byte's
    /// offset, or the coding path) for anything but a definition of this version that decodes as `T`.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: UnsafeRawBufferPointer) throws -> T {
        var reader = BinaryReader(bytes)
        let root = try reader.definition()
        return try BinaryDecoding.value(T.self, root, parent: nil, key: nil)
    }

    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try bytes.withUnsafeBytes { try decode(type, from: $0) }
    }
}

// MARK: - Writing

struct BinaryWriter {
    var bytes: [UInt8] = []

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func text(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func tag(_ tag: BinaryDefinition.Tag) { bytes.append(tag.rawValue) }

    mutating func write(_ node: BinaryNode) {
        switch node {
        case .null: tag(.null)
        case .bool(let value): tag(value ? .true : .false)
        case .int(let value):
            tag(.int)
            varint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
        case .uint(let value):
            tag(.uint)
            varint(value)
        case .double(let value):
            tag(.double)
            withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
        case .string(let value):
            tag(.string)
            text(value)
        case .keyed(let fields): write(fields)
        case .unkeyed(let items):
            tag(.unkeyed)
            varint(UInt64(items.values.count))
            for value in items.values { write(value) }
        case .deferred(let encoding): write(encoding.node ?? .keyed(BinaryFields()))
        }
    }

    /// Fields in ascending key order; a key encoded twice keeps its last value (as JSONEncoder does). The
    /// fields are sorted where they are: a value is written once.
    private mutating func write(_ container: BinaryFields) {
        tag(.keyed)
        var fields = container.fields
        container.fields = []
        if fields.count <= 16 {
            // Insertion sort, stable: most containers have a handful of fields.
            for i in fields.indices.dropFirst() {
                var j = i
                while j > 0, BinaryDefinition.precedes(fields[j].key, fields[j - 1].key) {
                    fields.swapAt(j, j - 1)
                    j -= 1
                }
            }
        } else {
            // A caller's dictionary (user info) may have thousands of keys: n log n, equal keys kept in
            // the order encoded.
            fields = fields.enumerated().sorted {
                BinaryDefinition.precedes($0.element.key, $1.element.key)
                    || ($0.element.key == $1.element.key && $0.offset < $1.offset)
            }.map(\.element)
        }
        // Of equal keys (adjacent now, in the order encoded) the last is kept.
        var count = fields.count
        for i in fields.indices.dropLast() where fields[i].key == fields[i + 1].key { count -= 1 }
        varint(UInt64(count))
        for i in fields.indices {
            if i + 1 < fields.count, fields[i].key == fields[i + 1].key { continue }
            text(fields[i].key)
            write(fields[i].value)
        }
    }
}

/// The encoder handed to an `Encodable` value: it holds the value's node once the value has encoded.
final class BinaryEncoding: Encoder, BinaryCodingLink {
    var node: BinaryNode?
    let parent: BinaryEncoding?
    let key: (any CodingKey)?

    init(parent: BinaryEncoding?, key: (any CodingKey)?) {
        self.parent = parent
        self.key = key
    }

    /// A value's node; the common leaves without an encoder of their own.
    static func node<T: Encodable>(_ value: T, parent: BinaryEncoding?, key: (any CodingKey)?) throws -> BinaryNode {
        if T.self == String.self { return .string(value as! String) }
        if T.self == Date.self { return .double((value as! Date).timeIntervalSinceReferenceDate) }
        if T.self == Int.self { return .int(Int64(value as! Int)) }
        if T.self == Double.self { return .double(value as! Double) }
        if T.self == Bool.self { return .bool(value as! Bool) }
        let encoding = BinaryEncoding(parent: parent, key: key)
        try value.encode(to: encoding)
        // A value that encoded nothing is an empty keyed container, as JSONEncoder writes `{}`.
        return encoding.node ?? .keyed(BinaryFields())
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let fields: BinaryFields
        if case .keyed(let existing)? = node {
            fields = existing
        } else {
            fields = BinaryFields()
            node = .keyed(fields)
        }
        return KeyedEncodingContainer(BinaryKeyedEncoding<Key>(encoding: self, fields: fields))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let items: BinaryItems
        if case .unkeyed(let existing)? = node {
            items = existing
        } else {
            items = BinaryItems()
            node = .unkeyed(items)
        }
        return BinaryUnkeyedEncoding(encoding: self, items: items)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { BinarySingleEncoding(encoding: self) }
}

struct BinaryKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoding: BinaryEncoding
    let fields: BinaryFields
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil(forKey key: Key) { fields.set(key.stringValue, .null) }
    mutating func encode(_ value: Bool, forKey key: Key) { fields.set(key.stringValue, .bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) { fields.set(key.stringValue, .string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) { fields.set(key.stringValue, .double(value)) }
    mutating func encode(_ value: Float, forKey key: Key) { fields.set(key.stringValue, .double(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) { fields.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int8, forKey key: Key) { fields.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int16, forKey key: Key) { fields.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int32, forKey key: Key) { fields.set(key.stringValue, .int(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) { fields.set(key.stringValue, .int(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) { fields.set(key.stringValue, .uint(UInt64(value))) }
    mutating func encode(_ value: UInt8, forKey key: Key) { fields.set(key.stringValue, .uint(UInt64(value))) }
    mutating func encode(_ value: UInt16, forKey key: Key) { fields.set(key.stringValue, .uint(UInt64(value))) }
    mutating func encode(_ value: UInt32, forKey key: Key) { fields.set(key.stringValue, .uint(UInt64(value))) }
    mutating func encode(_ value: UInt64, forKey key: Key) { fields.set(key.stringValue, .uint(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        fields.set(key.stringValue, try BinaryEncoding.node(value, parent: encoding, key: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = BinaryEncoding(parent: encoding, key: key)
        let container = nested.container(keyedBy: NestedKey.self)
        fields.set(key.stringValue, nested.node!)
        return container
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let nested = BinaryEncoding(parent: encoding, key: key)
        let container = nested.unkeyedContainer()
        fields.set(key.stringValue, nested.node!)
        return container
    }

    mutating func superEncoder() -> any Encoder { superEncoder(key: BinaryKey.super) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { superEncoder(key: key) }
    private func superEncoder(key: any CodingKey) -> any Encoder {
        let nested = BinaryEncoding(parent: encoding, key: key)
        fields.set(key.stringValue, .deferred(nested))
        return nested
    }
}

struct BinaryUnkeyedEncoding: UnkeyedEncodingContainer {
    let encoding: BinaryEncoding
    let items: BinaryItems
    var codingPath: [any CodingKey] { encoding.codingPath }
    var count: Int { items.values.count }
    private var nextKey: BinaryKey { BinaryKey(index: items.values.count) }

    mutating func encodeNil() { items.values.append(.null) }
    mutating func encode(_ value: Bool) { items.values.append(.bool(value)) }
    mutating func encode(_ value: String) { items.values.append(.string(value)) }
    mutating func encode(_ value: Double) { items.values.append(.double(value)) }
    mutating func encode(_ value: Float) { items.values.append(.double(Double(value))) }
    mutating func encode(_ value: Int) { items.values.append(.int(Int64(value))) }
    mutating func encode(_ value: Int8) { items.values.append(.int(Int64(value))) }
    mutating func encode(_ value: Int16) { items.values.append(.int(Int64(value))) }
    mutating func encode(_ value: Int32) { items.values.append(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { items.values.append(.int(value)) }
    mutating func encode(_ value: UInt) { items.values.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) { items.values.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) { items.values.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) { items.values.append(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) { items.values.append(.uint(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        items.values.append(try BinaryEncoding.node(value, parent: encoding, key: nextKey))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type
    ) -> KeyedEncodingContainer<NestedKey> {
        let nested = BinaryEncoding(parent: encoding, key: nextKey)
        let container = nested.container(keyedBy: NestedKey.self)
        items.values.append(nested.node!)
        return container
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let nested = BinaryEncoding(parent: encoding, key: nextKey)
        let container = nested.unkeyedContainer()
        items.values.append(nested.node!)
        return container
    }

    mutating func superEncoder() -> any Encoder {
        let nested = BinaryEncoding(parent: encoding, key: nextKey)
        items.values.append(.deferred(nested))
        return nested
    }
}

struct BinarySingleEncoding: SingleValueEncodingContainer {
    let encoding: BinaryEncoding
    var codingPath: [any CodingKey] { encoding.codingPath }

    mutating func encodeNil() { encoding.node = .null }
    mutating func encode(_ value: Bool) { encoding.node = .bool(value) }
    mutating func encode(_ value: String) { encoding.node = .string(value) }
    mutating func encode(_ value: Double) { encoding.node = .double(value) }
    mutating func encode(_ value: Float) { encoding.node = .double(Double(value)) }
    mutating func encode(_ value: Int) { encoding.node = .int(Int64(value)) }
    mutating func encode(_ value: Int8) { encoding.node = .int(Int64(value)) }
    mutating func encode(_ value: Int16) { encoding.node = .int(Int64(value)) }
    mutating func encode(_ value: Int32) { encoding.node = .int(Int64(value)) }
    mutating func encode(_ value: Int64) { encoding.node = .int(value) }
    mutating func encode(_ value: UInt) { encoding.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) { encoding.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) { encoding.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) { encoding.node = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) { encoding.node = .uint(value) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        encoding.node = try BinaryEncoding.node(value, parent: encoding, key: nil)
    }
}

/// An encoder or decoder of one value, linked to its parent's: its coding path is made only when asked.
protocol BinaryCodingLink: AnyObject {
    var parent: Self? { get }
    var key: (any CodingKey)? { get }
}

extension BinaryCodingLink {
    var codingPath: [any CodingKey] {
        var path = parent?.codingPath ?? []
        if let key { path.append(key) }
        return path
    }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
}

/// The keys of coding paths this encoding adds: an unkeyed container's index, and `super`.
struct BinaryKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = "Index \(intValue)"
        self.intValue = intValue
    }
    init(index: Int) { self.init(intValue: index) }
    static let `super` = BinaryKey(stringValue: "super")
}

// MARK: - Reading

/// Reads a definition into nodes, checking every length, string and key order before anything is decoded.
struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The most values a container's count reserves room for before they are read: a count is checked
    /// only against the bytes left, which every level of a nested container would reserve again.
    static let reservedAtMost = 64

    private func corrupt(_ what: String) -> DecodingError {
        DecodingError.dataCorrupted(
            DecodingError.Context(codingPath: [], debugDescription: "at byte \(offset) of the definition: \(what)"))
    }

    mutating func definition() throws -> BinaryNode {
        guard !bytes.isEmpty else { throw corrupt("it is empty") }
        let version = bytes[0]
        guard version == BinaryDefinition.version else {
            throw corrupt("it is of version \(version), and this chimed reads version \(BinaryDefinition.version)")
        }
        offset = 1
        let root = try value(depth: 0)
        let extra = bytes.count - offset
        guard extra == 0 else { throw corrupt("\(extra) byte\(extra == 1 ? "" : "s") after the value") }
        return root
    }

    private mutating func byte() throws -> UInt8 {
        guard offset < bytes.count else { throw corrupt("it ends inside a value") }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 63 || (shift == 63 && byte <= 1) else { throw corrupt("a number longer than 64 bits") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 {
                // The shortest form only: a last group of zero after others would give the same number twice.
                guard byte != 0 || shift == 0 else { throw corrupt("a number not in its shortest form") }
                return result
            }
            shift += 7
        }
    }

    /// A count or a length, which each take at least one byte per unit of what follows.
    private mutating func count(of what: String) throws -> Int {
        let count = try varint()
        guard count <= UInt64(bytes.count - offset) else {
            throw corrupt("\(what) of \(count) is longer than the \(bytes.count - offset) bytes left")
        }
        return Int(count)
    }

    private mutating func text() throws -> String {
        let length = try count(of: "a string")
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + length])
        guard let text = String(validating: slice, as: UTF8.self) else { throw corrupt("a string that is not UTF-8") }
        offset += length
        return text
    }

    private mutating func value(depth: Int) throws -> BinaryNode {
        let start = offset
        guard let tag = BinaryDefinition.Tag(rawValue: try byte()) else {
            offset = start
            throw corrupt("an unknown type tag \(bytes[start])")
        }
        if tag == .keyed || tag == .unkeyed, depth >= BinaryDefinition.maximumDepth {
            throw corrupt("containers nested deeper than \(BinaryDefinition.maximumDepth)")
        }
        switch tag {
        case .null: return .null
        case .false: return .bool(false)
        case .true: return .bool(true)
        case .int:
            let zigzag = try varint()
            return .int(Int64(bitPattern: zigzag >> 1) ^ -Int64(bitPattern: zigzag & 1))
        case .uint: return .uint(try varint())
        case .double:
            guard bytes.count - offset >= 8 else { throw corrupt("it ends inside a number") }
            var bits: UInt64 = 0
            for i in 0..<8 { bits |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
            offset += 8
            return .double(Double(bitPattern: bits))
        case .string: return .string(try text())
        case .keyed:
            let count = try count(of: "a container")
            let fields = BinaryFields()
            fields.fields.reserveCapacity(min(count, Self.reservedAtMost))
            for _ in 0..<count {
                let key = try text()
                if let last = fields.fields.last?.key, !BinaryDefinition.precedes(last, key) {
                    throw corrupt("the key \"\(key)\" is out of order after \"\(last)\"")
                }
                fields.set(key, try value(depth: depth + 1))
            }
            return .keyed(fields)
        case .unkeyed:
            let count = try count(of: "a list")
            let items = BinaryItems()
            items.values.reserveCapacity(min(count, Self.reservedAtMost))
            for _ in 0..<count { items.values.append(try value(depth: depth + 1)) }
            return .unkeyed(items)
        }
    }
}

/// The decoder handed to a `Decodable` type: one node of a definition read.
final class BinaryDecoding: Decoder, BinaryCodingLink {
    let node: BinaryNode
    let parent: BinaryDecoding?
    let key: (any CodingKey)?

    init(_ node: BinaryNode, parent: BinaryDecoding?, key: (any CodingKey)?) {
        self.node = node
        self.parent = parent
        self.key = key
    }

    /// A value decoded from a node; the common leaves without a decoder of their own.
    static func value<T: Decodable>(
        _ type: T.Type, _ node: BinaryNode, parent: BinaryDecoding?, key: (any CodingKey)?
    ) throws -> T {
        if T.self == String.self, case .string(let value) = node { return value as! T }
        if T.self == Date.self, case .double(let value) = node {
            return Date(timeIntervalSinceReferenceDate: value) as! T
        }
        return try T(from: BinaryDecoding(node, parent: parent, key: key))
    }

    func mismatch(_ expected: Any.Type, _ node: BinaryNode, at key: (any CodingKey)? = nil) -> DecodingError {
        var path = codingPath
        if let key { path.append(key) }
        return DecodingError.typeMismatch(
            expected, DecodingError.Context(codingPath: path, debugDescription: "found \(node.kind)"))
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .keyed(let fields) = node else { throw mismatch([String: Any].self, node) }
        return KeyedDecodingContainer(BinaryKeyedDecoding<Key>(decoding: self, fields: fields))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .unkeyed(let items) = node else { throw mismatch([Any].self, node) }
        return BinaryUnkeyedDecoding(decoding: self, items: items)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { BinarySingleDecoding(decoding: self) }

    // The leaves, from a node.

    func bool(_ node: BinaryNode, _ key: (any CodingKey)? = nil) throws -> Bool {
        guard case .bool(let value) = node else { throw mismatch(Bool.self, node, at: key) }
        return value
    }

    func string(_ node: BinaryNode, _ key: (any CodingKey)? = nil) throws -> String {
        guard case .string(let value) = node else { throw mismatch(String.self, node, at: key) }
        return value
    }

    func double(_ node: BinaryNode, _ key: (any CodingKey)? = nil) throws -> Double {
        guard case .double(let value) = node else { throw mismatch(Double.self, node, at: key) }
        return value
    }

    /// A Float: a number it cannot hold (beyond its range, not infinite to begin with) is refused.
    func float(_ node: BinaryNode, _ key: (any CodingKey)? = nil) throws -> Float {
        let value = try double(node, key)
        let float = Float(value)
        guard float.isFinite || !value.isFinite else {
            var path = codingPath
            if let key { path.append(key) }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path, debugDescription: "\(value) does not fit in Float"))
        }
        return float
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, _ node: BinaryNode, _ key: (any CodingKey)? = nil) throws -> T {
        let value: T?
        switch node {
        case .int(let number): value = T(exactly: number)
        case .uint(let number): value = T(exactly: number)
        default: throw mismatch(T.self, node, at: key)
        }
        guard let value else {
            var path = codingPath
            if let key { path.append(key) }
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: path, debugDescription: "\(node.kind) does not fit in \(T.self)"))
        }
        return value
    }
}

extension BinaryNode {
    /// What a node holds, for an error.
    var kind: String {
        switch self {
        case .null: "nil"
        case .bool: "a Boolean"
        case .int(let value): "the integer \(value)"
        case .uint(let value): "the integer \(value)"
        case .double: "a number"
        case .string: "a string"
        case .keyed: "a keyed container"
        case .unkeyed: "a list"
        case .deferred: "an encoder's value"
        }
    }

    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

struct BinaryKeyedDecoding<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoding: BinaryDecoding
    let fields: BinaryFields
    var codingPath: [any CodingKey] { decoding.codingPath }
    var allKeys: [Key] { fields.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { fields.value(of: key.stringValue) != nil }

    private func node(_ key: Key) throws -> BinaryNode {
        guard let value = fields.value(of: key.stringValue) else {
            throw DecodingError.keyNotFound(
                key,
                DecodingError.Context(codingPath: codingPath, debugDescription: "no value for \"\(key.stringValue)\""))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try node(key).isNull }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoding.bool(node(key), key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoding.string(node(key), key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoding.double(node(key), key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoding.float(node(key), key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoding.integer(type, node(key), key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoding.integer(type, node(key), key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoding.integer(type, node(key), key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoding.integer(type, node(key), key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoding.integer(type, node(key), key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoding.integer(type, node(key), key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoding.integer(type, node(key), key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoding.integer(type, node(key), key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoding.integer(type, node(key), key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoding.integer(type, node(key), key) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try BinaryDecoding.value(T.self, node(key), parent: decoding, key: key)
    }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try BinaryDecoding(node(key), parent: decoding, key: key).container(keyedBy: NestedKey.self)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try BinaryDecoding(node(key), parent: decoding, key: key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { try superDecoder(key: BinaryKey.super) }
    func superDecoder(forKey key: Key) throws -> any Decoder { try superDecoder(key: key) }
    private func superDecoder(key: any CodingKey) throws -> any Decoder {
        let node = fields.value(of: key.stringValue) ?? .null
        return BinaryDecoding(node, parent: decoding, key: key)
    }
}

struct BinaryUnkeyedDecoding: UnkeyedDecodingContainer {
    let decoding: BinaryDecoding
    let items: BinaryItems
    var codingPath: [any CodingKey] { decoding.codingPath }
    var count: Int? { items.values.count }
    var isAtEnd: Bool { currentIndex >= items.values.count }
    private(set) var currentIndex = 0

    init(decoding: BinaryDecoding, items: BinaryItems) {
        self.decoding = decoding
        self.items = items
    }

    private var key: BinaryKey { BinaryKey(index: currentIndex) }

    /// The next value decoded by `body`; the list moves on only when it decodes, as JSONDecoder's does, so
    /// that a caller may try another type.
    private mutating func next<T>(_ body: (BinaryDecoding, BinaryNode, BinaryKey) throws -> T) throws -> T {
        guard !isAtEnd else { throw end(T.self) }
        let value = try body(decoding, items.values[currentIndex], key)
        currentIndex += 1
        return value
    }

    private func end(_ type: Any.Type) -> DecodingError {
        DecodingError.valueNotFound(
            type,
            DecodingError.Context(
                codingPath: codingPath + [key], debugDescription: "the list ends after \(items.values.count)"))
    }

    /// Whether the next value is nil, moving past it if it is; at the end of the list, an error.
    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw end(Never?.self) }
        guard items.values[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try next { try $0.bool($1, $2) } }
    mutating func decode(_ type: String.Type) throws -> String { try next { try $0.string($1, $2) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try next { try $0.double($1, $2) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try next { try $0.float($1, $2) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        try next { try $0.integer(type, $1, $2) }
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next { try BinaryDecoding.value(T.self, $1, parent: $0, key: $2) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try next { try BinaryDecoding($1, parent: $0, key: $2).container(keyedBy: NestedKey.self) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next { try BinaryDecoding($1, parent: $0, key: $2).unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next { BinaryDecoding($1, parent: $0, key: $2) }
    }
}

struct BinarySingleDecoding: SingleValueDecodingContainer {
    let decoding: BinaryDecoding
    var codingPath: [any CodingKey] { decoding.codingPath }
    private var node: BinaryNode { decoding.node }

    func decodeNil() -> Bool { node.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try decoding.bool(node) }
    func decode(_ type: String.Type) throws -> String { try decoding.string(node) }
    func decode(_ type: Double.Type) throws -> Double { try decoding.double(node) }
    func decode(_ type: Float.Type) throws -> Float { try decoding.float(node) }
    func decode(_ type: Int.Type) throws -> Int { try decoding.integer(type, node) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoding.integer(type, node) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoding.integer(type, node) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoding.integer(type, node) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoding.integer(type, node) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoding.integer(type, node) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoding.integer(type, node) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoding.integer(type, node) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoding.integer(type, node) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoding.integer(type, node) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try BinaryDecoding.value(T.self, node, parent: decoding, key: nil)
    }
}
