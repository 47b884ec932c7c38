import ChimeCore
import ChimeKit
import Foundation
import TestSupport
import Testing

/// `chime import FILE.ics` and `chime export --ics` against chimed on a private bus: a calendar's alarms
/// become a group whose notifications reach the server, the export reads back to the same times, a second
/// import changes nothing, and a broken file is refused with its line.
@Suite(.serialized) struct CalendarFileTests {
    static func utc(_ date: Date) -> String { ICalendarTime.utc(WallClock.localDateTime(for: date, in: .gmt)).text }

    /// A calendar with times relative to now: an event whose alarm is due in about five seconds, a weekly
    /// series in Berlin with a 15-minute alarm and an e-mail alarm, and a to-do due in three days.
    static func calendar(now: Date) -> (text: String, soon: Date, weeklyStart: String, due: Date) {
        let soon = now.addingTimeInterval(65)
        var berlinCalendar = Calendar(identifier: .gregorian)
        berlinCalendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let nextWeek = berlinCalendar.date(byAdding: .day, value: 7, to: now)!
        let c = berlinCalendar.dateComponents([.year, .month, .day], from: nextWeek)
        let weeklyStart = String(format: "%04d%02d%02dT090000", c.year!, c.month!, c.day!)
        let due = Date(timeIntervalSince1970: (now.timeIntervalSince1970 + 3 * 86_400).rounded())
        let text = """
            BEGIN:VCALENDAR\r
            VERSION:2.0\r
            PRODID:-//test//calendar//EN\r
            X-WR-CALNAME:Team\r
            BEGIN:VEVENT\r
            UID:soon-1@example.org\r
            DTSTAMP:20261101T000000Z\r
            DTSTART:\(utc(soon))\r
            SUMMARY:Call\\, soon\r
            DESCRIPTION:Dial in\\nroom 4\r
            BEGIN:VALARM\r
            ACTION:DISPLAY\r
            TRIGGER:-PT1M\r
            END:VALARM\r
            END:VEVENT\r
            BEGIN:VEVENT\r
            UID:weekly-1@example.org\r
            DTSTAMP:20261101T000000Z\r
            DTSTART;TZID=Europe/Berlin:\(weeklyStart)\r
            RRULE:FREQ=WEEKLY\r
            SUMMARY:Stand-up\r
            BEGIN:VALARM\r
            ACTION:DISPLAY\r
            TRIGGER:-PT15M\r
            END:VALARM\r
            BEGIN:VALARM\r
            ACTION:EMAIL\r
            TRIGGER:-PT1H\r
            SUMMARY:mail\r
            DESCRIPTION:mail\r
            ATTENDEE:mailto:me@example.org\r
            END:VALARM\r
            END:VEVENT\r
            BEGIN:VTODO\r
            UID:todo-1@example.org\r
            DTSTAMP:20261101T000000Z\r
            DUE:\(utc(due))\r
            SUMMARY:Expenses\r
            END:VTODO\r
            END:VCALENDAR\r

            """
        return (text, soon, weeklyStart, due)
    }

    @Test func aCalendarBecomesAGroupThatDeliversAndExportsBack() async throws {
        try await Session.run { s in
            let now = Date()
            let (text, soon, weeklyStart, due) = Self.calendar(now: now)
            let file = s.bus.directory.appendingPathComponent("Team Calendar.ics").path
            try text.write(toFile: file, atomically: true, encoding: .utf8)

            let imported = try await s.chime(["import", file])
            #expect(imported.status == 0, "\(imported.stderr)")
            let lines = imported.stdout.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
            #expect(lines.map { $0[0] } == ["added", "added", "added"])
            #expect(
                Set(lines.map { $0[1] }).count == 3
                    && lines.contains { $0[1].hasPrefix("weekly-1-example.org") && $0[1].hasSuffix("-alarm1") })
            #expect(imported.stderr.contains("ACTION:EMAIL"), "the e-mail alarm is reported as left out")

            // The group is named after the file; each entry fires when its alarm says. (The alarm due in
            // five seconds may have fired already on a busy machine: it is checked at the server below.)
            let pending = try await s.chimeJSON(["pending", "--json", "--group", "Team-Calendar"])
            func fireAt(_ summary: String) -> Date? {
                pending.first { $0["summary"] as? String == summary }.flatMap { $0["at"] as? String }
                    .flatMap { try? Date($0, strategy: .iso8601) }
            }
            let berlin = Zone(identifier: "Europe/Berlin")!
            let weekly = try #require(
                LocalDateTime(iso: String(weeklyStart.prefix(8)).inserting("-", at: [4, 6]) + "T09:00:00"))
            let weeklyAlarm = WallClock.instants(for: weekly, in: berlin)[0].addingTimeInterval(-900)
            #expect(fireAt("Stand-up") == weeklyAlarm)
            let standUp = pending.first { $0["summary"] as? String == "Stand-up" }
            #expect((standUp?["rule"] as? String)?.hasPrefix("15 minutes before: DTSTART:") == true, "\(pending)")
            #expect(fireAt("Expenses") == due)
            if let soonAlarm = fireAt("Call, soon") {
                #expect(abs(soonAlarm.timeIntervalSince(soon.addingTimeInterval(-60))) < 1)
            }

            // The alarm due now reaches the server with the event's text, a minute before the event.
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            #expect(calls.elements[0].summary == "Call, soon")
            #expect(calls.elements[0].body == "Dial in\nroom 4")
            #expect(Date() >= soon.addingTimeInterval(-61), "not before the alarm (the file holds whole seconds)")

            // Importing the same file again keeps the series and the to-do as they are; the alarm that has
            // fired is past now, so it is no longer in the calendar's reminders.
            let again = try await s.chime(["import", "--group", "Team-Calendar", file])
            #expect(again.status == 0, "\(again.stderr)")
            let kinds = Dictionary(
                again.stdout.split(separator: "\n").map { line in
                    let fields = line.split(separator: "\t").map(String.init)
                    return (fields[1], fields[0])
                }, uniquingKeysWith: { a, _ in a })
            #expect(kinds.count == 3)
            for (entry, kind) in kinds {
                #expect(kind == (entry.hasPrefix("soon-1") ? "removed" : "unchanged"), "\(entry)")
            }
            #expect(again.stderr.contains("1 alarm was already past"))

            // Exported and read back: the same times.
            let out = s.bus.directory.appendingPathComponent("export.ics").path
            let exported = try await s.chime(["export", "--ics", "--group", "Team-Calendar", "-o", out])
            #expect(exported.status == 0, "\(exported.stderr)")
            let back = try CalendarImport.read(
                String(contentsOfFile: out, encoding: .utf8), now: Date(), systemTimeZone: .current)
            var backFires: [String: Date] = [:]
            for entry in back.entries {
                switch entry.trigger {
                case .at(let date): backFires[entry.content.base.summary] = date
                case .rule(let rule, let zone):
                    backFires[entry.content.base.summary] = try Recurrence.parse(
                        rule, now: Date(), timeZone: zone.map { .named($0) } ?? .floating, systemTimeZone: .current
                    ).shifted(by: entry.offset).nextOccurrence(after: Date(), systemTimeZone: .current)
                    #expect(entry.offset == OccurrenceOffset(seconds: -900))
                }
            }
            #expect(backFires == ["Stand-up": weeklyAlarm, "Expenses": due])
        }
    }

    @Test func aBrokenFileIsRefusedWithItsLineAndNothingChanges() async throws {
        try await Session.run { s in
            let file = s.bus.directory.appendingPathComponent("broken.ics").path
            try "BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nEND:VTODO\nEND:VCALENDAR\n".write(
                toFile: file, atomically: true, encoding: .utf8)
            let result = try await s.chime(["import", file])
            #expect(result.status == 2)
            #expect(result.stderr.contains("broken.ics:4: END:VTODO closes BEGIN:VEVENT of line 2"), "\(result.stderr)")
            let groups = try await s.chimeJSON(["groups", "--json"])
            #expect(!groups.contains { $0["id"] as? String == "broken" })

            let missing = try await s.chime(["import", "/nonexistent/x.ics"])
            #expect(missing.status == 2 && missing.stderr.contains("cannot read /nonexistent/x.ics"))
            let noFormat = try await s.chime(["export"])
            #expect(noFormat.status == 2 && noFormat.stderr.contains("--ics"))
        }
    }
}

extension String {
    /// The text with `separator` inserted before each of the given offsets.
    fileprivate func inserting(_ separator: String, at offsets: [Int]) -> String {
        var result = ""
        for (index, character) in enumerated() {
            if offsets.contains(index) { result += separator }
            result.append(character)
        }
        return result
    }
}
