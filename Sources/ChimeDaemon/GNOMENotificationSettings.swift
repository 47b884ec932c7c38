import ChimeProtocol
import Foundation

/// GNOME's per-app notification settings (`org.gnome.desktop.notifications.application`), read where the
/// desktop keeps them: the user's dconf database (`$XDG_CONFIG_HOME/dconf/user`, a GVDB file). GNOME
/// Shell keeps a notification of an app whose `enable` is false out of sight and says nothing to its
/// sender; chimed reads the same value to say so in the history. Only read, never written: the file is
/// the user's own, read as any file (no D-Bus, no GSettings), and bounded (`maximumBytes`).
///
/// Not read: the system databases of a dconf profile (`/etc/dconf/db`), where a site could set a default
/// for an app.
struct GNOMENotificationSettings: Sendable {
    /// The largest database read; a larger one is not read (the apps' settings count as not known).
    static let maximumBytes = 4 << 20
    /// The deepest chain of parents a key is made of (a dconf path has one per folder).
    static let maximumDepth = 64

    /// Where the settings are: the database file.
    let database: URL
    /// Where desktop files are (`applications` folders of the XDG data directories), most important
    /// first: GNOME Shell applies an app's settings only when it finds the app's desktop file.
    let applications: [URL]

    /// The file and what it said the last time it was read, to read it again only once it changed.
    private let cache = Cache()

    init(database: URL, applications: [URL]) {
        self.database = database
        self.applications = applications
    }

    /// The user's settings, by the XDG base directories; nil without a home.
    static func user(environment: [String: String] = ProcessInfo.processInfo.environment) -> Self? {
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
        func directory(_ variable: String, else relative: String) -> URL? {
            if let path = environment[variable], path.hasPrefix("/") { return URL(fileURLWithPath: path) }
            return home?.appendingPathComponent(relative)
        }
        guard let config = directory("XDG_CONFIG_HOME", else: ".config") else { return nil }
        let dataDirectories =
            (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").filter { $0.hasPrefix("/") }.map { URL(fileURLWithPath: String($0)) }
        let data = [directory("XDG_DATA_HOME", else: ".local/share")].compactMap { $0 } + dataDirectories
        return Self(
            database: config.appendingPathComponent("dconf/user"),
            applications: data.map { $0.appendingPathComponent("applications") })
    }

    /// The folder of an app's settings, as GNOME Shell names it (messageTray.js `_canonicalizeId`): the
    /// desktop file id without `.desktop`, lower case, each character but a letter, a digit or `-` made
    /// a `-`, and runs of `-` made one.
    static func settingsName(ofDesktopEntry entry: String) -> String {
        let id = entry.hasSuffix(".desktop") ? String(entry.dropLast(".desktop".count)) : entry
        var name = ""
        for scalar in id.lowercased().unicodeScalars {
            let kept = ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
            let character: Character = kept ? Character(scalar) : "-"
            if character == "-", name.last == "-" { continue }
            name.append(character)
        }
        return name
    }

    /// Whether the user turned off the notifications of the app of desktop entry `entry` and GNOME
    /// Shell finds that app (its desktop file); false when it is not set, or the database cannot be read.
    func turnedOff(desktopEntry entry: String) -> Bool {
        guard let id = DesktopFileID.parse(entry),
            cache.disabled(in: database).contains(Self.settingsName(ofDesktopEntry: id))
        else { return false }
        return hasDesktopFile(id)
    }

    /// Whether desktop file `id` (checked with `DesktopFileID.parse`) is installed in one of the
    /// `applications` folders, where desktops look apps up by their `desktop-entry`.
    func hasDesktopFile(_ id: String) -> Bool {
        applications.contains {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("\(id).desktop").path)
        }
    }

    /// The settings names of the apps whose `enable` is false in the GVDB `data`; nil when it is not
    /// a GVDB file this reader understands.
    static func disabledApps(inDatabase data: Data) -> Set<String>? {
        let prefix = "/org/gnome/desktop/notifications/application/"
        let suffix = "/enable"
        guard let keys = GVDB.values(in: data) else { return nil }
        var disabled = Set<String>()
        for (key, value) in keys where key.hasPrefix(prefix) && key.hasSuffix(suffix) {
            let name = key.dropFirst(prefix.count).dropLast(suffix.count)
            guard !name.isEmpty, !name.contains("/"), value == .boolean(false) else { continue }
            disabled.insert(String(name))
        }
        return disabled
    }

    /// What was read last, by the file's identity and time of change.
    private final class Cache: @unchecked Sendable {
        // @unchecked Sendable: every field is read and written under `lock`.
        private let lock = NSLock()
        private var stamp: [FileAttributeKey: AnyHashable] = [:]
        private var disabled = Set<String>()

        func disabled(in database: URL) -> Set<String> {
            lock.lock()
            defer { lock.unlock() }
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: database.path),
                attributes[.type] as? FileAttributeType == .typeRegular,
                let size = attributes[.size] as? Int
            else {
                stamp = [:]
                disabled = []
                return []
            }
            var now: [FileAttributeKey: AnyHashable] = [.size: size]
            for key in [FileAttributeKey.modificationDate, .systemFileNumber] {
                if let value = attributes[key] as? AnyHashable { now[key] = value }
            }
            if now == stamp { return disabled }
            stamp = now
            // dconf replaces the file whole (a new file renamed over the old), so a read sees one version.
            if size <= GNOMENotificationSettings.maximumBytes, let data = try? Data(contentsOf: database),
                data.count <= GNOMENotificationSettings.maximumBytes
            {
                disabled = GNOMENotificationSettings.disabledApps(inDatabase: data) ?? []
            } else {
                disabled = []
            }
            return disabled
        }
    }
}

/// The values of a GVDB file (GLib's variant database, which dconf keeps settings in) that are booleans,
/// by their full keys. Every offset and length is checked against the file; anything else is skipped.
enum GVDB {
    /// A value this reader understands.
    enum Value: Equatable { case boolean(Bool) }

    static func values(in data: Data) -> [String: Value]? {
        let bytes = [UInt8](data)
        func u32(_ offset: Int) -> UInt32? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16
                | UInt32(bytes[offset + 3]) << 24
        }
        // The header: "GVariant", version 0, options, the root table's start and end.
        guard bytes.count >= 24, Array(bytes[0..<8]) == Array("GVariant".utf8), u32(8) == 0,
            let rootStart = u32(16).map(Int.init), let rootEnd = u32(20).map(Int.init),
            rootStart <= rootEnd, rootEnd <= bytes.count, rootStart % 4 == 0
        else { return nil }
        // The hash table: bloom words and buckets, then its items of 24 bytes each.
        guard let bloom = u32(rootStart).map({ Int($0 & 0x07FF_FFFF) }), let buckets = u32(rootStart + 4).map(Int.init)
        else { return nil }
        let itemsStart = rootStart + 8 + 4 * bloom + 4 * buckets
        guard itemsStart <= rootEnd else { return nil }
        let count = (rootEnd - itemsStart) / 24

        struct Item {
            var parent: UInt32
            var key: [UInt8]
            var type: UInt8
            var valueStart: Int
            var valueEnd: Int
        }
        var items: [Item] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            let at = itemsStart + 24 * index
            guard let parent = u32(at + 4), let keyStart = u32(at + 8).map(Int.init),
                let valueStart = u32(at + 16).map(Int.init), let valueEnd = u32(at + 20).map(Int.init)
            else { return nil }
            let keySize = Int(bytes[at + 12]) | Int(bytes[at + 13]) << 8
            guard keyStart + keySize <= bytes.count else { return nil }
            items.append(
                Item(
                    parent: parent, key: Array(bytes[keyStart..<keyStart + keySize]), type: bytes[at + 14],
                    valueStart: valueStart, valueEnd: valueEnd))
        }
        func fullKey(_ index: Int) -> [UInt8]? {
            var parts: [[UInt8]] = []
            var next = index
            for _ in 0..<GNOMENotificationSettings.maximumDepth {
                parts.append(items[next].key)
                let parent = items[next].parent
                if parent == UInt32.max { return parts.reversed().flatMap { $0 } }
                guard Int(parent) < items.count else { return nil }
                next = Int(parent)
            }
            return nil
        }
        var values: [String: Value] = [:]
        for (index, item) in items.enumerated() where item.type == UInt8(ascii: "v") {
            // A serialized variant: the value's bytes, a zero byte, its type string.
            guard item.valueStart <= item.valueEnd, item.valueEnd <= bytes.count,
                item.valueEnd - item.valueStart == 3,
                bytes[item.valueStart + 1] == 0, bytes[item.valueStart + 2] == UInt8(ascii: "b"),
                bytes[item.valueStart] <= 1, let key = fullKey(index)
            else { continue }
            values[String(decoding: key, as: UTF8.self)] = .boolean(bytes[item.valueStart] == 1)
        }
        return values
    }
}
