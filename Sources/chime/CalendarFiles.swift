import ArgumentParser
import ChimeCore
import ChimeKit
import ChimeProtocol
import Foundation

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Turn an iCalendar file's alarms and to-dos into a group.",
        discussion: """
            Each alarm (VALARM) of each event and to-do becomes an entry of the group, and a to-do without \
            alarms one at its due time; a repeating event keeps its rule (RRULE, RDATE, EXDATE, its time zone) \
            and the alarm's offset (-PT15M: every occurrence 15 minutes early). The group's id is the file's \
            name without .ics unless --group gives one; importing again replaces the group's timeline, so \
            an updated file updates it. Prints one line per entry: added, changed, removed or unchanged, \
            with its next time before and after (of more changes than one reply of chimed holds, about \
            15,000, the changed ones first and a count of the rest on standard error); what was left out (e-mail alarms, completed to-dos, past \
            alarms, …) goes to standard error with its line. Files larger than 16 MiB are refused.
            """)

    @Argument(help: ArgumentHelp("The iCalendar file.", valueName: "FILE.ics"))
    var file: String

    @Option(help: "The group's id (letters, digits, -, _ and .); default: the file's name.")
    var group: String?

    @Flag(help: "Only show what would change.")
    var dryRun = false

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        let id = group ?? Self.groupID(fromFile: file)
        do {
            try TimelineGroup.validateIdentifier(id, what: "group id")
        } catch {
            throw fail("\(error.message)\(group == nil ? " (give one with --group)" : "")", .badInput)
        }
        let data: Data
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file)
            if let size = attributes[.size] as? Int, size > ICalendarComponent.maximumBytes {
                throw fail(
                    "\(file): \(size) bytes, more than the \(ICalendarComponent.maximumBytes) allowed", .badInput)
            }
            data = try Data(contentsOf: URL(fileURLWithPath: file))
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw fail("cannot read \(file): \(error.localizedDescription)", .badInput)
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw fail("\(file) is not UTF-8 text; iCalendar files are", .badInput)
        }
        let calendar: CalendarImport
        do {
            calendar = try CalendarImport.read(text, now: Date(), systemTimeZone: .current)
        } catch {
            throw fail("\(file):\(error.line > 0 ? "\(error.line):" : "") \(error.message)", .badInput)
        }
        for note in calendar.notes {
            FileHandle.standardError.write(
                Data("chime: \(file):\(note.line > 0 ? "\(note.line):" : "") \(note.message)\n".utf8))
        }
        let timeline = TimelineGroup(id: id, entries: calendar.entries)
        let report = try await withClient { (client) throws(ChimeError) in
            try await client.rescheduleReport(timeline, dryRun: dryRun)
        }
        try printChanges(report, json: json)
        if dryRun { FileHandle.standardError.write(Data("chime: dry run; nothing changed\n".utf8)) }
    }

    /// `~/cal/Work Shifts.ics` → `Work-Shifts`.
    static func groupID(fromFile path: String) -> String {
        let name = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        return String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) ? $0 : "-" })
    }
}

struct Export: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write upcoming notifications as an iCalendar file.",
        discussion: """
            One event per pending item, each with an alarm when the notification fires. A repeating item \
            whose rule RRULE can say is one repeating event on its zone's clock (with the zone's VTIMEZONE), \
            its offset as the alarm's trigger; others, and items with an end or a count, are events at \
            their occurrences within --days. `chime import` reads the file back.
            """)

    @Flag(help: "Write iCalendar (RFC 5545), the one format export writes.")
    var ics = false

    @Option(help: "Only this group's items.")
    var group: String?

    @Option(help: ArgumentHelp("How far ahead, in days (1 to 3660).", valueName: "N"))
    var days = 366

    @Option(
        name: [.short, .long], help: ArgumentHelp("Write to this file instead of standard output.", valueName: "FILE"))
    var output: String?

    func run() async throws {
        guard ics else { throw fail("give --ics: export writes iCalendar files", .badInput) }
        guard (1...3660).contains(days) else { throw fail("--days must be 1 to 3660, not \(days)", .badInput) }
        let now = Date()
        let horizon = now.addingTimeInterval(Double(days) * 86_400)
        let items = try await withClient { (client) throws(ChimeError) in
            try await client.pending(next: 1000, group: group, content: true, until: horizon)
        }
        let exported = items.compactMap { item -> CalendarExport.Item? in
            guard let content = item.content, let trigger = item.trigger else { return nil }
            let entry = TimelineEntry(
                id: item.entry ?? "item-\(item.id)", trigger: trigger.entryTrigger(now: item.fireDate),
                content: .fixed(content), endDate: trigger.until, maximumOccurrences: trigger.count,
                offset: trigger.offset)
            let uid = (item.group.map { "\($0)/\(entry.id)" } ?? entry.id) + "@chime"
            return CalendarExport.Item(uid: uid, entry: entry, next: item.next.isEmpty ? [item.fireDate] : item.next)
        }
        let text = CalendarExport.document(
            exported, name: group ?? "Chime", now: now, systemTimeZone: .current, horizon: horizon)
        guard let output else {
            FileHandle.standardOutput.write(Data(text.utf8))
            return
        }
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            throw fail("cannot write \(output): \(error.localizedDescription)", .failure)
        }
        FileHandle.standardError.write(Data("chime: \(exported.count) events written to \(output)\n".utf8))
    }
}
