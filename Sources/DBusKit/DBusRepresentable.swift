/// A Swift type with a fixed D-Bus type, convertible both ways.
///
/// Conformances exist for the basic types, `Array`, `Dictionary`, `DBusVariant` and the D-Bus value
/// types; `DBusValue.decode` and `DBusMessage.decode` use them to turn bodies into typed values.
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type every value of this Swift type has.
    static var dbusType: DBusType { get }
    /// This value as a D-Bus value of type `dbusType`.
    var dbusValue: DBusValue { get }
    /// Converts back; throws InvalidArgs naming the expected type when `value` has another type.
    init(dbusValue value: DBusValue) throws(DBusError)
}

extension DBusRepresentable {
    static func mismatch(_ value: DBusValue) -> DBusError {
        DBusError(.invalidArgs, "expected a value of type \(dbusType), got \(value.type)")
    }
}

/// A value of any type, sent as a variant (`v`).
public struct DBusVariant: DBusRepresentable, Hashable {
    public var value: DBusValue
    public init(_ value: DBusValue) { self.value = value }
    public init<T: DBusRepresentable>(_ value: T) { self.value = value.dbusValue }
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(value) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .variant(let inner) = value else { throw Self.mismatch(value) }
        self.value = inner
    }
}

extension UInt8: DBusRepresentable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .byte(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Bool: DBusRepresentable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .boolean(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int16: DBusRepresentable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .int16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt16: DBusRepresentable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .uint16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int32: DBusRepresentable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .int32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt32: DBusRepresentable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .uint32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int64: DBusRepresentable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .int64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt64: DBusRepresentable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .uint64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Double: DBusRepresentable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .double(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension String: DBusRepresentable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .string(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusObjectPath: DBusRepresentable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .objectPath(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusSignature: DBusRepresentable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .signature(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusUnixFD: DBusRepresentable {
    public static var dbusType: DBusType { .unixFD }
    public var dbusValue: DBusValue { .unixFD(self) }
    public convenience init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .unixFD(let v) = value else { throw Self.mismatch(value) }
        try self.init(duplicating: v.fileDescriptor)
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: DBusValue {
        if let bytes = self as? [UInt8] { return .bytes(bytes) }
        return .array(element: Element.dbusType, map(\.dbusValue))
    }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        if case .bytes(let bytes) = value, let same = bytes as? Self {
            self = same
            return
        }
        guard case .array(let element, let items) = value, element == Element.dbusType else {
            throw Self.mismatch(value)
        }
        var result: [Element] = []
        result.reserveCapacity(items.count)
        for item in items { result.append(try Element(dbusValue: item)) }
        self = result
    }
}

extension Dictionary: DBusRepresentable where Key: DBusRepresentable, Value: DBusRepresentable {
    public static var dbusType: DBusType { .dictionary(key: Key.dbusType, value: Value.dbusType) }
    public var dbusValue: DBusValue {
        .dictionary(
            key: Key.dbusType, value: Value.dbusType, map { DBusDictEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
    public init(dbusValue value: DBusValue) throws(DBusError) {
        guard case .dictionary(let k, let v, let entries) = value, k == Key.dbusType, v == Value.dbusType else {
            throw Self.mismatch(value)
        }
        var result: [Key: Value] = [:]
        for entry in entries {
            result[try Key(dbusValue: entry.key)] = try Value(dbusValue: entry.value)
        }
        self = result
    }
}

extension DBusValue {
    /// Converts to a Swift type; throws InvalidArgs when the types differ.
    public func decode<T: DBusRepresentable>(_ type: T.Type = T.self) throws(DBusError) -> T {
        try T(dbusValue: self)
    }

    /// The value inside a variant, or this value when it is not a variant.
    public var unwrappingVariant: DBusValue {
        if case .variant(let inner) = self { return inner.unwrappingVariant }
        return self
    }
}

extension Array where Element == DBusValue {
    /// Decodes a whole message body into typed values: `let (s, n) = try body.decode(String.self, UInt32.self)`.
    public func decode<each T: DBusRepresentable>(_ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        var index = 0
        var expected = 0
        for _ in repeat (each types) { expected += 1 }
        guard count == expected else {
            throw DBusError(.invalidArgs, "expected \(expected) arguments, got \(count)")
        }
        func next<U: DBusRepresentable>(_ type: U.Type) throws(DBusError) -> U {
            defer { index += 1 }
            return try U(dbusValue: self[index])
        }
        return (repeat try next(each types))
    }
}
