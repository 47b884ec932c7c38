import ChimeCore
import Foundation

/// A group file: one `TimelineGroup` of the user's own, written in TOML (docs/groups.md).
///
/// The group id is the file name without `.toml`, and the owner is empty (the user). Everything is
/// checked when the file is read, rules and time zones included, so that a mistake is reported with its
/// file and line instead of an entry that silently never fires.
public enum GroupFile {
    /// The keys of the file itself, above the first `[[entry]]`.
    static let groupKeys =
        ["app-name", "missed", "late-window", "enabled", "entry", "category"]
        + MissedCause.allCases.flatMap { ["missed-when-\($0.rawValue)", "late-window-when-\($0.rawValue)"] }

    /// Parses the text of a group file.
    ///
    /// - Parameters:
    ///   - file: the path that error messages name.
    ///   - groupID: the group's id (the file name without `.toml`).
    ///   - now: the instant relative words in rules ("starting next week") resolve against.
    ///   - timeZone: the system zone: rules without `tz` are checked in it, and `at` and `until` without
    ///     `tz` are read on its clock.
    public static func parse(
        _ text: String, file: String, groupID: String, now: Date, timeZone: Zone
    ) throws(ConfigError) -> TimelineGroup {
        do {
            try TimelineGroup.validateIdentifier(groupID, what: "group id")
        } catch {
            throw ConfigError(
                file: file, line: nil,
                reason: "the file name gives the group id, and \(error.message); rename the file, e.g. daily-quote.toml"
            )
        }
        let root = TableReader(file: file, table: try ConfigDocument.parse(text, file: file), name: "the group file")
        try root.rejectUnknownKeys(groupKeys)
        let appName = try root.string("app-name", example: "\"Quotes\"")
        var settings = GroupSettings()
        settings.missedPolicy = try MissedPolicyWords.read(root, policyKey: "missed", windowKey: "late-window")
        settings.missedPolicyByCause = try MissedPolicyWords.readByCause(root)
        settings.enabled = try root.boolean("enabled") ?? true

        var entries: [TimelineEntry] = []
        var idLines: [String: Int?] = [:]
        for (number, table) in try entryTables(root).enumerated() {
            let reader = EntryReader(
                file: file, table: table, number: number + 1, appName: appName, now: now, timeZone: timeZone)
            let entry = try reader.entry()
            if let first = idLines[entry.id] {
                throw reader.fields.fail(
                    "id",
                    "entry id \"\(entry.id)\" is already used\(first.map { " on line \($0)" } ?? ""); "
                        + "give every entry its own id")
            }
            idLines[entry.id] = table["id"]?.line
            entries.append(entry)
        }
        // An entry may name a category another group file declares: the user's categories are shared.
        let categories = try categoryTables(root, file: file)
        let group = TimelineGroup(
            id: groupID, owner: "", settings: settings, entries: entries, categories: categories)
        // Every part was checked above with its line; this catches what only the whole group can say.
        do {
            try group.validate()
        } catch {
            throw ConfigError(file: file, line: nil, reason: error.message)
        }
        return group
    }

    /// Reads the group file at `path`; the group id is the file name without `.toml`.
    public static func load(path: String, now: Date, timeZone: Zone) throws(ConfigError) -> TimelineGroup {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigError(file: path, line: nil, reason: "cannot read it: \(error.localizedDescription)")
        }
        var name = (path as NSString).lastPathComponent
        if name.hasSuffix(".toml") { name.removeLast(".toml".count) }
        return try parse(text, file: path, groupID: name, now: now, timeZone: timeZone)
    }

    /// Reads every `*.toml` in `path`, sorted by name; names starting with `.` (editor lock files) are
    /// skipped. Each file gives its group or its error, so one broken file does not hide the others. A
    /// directory that does not exist gives no files.
    public static func loadDirectory(
        _ path: String, now: Date, timeZone: Zone
    ) -> [(file: String, result: Result<TimelineGroup, ConfigError>)] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
            let reason =
                isDirectory.boolValue
                ? "cannot list the group files: \(error.localizedDescription)"
                : "this is not a directory; group files go in a directory of their own"
            return [(path, .failure(ConfigError(file: path, line: nil, reason: reason)))]
        }
        let base = path.hasSuffix("/") ? path : path + "/"
        return names.filter { $0.hasSuffix(".toml") && !$0.hasPrefix(".") }.sorted().map { name in
            let file = base + name
            return (file, Result { () throws(ConfigError) in try load(path: file, now: now, timeZone: timeZone) })
        }
    }

    /// The `[category.NAME]` sections: each with `default`, `minimal` and `[[category.NAME.action]]`
    /// tables (`id`, `title`, `options`, `run`).
    private static func categoryTables(_ root: TableReader, file: String) throws(ConfigError) -> [ActionCategory] {
        guard let all = try root.subtable("category", name: "category.NAME") else { return [] }
        var categories: [ActionCategory] = []
        for (name, _) in all.table.fields {
            guard let reader = try all.subtable(name, name: "category.\(name)") else { continue }
            try reader.rejectUnknownKeys(["default", "minimal", "action"])
            var actions: [CategoryAction] = []
            if let value = reader.table["action"] {
                let shape = "write each action as a section that starts with [[category.\(name).action]]"
                guard case .array(let elements) = value.kind else { throw reader.fail("action", shape) }
                for element in elements {
                    guard case .table(let table) = element.kind else {
                        throw reader.fail(at: element, key: "action", shape)
                    }
                    let action = TableReader(file: file, table: table, name: "[[category.\(name).action]]")
                    try action.rejectUnknownKeys(["id", "title", "options", "run"])
                    guard let id = try action.string("id", example: "\"stop-repeat\""),
                        let title = try action.string("title", example: "\"Stop Repeat\"")
                    else {
                        throw action.fail(
                            nil, "an action needs an id and a title, e.g. id = \"open\" and title = \"Open\"")
                    }
                    var options = Set<CategoryAction.Option>()
                    for word in try action.strings("options", example: "[\"foreground\"]") ?? [] {
                        guard let option = CategoryAction.Option(rawValue: word) else {
                            throw action.fail(
                                "options",
                                "unknown option \"\(word)\"; use destructive, foreground, authentication-required "
                                    + "or text-input")
                        }
                        options.insert(option)
                    }
                    actions.append(
                        CategoryAction(
                            id: id, title: title, options: options,
                            command: try action.strings("run", example: "[\"xdg-open\", \"https://example.org\"]")))
                }
            }
            let category = ActionCategory(
                id: name, actions: actions, defaultAction: try reader.string("default", example: "\"open\""),
                minimalActions: try reader.strings("minimal", example: "[\"open\"]"))
            do {
                try category.validate()
            } catch {
                throw ConfigError(file: file, line: all.table[name]?.line, reason: error.message)
            }
            categories.append(category)
        }
        return categories
    }

    /// The `[[entry]]` tables, in file order.
    private static func entryTables(_ root: TableReader) throws(ConfigError) -> [ConfigTable] {
        guard let value = root.table["entry"] else { return [] }
        let shape = "write each entry as a section that starts with [[entry]] (two brackets)"
        guard case .array(let elements) = value.kind else { throw root.fail("entry", shape) }
        var tables: [ConfigTable] = []
        for element in elements {
            guard case .table(let table) = element.kind else { throw root.fail(at: element, key: "entry", shape) }
            tables.append(table)
        }
        return tables
    }
}
