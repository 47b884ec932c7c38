import ChimeCore
import Foundation
import TOMLKit

/// Reads the keys of one table, turning every wrong type, value or name into a `ConfigError` at the line
/// of the key (or of the table, for a key that is missing).
struct TableReader {
    let file: String
    let table: ConfigTable
    /// How messages name the table: `[quiet-hours]`, `entry "morning"`, `the file`.
    let name: String

    /// An error at `key`'s line, or at the table's line when the key is not there.
    func fail(_ key: String?, _ reason: String) -> ConfigError {
        let line = key.flatMap { table[$0]?.line } ?? table.line
        return ConfigError(file: file, line: line, reason: reason)
    }

    /// An error at a value's own line (an array element), falling back to `key`'s.
    func fail(at value: ConfigValue, key: String, _ reason: String) -> ConfigError {
        guard let line = value.line else { return fail(key, reason) }
        return ConfigError(file: file, line: line, reason: reason)
    }

    func has(_ key: String) -> Bool { table[key] != nil }

    /// The first key, in file order, that is not in `known`; a typo must not be silently ignored.
    ///
    /// In TOML every key below a section header belongs to that section, so a key that is valid one level
    /// up was most likely written below the wrong header; `misplaced` says where such a key goes.
    func rejectUnknownKeys(_ known: [String], misplaced: (String) -> String? = { _ in nil }) throws(ConfigError) {
        for field in table.fields where !known.contains(field.key) {
            var reason = "unknown key \(field.key) in \(name)"
            if let hint = misplaced(field.key) {
                reason += "; \(hint) (keys below a [section] line belong to that section)"
            } else {
                if let close = Self.closest(to: field.key, in: known) {
                    reason += "; did you mean \(close)? "
                } else {
                    reason += "; "
                }
                reason += "Known keys: \(known.joined(separator: ", "))"
            }
            throw fail(field.key, reason)
        }
    }

    func string(_ key: String, example: String) throws(ConfigError) -> String? {
        guard let value = table[key] else { return nil }
        guard case .string(let text) = value.kind else {
            throw fail(key, "\(key) must be text in quotes, not \(value.kindName); e.g. \(key) = \(example)")
        }
        return text
    }

    func integer(_ key: String, example: String) throws(ConfigError) -> Int? {
        guard let value = table[key] else { return nil }
        guard case .integer(let number) = value.kind else {
            throw fail(key, "\(key) must be a whole number, not \(value.kindName); e.g. \(key) = \(example)")
        }
        return number
    }

    /// An integer or a float.
    func number(_ key: String, example: String) throws(ConfigError) -> Double? {
        guard let value = table[key] else { return nil }
        switch value.kind {
        case .integer(let number): return Double(number)
        case .float(let number): return number
        default: throw fail(key, "\(key) must be a number, not \(value.kindName); e.g. \(key) = \(example)")
        }
    }

    func boolean(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = table[key] else { return nil }
        guard case .boolean(let flag) = value.kind else {
            throw fail(key, "\(key) must be true or false (without quotes), not \(value.kindName)")
        }
        return flag
    }

    /// A list whose every element is text.
    func strings(_ key: String, example: String) throws(ConfigError) -> [String]? {
        guard let value = table[key] else { return nil }
        guard case .array(let elements) = value.kind else {
            throw fail(key, "\(key) must be a list of texts, not \(value.kindName); e.g. \(key) = \(example)")
        }
        var texts: [String] = []
        for element in elements {
            guard case .string(let text) = element.kind else {
                throw fail(
                    at: element, key: key,
                    "every element of \(key) must be text in quotes, not \(element.kindName); e.g. \(key) = \(example)")
            }
            texts.append(text)
        }
        return texts
    }

    /// A duration written as text: `"90s"`, `"1h30m"`.
    func duration(_ key: String, example: String) throws(ConfigError) -> TimeInterval? {
        guard let text = try string(key, example: example) else { return nil }
        do {
            return try TimeInput.parseDuration(text)
        } catch {
            throw fail(key, "\(key): \(error); e.g. \(key) = \(example)")
        }
    }

    /// A table under `key` (a `[section]`, `[parent.section]` or inline `{ … }`).
    func subtable(_ key: String, name: String) throws(ConfigError) -> TableReader? {
        guard let value = table[key] else { return nil }
        guard case .table(let inner) = value.kind else {
            throw fail(key, "\(key) must be a table: write it as a section [\(name)] with its keys below")
        }
        return TableReader(file: file, table: inner, name: "[\(name)]")
    }

    /// The known name nearest to a misspelt one (at most two edits away), for a "did you mean".
    static func closest(to word: String, in candidates: [String]) -> String? {
        let lowered = Array(word.lowercased())
        let scored = candidates.map { ($0, Suggestion.editDistance(lowered, Array($0))) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }
}

/// The words config files use for a missed-trigger policy, shared by chime.toml and group files.
enum MissedPolicyWords {
    static let names = ["deliver-late", "coalesce", "skip"]

    /// The window of `MissedPolicy.default`, used when deliver-late is chosen without late-window.
    static let defaultLateWindow: TimeInterval = {
        if case .deliverLate(let window) = MissedPolicy.default { return window }
        return 3600
    }()

    /// Reads `missed-when-CAUSE` and `late-window-when-CAUSE` for each cause (off, suspended,
    /// not-running); nil when none is there.
    static func readByCause(_ reader: TableReader) throws(ConfigError) -> [MissedCause: MissedPolicy]? {
        var policies: [MissedCause: MissedPolicy] = [:]
        for cause in MissedCause.allCases {
            policies[cause] = try read(
                reader, policyKey: "missed-when-\(cause.rawValue)", windowKey: "late-window-when-\(cause.rawValue)")
        }
        return policies.isEmpty ? nil : policies
    }

    /// Reads `policyKey` and `windowKey` from `reader`; nil when neither is there.
    static func read(
        _ reader: TableReader, policyKey: String, windowKey: String
    ) throws(ConfigError) -> MissedPolicy? {
        let name = try reader.string(policyKey, example: "\"deliver-late\"")
        let window = try reader.duration(windowKey, example: "\"1h\"")
        switch name {
        case nil:
            if window != nil {
                throw reader.fail(
                    windowKey,
                    "\(windowKey) applies only with \(policyKey) = \"deliver-late\"; add that line or remove this one")
            }
            return nil
        case "deliver-late":
            if let window, window > MissedPolicy.longestLateWindow {
                throw reader.fail(windowKey, "\(windowKey) may be at most a year (\"366d\")")
            }
            return .deliverLate(window: window ?? defaultLateWindow)
        case "coalesce", "skip":
            if window != nil {
                throw reader.fail(
                    windowKey,
                    "\(windowKey) applies only with \(policyKey) = \"deliver-late\"; remove it, or change \(policyKey)")
            }
            return name == "skip" ? .skip : .coalesce
        case let other?:
            throw reader.fail(
                policyKey,
                "\(policyKey) = \"\(other)\" is not a policy; use \(names.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
    }
}
