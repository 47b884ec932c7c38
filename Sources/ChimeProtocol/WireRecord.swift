import DBusKit
import Foundation

/// An error chimed answers for an argument that is not accepted; the message names the key.
func invalid(_ message: String) -> DBusError {
    DBusError(name: ChimeBus.ErrorName.invalidArgument, message: message)
}

/// Microseconds since the Unix epoch, as every time travels on the wire.
public enum WireTime {
    /// The instants chimed accepts: from the Unix epoch to the last microsecond of the year 9999. Later
    /// ones cannot be told as calendar dates, and would overflow the arithmetic of any schedule.
    public static let validRange: ClosedRange<Int64> = 0...253_402_300_799_999_999

    public static func microseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000_000).rounded())
    }

    public static func date(microseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(microseconds) / 1_000_000)
    }
}

/// `text` for an error message: whole when short, else its start and its length, so that a refusal of
/// a huge value does not repeat it.
public func excerpt(_ text: String) -> String {
    guard text.utf8.count > 64 else { return "\"\(text)\"" }
    return "\"\(text.prefix(40))…\" (\(text.utf8.count) bytes)"
}

/// Reads an `a{sv}` argument, checking each key's type; every refusal names the key and what it must be.
///
/// Sizes are bounded here, before anything else looks at a value: a string holds at most
/// `maximumStringBytes` (keys with a smaller limit pass it to `string(_:maximumBytes:)`), a list of
/// strings at most `maximumStrings` elements and a list of records at most `maximumRecords`.
public struct WireFields: Sendable {
    /// The longest string any key may hold.
    public static let maximumStringBytes = 16_384
    /// The most elements of an `as` value.
    public static let maximumStrings = 1_000
    /// The most records of an `aa{sv}` value inside a record.
    public static let maximumRecords = 10_000

    /// The keys and their values, in the order sent. A record has a handful of keys, found faster by
    /// comparing them than by hashing; one with more than `indexedAbove` has an index too, so that a caller
    /// who sends thousands of keys costs no more than their hashing.
    private let keys: [String]
    private let fieldValues: [DBusValue]
    private let index: [String: Int]?
    static let indexedAbove = 16
    /// What the record is, for messages ("content", "entry 3").
    let what: String

    public init(_ value: DBusValue, what: String) throws(DBusError) {
        guard case .dictionary(.string, .variant, let entries) = value else {
            throw invalid("the \(what) must be a dictionary a{sv}")
        }
        var keys: [String] = []
        var values: [DBusValue] = []
        keys.reserveCapacity(entries.count)
        values.reserveCapacity(entries.count)
        var index: [String: Int]? = entries.count > Self.indexedAbove ? [:] : nil
        for entry in entries {
            guard case .string(let key) = entry.key, case .variant(let inner) = entry.value else { continue }
            let seen = index != nil ? index![key] != nil : keys.contains(key)
            guard !seen else { throw invalid("\(what) key \"\(key)\" appears twice") }
            index?[key] = keys.count
            keys.append(key)
            values.append(inner)
        }
        self.keys = keys
        self.fieldValues = values
        self.index = index
        self.what = what
    }

    /// The value of a key, if the record has it.
    subscript(key: String) -> DBusValue? {
        if let index { return index[key].map { fieldValues[$0] } }
        return keys.firstIndex(of: key).map { fieldValues[$0] }
    }

    public func has(_ key: String) -> Bool { self[key] != nil }

    public func value(_ key: String, _ type: DBusType) throws(DBusError) -> DBusValue? {
        guard let v = self[key] else { return nil }
        guard v.type == type else {
            throw invalid("\(what) key \"\(key)\" must have type \(type), not \(v.type)")
        }
        return v
    }

    /// A string of at most `maximumBytes` bytes of UTF-8.
    public func string(_ key: String, maximumBytes: Int = maximumStringBytes) throws(DBusError) -> String? {
        guard case .string(let s)? = try value(key, .string) else { return nil }
        try checkLength(s, key: key, maximumBytes: maximumBytes)
        return s
    }

    func checkLength(_ text: String, key: String, maximumBytes: Int) throws(DBusError) {
        let length = text.utf8.count
        guard length <= maximumBytes else {
            throw invalid("\(what) key \"\(key)\" is \(length) bytes long, more than the \(maximumBytes) allowed")
        }
    }

    public func bool(_ key: String) throws(DBusError) -> Bool? {
        guard case .boolean(let b)? = try value(key, .boolean) else { return nil }
        return b
    }

    public func uint32(_ key: String) throws(DBusError) -> UInt32? {
        guard case .uint32(let u)? = try value(key, .uint32) else { return nil }
        return u
    }

    public func uint64(_ key: String) throws(DBusError) -> UInt64? {
        guard case .uint64(let u)? = try value(key, .uint64) else { return nil }
        return u
    }

    public func int64(_ key: String) throws(DBusError) -> Int64? {
        guard case .int64(let i)? = try value(key, .int64) else { return nil }
        return i
    }

    /// Seconds, as a double greater than zero and at most `maximum`.
    public func seconds(_ key: String, maximum: TimeInterval) throws(DBusError) -> TimeInterval? {
        guard case .double(let d)? = try value(key, .double) else { return nil }
        guard d > 0, d <= maximum else {
            throw invalid(
                "\(what) key \"\(key)\" must be a number of seconds above 0 and at most \(Int(maximum)), not \(d)")
        }
        return d
    }

    /// An instant, as `x` microseconds since the Unix epoch, within `WireTime.validRange`.
    public func date(_ key: String) throws(DBusError) -> Date? {
        guard let microseconds = try int64(key) else { return nil }
        guard WireTime.validRange.contains(microseconds) else {
            throw invalid(
                "\(what) key \"\(key)\" must be microseconds since 1970-01-01 UTC from \(WireTime.validRange.lowerBound) "
                    + "to \(WireTime.validRange.upperBound) (the end of the year 9999), not \(microseconds)")
        }
        return WireTime.date(microseconds: microseconds)
    }

    public func strings(_ key: String) throws(DBusError) -> [String]? {
        guard case .array(_, let items)? = try value(key, .array(.string)) else { return nil }
        guard items.count <= Self.maximumStrings else {
            throw invalid(
                "\(what) key \"\(key)\" has \(items.count) strings, more than the \(Self.maximumStrings) allowed")
        }
        var strings: [String] = []
        for item in items {
            guard case .string(let s) = item else { continue }
            try checkLength(s, key: key, maximumBytes: Self.maximumStringBytes)
            strings.append(s)
        }
        return strings
    }

    public func stringMap(_ key: String) throws(DBusError) -> [String: String]? {
        guard case .dictionary(_, _, let entries)? = try value(key, .dictionary(key: .string, value: .string)) else {
            return nil
        }
        var map: [String: String] = [:]
        for entry in entries {
            guard case .string(let k) = entry.key, case .string(let v) = entry.value else { continue }
            try checkLength(k, key: key, maximumBytes: Self.maximumStringBytes)
            try checkLength(v, key: key, maximumBytes: Self.maximumStringBytes)
            guard map.updateValue(v, forKey: k) == nil else {
                throw invalid("\(what) key \"\(key)\" gives \(excerpt(k)) twice")
            }
        }
        return map
    }

    /// An `aa{sv}`: a list of records.
    public func records(_ key: String) throws(DBusError) -> [WireFields]? {
        guard case .array(_, let items)? = try value(key, .array(WireRecord.type)) else { return nil }
        guard items.count <= Self.maximumRecords else {
            throw invalid(
                "\(what) key \"\(key)\" has \(items.count) records, more than the \(Self.maximumRecords) allowed")
        }
        var result: [WireFields] = []
        for (index, item) in items.enumerated() {
            result.append(try WireFields(item, what: "\(what) \(key) \(index + 1)"))
        }
        return result
    }

    public func refuseUnknown(known: Set<String>) throws(DBusError) {
        // The first unknown key in sorted order, sorted only when there is one.
        if keys.contains(where: { !known.contains($0) }),
            let unknown = keys.sorted().first(where: { !known.contains($0) })
        {
            throw invalid(
                "unknown \(what) key \(excerpt(unknown)); known keys: \(known.sorted().joined(separator: ", "))")
        }
    }
}

/// Builds an `a{sv}` record, leaving out what is not set.
public struct WireRecord: Sendable {
    public static let type: DBusType = .dictionary(key: .string, value: .variant)

    private var entries: [DBusDictEntry] = []

    public init() {}

    /// Sets `key`, replacing its value when it is set already (a record holds each key once).
    public mutating func set(_ key: String, _ value: DBusValue) {
        let entry = DBusDictEntry(.string(key), .variant(value))
        if let index = entries.firstIndex(where: { $0.key == entry.key }) {
            entries[index] = entry
        } else {
            entries.append(entry)
        }
    }

    public mutating func set(_ key: String, _ value: String?) { if let value { set(key, .string(value)) } }
    public mutating func set(_ key: String, _ value: Bool) { set(key, .boolean(value)) }
    public mutating func set(_ key: String, _ value: Date?) {
        if let value { set(key, .int64(WireTime.microseconds(value))) }
    }
    public mutating func set(_ key: String, strings: [String]) {
        set(key, .array(element: .string, strings.map(DBusValue.string)))
    }
    public mutating func set(_ key: String, records: [WireRecord]) {
        set(key, .array(element: Self.type, records.map(\.value)))
    }

    public var value: DBusValue { .dictionary(key: .string, value: .variant, entries) }

    /// A list of records as one `aa{sv}` value.
    public static func list(_ records: [WireRecord]) -> DBusValue {
        .array(element: type, records.map(\.value))
    }

    /// Reads an `aa{sv}` reply.
    public static func fields(of value: DBusValue?, what: String) throws(DBusError) -> [WireFields] {
        guard case .array(_, let items)? = value else { throw invalid("the \(what) must be a list aa{sv}") }
        var result: [WireFields] = []
        for item in items { result.append(try WireFields(item, what: what)) }
        return result
    }
}
