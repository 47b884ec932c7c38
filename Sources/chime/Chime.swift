import ArgumentParser
import CLinux
import ChimeKit
import ChimedCommand
import Foundation

@main
struct Chime: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime",
        abstract: "Schedule desktop notifications with chimed.",
        discussion: """
            Exit status:
              0  success
              1  chimed or the bus failed (not running, could not store the change)
              2  bad input, also a request chimed refuses (e.g. a rule that never fires)
              3  not found: no such item or group; for chime next, a rule that never fires
            An error is one line on stderr that says what to do.

            Topics: chime help rules, phrases, hints, actions, exit-codes.
            """,
        subcommands: [
            Send.self, Pending.self, Cancel.self, Snooze.self, Delivered.self, Close.self, Groups.self,
            Reschedule.self, Remove.self, GroupSwitch.self, History.self, Apps.self, AppSwitch.self, Status.self,
            Next.self, Agenda.self, Import.self, Export.self, Help.self,
        ])

    /// Runs the command, with usage errors (an unknown option, a missing argument, a value of the wrong
    /// type) as one line and exit status 2, as every other bad input.
    ///
    /// Started as `chimed` (the installed `chimed` is a link to this program), it is chimed.
    static func main() async {
        if CommandLine.arguments.first?.split(separator: "/").last == "chimed" {
            // Before anything can leave this thread (see Chimed.runAsProgram).
            CLinux_runGlobalJobsOnOvercommitThreads()
            await Chimed.runAsProgram()
            return
        }
        // A capability given to the one program for chimed's sake (docs/wake.md) is not chime's.
        _ = CLinux_dropCapabilities()
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            var command = try parseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            let message = message(for: error).split(separator: "\n").first.map(String.init) ?? "bad arguments"
            let name = arguments.first { name in subcommands.contains { $0._commandName == name } }
            let help = name.map { "chime \($0) --help" } ?? "chime --help"
            _ = fail("\(message); see `\(help)`", .badInput)
            exit(withError: ExitCode(ExitStatus.badInput.rawValue))
        }
    }

    static var subcommands: [ParsableCommand.Type] { configuration.subcommands }
    static var subcommandNames: [String] { subcommands.map { $0._commandName } }
}

/// The exit statuses every command uses.
enum ExitStatus: Int32 {
    case success = 0
    /// chimed or the bus failed: chimed is not running, could not store the change, answered oddly.
    case failure = 1
    /// An option, argument or request that cannot be used, found here or by chimed.
    case badInput = 2
    /// No such item or group; for `chime next`, a rule that never fires.
    case notFound = 3
}

/// Prints `chime: MESSAGE` on stderr and returns the exit status to throw.
func fail(_ message: String, _ status: ExitStatus) -> ExitCode {
    FileHandle.standardError.write(Data("chime: \(message)\n".utf8))
    return ExitCode(status.rawValue)
}

/// Local ISO 8601 with the offset, as every listing prints times.
func iso(_ date: Date) -> String { WallClock.timestamp(date, in: localZone) }

/// The system's zone, read once per run of chime.
let localZone = Zone.current

/// Prints `objects` as one JSON array.
func printJSON(_ objects: [[String: Any]]) throws {
    let data = try JSONSerialization.data(withJSONObject: objects, options: [.sortedKeys])
    print(String(decoding: data, as: UTF8.self))
}

/// Runs `body` with a connection to chimed, turning its errors into exit statuses.
func withClient<T>(_ body: (ChimeClient) async throws(ChimeError) -> T) async throws -> T {
    let client = try await connectedClient()
    defer { client.close() }
    do {
        return try await body(client)
    } catch {
        throw fail(error.message, status(for: error))
    }
}

/// A connection to chimed, or exit status 1 with the reason.
func connectedClient() async throws -> ChimeClient {
    do {
        return try await ChimeClient.connect()
    } catch {
        throw fail(error.message, .failure)
    }
}

/// Requests chimed refused are bad input, but for a failure to store them, which is chimed's.
func status(for error: ChimeError) -> ExitStatus {
    switch error.kind {
    case .rejected where error.dbusName == ChimeBus.ErrorName.storage: .failure
    case .rejected: .badInput
    case .notFound: .notFound
    default: .failure
    }
}

struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a notification now, at a time, after a delay, or repeatedly (notify-send compatible).",
        discussion: """
            TIME is a local time: 2026-12-01T09:00:00, or 09:00 (the next time the clock shows it). \
            DURATION is like 90s, 10m, 1h30m, 2d. Without --at or --in the notification is shown now. \
            With --every, --rrule or --on-calendar it repeats at every occurrence of the rule \
            (preview one with `chime next`); once chimed has it, what the rule was understood as, in \
            words and as an equivalent RRULE, goes to standard error. With --escalate-every each \
            occurrence is shown again, replacing its popup one urgency higher each time, until an action \
            is chosen on it or it is dismissed (a popup that expires unseen does not stop it), at most \
            --escalate-times times. With --group it becomes one entry (item-ID) of that group's \
            timeline: `chime pending --group`, `chime groups` and `chime remove` include it, and a later \
            `chime reschedule` of the group replaces it with the rest of the timeline. -c names the \
            freedesktop category and, when a group file declares a category of actions with that id, \
            adds its actions. With --wake each occurrence wakes the machine from suspend, when chimed \
            holds CAP_WAKE_ALARM (`chime status` says whether it does; docs/wake.md).
            """,
        // -h is notify-send's --hint here, so help is --help only.
        helpNames: [.long])

    @Option(name: .long, help: ArgumentHelp("Deliver at this local time.", valueName: "TIME"))
    var at: String?

    @Option(name: .customLong("in"), help: ArgumentHelp("Deliver after this delay.", valueName: "DURATION"))
    var delay: String?

    @Option(help: ArgumentHelp("Repeat by a rule phrase, e.g. 'every day at 9:00'.", valueName: "PHRASE"))
    var every: String?

    @Option(help: ArgumentHelp("Repeat by an RFC 5545 rule, e.g. FREQ=WEEKLY;BYDAY=MO.", valueName: "RULE"))
    var rrule: String?

    @Option(help: ArgumentHelp("The RRULE's start, local time (default: now).", valueName: "LOCAL_ISO"))
    var dtstart: String?

    @Option(
        name: .customLong("on-calendar"),
        help: ArgumentHelp("Repeat by a systemd calendar event, e.g. 'Mon..Fri 09:00'.", valueName: "EXPR"))
    var onCalendar: String?

    @Option(
        help: ArgumentHelp("Pin a repeating rule to this zone (default: follow the system zone).", valueName: "ZONE"))
    var tz: String?

    @Option(help: ArgumentHelp("Stop repeating after this local time.", valueName: "TIME"))
    var until: String?

    @Option(help: ArgumentHelp("Fire at most this many times.", valueName: "N"))
    var count: Int?

    @Option(
        name: .customLong("escalate-every"),
        help: ArgumentHelp(
            "While nobody chooses an action or dismisses it, show it again this often (1m to 1d), one urgency higher each time.",
            valueName: "DURATION"))
    var escalateEvery: String?

    @Option(
        name: .customLong("escalate-times"),
        help: ArgumentHelp("Show it again at most this many times (1 to 10; default 3).", valueName: "N"))
    var escalateTimes: Int?

    @Flag(
        help: "Wake the machine from suspend for each occurrence (needs CAP_WAKE_ALARM on chimed; see chime status).")
    var wake = false

    @Option(name: [.customShort("u"), .long], help: "Urgency: low, normal or critical.")
    var urgency: String?

    @Option(
        name: [.customShort("t"), .customLong("expire-time")],
        help: ArgumentHelp("Milliseconds until the popup closes (0: never).", valueName: "TIMEOUT"))
    var expireTime: Int32?

    @Option(name: [.customShort("a"), .customLong("app-name")], help: "The application name shown.")
    var appName: String?

    @Option(name: [.customShort("i"), .long], help: "An icon name or file path.")
    var icon: String?

    @Option(
        name: [.customShort("c"), .long],
        help:
            "The notification's category, e.g. email.arrived; a group file's category of actions by that id adds its actions."
    )
    var category: String?

    @Option(
        name: [.customShort("h"), .customLong("hint")],
        help: ArgumentHelp(
            "A hint for the server, TYPE:NAME:VALUE (types string, int, double, byte, boolean). Repeatable.",
            valueName: "TYPE:NAME:VALUE"))
    var hints: [String] = []

    @Flag(name: [.customShort("e"), .long], help: "Ask the server not to keep it in its history (the transient hint).")
    var transient = false

    @Flag(
        help: ArgumentHelp(
            "Show the body as written: without it, <b>, <i>, <u>, <a href> and <img> in it are markup, as with notify-send."
        ))
    var plain = false

    @Option(
        name: [.customShort("r"), .customLong("replace-id")],
        help: ArgumentHelp("Replace the server's notification ID instead of showing a new one.", valueName: "ID"))
    var replaceID: UInt32?

    @Flag(name: [.customShort("p"), .customLong("print-id")], help: "Print the item's id.")
    var printID = false

    @Flag(
        name: [.customShort("w"), .long],
        help: "Wait until the notification is closed, printing the key of each action chosen on it.")
    var wait = false

    @Option(
        help: ArgumentHelp(
            "Put it in this group of yours (made if there is none): listed, removed and rescheduled with the group.",
            valueName: "GROUP"))
    var group: String?

    @Option(
        name: [.customShort("A"), .customLong("action")],
        help: ArgumentHelp("An action button, KEY=LABEL (or LABEL, keyed by its position). Repeatable."))
    var actions: [String] = []

    @Argument(help: "The notification's title.")
    var summary: String

    @Argument(help: "The notification's text.")
    var body: String?

    func run() async throws {
        let content = try makeContent()
        let rule = try makeRule()
        let fireDate = try makeFireDate(now: Date())
        if rule != nil, fireDate != nil {
            throw fail("give a rule (--every, --rrule, --on-calendar) or --at/--in, not both", .badInput)
        }
        if tz != nil, rule == nil { throw fail("--tz goes with --every, --rrule or --on-calendar", .badInput) }
        if let group {
            do {
                try TimelineGroup.validateIdentifier(group, what: "group id")
            } catch {
                throw fail("--group: \(error)", .badInput)
            }
        }
        var trigger = TriggerWire(at: fireDate, rule: rule, timeZone: tz, replacesID: replaceID, group: group)
        if let until {
            do {
                trigger.until = try TimeInput.parseTime(until, now: Date(), timeZone: .current)
            } catch {
                throw fail("--until: \(error)", .badInput)
            }
        }
        if let count {
            guard count > 0 else { throw fail("--count must be at least 1", .badInput) }
            trigger.count = count
        }
        trigger.escalation = try makeEscalation()
        trigger.wake = wake
        if wait {
            try await scheduleAndWait(content, trigger: trigger, rule: rule)
            return
        }
        let id = try await withClient { (client) throws(ChimeError) in
            try await client.schedule(content, trigger: trigger)
        }
        if printID { print(id) }
        if let rule { explainSent(rule, timeZone: tz, until: trigger.until, count: trigger.count) }
    }

    func makeEscalation() throws -> Escalation? {
        guard let escalateEvery else {
            if escalateTimes != nil { throw fail("--escalate-times goes with --escalate-every", .badInput) }
            return nil
        }
        let every: TimeInterval
        do {
            every = try TimeInput.parseDuration(escalateEvery)
        } catch {
            throw fail("--escalate-every: \(error)", .badInput)
        }
        let escalation = Escalation(every: every, times: escalateTimes ?? Escalation.defaultTimes)
        if let problem = escalation.problem {
            let flag =
                escalateTimes.map { (1...Escalation.maximumTimes).contains($0) } ?? true
                ? "--escalate-every" : "--escalate-times"
            throw fail("\(flag): \(problem)", .badInput)
        }
        return escalation
    }

    /// notify-send's `--wait`: the events are subscribed to before the item exists, so none is missed.
    func scheduleAndWait(_ content: ChimeCore.NotificationContent, trigger: TriggerWire, rule: WrittenRule?)
        async throws
    {
        let client = try await connectedClient()
        defer { client.close() }
        do {
            let events = try await client.itemEvents()
            let id = try await client.schedule(content, trigger: trigger)
            // Each line goes out at once, also into a pipe or a file: a script reads them as they come.
            func emit(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
            if printID { emit(String(id)) }
            if let rule { explainSent(rule, timeZone: tz, until: trigger.until, count: trigger.count) }
            // An escalating notification that expires unseen is shown again: wait for that showing too.
            var showingsLeft = trigger.escalation?.times ?? 0
            for await event in events {
                switch event {
                case .action(let action) where action.itemID == id: emit(action.action)
                case .closed(let closed) where closed.itemID == id:
                    guard closed.reason == "expired", showingsLeft > 0 else { return }
                    showingsLeft -= 1
                default: continue
                }
            }
        } catch {
            throw fail(error.message, status(for: error))
        }
    }

    func makeContent() throws -> ChimeCore.NotificationContent {
        var content = ChimeCore.NotificationContent(summary: summary, body: body ?? "")
        content.markup = !plain
        content.appName = appName ?? ""
        content.icon = icon ?? ""
        do {
            for text in hints {
                let (name, value) = try NotificationHint.parse(text)
                try content.setHint(name, value)
            }
        } catch {
            throw fail("-h: \(error.message)", .badInput)
        }
        if let category { content.category = category }
        if let urgency {
            guard let level = Urgency(name: urgency) else {
                throw fail("'\(urgency)' is not an urgency; use low, normal or critical", .badInput)
            }
            content.urgency = level
        }
        if let expireTime { content.expireTimeout = expireTime }
        if transient { content.hints["transient"] = .boolean(true) }
        content.actions = actions.enumerated().map { index, text in
            if let eq = text.firstIndex(of: "=") {
                return NotificationAction(key: String(text[..<eq]), label: String(text[text.index(after: eq)...]))
            }
            return NotificationAction(key: String(index), label: text)
        }
        do {
            try content.validate()
        } catch {
            throw fail(error.message, .badInput)
        }
        return content
    }

    func makeRule() throws -> WrittenRule? {
        var rules: [WrittenRule] = []
        if let every { rules.append(.phrase(every)) }
        if let onCalendar { rules.append(.onCalendar(onCalendar)) }
        if let rrule {
            var start: LocalDateTime?
            if let dtstart {
                guard let local = LocalDateTime(iso: dtstart) else {
                    throw fail(
                        "--dtstart: cannot read '\(dtstart)'; expected local time such as 2026-12-01T09:00:00",
                        .badInput)
                }
                start = local
            }
            rules.append(.rrule(rrule, dtstart: start))
        } else if dtstart != nil {
            throw fail("--dtstart goes with --rrule only", .badInput)
        }
        guard rules.count <= 1 else { throw fail("give one of --every, --rrule or --on-calendar", .badInput) }
        return rules.first
    }

    func makeFireDate(now: Date) throws -> Date? {
        switch (at, delay) {
        case (.some, .some):
            throw fail("give either --at or --in, not both", .badInput)
        case (let time?, nil):
            do {
                let date = try TimeInput.parseTime(time, now: now, timeZone: .current)
                guard date > now else {
                    throw fail("--at \(time) is in the past; give a future time, or use --in DURATION", .badInput)
                }
                return date
            } catch let error as TimeInputError {
                throw fail("--at: \(error)", .badInput)
            }
        case (nil, let duration?):
            do {
                return now.addingTimeInterval(try TimeInput.parseDuration(duration))
            } catch {
                throw fail("--in: \(error)", .badInput)
            }
        case (nil, nil):
            return nil
        }
    }
}

struct Pending: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the notifications waiting to be shown, soonest first.",
        discussion: """
            Each line: item id, next time, group/entry (or -), summary, and the rule of a repeating item; \
            with --next, one more line for each further occurrence. An occurrence that daylight saving moved \
            out of a gap, or that falls in an overlap, ends with a note in parentheses saying so.
            """)

    @Option(help: ArgumentHelp("Show the next N occurrences of each item (1 to 100).", valueName: "N"))
    var next = 1

    @Option(help: "Only this group's items.")
    var group: String?

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        guard (1...100).contains(next) else { throw fail("--next must be 1 to 100", .badInput) }
        let items = try await withClient { (client) throws(ChimeError) in
            try await client.pending(next: next, group: group)
        }
        if json {
            try printJSON(
                items.map { item in
                    var object: [String: Any] = [
                        "id": item.id, "at": iso(item.fireDate), "app": item.appName, "summary": item.summary,
                        "next": item.next.map(iso),
                    ]
                    if let group = item.group { object["group"] = group }
                    if let entry = item.entry { object["entry"] = entry }
                    if let rule = item.rule { object["rule"] = rule }
                    if let escalation = item.escalation { object["escalation"] = escalation }
                    if item.wake { object["wake"] = true }
                    let marked = zip(item.next, item.nextNotes).compactMap { date, note in
                        note.map { ["occurrence": iso(date), "note": $0] }
                    }
                    if !marked.isEmpty { object["daylightSaving"] = marked }
                    return object
                })
            return
        }
        for item in items {
            let place = item.group.map { "\($0)/\(item.entry ?? "")" } ?? "-"
            var line = "\(item.id)\t\(iso(item.fireDate))\t\(place)\t\(item.summary)"
            if let rule = item.rule { line += "\t(\(rule))" }
            if let escalation = item.escalation { line += "\t(\(escalation))" }
            if item.wake { line += "\t(wakes the machine)" }
            func note(_ index: Int) -> String {
                index < item.nextNotes.count ? item.nextNotes[index].map { "\t(\($0))" } ?? "" : ""
            }
            print(line + note(0))
            for (index, date) in item.next.enumerated().dropFirst() { print("\t\(iso(date))" + note(index)) }
        }
    }
}

struct Cancel: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Cancel a pending notification by its id, or all of yours with --all.",
        discussion: """
            --all cancels every notification you scheduled with chime (snoozes too) and removes your groups \
            made with chime reschedule; groups from group files are left alone (edit or remove the file). \
            With --group, only that group's (APP/GROUP names an app's). It prints how many items went.
            """)

    @Argument(help: "The item id, as `chime pending` shows it.")
    var id: UInt64?

    @Flag(help: "Cancel all of your pending notifications and remove your groups.")
    var all = false

    @Option(help: "With --all: only this group (APP/GROUP for an app's).")
    var group: String?

    func validate() throws {
        if all, id != nil { throw ValidationError("give an item id or --all, not both") }
        if !all, id == nil { throw ValidationError("give an item id, or --all") }
        if group != nil, !all { throw ValidationError("--group goes with --all") }
    }

    func run() async throws {
        if let id {
            try await withClient { (client) throws(ChimeError) in try await client.cancel(id) }
            return
        }
        let removed = try await withClient { (client) throws(ChimeError) in try await client.cancelAll(group: group) }
        print("cancelled \(removed) item\(removed == 1 ? "" : "s")")
    }
}

extension ChimeCore.NotificationContent {
    /// Sets a hint as notify-send's `-h` does. The hints the content has fields for (`urgency`,
    /// `category`, `desktop-entry`, `sound-name`) go to those fields, where chimed reads them.
    mutating func setHint(_ name: String, _ value: NotificationHint) throws(ContentError) {
        switch (name, value) {
        case ("urgency", .byte(let level)):
            guard let urgency = Urgency(rawValue: level) else {
                throw ContentError("the urgency hint is a byte 0, 1 or 2 (byte:urgency:2), or use -u")
            }
            self.urgency = urgency
        case ("category", .string(let text)): category = text
        case ("desktop-entry", .string(let text)): desktopEntry = text
        case ("sound-name", .string(let text)): sound = text
        case ("urgency", _), ("category", _), ("desktop-entry", _), ("sound-name", _):
            let type = name == "urgency" ? "byte" : "string"
            throw ContentError("the \(name) hint is a \(type): \(type):\(name):VALUE")
        default: hints[name] = value
        }
    }
}
