// libFuzzer harness for reading D-Bus messages: DBusKit's demarshalling of a wire-format buffer
// (libdbus's dbus_message_demarshal, then every value into DBusValue), and chimed's readers of the records
// apps send (ContentWire, TriggerWire, EntryWire, GroupSettingsWire, CategoryWire). Built through SwiftPM
// by scripts/fuzz.sh (CHIME_FUZZ=1 adds the target); libFuzzer supplies main. Seeds: Fuzz/corpus/dbus.
//
// libdbus is not instrumented, so the fuzzer cannot learn the wire format from coverage. An input whose
// first byte is odd is therefore read as a recipe for a body instead (types, chimed's record keys and
// typical values), which DBusKit marshals and libdbus demarshals before the readers see it.
import ChimeProtocol
import DBusKit
import Foundation

let now = Date(timeIntervalSince1970: 1_800_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let first = bytes.first, first & 1 == 1 {
        var recipe = Recipe(bytes: bytes.dropFirst())
        let body = (0..<(1 + Int(recipe.byte() % 3))).map { _ in recipe.value(depth: 0) }
        let call = DBusMessage.methodCall(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
            member: "Schedule", body: body)
        // A body DBusKit refuses (a NUL in a string, too deep) is not sent; one it writes, libdbus reads.
        guard let wire = try? call.serialized() else { return 0 }
        guard let message = try? DBusMessage(serialized: wire) else { fatalError("libdbus refused what DBusKit wrote") }
        read(message)
        return 0
    }
    guard let message = try? DBusMessage(serialized: bytes) else { return 0 }
    // What libdbus accepted and DBusKit read, DBusKit writes again so that libdbus reads the same types.
    if let again = try? message.serialized() {
        guard let reread = try? DBusMessage(serialized: again) else { fatalError("DBusKit wrote what it cannot read") }
        guard reread.signature == message.signature, reread.member == message.member else {
            fatalError("the body changed from \(message.signature) to \(reread.signature)")
        }
    }
    read(message)
    return 0
}

/// Every reader of chimed's on every value of the body, and on the records of a list.
func read(_ message: DBusMessage) {
    for value in message.body {
        decode(value)
        if case .array(_, let items) = value {
            for (index, item) in items.prefix(8).enumerated() {
                _ = try? EntryWire.decode(item, index: index, now: now)
                _ = try? CategoryWire.decode(item, index: index)
            }
        }
    }
}

func decode(_ value: DBusValue) {
    _ = try? ContentWire.decode(value)
    _ = try? TriggerWire.decode(value)
    _ = try? EntryWire.decode(value, index: 0, now: now)
    _ = try? GroupSettingsWire.decode(value)
    _ = try? CategoryWire.decode(value, index: 0)
}

/// Reads bytes as choices of types, keys and values; past the end every choice is 0.
struct Recipe {
    var bytes: ArraySlice<UInt8>

    static let keys = [
        "summary", "subtitle", "body", "app-name", "icon", "sound", "urgency", "expire-timeout", "actions", "category",
        "user-info", "desktop-entry", "hints", "at", "every", "rrule", "dtstart", "on-calendar", "date-rule", "tz",
        "until", "count", "replaces-id", "id", "content", "template", "pool", "pool-order", "command",
        "command-timeout", "command-output", "callback", "callback-timeout", "missed", "late-window", "enabled",
        "title", "options", "default", "minimal", "order", "items", "x-hint",
    ]
    static let words = [
        "", "x", "every day at 9:00", "every 2 seconds", "FREQ=DAILY;COUNT=3", "FREQ=WEEKLY;BYDAY=FR", "*-*-* 09:00",
        "Mon..Fri 10:00", "Europe/Berlin", "UTC", "2026-12-01T09:00:00", "shuffled", "in-order", "random", "body",
        "summary-and-body", "/bin/echo", "snooze:10m", "stop-repeat", "skip-next", "dismiss", "deliver-late",
        "coalesce", "skip", "destructive", "text-input", "{date} {time} {weekday} {n}", "io.example.App",
        #"{"kind":"every","every":{"unit":"day","interval":1}}"#,
    ]

    mutating func byte() -> UInt8 { bytes.popFirst() ?? 0 }
    mutating func u32() -> UInt32 { (0..<4).reduce(0) { value, _ in value << 8 | UInt32(byte()) } }
    mutating func u64() -> UInt64 { UInt64(u32()) << 32 | UInt64(u32()) }

    mutating func string() -> String {
        switch byte() % 4 {
        case 0: return Self.keys[Int(byte()) % Self.keys.count]
        case 1, 2: return Self.words[Int(byte()) % Self.words.count]
        default:
            let count = Int(byte() % 64)
            return String(decoding: (0..<count).map { _ in byte() }, as: UTF8.self)
        }
    }

    mutating func record(depth: Int) -> DBusValue {
        let entries = (0..<Int(byte() % 8)).map { _ in
            DBusDictEntry(.string(Self.keys[Int(byte()) % Self.keys.count]), .variant(value(depth: depth + 1)))
        }
        return .dictionary(key: .string, value: .variant, entries)
    }

    mutating func value(depth: Int) -> DBusValue {
        let kinds: UInt8 = depth < 8 ? 18 : 11
        switch byte() % kinds {
        case 0: return .byte(byte())
        case 1: return .boolean(byte() & 1 == 1)
        case 2: return .int32(Int32(bitPattern: u32()))
        case 3: return .uint32(u32())
        case 4: return .int64(Int64(bitPattern: u64()))
        case 5: return .uint64(u64())
        case 6: return .double(Double(bitPattern: u64()))
        case 7: return .int64(Int64(1_800_000_000_000_000) + Int64(Int32(bitPattern: u32())) * 1000)
        case 8: return .int16(Int16(truncatingIfNeeded: u32()))
        case 9: return .objectPath(byte() & 1 == 0 ? "/" : "/io/chime/Chime1")
        case 10: return .string(string())
        case 11: return .variant(value(depth: depth + 1))
        case 12, 13: return record(depth: depth)
        case 14:
            return .array(
                element: .dictionary(key: .string, value: .variant),
                (0..<Int(byte() % 4)).map { _ in record(depth: depth + 1) })
        case 15: return .array(element: .string, (0..<Int(byte() % 4)).map { _ in .string(string()) })
        case 16:
            return .array(
                element: .structure([.string, .string]),
                (0..<Int(byte() % 4)).map { _ in .structure([.string(string()), .string(string())]) })
        default:
            return .dictionary(
                key: .string, value: .string,
                (0..<Int(byte() % 4)).map { _ in DBusDictEntry(.string(string()), .string(string())) })
        }
    }
}
