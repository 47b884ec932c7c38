import ChimeCore
import DBusKit
import Foundation
import TestSupport
import Testing

/// Every option and flag the commands document (`chime --experimental-dump-help`, ArgumentParser's own
/// description of them) is used in a real invocation whose effect is checked: at the notification
/// server, in chimed's listings, or in what the command prints. A documented name no case uses fails
/// `everyDocumentedFlagIsCovered`, so a new option comes with its case.
@Suite(.serialized) struct FlagCoverageTests {
    /// One scenario: the documented names it covers, as `chime COMMAND NAME` (`chime send -u`), and what
    /// it runs and checks. Each runs in a session of its own, with chimed and the mock server when
    /// `withChimed`; every name it covers must appear in the chime commands it runs.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var covers: [String]
        var withChimed = true
        var run: @Sendable (Session) async throws -> Void

        var testDescription: String { name }
    }

    /// The documented option and flag names, as `chime COMMAND NAME`; commands hidden from the help
    /// (the `help` that explains topics) and names hidden from it are left out.
    static func documentedNames() async throws -> Set<String> {
        let dump = try await CommandLineTests.chime(["--experimental-dump-help"])
        let tool = try #require(try JSONSerialization.jsonObject(with: Data(dump.stdout.utf8)) as? [String: Any])
        var names = Set<String>()
        func walk(_ command: [String: Any], path: [String]) {
            guard command["shouldDisplay"] as? Bool != false else { return }
            for argument in command["arguments"] as? [[String: Any]] ?? [] {
                guard argument["shouldDisplay"] as? Bool != false, argument["kind"] as? String != "positional" else {
                    continue
                }
                for name in argument["names"] as? [[String: Any]] ?? [] {
                    let text = name["name"] as? String ?? ""
                    let written = name["kind"] as? String == "long" ? "--\(text)" : "-\(text)"
                    names.insert((path + [written]).joined(separator: " "))
                }
            }
            for subcommand in command["subcommands"] as? [[String: Any]] ?? [] {
                walk(subcommand, path: path + [subcommand["commandName"] as? String ?? "?"])
            }
        }
        walk(try #require(tool["command"] as? [String: Any]), path: ["chime"])
        return names
    }

    /// The names `invocation` uses, as `chime COMMAND NAME`.
    static func names(usedBy invocation: [String]) -> Set<String> {
        let commands = Set(Self.commandNames)
        let path = invocation.first.map { commands.contains($0) ? ["chime", $0] : ["chime"] } ?? ["chime"]
        var names = Set<String>()
        for word in invocation where word.hasPrefix("-") && word.count > 1 && Double(word) == nil {
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            names.insert((path + [name]).joined(separator: " "))
        }
        return names
    }

    static let commandNames = [
        "send", "pending", "cancel", "snooze", "delivered", "close", "groups", "reschedule", "remove", "group",
        "history", "apps", "app", "status", "next", "agenda", "import", "export",
    ]

    @Test func everyDocumentedFlagIsCovered() async throws {
        let documented = try await Self.documentedNames()
        let covered = Set(Self.cases.flatMap(\.covers))
        #expect(documented.subtracting(covered).sorted() == [], "documented options without a case")
        #expect(covered.subtracting(documented).sorted() == [], "cases for options that are not documented")
        #expect(documented.count > 60)
    }

    @Test(arguments: cases)
    func flagTakesEffect(_ scenario: Case) async throws {
        try await Session.run(withServer: scenario.withChimed, startChimed: scenario.withChimed) { s in
            try await scenario.run(s)
            let used = s.invocations.reduce(into: Set<String>()) { $0.formUnion(Self.names(usedBy: $1)) }
            #expect(Set(scenario.covers).subtracting(used).sorted() == [], "covered but never run")
        }
    }

    // MARK: - The cases

    static let cases: [Case] = [
        Case(name: "help of every command", covers: helpNames, withChimed: false) { s in
            for command in [""] + commandNames {
                let names = command == "send" ? ["--help"] : ["-h", "--help"]
                for name in names {
                    let result = try await s.chime((command.isEmpty ? [] : [command]) + [name])
                    #expect(result.status == 0)
                    #expect(result.stdout.hasPrefix("OVERVIEW: "), "\(command) \(name)")
                    #expect(result.stdout.contains("USAGE: chime" + (command.isEmpty ? "" : " \(command)")))
                }
            }
        },
        Case(
            name: "send: notify-send's short options",
            covers: ["-u", "-t", "-a", "-i", "-c", "-h", "-e", "-r", "-p", "-A"].map { "chime send \($0)" }
        ) { s in
            let sent = try await s.chime([
                "send", "-u", "critical", "-t", "5000", "-a", "myapp", "-i", "dialog-information", "-c", "im.received",
                "-h", "string:x-k:v", "-e", "-r", "41", "-p", "-A", "ok=OK", "S", "B",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("delivered") { $0.contains { $0.item == id } }
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(call.appName == "myapp" && call.summary == "S" && call.body == "B")
            #expect(call.arguments[2].unwrappingVariant == .string("dialog-information"))
            #expect(call.expireTimeout == 5000 && call.replacesID == 41 && call.actions == ["ok", "OK"])
            #expect(call.hints["urgency"] == .byte(2) && call.hints["category"] == .string("im.received"))
            #expect(call.hints["x-k"] == .string("v") && call.hints["transient"] == .boolean(true))
        },
        Case(
            name: "send: notify-send's long options",
            covers: [
                "--urgency", "--expire-time", "--app-name", "--icon", "--category", "--hint", "--transient",
                "--replace-id", "--print-id", "--action",
            ].map { "chime send \($0)" }
        ) { s in
            let sent = try await s.chime([
                "send", "--urgency", "low", "--expire-time", "0", "--app-name", "other", "--icon", "mail-unread",
                "--category", "email.arrived", "--hint", "int:value:50", "--transient", "--replace-id", "7",
                "--print-id", "--action", "Open", "Mail",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("delivered") { $0.contains { $0.item == id } }
            let call = (try await s.server!.notifyCalls.element(0))
            #expect(call.appName == "other" && call.summary == "Mail")
            #expect(call.arguments[2].unwrappingVariant == .string("mail-unread"))
            #expect(call.expireTimeout == 0 && call.replacesID == 7 && call.actions == ["0", "Open"])
            #expect(call.hints["urgency"] == .byte(0) && call.hints["category"] == .string("email.arrived"))
            #expect(call.hints["value"] == .int32(50) && call.hints["transient"] == .boolean(true))
        },
        Case(name: "send: --at and --in", covers: ["chime send --at", "chime send --in"]) { s in
            let now = Date()
            let clock = now.addingTimeInterval(7200)
            let minute = Calendar.current.dateComponents([.hour, .minute], from: clock)
            let hhmm = String(format: "%02d:%02d", minute.hour!, minute.minute!)
            let iso = now.addingTimeInterval(10_800)
            for arguments in [["--at", hhmm], ["--at", GroupTests.local(iso)], ["--in", "1h30m"]] {
                let sent = try await s.chime(["send"] + arguments + ["at " + arguments[1]])
                #expect(sent.status == 0, "\(sent.stderr)")
            }
            let pending = try await s.chimeJSON(["pending"])
            func at(_ summary: String) -> Date? {
                GroupTests.date(pending.first { $0["summary"] as? String == summary }?["at"] as? String)
            }
            let wholeMinute = Calendar.current.dateInterval(of: .minute, for: clock)?.start
            #expect(at("at \(hhmm)").map { abs($0.timeIntervalSince(wholeMinute!)) < 1 } == true)
            #expect(at("at \(GroupTests.local(iso))").map { abs($0.timeIntervalSince(iso)) < 1 } == true)
            #expect(at("at 1h30m").map { abs($0.timeIntervalSince(now) - 5400) < 30 } == true)
        },
        Case(
            name: "import: --group, --dry-run, --json; export: --ics, --group, --days, --output, -o",
            covers: [
                "chime import --group", "chime import --dry-run", "chime import --json", "chime export --ics",
                "chime export --group", "chime export --days", "chime export --output", "chime export -o",
            ]
        ) { s in
            let inTwoDays = CalendarFileTests.utc(Date().addingTimeInterval(2 * 86_400))
            let inNineDays = CalendarFileTests.utc(Date().addingTimeInterval(9 * 86_400))
            let file = s.bus.directory.appendingPathComponent("cal.ics").path
            try """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:one
            DTSTART:\(inTwoDays)
            SUMMARY:Soon
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:PT0S
            END:VALARM
            END:VEVENT
            BEGIN:VEVENT
            UID:two
            DTSTART:\(inNineDays)
            RRULE:FREQ=WEEKLY
            SUMMARY:Later
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:-PT15M
            END:VALARM
            END:VEVENT
            END:VCALENDAR
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let dry = try await s.chimeJSON(["import", "--dry-run", "--json", file])
            #expect(Set(dry.compactMap { $0["entry"] as? String }) == ["one-alarm1", "two-alarm1"])
            #expect(dry.allSatisfy { $0["change"] as? String == "added" })
            #expect(try await s.chimeJSON(["groups", "--json"]).isEmpty, "a dry run changes nothing")
            let imported = try await s.chime(["import", "--group", "mine", file])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try await s.chimeJSON(["groups", "--json"]).map { $0["id"] as? String } == ["mine"])
            // Within three days only the one-off is due; within a year the series too, as one event.
            let out = s.bus.directory.appendingPathComponent("out.ics").path
            let short = try await s.chime(["export", "--ics", "--group", "mine", "--days", "3", "--output", out])
            #expect(short.status == 0, "\(short.stderr)")
            let soon = try ICalendarComponent.parse(String(contentsOfFile: out, encoding: .utf8))[0]
            #expect(soon.components("VEVENT").compactMap { $0.property("SUMMARY")?.text } == ["Soon"])
            let year = try await s.chime(["export", "--ics", "--group", "mine", "-o", out])
            #expect(year.status == 0, "\(year.stderr)")
            let all = try ICalendarComponent.parse(String(contentsOfFile: out, encoding: .utf8))[0]
            #expect(Set(all.components("VEVENT").compactMap { $0.property("SUMMARY")?.text }) == ["Soon", "Later"])
            #expect(
                all.components("VEVENT").first { $0.property("SUMMARY")?.text == "Later" }?.property("RRULE") != nil)
            // Another group's items are not exported.
            #expect(
                try await s.chime(["export", "--ics", "--group", "other"]).stdout.contains("BEGIN:VEVENT") == false)
        },
        Case(
            name: "agenda: --days, --month, --group, --tz, --color, --json",
            covers: [
                "chime agenda --days", "chime agenda --month", "chime agenda --group", "chime agenda --tz",
                "chime agenda --color", "chime agenda --json",
            ]
        ) { s in
            let tomorrow = GroupTests.local(Date().addingTimeInterval(86_400))
            for (summary, group) in [("In a group", ["--group", "g"]), ("Alone", [])] {
                let sent = try await s.chime(["send", "--at", tomorrow] + group + [summary])
                #expect(sent.status == 0, "\(sent.stderr)")
            }
            let two = try await s.chimeJSON(["agenda", "--days", "2", "--json"])
            #expect(Set(two.compactMap { $0["summary"] as? String }) == ["In a group", "Alone"])
            // Today only: tomorrow's items are not in it.
            #expect(try await s.chimeJSON(["agenda", "--days", "1", "--json"]).isEmpty)
            let grouped = try await s.chimeJSON(["agenda", "--days", "2", "--group", "g", "--json"])
            #expect(grouped.map { $0["summary"] as? String } == ["In a group"])
            #expect(grouped.first?["group"] as? String == "g")
            // A month without anything: the grid, and every day with nothing due.
            let empty = try await s.chime(["agenda", "--month", "2030-02", "--tz", "Asia/Tokyo", "--color", "never"])
            #expect(empty.status == 0, "\(empty.stderr)")
            #expect(
                empty.stdout.hasPrefix("       February 2030\nMo  Tu  We  Th  Fr  Sa  Su\n                 1   2   3\n")
            )
            #expect(empty.stdout.components(separatedBy: "  nothing due").count - 1 == 28)
            #expect(try await s.chime(["agenda", "--tz", "Mars/Olympus"]).stderr.contains("unknown time zone"))
            #expect(try await s.chime(["agenda", "--color", "sometimes"]).status == 2)
        },
        Case(name: "send: --plain", covers: ["chime send --plain"]) { s in
            let sent = try await s.chime(["send", "--plain", "Plain", "<b>as typed</b>"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let marked = try await s.chime(["send", "Marked", "<b>bold</b>"])
            #expect(marked.status == 0, "\(marked.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2)
            // The session's mock reads markup: plain text reaches it escaped, markup as it is.
            #expect(calls.elements.first { $0.summary == "Plain" }?.body == "&lt;b&gt;as typed&lt;/b&gt;")
            #expect(calls.elements.first { $0.summary == "Marked" }?.body == "<b>bold</b>")
        },
        Case(
            name: "send: --escalate-every and --escalate-times",
            covers: ["chime send --escalate-every", "chime send --escalate-times"]
        ) { s in
            let sent = try await s.chime([
                "send", "--in", "1h", "--escalate-every", "1h30m", "--escalate-times", "4", "Pill",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let pending = try await s.chimeJSON(["pending"])
            #expect(
                pending.first?["escalation"] as? String == "again every 1h30m, at most 4 times, until acknowledged")
            let plain = try await s.chime(["pending"])
            #expect(plain.stdout.contains("\tPill\t(again every 1h30m, at most 4 times, until acknowledged)"))
        },
        Case(name: "send: --wake", covers: ["chime send --wake"]) { s in
            let sent = try await s.chime(["send", "--in", "1h", "--wake", "Alarm"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let pending = try await s.chimeJSON(["pending"])
            #expect(pending.first?["wake"] as? Bool == true)
            let plain = try await s.chime(["pending"])
            #expect(plain.stdout.contains("\tAlarm\t(wakes the machine)"), "\(plain.stdout)")
        },
        Case(
            name: "send: --every with --tz, --count and --until; pending --next",
            covers: [
                "chime send --every", "chime send --tz", "chime send --count", "chime send --until",
                "chime pending --next", "chime pending --json",
            ]
        ) { s in
            let daily = try await s.chime([
                "send", "--every", "every day at 9:00", "--tz", "Asia/Tokyo", "--count", "2", "Tokyo",
            ])
            #expect(daily.status == 0, "\(daily.stderr)")
            // What chimed was given is explained back on standard error.
            #expect(daily.stderr.contains("understood: every day at 09:00 (Asia/Tokyo)\n"), "\(daily.stderr)")
            #expect(daily.stderr.contains("RRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0\n"), "\(daily.stderr)")
            #expect(daily.stderr.contains("ends:       after 2 occurrences\n"), "\(daily.stderr)")
            let until = GroupTests.local(Date().addingTimeInterval(7800))
            let tick = try await s.chime(["send", "--every", "every 30 minutes", "--until", until, "Tick"])
            #expect(tick.status == 0, "\(tick.stderr)")
            let pending = try await s.chimeJSON(["pending", "--next", "10"])
            let tokyo = try #require(pending.first { $0["summary"] as? String == "Tokyo" })
            #expect(tokyo["rule"] as? String == "every day at 9:00")
            let dates = (tokyo["next"] as? [String] ?? []).compactMap(GroupTests.date)
            #expect(dates.count == 2)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Asia/Tokyo")!
            #expect(dates.allSatisfy { calendar.component(.hour, from: $0) == 9 })
            let ticks = try #require(pending.first { $0["summary"] as? String == "Tick" }?["next"] as? [String])
            #expect(ticks.count == 4, "\(ticks)")
        },
        Case(
            name: "send: --rrule with --dtstart, --on-calendar",
            covers: ["chime send --rrule", "chime send --dtstart", "chime send --on-calendar"]
        ) { s in
            let rrule = try await s.chime([
                "send", "--rrule", "FREQ=DAILY;COUNT=3", "--dtstart", "2099-01-01T10:00:00", "Three days",
            ])
            #expect(rrule.status == 0, "\(rrule.stderr)")
            let calendar = try await s.chime(["send", "--on-calendar", "2099-06-01 08:00", "June"])
            #expect(calendar.status == 0, "\(calendar.stderr)")
            #expect(
                calendar.stderr.contains("understood: every year on June 1st at 08:00 in 2099\n"), "\(calendar.stderr)")
            #expect(
                rrule.stderr.contains("understood: every day at 10:00 from 2099-01-01, 3 times\n"), "\(rrule.stderr)")
            let pending = try await s.chimeJSON(["pending", "--next", "5"])
            // chimed's zone is Europe/Berlin: 10:00 in winter is 09:00 UTC, 08:00 in summer 06:00 UTC.
            let three = try #require(pending.first { $0["summary"] as? String == "Three days" })
            #expect(GroupTests.date(three["at"] as? String) == Date(timeIntervalSince1970: 4_070_941_200))
            #expect((three["next"] as? [String])?.count == 3)
            let june = try #require(pending.first { $0["summary"] as? String == "June" })
            #expect(GroupTests.date(june["at"] as? String) == Date(timeIntervalSince1970: 4_083_976_800))
            // An occurrence daylight saving moves is marked in the listing (chimed's zone is Europe/Berlin).
            let night = try await s.chime([
                "send", "--rrule", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "--dtstart", "2099-03-28T00:00:00", "Night",
            ])
            #expect(night.status == 0, "\(night.stderr)")
            let note = "02:30 does not exist on 2099-03-29 (the clocks go forward): moved to 03:00"
            let listed = try await s.chimeJSON(["pending", "--next", "3"])
            let nights = try #require(listed.first { $0["summary"] as? String == "Night" })
            let marks = try #require(nights["daylightSaving"] as? [[String: String]])
            #expect(marks.map { $0["note"] } == [note])
            #expect(GroupTests.date(marks.first?["occurrence"]) == Date(timeIntervalSince1970: 4_078_429_200))
            let text = try await s.chime(["pending", "--next", "3"])
            #expect(text.stdout.contains("\t(\(note))\n"), "\(text.stdout)")
        },
        Case(name: "send: -w and --wait", covers: ["chime send -w", "chime send --wait"]) { s in
            for (number, flag) in ["-w", "--wait"].enumerated() {
                let id = UInt32(number + 1)
                let waiting = try s.startChime(["send", flag, "-A", "yes=Yes", "Deploy?"])
                s.extraProcesses.append(waiting)
                try await s.awaitDelivered(notification: id)
                try await s.choose("yes", on: id)
                try await waiting.waitForStdout(containing: "yes\n")
                try await s.serverEmits("NotificationClosed", "uu", [.uint32(id), .uint32(2)])
                #expect(await waiting.waitForExit() == 0)
                #expect(waiting.stdout == "yes\n")
            }
        },
        Case(
            name: "send --group, pending --group, groups --json",
            covers: ["chime send --group", "chime pending --group", "chime groups --json"]
        ) { s in
            #expect(try await s.chime(["send", "--group", "tea", "--in", "1h", "Steep"]).status == 0)
            #expect(try await s.chime(["send", "--in", "1h", "Alone"]).status == 0)
            let listed = try await s.chimeJSON(["pending", "--group", "tea"])
            #expect(listed.compactMap { $0["summary"] as? String } == ["Steep"])
            let groups = try await s.chimeJSON(["groups"])
            #expect(groups.compactMap { $0["id"] as? String } == ["tea"] && groups.first?["pending"] as? Int == 1)
        },
        Case(name: "cancel --all, --group", covers: ["chime cancel --all", "chime cancel --group"]) { s in
            #expect(try await s.chime(["send", "--group", "tea", "--in", "1h", "Steep"]).status == 0)
            #expect(try await s.chime(["send", "--group", "tea", "--in", "2h", "Drink"]).status == 0)
            #expect(try await s.chime(["send", "--group", "coffee", "--in", "1h", "Grind"]).status == 0)
            #expect(try await s.chime(["send", "--in", "1h", "Alone"]).status == 0)
            let tea = try await s.chime(["cancel", "--all", "--group", "tea"])
            #expect(tea.status == 0 && tea.stdout == "cancelled 2 items\n", "\(tea)")
            #expect(
                try await s.chimeJSON(["pending"]).compactMap { $0["summary"] as? String }.sorted() == [
                    "Alone", "Grind",
                ])
            let rest = try await s.chime(["cancel", "--all"])
            #expect(rest.status == 0 && rest.stdout == "cancelled 2 items\n", "\(rest)")
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            #expect(try await s.chimeJSON(["groups"]).isEmpty)
            #expect(try await s.chime(["cancel", "--all", "3"]).status == 2)
        },
        Case(name: "delivered --json, close --all", covers: ["chime delivered --json", "chime close --all"]) { s in
            for summary in ["Tea", "Cake", "Milk"] { #expect(try await s.chime(["send", summary]).status == 0) }
            try await s.awaitDelivered(notification: 3)
            let shown = try await s.chimeJSON(["delivered"])
            #expect(shown.compactMap { $0["summary"] as? String } == ["Milk", "Cake", "Tea"])
            #expect(shown.compactMap { $0["notification"] as? Int } == [3, 2, 1])
            let lines = try await s.chime(["delivered"])
            #expect(lines.status == 0 && lines.stdout.split(separator: "\n").first?.hasPrefix("3\t3\t") == true)
            #expect(try await s.chime(["close", "2"]).status == 0)
            try await s.server!.closeCalls.wait("chimed closed notification 2") { $0 == [2] }
            try await InteractionTests.awaitListing(s, ["delivered"], "two left") { $0.count == 2 }
            #expect(try await s.chime(["close", "--all"]).status == 0)
            try await InteractionTests.awaitListing(s, ["delivered"], "none left") { $0.isEmpty }
            #expect(s.server!.closeCalls.elements.sorted() == [1, 2, 3])
            #expect(try await s.chime(["close"]).status == 2)
        },
        Case(
            name: "reschedule --file, --dry-run, --json",
            covers: ["chime reschedule --file", "chime reschedule --dry-run", "chime reschedule --json"]
        ) { s in
            let file = s.bus.directory.appendingPathComponent("standup.toml").path
            try """
            [[entry]]
            id = "morning"
            every = "every day at 9:00"
            summary = "Stand-up"
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let dry = try await s.chimeJSON(["reschedule", "--file", file, "--dry-run"])
            #expect(dry.compactMap { $0["change"] as? String } == ["added"])
            #expect(try await s.chimeJSON(["groups"]).isEmpty)
            let applied = try await s.chime(["reschedule", "--file", file])
            #expect(applied.status == 0 && applied.stdout.hasPrefix("added\tmorning\t-\t"), "\(applied)")
            #expect(try await s.chimeJSON(["pending", "--group", "standup"]).count == 1)
        },
        Case(
            name: "history --limit, --group, --item, --json",
            covers: ["chime history --limit", "chime history --group", "chime history --item", "chime history --json"]
        ) { s in
            let alone = try await s.chime(["send", "-p", "Alone"])
            let id = try #require(Int(alone.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(try await s.chime(["send", "--group", "tea", "Steep"]).status == 0)
            try await s.awaitDelivered(notification: 2)
            #expect(try await s.chimeJSON(["history", "--limit", "1"]).count == 1)
            let item = try await s.chimeJSON(["history", "--item", "\(id)"])
            #expect(item.contains { $0["event"] as? String == "delivered" })
            #expect(item.allSatisfy { $0["item"] as? Int == id })
            let group = try await s.chimeJSON(["history", "--group", "tea"])
            #expect(!group.isEmpty && group.allSatisfy { $0["group"] as? String == "tea" })
        },
        Case(name: "apps --json, status --json", covers: ["chime apps --json", "chime status --json"]) { s in
            let apps = try await s.chimeJSON(["apps"])
            #expect(
                apps.contains { $0["app"] as? String == Session.testAppID && $0["consent"] as? String == "allowed" })
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            let status = try await s.chime(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(object?["server-name"] as? String == "mock-notify")
        },
        Case(
            name: "next: every option",
            covers: ["--rrule", "--dtstart", "--on-calendar", "--every", "--after", "--tz", "--count", "--json"].map {
                "chime next \($0)"
            },
            withChimed: false
        ) { s in
            let rrule = try await s.chime([
                "next", "--rrule", "FREQ=MONTHLY;BYDAY=-1FR", "--dtstart", "2026-12-01T09:00:00", "--tz",
                "Europe/Berlin", "--after", "2026-11-22T00:00:00", "--count", "2", "--json",
            ])
            let object = try JSONSerialization.jsonObject(with: Data(rrule.stdout.utf8)) as? [String: Any]
            #expect(object?["occurrences"] as? [String] == ["2026-12-25T09:00:00+01:00", "2027-01-29T09:00:00+01:00"])
            #expect(object?["rrule"] as? String == "DTSTART:20261201T090000\nRRULE:FREQ=MONTHLY;BYDAY=-1FR")
            let calendar = try await s.chime([
                "next", "--on-calendar", "Mon..Fri *-*-* 09:00", "--tz", "UTC", "--after", "2026-11-27T12:00:00",
                "--count", "1",
            ])
            #expect(calendar.stdout == "2026-11-30T09:00:00+00:00\n")
            let phrase = try await s.chime([
                "next", "--every", "every month on the first friday at 20:15", "--tz", "Europe/Berlin", "--after",
                "2026-11-22T00:00:00", "--count", "1",
            ])
            #expect(phrase.stdout == "2026-12-04T20:15:00+01:00\n")
        },
    ]

    /// `-h` and `--help` of chime and of every command; `chime send` has `--help` only.
    static let helpNames: [String] =
        ["chime -h", "chime --help"]
        + commandNames.flatMap { command in
            (command == "send" ? ["--help"] : ["-h", "--help"]).map { "chime \(command) \($0)" }
        }

    // MARK: - Bad values

    /// A bad value for a representative set of options: exit status 2 and one line that says what is
    /// wrong and what to give instead.
    @Test(arguments: [
        (["send", "--until", "yesterday", "--every", "every day at 9:00", "x"], "--until: cannot read \"yesterday\""),
        (["send", "--count", "0", "--every", "every day at 9:00", "x"], "--count must be at least 1"),
        (["send", "--tz", "Europe/Berlin", "x"], "--tz goes with --every, --rrule or --on-calendar"),
        (["send", "--dtstart", "2026-12-01T09:00:00", "x"], "--dtstart goes with --rrule only"),
        (
            ["send", "--rrule", "FREQ=DAILY", "--dtstart", "soon", "x"],
            "expected local time such as 2026-12-01T09:00:00"
        ),
        (["send", "--every", "every blursday", "x"], "invalid phrase at position 7 (\"blursday\")"),
        (
            ["send", "--every", "every day", "--on-calendar", "daily", "x"],
            "give one of --every, --rrule or --on-calendar"
        ),
        (["send", "--group", "a/b", "x"], "--group: the group id \"a/b\" contains \"/\"; use letters, digits"),
        (["send", "-t", "-5", "x"], "Missing value for '-t <TIMEOUT>'"),
        (["send", "-A", "=Label", "x"], "an action has an empty key; write KEY=LABEL"),
        (["pending", "--next", "0"], "--next must be 1 to 100"),
        (["history", "--limit", "0"], "--limit must be at least 1"),
        (["history", "--item", "first"], "The value 'first' is invalid for '--item <ID>'"),
        (["reschedule", "--file", "/nonexistent/standup.toml"], "/nonexistent/standup.toml: cannot read it"),
        (["snooze", "1", "soon"], "cannot read \"soon\""),
        (["next", "--every", "every day", "--after", "now"], "--after: cannot read 'now'"),
    ])
    func badValuesAreOneLineWithExitStatus2(arguments: [String], message: String) async throws {
        try await Session.run { s in
            let result = try await s.chime(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.hasPrefix("chime: ") && result.stderr.contains(message), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
            #expect(s.server!.notifyCalls.elements.isEmpty)
        }
    }
}
