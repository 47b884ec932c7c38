import Foundation
import Logging
import TOMLKit

/// chimed's settings from `chime.toml`. Every key is optional; a missing file means the defaults.
public struct DaemonSettings: Equatable, Sendable {
    /// `[log] level`: the lowest level written (`--log-level` wins over it).
    public var logLevel: Logger.Level = .info
    /// `[delivery] server-timeout`: seconds a notification server may take to answer Notify.
    public var serverTimeout: Duration = .seconds(10)

    public init() {}

    /// `$XDG_CONFIG_HOME/chime/chime.toml`, else `~/.config/chime/chime.toml`.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") { return xdg + "/chime/chime.toml" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/chime/chime.toml"
    }

    /// Reads `path`; a file that does not exist gives the defaults.
    public static func load(path: String) throws(SettingsError) -> DaemonSettings {
        guard FileManager.default.fileExists(atPath: path) else { return DaemonSettings() }
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SettingsError(file: path, line: nil, reason: "cannot read it: \(error.localizedDescription)")
        }
        return try parse(text, file: path)
    }

    /// Parses the text of a chime.toml; errors name the file, the line and what to change.
    public static func parse(_ text: String, file: String) throws(SettingsError) -> DaemonSettings {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw SettingsError(
                file: file, line: error.source.begin.line, reason: "not valid TOML: \(error.description)")
        } catch {
            throw SettingsError(file: file, line: nil, reason: "not valid TOML: \(error)")
        }
        func line(of key: String) -> Int? {
            text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().first { _, l in
                l.trimmingCharacters(in: .whitespaces).hasPrefix(key)
            }.map { $0.offset + 1 }
        }
        func fail(_ key: String, _ reason: String) -> SettingsError {
            SettingsError(file: file, line: line(of: key), reason: reason)
        }
        var settings = DaemonSettings()
        let known: [String: Set<String>] = ["log": ["level"], "delivery": ["server-timeout"]]
        for key in table.keys.sorted() {
            guard let allowed = known[key] else {
                throw fail("[\(key)]", "unknown section [\(key)]; known sections: [delivery], [log]")
            }
            guard let section = table[key]?.table else { throw fail(key, "\(key) must be a section: [\(key)]") }
            for inner in section.keys.sorted() where !allowed.contains(inner) {
                throw fail(
                    inner, "unknown key \(inner) in [\(key)]; known: \(allowed.sorted().joined(separator: ", "))")
            }
        }
        if let value = table["log"]?["level"] {
            guard let name = value.string, let level = Logger.Level(rawValue: name) else {
                throw fail(
                    "level", "[log] level must be one of trace, debug, info, notice, warning, error, critical")
            }
            settings.logLevel = level
        }
        if let value = table["delivery"]?["server-timeout"] {
            let seconds = value.double ?? value.int.map(Double.init)
            guard let seconds, seconds > 0, seconds <= 300 else {
                throw fail("server-timeout", "[delivery] server-timeout must be a number of seconds between 0 and 300")
            }
            settings.serverTimeout = .milliseconds(Int64(seconds * 1000))
        }
        return settings
    }
}

/// A settings file that cannot be used: which file, which line, and why.
public struct SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
    public var file: String
    public var line: Int?
    public var reason: String

    public var description: String { "\(file)\(line.map { ":\($0)" } ?? ""): \(reason)" }
}
