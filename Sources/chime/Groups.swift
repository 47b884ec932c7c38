import ArgumentParser
import ChimeConfig
import ChimeKit
import Foundation

struct Groups: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the groups chimed runs: from the group files and from apps.",
        discussion: "Each line: group, source (config or api), entries, pending, next time, missed-trigger policy.")

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        let groups = try await withClient { (client) throws(ChimeError) in try await client.groups() }
        if json {
            try printJSON(
                groups.map { group in
                    var object: [String: Any] = [
                        "id": group.id, "owner": group.owner, "source": group.source, "enabled": group.enabled,
                        "missed": group.missed, "entries": group.entries, "pending": group.pending,
                    ]
                    if let next = group.next { object["next"] = iso(next) }
                    return object
                })
            return
        }
        for group in groups {
            let next = group.next.map(iso) ?? "-"
            let state = group.enabled ? "" : "\tdisabled"
            print(
                "\(group.id)\t\(group.source)\t\(group.entries) entries\t\(group.pending) pending\t\(next)\t"
                    + "missed: \(group.missed)\(state)")
        }
    }
}

struct Reschedule: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace a group's whole timeline with the one in a group file.",
        discussion: """
            The group id is the file's name without .toml; the file format is in docs/groups.md. Entries \
            are matched by id: an unchanged entry keeps its next occurrence and its state. Prints one line \
            per entry: added, changed, removed or unchanged, with its next occurrence before and after \
            (of more changes than one reply of chimed holds, about 15,000, the changed ones first and a \
            count of the rest on standard error). Groups whose files are in chimed's groups folder are loaded by chimed itself; use this for \
            files kept elsewhere.
            """)

    @Option(help: ArgumentHelp("The group file.", valueName: "GROUP.toml"))
    var file: String

    @Flag(help: "Only show what would change.")
    var dryRun = false

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        let group: TimelineGroup
        do {
            group = try GroupFile.load(path: file, now: Date(), timeZone: .current)
        } catch {
            throw fail("\(error)", .badInput)
        }
        let report = try await withClient { (client) throws(ChimeError) in
            try await client.rescheduleReport(group, dryRun: dryRun)
        }
        try printChanges(report, json: json)
        if dryRun { FileHandle.standardError.write(Data("chime: dry run; nothing changed\n".utf8)) }
    }
}

/// What a reschedule changed: one line per entry (kind, entry, next before, next after), or JSON; the
/// changes chimed's reply had no room for are counted on standard error.
func printChanges(_ report: ChimeClient.RescheduleReport, json: Bool) throws {
    defer {
        let left = report.unlisted.values.reduce(0, +)
        if left > 0 {
            let kinds = [EntryChange.Kind.added, .removed, .changed, .unchanged].compactMap { kind in
                report.unlisted[kind].flatMap { $0 > 0 ? "\($0) \(kind.rawValue)" : nil }
            }
            FileHandle.standardError.write(
                Data("chime: \(left) more changes not listed (\(kinds.joined(separator: ", ")))\n".utf8))
        }
    }
    let changes = report.changes
    if json {
        try printJSON(
            changes.map { change in
                var object: [String: Any] = ["entry": change.entryID, "change": change.kind.rawValue]
                if let before = change.before { object["before"] = iso(before) }
                if let after = change.after { object["after"] = iso(after) }
                return object
            })
        return
    }
    for change in changes {
        print(
            "\(change.kind.rawValue)\t\(change.entryID)\t\(change.before.map(iso) ?? "-")\t"
                + "\(change.after.map(iso) ?? "-")")
    }
}

struct Remove: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a group and everything it has pending.",
        discussion: "A group from a file in the groups folder is removed by deleting or moving its file.")

    @Argument(help: "The group id, as `chime groups` shows it.")
    var group: String

    func run() async throws {
        try await withClient { (client) throws(ChimeError) in try await client.removeGroup(group) }
    }
}

struct History: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what happened to notifications, newest first.",
        discussion: """
            Events: scheduled, changed, delivered, suppressed (shown inside a digest), missed (with what the \
            missed-trigger policy did), finished, cancelled, removed, closed, action, failed, escalated (an \
            occurrence shown again because nobody reacted, or why its escalation stopped).
            """)

    @Option(help: ArgumentHelp("Show at most N entries.", valueName: "N"))
    var limit = 50

    @Option(help: "Only this group's history.")
    var group: String?

    @Option(help: ArgumentHelp("Only this item's history.", valueName: "ID"))
    var item: UInt64?

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        guard limit > 0 else { throw fail("--limit must be at least 1", .badInput) }
        let entries = try await withClient { (client) throws(ChimeError) in
            try await client.history(limit: limit, group: group, item: item)
        }
        if json {
            try printJSON(
                entries.map { entry in
                    var object: [String: Any] = [
                        "seq": entry.seq, "at": iso(entry.date), "event": entry.event, "item": entry.itemID,
                        "summary": entry.summary,
                    ]
                    if let group = entry.group { object["group"] = group }
                    if let e = entry.entry { object["entry"] = e }
                    if let detail = entry.detail { object["detail"] = detail }
                    return object
                })
            return
        }
        for entry in entries {
            let place = entry.group.map { "\($0)/\(entry.entry ?? "")" } ?? "-"
            print(
                "\(iso(entry.date))\t\(entry.event)\t\(entry.itemID)\t\(place)\t\(entry.summary)"
                    + (entry.detail.map { "\t\($0)" } ?? ""))
        }
    }
}
