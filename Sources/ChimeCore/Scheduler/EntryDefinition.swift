import Foundation
import Synchronization

/// An entry's definition as the scheduler holds it: the encoded form the store keeps in the item's row,
/// decoded only when something reads it (an occurrence is due, a listing, a reschedule that changed it).
///
/// What the scheduler needs at every step is kept beside it, decoded: the entry's id, its end date, its
/// count, the size its content counts for in quotas, and a fingerprint of its encoding. The encoding
/// itself may be left to the store (`released`): the daemon reads it from the item's row when an
/// occurrence is due or a listing asks, and a reschedule compares fingerprints. So an item loaded at start
/// costs a few fields, not a decode nor a copy of its content.
public struct EntryDefinition: Hashable, Sendable {
    /// The encoding and the entry it was made from, while held here; nil once only the store holds them.
    /// (One reference for both, and the optional fields below without their optionals' padding: the
    /// scheduler keeps one of these per item.)
    private var resident: Resident?
    /// FNV-1a (64 bits) of the encoding: equal for equal encodings, kept when the encoding is released.
    public let fingerprint: UInt64
    public let id: String
    /// The end date in seconds since 1970; NaN for none.
    private let endSeconds: Double
    /// The count; below 0 for none.
    private let maximum: Int
    /// `contentBytes` in the low 31 bits, `wakes` in the top one (an item's content is far smaller than
    /// 2 GiB, and a field of its own would make every item 8 bytes larger).
    private let bytes: UInt32
    /// The encoding's length in bytes, kept when the encoding is released.
    private let encodingBytes: UInt32

    private final class Resident: Sendable {
        let encoded: [UInt8]
        /// The entry it was made from, while a caller still holds it; the scheduler keeps items without it.
        let entry: TimelineEntry?
        init(_ encoded: [UInt8], _ entry: TimelineEntry?) {
            self.encoded = encoded
            self.entry = entry
        }
    }

    /// The canonical encoding (`BinaryDefinition`), so equal entries encode equally and a reschedule can
    /// compare definitions by their bytes. Nil when only the store holds it (`released`).
    public var encoded: [UInt8]? { resident?.encoded }
    public var endDate: Date? { endSeconds.isNaN ? nil : Date(timeIntervalSince1970: endSeconds) }
    public var maximumOccurrences: Int? { maximum < 0 ? nil : maximum }
    /// `ContentSource.byteSize` of its content, as the limit of one item's content counts it.
    public var contentBytes: Int { Int(bytes & ~Self.wakeBit) }
    /// Whether the entry asks to wake the machine (`TimelineEntry.wake`), known without decoding it.
    public var wakes: Bool { bytes & Self.wakeBit != 0 }
    private static let wakeBit: UInt32 = 1 << 31
    /// The length of the encoding the store keeps: the whole entry (content with its user info, ids,
    /// the rule as written, category, offset, escalation), as an app's byte quota counts it.
    public var encodedBytes: Int { Int(encodingBytes) }

    private init(
        resident: Resident?, fingerprint: UInt64, id: String, endDate: Date?, maximumOccurrences: Int?,
        contentBytes: Int, encodedBytes: Int, wakes: Bool
    ) {
        self.resident = resident
        self.fingerprint = fingerprint
        self.id = id
        self.endSeconds = endDate?.timeIntervalSince1970 ?? .nan
        self.maximum = maximumOccurrences.map { max(0, $0) } ?? -1
        self.bytes = UInt32(clamping: min(contentBytes, Int(~Self.wakeBit))) | (wakes ? Self.wakeBit : 0)
        self.encodingBytes = UInt32(clamping: encodedBytes)
    }

    public init(_ entry: TimelineEntry) {
        let encoded = Self.encode(entry)
        self.init(
            resident: Resident(encoded, entry), fingerprint: Self.fingerprint(of: encoded), id: entry.id,
            endDate: entry.endDate, maximumOccurrences: entry.maximumOccurrences,
            contentBytes: entry.content.byteSize, encodedBytes: encoded.count, wakes: entry.wake)
    }

    /// A stored definition with the fields kept beside it as its row has them; nothing is decoded. A nil
    /// `encoded` leaves the encoding in the store; `fingerprint` and `encodedBytes` (its length) must then
    /// be given. `wakes` is the entry's `wake`, kept in a column of its own.
    public init(
        encoded: [UInt8]?, fingerprint: UInt64? = nil, encodedBytes: Int? = nil, id: String, endDate: Date?,
        maximumOccurrences: Int?, contentBytes: Int, wakes: Bool = false
    ) {
        precondition(encoded != nil || fingerprint != nil, "a released definition needs its fingerprint")
        self.init(
            resident: encoded.map { Resident($0, nil) },
            fingerprint: fingerprint ?? Self.fingerprint(of: encoded ?? []),
            id: id, endDate: endDate, maximumOccurrences: maximumOccurrences, contentBytes: contentBytes,
            encodedBytes: encoded?.count ?? encodedBytes ?? 0, wakes: wakes)
    }

    /// Whether the encoding is held here (not `released`).
    public var isResident: Bool { resident != nil }

    /// The entry. A stored encoding that no longer decodes (the store checks each row's checksum at
    /// start, so only a row written by a chimed that encoded differently), or one released to the store
    /// (a caller that should have read it from there), reads as an entry that shows its id, rather than
    /// stopping the daemon.
    public var entry: TimelineEntry {
        if let decoded = resident?.entry { return decoded }
        if let entry = try? decode() { return entry }
        return Self.unreadable(id: id, endDate: endDate, maximumOccurrences: maximumOccurrences)
    }

    /// What an entry whose definition cannot be read shows.
    public static func unreadable(id: String, endDate: Date?, maximumOccurrences: Int?) -> TimelineEntry {
        TimelineEntry(
            id: id, trigger: .at(endDate ?? Date(timeIntervalSince1970: 0)),
            content: .fixed(
                NotificationContent(
                    summary: "A reminder chimed cannot read",
                    body: "Its stored definition (entry \(id)) is damaged; schedule it again.")),
            endDate: endDate, maximumOccurrences: maximumOccurrences)
    }

    /// The decoded entry it carries, if it carries one (it was made from an entry, not read from a row).
    public var decodedEntry: TimelineEntry? { resident?.entry }

    /// The entry decoded from its encoding.
    public func decode() throws -> TimelineEntry {
        guard let resident else { throw DefinitionCoding.Released(id: id) }
        if let decoded = resident.entry { return decoded }
        return try DefinitionCoding.decode(TimelineEntry.self, resident.encoded)
    }

    /// The same definition without the decoded entry it may carry: what the scheduler keeps.
    public var compact: EntryDefinition {
        guard let resident, resident.entry != nil else { return self }
        var compact = self
        compact.resident = Resident(resident.encoded, nil)
        return compact
    }

    /// The same definition with its encoding left to the store: the fields kept beside it and its
    /// fingerprint.
    public var released: EntryDefinition {
        var released = self
        released.resident = nil
        return released
    }

    /// Equal encodings; when one of them is released, equal fingerprints.
    public static func == (a: EntryDefinition, b: EntryDefinition) -> Bool {
        guard a.fingerprint == b.fingerprint else { return false }
        guard let x = a.encoded, let y = b.encoded else { return true }
        return x == y
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

    static func encode(_ entry: TimelineEntry) -> [UInt8] { DefinitionCoding.encode(entry) }

    /// FNV-1a, 64 bits, of an encoding's bytes: its fingerprint.
    public static func fingerprint(of encoded: [UInt8]) -> UInt64 {
        encoded.withUnsafeBytes { fingerprint(of: $0) }
    }

    /// FNV-1a, 64 bits, of bytes (continuing from `hash`: the store's row checksum starts with the
    /// encoding's bytes, so the fingerprint is the checksum's state after them).
    public static func fingerprint(of bytes: UnsafeRawBufferPointer, from hash: UInt64 = fnvBasis) -> UInt64 {
        var hash = hash
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= fnvPrime
        }
        return hash
    }

    public static let fnvBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    public static let fnvPrime: UInt64 = 0x100_0000_01b3
}

/// A repeating item's parsed rule as the scheduler holds it: encoded as the store keeps it, decoded the
/// first time the item needs its next occurrence and kept decoded after that.
public final class StoredRecurrence: Hashable, Sendable {
    public let encoded: [UInt8]
    private let decoded: Mutex<Recurrence?>

    public init(_ recurrence: Recurrence) {
        encoded = DefinitionCoding.encode(recurrence)
        decoded = Mutex(recurrence)
    }

    /// A stored rule; decoded when it is first used.
    public init(encoded: [UInt8]) {
        self.encoded = encoded
        decoded = Mutex(nil)
    }

    /// The rule; nil only when a stored encoding no longer decodes (the item then fires once more, at
    /// the occurrence it was waiting for).
    public var value: Recurrence? {
        decoded.withLock { value in
            if let value { return value }
            value = try? DefinitionCoding.decode(Recurrence.self, encoded)
            return value
        }
    }

    public static func == (a: StoredRecurrence, b: StoredRecurrence) -> Bool { a.encoded == b.encoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(encoded) }
}

/// The encoding of definitions: `BinaryDefinition`, canonical, so that equal values encode to equal bytes.
/// JSON, the encoding of earlier versions, is read only to migrate a store (`decodeJSON`), and written only
/// where a size is still counted as JSON (`encodeJSON`).
public enum DefinitionCoding {
    /// Encodes a definition; the types it is used for encode without failing.
    public static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        do {
            return try BinaryDefinition.encode(value)
        } catch {
            preconditionFailure("a definition did not encode: \(error)")
        }
    }

    public static func decode<T: Decodable>(_ type: T.Type, _ bytes: [UInt8]) throws -> T {
        try BinaryDefinition.decode(type, from: bytes)
    }

    /// Whether stored bytes are a definition in JSON (an object or a string: how every definition of
    /// earlier versions begins), rather than in the binary encoding (whose first byte is its version).
    public static func isJSON(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.first == UInt8(ascii: "{") || bytes.first == UInt8(ascii: "\"")
    }

    private static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }()
    private static let jsonDecoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }()

    /// The JSON encoding of earlier versions' definitions: keys sorted, and numbers JSON cannot hold (a
    /// hint's NaN) written as strings.
    public static func encodeJSON<T: Encodable>(_ value: T) -> String {
        do {
            return String(decoding: try jsonEncoder.encode(value), as: UTF8.self)
        } catch {
            preconditionFailure("a definition did not encode: \(error)")
        }
    }

    public static func decodeJSON<T: Decodable>(_ type: T.Type, _ bytes: some Collection<UInt8>) throws -> T {
        try jsonDecoder.decode(type, from: Data(bytes))
    }

    /// A definition was read that is held only by the store: a caller that should have read it there.
    public struct Released: Error, CustomStringConvertible {
        public var id: String
        public var description: String { "the definition of entry \(id) is in the store, not in memory" }
    }
}
