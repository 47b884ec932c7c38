import Foundation

/// One value of a notification's user info: a property-list value, as `UNNotificationContent.userInfo`
/// holds them. Handed back to the app with its action events, never shown.
///
/// Stored as JSON: a string as a plain JSON string (so user info stored as strings by earlier versions
/// reads as it was), every other value as an object with one key naming its kind: `{"integer": 5}`,
/// `{"double": 1.5}`, `{"bool": true}`, `{"date": MICROSECONDS_SINCE_1970}`, `{"data": "BASE64"}`,
/// `{"array": […]}`, `{"dictionary": {…}}`.
public enum UserInfoValue: Hashable, Sendable, Codable {
    case string(String)
    case integer(Int64)
    case double(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([UserInfoValue])
    case dictionary([String: UserInfoValue])

    /// The most arrays and dictionaries one value may have inside one another.
    public static let maximumDepth = 8

    /// The text, when the value is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// What the value takes, counted as a content's size counts it: the UTF-8 bytes of its strings and
    /// dictionary keys, the bytes of its data, and 8 for each other scalar.
    public var byteSize: Int {
        switch self {
        case .string(let text): text.utf8.count
        case .data(let data): data.count
        case .integer, .double, .bool, .date: 8
        case .array(let items): items.reduce(0) { $0 + $1.byteSize }
        case .dictionary(let items): items.reduce(0) { $0 + $1.key.utf8.count + $1.value.byteSize }
        }
    }

    /// How many arrays and dictionaries lie inside one another here: 0 for a scalar.
    public var depth: Int {
        switch self {
        case .array(let items): 1 + (items.map(\.depth).max() ?? 0)
        case .dictionary(let items): 1 + (items.values.map(\.depth).max() ?? 0)
        default: 0
        }
    }

    /// The first number in it that is not finite (NaN or an infinity), with where it is (`key[2].name`).
    func firstNonFinite(at path: String) -> (path: String, value: Double)? {
        switch self {
        case .double(let number) where !number.isFinite: return (path, number)
        case .array(let items):
            for (index, item) in items.enumerated() {
                if let found = item.firstNonFinite(at: "\(path)[\(index)]") { return found }
            }
        case .dictionary(let items):
            for key in items.keys.sorted() {
                if let found = items[key]?.firstNonFinite(at: "\(path).\(key)") { return found }
            }
        default: break
        }
        return nil
    }

    private enum Kind: String, CodingKey {
        case integer, double, bool, date, data, array, dictionary
    }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let text = try? single.decode(String.self) {
            self = .string(text)
            return
        }
        let c = try decoder.container(keyedBy: Kind.self)
        guard c.allKeys.count == 1, let kind = c.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "a user-info value is a string or an object with one of the keys "
                        + "integer, double, bool, date, data, array, dictionary"))
        }
        switch kind {
        case .integer: self = .integer(try c.decode(Int64.self, forKey: kind))
        case .double: self = .double(try c.decode(Double.self, forKey: kind))
        case .bool: self = .bool(try c.decode(Bool.self, forKey: kind))
        case .date:
            self = .date(Date(timeIntervalSince1970: Double(try c.decode(Int64.self, forKey: kind)) / 1_000_000))
        case .data:
            guard let data = Data(base64Encoded: try c.decode(String.self, forKey: kind)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: kind, in: c, debugDescription: "user-info data is not base64")
            }
            self = .data(data)
        case .array: self = .array(try c.decode([UserInfoValue].self, forKey: kind))
        case .dictionary: self = .dictionary(try c.decode([String: UserInfoValue].self, forKey: kind))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if case .string(let text) = self {
            var single = encoder.singleValueContainer()
            try single.encode(text)
            return
        }
        var c = encoder.container(keyedBy: Kind.self)
        switch self {
        case .string: break
        case .integer(let number): try c.encode(number, forKey: .integer)
        case .double(let number): try c.encode(number, forKey: .double)
        case .bool(let flag): try c.encode(flag, forKey: .bool)
        case .date(let date):
            // Saturating: a date read from a stored Int64.max microseconds encodes back as that number
            // (its Double rounds to 2^63, which Int64 cannot hold), instead of stopping chimed.
            let usec = (date.timeIntervalSince1970 * 1_000_000).rounded()
            let clamped: Int64 =
                usec.isNaN ? 0 : usec >= 0x1p63 ? .max : usec < -0x1p63 ? .min : Int64(usec)
            try c.encode(clamped, forKey: .date)
        case .data(let data): try c.encode(data.base64EncodedString(), forKey: .data)
        case .array(let items): try c.encode(items, forKey: .array)
        case .dictionary(let items): try c.encode(items, forKey: .dictionary)
        }
    }
}

extension UserInfoValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension UserInfoValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension UserInfoValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension UserInfoValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension [String: UserInfoValue] {
    /// The user info's size as a content counts it: each key's bytes and each value's `byteSize`.
    public var userInfoByteSize: Int { reduce(0) { $0 + $1.key.utf8.count + $1.value.byteSize } }
}
