import ChimeCore
import Foundation
import Logging

/// chimed's settings from `chime.toml`. Every key is optional; a missing file means the defaults.
public struct DaemonSettings: Hashable, Sendable {
    /// `[log] level`: the lowest level written (`--log-level` wins over it).
    public var logLevel: Logger.Level = .info
    /// `[delivery] server-timeout`: seconds a notification server may take to answer Notify.
    public var serverTimeout: Duration = .seconds(10)
    /// `[delivery] max-actions`: how many action buttons the notification server shows; with 2 or fewer,
    /// categories show their minimal actions. nil: as many as a category has.
    public var maximumActions: Int?
    /// `[limits] entries-per-app`: the most items (group entries and single items) one app may have.
    public var entriesPerApp = 100_000
    /// `[limits] groups-per-app`: the most groups one app may have, and the most group authorizations it
    /// keeps (the user's own groups and switches are not limited).
    public var groupsPerApp = 1000
    /// `[limits] bytes-per-app`: the most bytes one app may keep in chimed: its items as stored (content,
    /// user info, rules, ids), its categories and the actions kept for it.
    public var bytesPerApp = 33_554_432
    /// `[limits] calls-per-second` and `call-burst`: how fast one app may call chimed.
    public var callsPerSecond: Double = 200
    public var callBurst = 1000
    /// `[missed] policy` and `late-window`: what to do with occurrences that passed while they could not
    /// be delivered, for every group that does not choose for itself.
    public var missedPolicy: MissedPolicy = .default
    /// `[quiet-hours] start` and `end`: when non-critical notifications are held; nil: never.
    public var quietHours: QuietHours?
    /// `[flood] rate` and `burst`: how fast notifications may reach the server.
    public var flood = FloodControl()
    /// `[history] max-age`: delivery history older than this, in seconds, is pruned.
    public var historyMaxAge: TimeInterval = 90 * 86_400
    /// `[history] max-entries`: beyond this many history entries the oldest are pruned.
    public var historyMaxEntries = 100_000
    /// `[phrases] morning`, `afternoon`, `evening`, `night` and `default-time`: the times a rule phrase's
    /// parts of the day mean, and the time of a repeating phrase that names none.
    public var phraseDefaults = PhraseDefaults.standard

    /// The range of `[limits] bytes-per-app`: at least the most one item may hold.
    public static let bytesPerAppRange = 65_536...17_179_869_184
    /// The range of `[history] max-age`, in seconds: an hour to ten years.
    public static let historyMaxAgeRange: ClosedRange<TimeInterval> = 3600...(3650 * 86_400)
    /// The range of `[history] max-entries`.
    public static let historyMaxEntriesRange = 1...10_000_000

    public init() {}

    /// `$XDG_CONFIG_HOME/chime/chime.toml`, else `~/.config/chime/chime.toml`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        configDirectory(environment: environment) + "/chime.toml"
    }

    /// `$XDG_CONFIG_HOME/chime/groups`, else `~/.config/chime/groups`: the user's group files.
    public static func defaultGroupsDirectory(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        configDirectory(environment: environment) + "/groups"
    }

    /// The XDG base directory specification ignores a relative `XDG_CONFIG_HOME`, and so do we.
    private static func configDirectory(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/chime" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/chime"
    }

    /// Reads `path`; a file that does not exist gives the defaults.
    public static func load(path: String) throws(ConfigError) -> DaemonSettings {
        guard FileManager.default.fileExists(atPath: path) else { return DaemonSettings() }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, line: nil, reason: "cannot read it: \(error.localizedDescription)")
        }
        return try parse(text, file: path)
    }

    /// The sections of chime.toml and their keys.
    static let knownKeys: KeyValuePairs<String, [String]> = [
        "log": ["level"],
        "delivery": ["server-timeout", "max-actions"],
        "missed": ["policy", "late-window"],
        "quiet-hours": ["start", "end"],
        "flood": ["rate", "burst"],
        "phrases": ["morning", "afternoon", "evening", "night", "default-time", "biweekly", "every-other-week"],
        "limits": ["entries-per-app", "groups-per-app", "bytes-per-app", "calls-per-second", "call-burst"],
        "history": ["max-age", "max-entries"],
    ]

    /// Parses the text of a chime.toml; errors name the file, the line and what to change.
    public static func parse(_ text: String, file: String) throws(ConfigError) -> DaemonSettings {
        let root = TableReader(file: file, table: try ConfigDocument.parse(text, file: file), name: "chime.toml")
        let sectionNames = knownKeys.map(\.key)
        var sections: [String: TableReader] = [:]
        for field in root.table.fields {
            guard let known = knownKeys.first(where: { $0.key == field.key })?.value else {
                var reason = "unknown section [\(field.key)]"
                if let close = TableReader.closest(to: field.key, in: sectionNames) {
                    reason += "; did you mean [\(close)]?"
                }
                reason += " Known sections: \(sectionNames.map { "[\($0)]" }.joined(separator: ", "))"
                throw root.fail(field.key, reason)
            }
            guard case .table(let table) = field.value.kind else {
                throw root.fail(field.key, "\(field.key) must be a section: write [\(field.key)] with its keys below")
            }
            let section = TableReader(file: file, table: table, name: "[\(field.key)]")
            try section.rejectUnknownKeys(known)
            sections[field.key] = section
        }

        var settings = DaemonSettings()
        if let log = sections["log"], let name = try log.string("level", example: "\"info\"") {
            guard let level = Logger.Level(rawValue: name) else {
                throw log.fail(
                    "level", "[log] level must be one of trace, debug, info, notice, warning, error, critical")
            }
            settings.logLevel = level
        }
        if let delivery = sections["delivery"], delivery.has("server-timeout") {
            let seconds = try? delivery.number("server-timeout", example: "10")
            guard let seconds, seconds > 0, seconds <= 300 else {
                throw delivery.fail(
                    "server-timeout", "[delivery] server-timeout must be a number of seconds between 0 and 300")
            }
            settings.serverTimeout = .milliseconds(Int64(seconds * 1000))
        }
        if let delivery = sections["delivery"], let count = try delivery.integer("max-actions", example: "2") {
            guard (1...ActionCategory.maximumActions).contains(count) else {
                throw delivery.fail(
                    "max-actions", "[delivery] max-actions must be 1 to \(ActionCategory.maximumActions)")
            }
            settings.maximumActions = count
        }
        if let missed = sections["missed"],
            let policy = try MissedPolicyWords.read(missed, policyKey: "policy", windowKey: "late-window")
        {
            settings.missedPolicy = policy
        }
        if let quiet = sections["quiet-hours"] {
            settings.quietHours = try quietHours(quiet)
        }
        if let flood = sections["flood"] {
            settings.flood = try floodControl(flood)
        }
        if let limits = sections["limits"] {
            if let count = try limits.integer("entries-per-app", example: "100000") {
                guard (1...10_000_000).contains(count) else {
                    throw limits.fail("entries-per-app", "[limits] entries-per-app must be 1 to 10000000")
                }
                settings.entriesPerApp = count
            }
            if let count = try limits.integer("groups-per-app", example: "1000") {
                guard (1...100_000).contains(count) else {
                    throw limits.fail("groups-per-app", "[limits] groups-per-app must be 1 to 100000")
                }
                settings.groupsPerApp = count
            }
            if let bytes = try limits.integer("bytes-per-app", example: "33554432") {
                guard bytesPerAppRange.contains(bytes) else {
                    throw limits.fail(
                        "bytes-per-app",
                        "[limits] bytes-per-app must be \(bytesPerAppRange.lowerBound) to \(bytesPerAppRange.upperBound) "
                            + "(bytes an app keeps in chimed; the default is 33554432, 32 MiB)")
                }
                settings.bytesPerApp = bytes
            }
            if let rate = try limits.number("calls-per-second", example: "200") {
                guard rate > 0, rate <= 100_000 else {
                    throw limits.fail(
                        "calls-per-second", "[limits] calls-per-second must be above 0 and at most 100000")
                }
                settings.callsPerSecond = rate
            }
            if let burst = try limits.integer("call-burst", example: "1000") {
                guard (1...100_000).contains(burst) else {
                    throw limits.fail("call-burst", "[limits] call-burst must be 1 to 100000")
                }
                settings.callBurst = burst
            }
        }
        if let history = sections["history"] {
            if let age = try history.duration("max-age", example: "\"90d\"") {
                guard historyMaxAgeRange.contains(age) else {
                    throw history.fail(
                        "max-age", "[history] max-age must be 1h to 3650d; e.g. max-age = \"90d\"")
                }
                settings.historyMaxAge = age
            }
            if let count = try history.integer("max-entries", example: "100000") {
                guard historyMaxEntriesRange.contains(count) else {
                    throw history.fail(
                        "max-entries",
                        "[history] max-entries must be \(historyMaxEntriesRange.lowerBound) to "
                            + "\(historyMaxEntriesRange.upperBound)")
                }
                settings.historyMaxEntries = count
            }
        }
        if let phrases = sections["phrases"] { settings.phraseDefaults = try phraseDefaults(phrases) }
        return settings
    }

    /// `[phrases]`: each part of the day a time of day, HH:MM; `biweekly` a reading; `every-other-week` an
    /// anchor.
    private static func phraseDefaults(_ section: TableReader) throws(ConfigError) -> PhraseDefaults {
        var defaults = PhraseDefaults.standard
        let keys: [(String, WritableKeyPath<PhraseDefaults, TimeOfDay>)] = [
            ("morning", \.morning), ("afternoon", \.afternoon), ("evening", \.evening), ("night", \.night),
            ("default-time", \.time),
        ]
        for (key, path) in keys {
            let example = "\"\(defaults[keyPath: path])\""
            guard let text = try section.string(key, example: example) else { continue }
            guard let time = TimeOfDay(clock: text) else {
                throw section.fail(
                    key, "[phrases] \(key) = \"\(text)\" is not a time of day; write HH:MM, e.g. \(key) = \(example)")
            }
            defaults[keyPath: path] = time
        }
        if let text = try section.string("biweekly", example: "\"every-2-weeks\"") {
            guard let reading = PhraseDefaults.Biweekly(rawValue: text) else {
                throw section.fail(
                    "biweekly",
                    "[phrases] biweekly = \"\(text)\" is not a reading; write \"every-2-weeks\" or \"twice-a-week\"")
            }
            defaults.biweekly = reading
        }
        if let text = try section.string("every-other-week", example: "\"this-week\"") {
            guard let anchor = PhraseDefaults.WeekAnchor(rawValue: text) else {
                throw section.fail(
                    "every-other-week",
                    "[phrases] every-other-week = \"\(text)\" is not an anchor; write \"this-week\" or \"first-occurrence\""
                )
            }
            defaults.everyOtherWeek = anchor
        }
        return defaults
    }

    private static func quietHours(_ section: TableReader) throws(ConfigError) -> QuietHours? {
        func time(_ key: String, example: String) throws(ConfigError) -> TimeOfDay? {
            guard let text = try section.string(key, example: example) else { return nil }
            guard let time = TimeOfDay(clock: text) else {
                throw section.fail(
                    key,
                    "[quiet-hours] \(key) = \"\(text)\" is not a time of day; write HH:MM, e.g. \(key) = \(example)")
            }
            return time
        }
        let start = try time("start", example: "\"22:00\"")
        let end = try time("end", example: "\"07:00\"")
        switch (start, end) {
        case (nil, nil):
            return nil
        case (let start?, let end?):
            guard start != end else {
                throw section.fail(
                    "end",
                    "[quiet-hours] start and end are both \(start); give a span such as start = \"22:00\", "
                        + "end = \"07:00\", or remove the section")
            }
            return QuietHours(start: start, end: end)
        case (nil, _):
            throw section.fail("end", "[quiet-hours] needs start as well as end; add start = \"22:00\"")
        case (_, nil):
            throw section.fail("start", "[quiet-hours] needs end as well as start; add end = \"07:00\"")
        }
    }

    private static func floodControl(_ section: TableReader) throws(ConfigError) -> FloodControl {
        var flood = FloodControl()
        if section.has("rate") {
            let rate = try? section.number("rate", example: "5")
            guard let rate, rate > 0, rate <= 1000 else {
                throw section.fail(
                    "rate", "[flood] rate must be a number of notifications per second above 0 and at most 1000")
            }
            flood.rate = rate
        }
        if section.has("burst") {
            let burst = try? section.integer("burst", example: "10")
            guard let burst, (1...FloodControl.maximumBurst).contains(burst) else {
                throw section.fail(
                    "burst",
                    "[flood] burst must be a whole number of notifications from 1 to \(FloodControl.maximumBurst)")
            }
            flood.burst = burst
        }
        return flood
    }
}
