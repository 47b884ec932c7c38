import Foundation

/// The system's tz database on disk: a directory of TZif files (`TZDIR` when set, else
/// `/usr/share/zoneinfo`), and `/etc/localtime` for the system zone.
///
/// This is the one place ChimeCore reads files: the zone rules every wall-clock computation needs,
/// read the way glibc reads them, so that chimed, chime and ChimeKit agree with `date` and with each
/// other. Names are checked before any path is built, and a file is read only up to
/// `TZifLimits.maximumFileBytes`.
public struct ZoneInfoDirectory: Hashable, Sendable {
    /// Where glibc looks when `TZDIR` is unset.
    public static let defaultPath = "/usr/share/zoneinfo"

    /// The directory the zone files are read from.
    public let path: String
    /// The file holding the system zone's rules.
    public let localtimePath: String

    public init(path: String = ZoneInfoDirectory.defaultPath, localtimePath: String = "/etc/localtime") {
        // `/usr/share/zoneinfo/` and `/usr/share/zoneinfo` are one directory, and paths are built by appending.
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        self.path = String(trimmed)
        self.localtimePath = localtimePath
    }

    /// `TZDIR` from `environment` when set and non-empty, else `/usr/share/zoneinfo`.
    public init(environment: [String: String]) {
        let directory = environment["TZDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? Self.defaultPath
        self.init(path: directory)
    }

    /// The directory of this process's environment.
    public static var current: ZoneInfoDirectory { ZoneInfoDirectory(environment: ProcessInfo.processInfo.environment) }

    /// Checks that `name` is a zone name and not a way out of the directory: relative, at most 255
    /// bytes, components of letters, digits and `._+-` that are neither empty nor `.` or `..`.
    public static func validate(_ name: String) throws {
        let what = "time zone name \"\(name.prefix(80))\""
        guard !name.isEmpty, name.utf8.count <= 255 else {
            throw TZifError("a \(what) must have 1 to 255 characters, like Europe/Berlin")
        }
        guard !name.hasPrefix("/") else {
            throw TZifError("a \(what) is absolute; zones are named relative to the zone directory, like Europe/Berlin")
        }
        for component in name.split(separator: "/", omittingEmptySubsequences: false) {
            guard !component.isEmpty, component != ".", component != ".." else {
                throw TZifError("a \(what) has an empty, \".\" or \"..\" component; write it like Europe/Berlin")
            }
            let allowed = component.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || [UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "+"), UInt8(ascii: "-")].contains(byte)
            }
            guard allowed else {
                throw TZifError("a \(what) may hold only letters, digits, \"/\", \".\", \"_\", \"+\" and \"-\"")
            }
        }
    }

    /// The rules of the zone `name` (`Europe/Berlin`), read from its file in this directory.
    public func rules(named name: String) throws -> ZoneRules {
        try Self.validate(name)
        return try ZoneRules(tzif: Self.read(path + "/" + name), identifier: name)
    }

    /// Every zone file of this directory, by name (`Europe/Berlin`), sorted: the files that start as TZif
    /// files do, without the `posix/` and `right/` copies (the same zones again, and leap-second time).
    /// A few hundred files, each opened for its first four bytes.
    public func zoneNames() -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: path) else { return [] }
        var names: [String] = []
        for case let name as String in walker {
            if name.hasPrefix("posix/") || name.hasPrefix("right/") || name == "posix" || name == "right" { continue }
            guard (try? Self.validate(name)) != nil, let handle = FileHandle(forReadingAtPath: path + "/" + name)
            else { continue }
            let magic = try? handle.read(upToCount: 4)
            try? handle.close()
            if magic == Data("TZif".utf8) { names.append(name) }
        }
        return names.sorted()
    }

    /// The system zone's rules, read from `localtimePath`.
    public func localtimeRules() throws -> ZoneRules {
        try ZoneRules(tzif: Self.read(localtimePath), identifier: localtimePath)
    }

    /// A regular file's bytes (following symbolic links, as zone directories use them), at most
    /// `TZifLimits.maximumFileBytes` + 1 of them so that a larger file is recognised as too large.
    static func read(_ path: String) throws -> [UInt8] {
        let resolved = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: resolved)
        } catch {
            throw TZifError("\(path): no such time zone file; see the names under \(Self.defaultPath) or set TZDIR")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw TZifError("\(path) is not a regular file, so it is not a time zone file")
        }
        guard let handle = FileHandle(forReadingAtPath: resolved) else {
            throw TZifError("\(path) cannot be opened for reading; check its permissions")
        }
        defer { try? handle.close() }
        do {
            return Array(try handle.read(upToCount: TZifLimits.maximumFileBytes + 1) ?? Data())
        } catch {
            throw TZifError("\(path) cannot be read: \(error)")
        }
    }
}
