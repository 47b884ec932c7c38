import Foundation
import Synchronization

/// The zone rules this process computes wall-clock times with, read from the system's tz database
/// (`ZoneInfoDirectory`) the first time a zone is used and kept until `reload(_:)`.
///
/// chimed calls `reload(_:)` when the database changes on disk (a tzdata upgrade) and then
/// reschedules; chime and ChimeKit read it once per process, like glibc.
public final class ZoneRulesStore: Sendable {
    /// The store `WallClock` uses, reading the directory of this process's environment.
    public static let shared = ZoneRulesStore(directory: .current)

    /// Zones kept at most; a program uses a handful, and the bound keeps a caller cycling through
    /// every name from growing the cache past the database's size.
    static let maximumZones = 1_024

    struct State {
        var directory: ZoneInfoDirectory
        /// Read rules by name; nil for a name with no usable file, so it is not read again.
        var zones: [String: ZoneRules?] = [:]
        var generation = 0
    }

    private let state: Mutex<State>

    public init(directory: ZoneInfoDirectory) {
        state = Mutex(State(directory: directory))
    }

    /// The directory zones are read from.
    public var directory: ZoneInfoDirectory { state.withLock { $0.directory } }

    /// How many times the rules were dropped by `reload(_:)`: a caller keeping derived values compares it.
    public var generation: Int { state.withLock { $0.generation } }

    /// The rules for `name`, nil when the database has no valid file for it (the error is what
    /// `rulesOrError(named:)` reports).
    public func rules(named name: String) -> ZoneRules? {
        cachedRules(key: name) { try $0.rules(named: name) }
    }

    /// The rules in the TZif file at `path` (an `/etc/localtime` that is a copy, not a link), kept as a
    /// zone's are until `reload(_:)`.
    public func rules(file path: String) -> ZoneRules? {
        // A zone's name is relative, so an absolute path never meets one in the cache.
        cachedRules(key: path.hasPrefix("/") ? path : "/" + path) { _ in
            try ZoneRules(tzif: ZoneInfoDirectory.read(path), identifier: "localtime")
        }
    }

    private func cachedRules(key name: String, read: (ZoneInfoDirectory) throws -> ZoneRules) -> ZoneRules? {
        if let cached = state.withLock({ $0.zones[name] }) { return cached }
        let (directory, generation) = state.withLock { ($0.directory, $0.generation) }
        let rules = try? read(directory)
        state.withLock { state in
            // A reload while the file was read: keep the answer out of the new generation's cache.
            guard state.generation == generation else { return }
            if state.zones.count >= Self.maximumZones { state.zones.removeAll(keepingCapacity: true) }
            state.zones[name] = .some(rules)
        }
        return rules
    }

    /// Whether the directory exists: a system without tzdata has none, and only there does `Zone` ask
    /// Foundation's copy of the database for a name.
    public var hasDatabase: Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    /// The rules for `name`, or why there are none.
    public func rulesOrError(named name: String) throws -> ZoneRules {
        if let rules = rules(named: name) { return rules }
        return try directory.rules(named: name)
    }

    /// Drops every zone read so far, and reads from `directory` from now on (the same directory when
    /// nil): what a change of the database on disk calls for.
    public func reload(_ directory: ZoneInfoDirectory? = nil) {
        state.withLock { state in
            if let directory { state.directory = directory }
            state.zones.removeAll()
            state.generation += 1
        }
    }
}
