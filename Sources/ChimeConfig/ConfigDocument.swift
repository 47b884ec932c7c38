import ChimeCore
import Foundation
import TOMLKit

/// A TOML value copied out of TOMLKit into plain Swift values, with the line it is written on.
struct ConfigValue {
    enum Kind {
        case string(String)
        case integer(Int)
        case float(Double)
        case boolean(Bool)
        /// A TOML date-time, date or time written without quotes; kept as its TOMLKit value.
        case dateTime(TOMLDateTime)
        case date(TOMLDate)
        case time(TOMLTime)
        case array([ConfigValue])
        case table(ConfigTable)
    }

    var kind: Kind
    /// Where the value's key (or array element) is written; nil when the scan did not reach it.
    var line: Int?

    /// How a message names the kind, so that "must be text, not a number" tells what was found.
    var kindName: String {
        switch kind {
        case .string: "text"
        case .integer: "an integer"
        case .float: "a number"
        case .boolean: "true or false"
        case .dateTime: "a date and time"
        case .date: "a date"
        case .time: "a time"
        case .array: "a list"
        case .table: "a table"
        }
    }
}

/// A TOML table with its keys in the order they are written, so that errors are reported top to bottom.
struct ConfigTable {
    var fields: [(key: String, value: ConfigValue)]
    /// The line of the table's header (or of its key, for an inline table).
    var line: Int?
    var path: [KeyPathComponent]

    subscript(key: String) -> ConfigValue? { fields.first { $0.key == key }?.value }
}

/// Parses TOML text with TOMLKit and pairs every value with its line.
enum ConfigDocument {
    static func parse(_ text: String, file: String) throws(ConfigError) -> ConfigTable {
        // toml++ aborts on some broken syntax instead of reporting it: the syntax is checked first.
        if let failure = TOMLSyntaxCheck.firstError(in: text) {
            throw ConfigError(
                file: file, line: failure.line,
                reason: "not valid TOML: \(failure.reason); see https://toml.io for the syntax")
        }
        let root: TOMLTable
        do {
            root = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigError(
                file: file, line: error.source.begin.line,
                reason: "not valid TOML: \(error.description); see https://toml.io for the syntax")
        } catch {
            throw ConfigError(file: file, line: nil, reason: "not valid TOML: \(error)")
        }
        let index = KeyLineIndex(text)
        return convert(root, path: [], line: 1, index: index)
    }

    private static func convert(
        _ table: TOMLTable, path: [KeyPathComponent], line: Int?, index: KeyLineIndex
    ) -> ConfigTable {
        var fields: [(key: String, value: ConfigValue)] = []
        for key in table.keys {
            guard let value = table[key] else { continue }
            let valuePath = path + [.key(key)]
            fields.append((key, convert(value, path: valuePath, index: index)))
        }
        // Known lines first in file order; a key the scan missed goes last rather than being lost.
        fields.sort { ($0.value.line ?? Int.max, $0.key) < ($1.value.line ?? Int.max, $1.key) }
        return ConfigTable(fields: fields, line: line, path: path)
    }

    private static func convert(
        _ value: any TOMLValueConvertible, path: [KeyPathComponent], index: KeyLineIndex
    ) -> ConfigValue {
        let line = index.line(of: path)
        switch value.type {
        case .string: return ConfigValue(kind: .string(value.string ?? ""), line: line)
        case .int: return ConfigValue(kind: .integer(value.int ?? 0), line: line)
        case .double: return ConfigValue(kind: .float(value.double ?? 0), line: line)
        case .bool: return ConfigValue(kind: .boolean(value.bool ?? false), line: line)
        case .dateTime:
            if let dateTime = value.dateTime { return ConfigValue(kind: .dateTime(dateTime), line: line) }
        case .date:
            if let date = value.date { return ConfigValue(kind: .date(date), line: line) }
        case .time:
            if let time = value.time { return ConfigValue(kind: .time(time), line: line) }
        case .array:
            if let array = value.array {
                var elements: [ConfigValue] = []
                for (n, element) in array.enumerated() {
                    elements.append(convert(element, path: path + [.index(n)], index: index))
                }
                return ConfigValue(kind: .array(elements), line: line)
            }
        case .table:
            if let table = value.table {
                return ConfigValue(kind: .table(convert(table, path: path, line: line, index: index)), line: line)
            }
        }
        return ConfigValue(kind: .string(""), line: line)
    }
}
