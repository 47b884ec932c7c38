import Foundation
import Testing

@testable import ChimeCore

/// Calendar files written by khal and calcurse, and files written by hand the way Google Calendar,
/// Outlook, Thunderbird and Apple's Calendar write them (Fixtures/ics/README.md says how each was made).
/// The expected alarm times are the README's, worked out with python-dateutil and zoneinfo from each
/// file's rules, not by the code under test.
@Suite struct CalendarImportTests {
    static let now = Fixture.utc("2026-11-26T22:40:00Z")
    static let horizon = Fixture.utc("2028-06-01T00:00:00Z")

    static func fixture(_ name: String) throws -> String {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ics")
        return try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }

    static func read(_ name: String) throws -> CalendarImport {
        try CalendarImport.read(fixture(name), now: now, systemTimeZone: Fixture.berlin)
    }

    /// Every time each entry fires up to the horizon, by summary.
    static func fires(_ result: CalendarImport, zone: Zone = Fixture.berlin) throws -> [String: [Date]] {
        var fires: [String: [Date]] = [:]
        for entry in result.entries {
            var times: [Date] = []
            switch entry.trigger {
            case .at(let date):
                times = [date]
            case .rule(let rule, let zoneName):
                let recurrence = try Recurrence.parse(
                    rule, now: now, timeZone: zoneName.map { .named($0) } ?? .floating, systemTimeZone: zone
                ).shifted(by: entry.offset)
                var cursor = now
                while times.count < 500, let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: zone),
                    next <= horizon
                {
                    times.append(next)
                    cursor = next
                }
            }
            fires[entry.content.base.summary, default: []] += times
        }
        return fires.mapValues { $0.sorted() }
    }

    static func dates(_ texts: String...) -> [Date] { texts.map(Fixture.utc) }

    @Test func khalOneOffAllDayAndNewYork() throws {
        #expect(
            try Self.fires(Self.read("khal-oneoff-alarm15m.ics")) == [
                "Dentist appointment": Self.dates("2026-12-03T08:15:00Z")
            ])
        #expect(
            try Self.fires(Self.read("khal-allday-alarm1h.ics")) == [
                "Christmas Eve": Self.dates("2026-12-23T22:00:00Z")
            ])
        #expect(
            try Self.fires(Self.read("khal-new-york-tz-alarm30m.ics")) == [
                "Flight to Berlin": Self.dates("2026-12-18T18:30:00Z")
            ])
    }

    @Test func khalWeeklySeries() throws {
        let until = try #require(Self.fires(Self.read("khal-weekly-until-alarm10m.ics"))["Team call"])
        #expect(until.count == 12)
        #expect(until.first == Fixture.utc("2026-12-04T19:05:00Z"))
        #expect(until.last == Fixture.utc("2027-02-19T19:05:00Z"))
        let endless = try #require(Self.fires(Self.read("khal-weekly-endless-alarm15m.ics"))["Standup"])
        #expect(Array(endless.prefix(2)) == Self.dates("2026-12-07T06:45:00Z", "2026-12-14T06:45:00Z"))
        // After the change to summer time the alarm keeps 07:45 Berlin time.
        #expect(endless.contains(Fixture.utc("2027-04-05T05:45:00Z")))
    }

    @Test func khalExceptionDateDropsBothAlarmsOfThatInstance() throws {
        let fires = try #require(Self.fires(Self.read("khal-weekly-exdate-two-alarms.ics"))["Choir rehearsal"])
        #expect(
            Array(fires.prefix(4))
                == Self.dates(
                    "2026-12-01T17:00:00Z", "2026-12-02T16:45:00Z", "2026-12-08T17:00:00Z", "2026-12-09T16:45:00Z"))
        #expect(!fires.contains(Fixture.utc("2026-12-22T17:00:00Z")))
        #expect(!fires.contains(Fixture.utc("2026-12-23T16:45:00Z")))
        #expect(fires.count == 16)
        #expect(fires.last == Fixture.utc("2027-01-27T16:45:00Z"))
    }

    @Test func calcurseWithItsInvalidTriggerReadAsFiveMinutes() throws {
        for name in ["calcurse-export.ics", "calcurse-export-uid.ics"] {
            let result = try Self.read(name)
            let fires = try Self.fires(result)
            #expect(fires["Dentist (Dr. Weber)"] == Self.dates("2026-12-03T08:25:00Z"))
            let team = try #require(fires["Team call"])
            #expect(team.count == 13)
            #expect(team.first == Fixture.utc("2026-12-04T19:10:00Z"))
            #expect(team.last == Fixture.utc("2027-02-26T19:10:00Z"))
            #expect(
                Array(fires["Pay rent"]?.prefix(2) ?? []) == Self.dates("2027-01-05T05:55:00Z", "2027-02-05T05:55:00Z"))
            #expect(Set(fires.keys) == ["Dentist (Dr. Weber)", "Team call", "Pay rent"])
            // Without UIDs the ids come from start and summary, the same on every import.
            #expect(try Self.read(name).entries.map(\.id) == result.entries.map(\.id))
        }
    }

    @Test func googleSeriesWithExceptionOverrideAndEmailAlarms() throws {
        let result = try Self.read("google-calendar.ics")
        let fires = try Self.fires(result)
        let review = try #require(fires["Monthly review"])
        #expect(
            Array(review.prefix(4))
                == Self.dates(
                    "2026-12-04T18:45:00Z", "2027-02-05T16:30:00Z", "2027-03-05T18:45:00Z", "2027-04-02T17:45:00Z"))
        #expect(!review.contains(Fixture.utc("2027-01-01T18:45:00Z")))
        #expect(!review.contains(Fixture.utc("2027-02-05T18:45:00Z")))
        #expect(fires["Online check-in opens LH 400"] == Self.dates("2026-12-09T14:00:00Z", "2026-12-10T13:50:00Z"))
        #expect(fires["Mum's birthday"] == Self.dates("2027-01-14T08:00:00Z", "2028-01-14T08:00:00Z"))
        #expect(result.notes.contains { $0.message.contains("ACTION:EMAIL") })
        #expect(result.calendarName != nil)
    }

    @Test func outlookWindowsZoneNamesFindTheirIANAZone() throws {
        let result = try Self.read("outlook.ics")
        let fires = try Self.fires(result)
        let sync = try #require(fires["Project sync"])
        #expect(sync.count == 33)
        #expect(
            Array(sync.prefix(3)) == Self.dates("2026-12-07T07:45:00Z", "2026-12-09T07:45:00Z", "2026-12-14T07:45:00Z"))
        #expect(!sync.contains(Fixture.utc("2026-12-23T07:45:00Z")))
        #expect(Array(sync.suffix(2)) == Self.dates("2027-03-29T06:45:00Z", "2027-03-31T06:45:00Z"))
        #expect(fires["Call with NY office"] == Self.dates("2026-12-10T14:30:00Z"))
        #expect(fires["Office closed"] == Self.dates("2026-12-23T05:00:00Z"))
        #expect(fires["Team lunch"] == nil)
        let zones = Set(
            result.entries.compactMap { entry -> String? in
                if case .rule(_, let zone) = entry.trigger { return zone }
                return nil
            })
        #expect(zones.count == 1)
        #expect(zones.allSatisfy { Zone(identifier: $0)?.secondsFromGMT(for: Self.now) == 3600 })
    }

    @Test func thunderbirdRepeatsRelatedToEndAndToDos() throws {
        let result = try Self.read("thunderbird.ics")
        let fires = try Self.fires(result)
        #expect(fires["Parent-teacher meeting"] == Self.dates("2026-12-07T16:00:00Z", "2026-12-08T15:45:00Z"))
        let yoga = try #require(fires["Yoga class"])
        #expect(yoga.count == 24)
        #expect(
            Array(yoga.prefix(6))
                == Self.dates(
                    "2026-12-01T17:50:00Z", "2026-12-01T17:55:00Z", "2026-12-01T18:00:00Z",
                    "2026-12-08T17:50:00Z", "2026-12-08T17:55:00Z", "2026-12-08T18:00:00Z"))
        #expect(fires["Parking ticket expires"] == Self.dates("2026-12-12T10:45:00Z"))
        #expect(fires["Submit expense report"] == Self.dates("2026-12-15T15:00:00Z"))
        #expect(fires["Renew passport"] == nil)
        #expect(fires["Buy stamps"] == nil)
        #expect(result.notes.contains { $0.message.contains("completed") })
    }

    @Test func appleAbsoluteAlarmsAndRemovedDefaults() throws {
        let fires = try Self.fires(Self.read("apple-calendar.ics"))
        #expect(fires["Haircut"] == Self.dates("2026-12-10T08:00:00Z", "2026-12-11T15:20:00Z"))
        #expect(
            Array(fires["Swimming with Tom"]?.prefix(2) ?? [])
                == Self.dates("2026-12-05T08:00:00Z", "2026-12-19T08:00:00Z"))
        #expect(fires["Lena's birthday"] == Self.dates("2027-01-19T08:00:00Z", "2028-01-19T08:00:00Z"))
        #expect(fires["Christmas market with Anna"] == nil)
    }

    @Test func everyImportedEntryIsValidAndIdsAreUnique() throws {
        for name in [
            "apple-calendar.ics", "calcurse-export.ics", "google-calendar.ics", "outlook.ics", "thunderbird.ics",
            "khal-weekly-exdate-two-alarms.ics",
        ] {
            let result = try Self.read(name)
            try TimelineGroup(id: "calendar", entries: result.entries).validate()
        }
    }

    @Test func aFileThatIsNotICalendarSaysWhereItIsWrong() {
        #expect(throws: ICalendarError.self) {
            try CalendarImport.read("hello", now: Self.now, systemTimeZone: Fixture.berlin)
        }
        let unclosed = "BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VCALENDAR\r\n"
        do {
            _ = try CalendarImport.read(unclosed, now: Self.now, systemTimeZone: Fixture.berlin)
            Issue.record("read a file with a component closed by the wrong END")
        } catch {
            #expect(error.line == 4)
            #expect(error.message.contains("END:VEVENT"))
        }
    }

    @Test func badValuesLeaveOutOneEventAndKeepTheRest() throws {
        let text = """
            BEGIN:VCALENDAR
            BEGIN:VEVENT
            UID:bad
            SUMMARY:Bad start
            DTSTART:2026-12-01
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:-PT5M
            END:VALARM
            END:VEVENT
            BEGIN:VEVENT
            UID:unknown-zone
            SUMMARY:Nowhere
            DTSTART;TZID=Atlantis/Capital:20261201T090000
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:-PT5M
            END:VALARM
            END:VEVENT
            BEGIN:VEVENT
            UID:good
            SUMMARY:Good
            DTSTART:20261201T090000Z
            RRULE:FREQ=DAILY;COUNT=3
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:-PT5M
            END:VALARM
            END:VEVENT
            END:VCALENDAR
            """
        let result = try CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin)
        #expect(result.entries.map(\.id) == ["good-alarm1"])
        #expect(result.notes.count == 2)
        #expect(result.notes[0].line == 5 && result.notes[0].message.contains("DTSTART"))
        #expect(result.notes[1].line == 14 && result.notes[1].message.contains("Atlantis/Capital"))
        #expect(
            try Self.fires(result)["Good"]
                == Self.dates(
                    "2026-12-01T08:55:00Z", "2026-12-02T08:55:00Z", "2026-12-03T08:55:00Z"))
    }

    /// A time zone definition costs bounded work however it is written: an observance repeating every
    /// second is refused at its line, and the event that names the zone is left out with a note.
    @Test func aTimeZoneThatChangesEverySecondIsRefused() throws {
        let text = """
            BEGIN:VCALENDAR
            BEGIN:VTIMEZONE
            TZID:Weird Standard Time
            BEGIN:DAYLIGHT
            DTSTART:20000101T000000
            RRULE:FREQ=SECONDLY
            TZOFFSETFROM:+0100
            TZOFFSETTO:+0200
            END:DAYLIGHT
            END:VTIMEZONE
            BEGIN:VEVENT
            UID:z
            DTSTART;TZID=Weird Standard Time:20261201T090000
            SUMMARY:z
            BEGIN:VALARM
            ACTION:DISPLAY
            TRIGGER:-PT15M
            END:VALARM
            END:VEVENT
            END:VCALENDAR
            """
        let result = try CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin)
        #expect(result.entries.isEmpty)
        #expect(result.notes.map(\.line) == [4, 13])
        #expect(result.notes[0].message.contains("FREQ=YEARLY"))
        #expect(result.notes[1].message.contains("Weird Standard Time"))
    }

    static func calendar(_ body: String) -> String { "BEGIN:VCALENDAR\n" + body + "END:VCALENDAR\n" }

    static func event(_ uid: String, _ lines: String, trigger: String = "TRIGGER:-PT15M") -> String {
        "BEGIN:VEVENT\nUID:\(uid)\nSUMMARY:\(uid)\n\(lines)\nBEGIN:VALARM\nACTION:DISPLAY\n\(trigger)\nEND:VALARM\nEND:VEVENT\n"
    }

    /// An alarm related to the end of an event in a zone found from its VTIMEZONE counts from that end,
    /// for the first event that names the zone as for any later one.
    @Test func anAlarmAtTheEndOfAnEventInAWindowsZone() throws {
        let zone = """
            BEGIN:VTIMEZONE
            TZID:W. Europe Standard Time
            BEGIN:STANDARD
            DTSTART:16011028T030000
            RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10
            TZOFFSETFROM:+0200
            TZOFFSETTO:+0100
            END:STANDARD
            BEGIN:DAYLIGHT
            DTSTART:16010325T020000
            RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3
            TZOFFSETFROM:+0100
            TZOFFSETTO:+0200
            END:DAYLIGHT
            END:VTIMEZONE

            """
        let times =
            "DTSTART;TZID=W. Europe Standard Time:20261201T090000\nDTEND;TZID=W. Europe Standard Time:20261201T110000"
        let text = Self.calendar(
            zone + Self.event("first", times, trigger: "TRIGGER;RELATED=END:-PT15M")
                + Self.event("second", times, trigger: "TRIGGER;RELATED=END:-PT15M"))
        let fires = try Self.fires(CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin))
        #expect(fires == ["first": Self.dates("2026-12-01T09:45:00Z"), "second": Self.dates("2026-12-01T09:45:00Z")])
    }

    /// RFC 5545 counts DTSTART within COUNT even where the rule would not give it; an all-day event's
    /// alarm before its end is a day later and 15 minutes earlier; a time after the year 9999 is left out.
    @Test func countIncludesTheStartAndOddOffsetsStayExact() throws {
        let text = Self.calendar(
            // Tuesday 2026-12-01; the rule gives Fridays: the Tuesday and one Friday.
            Self.event("count", "DTSTART:20261201T090000Z\nRRULE:FREQ=WEEKLY;BYDAY=FR;COUNT=2")
                + Self.event(
                    "allday", "DTSTART;VALUE=DATE:20261207\nRRULE:FREQ=WEEKLY;COUNT=2",
                    trigger: "TRIGGER;RELATED=END:-PT15M")
                + Self.event("far", "DTSTART:99991231T120000Z", trigger: "TRIGGER:P2D"))
        let result = try CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin)
        let fires = try Self.fires(result)
        #expect(fires["count"] == Self.dates("2026-12-01T08:45:00Z", "2026-12-04T08:45:00Z"))
        // The end of Monday 2026-12-07 in Berlin is Tuesday 00:00 (23:00Z), the alarm 15 minutes before it.
        #expect(fires["allday"] == Self.dates("2026-12-07T22:45:00Z", "2026-12-14T22:45:00Z"))
        #expect(result.entries.first { $0.id.hasPrefix("allday") }?.offset == OccurrenceOffset(days: 1, seconds: -900))
        #expect(fires["far"] == nil)
        #expect(result.notes.contains { $0.message.contains("after the year 9999") })
    }

    @Test func contentLinesUnfoldAndTextUnescapes() throws {
        let long = String(repeating: "é, ", count: 40)
        let property = ICalendarProperty("DESCRIPTION", text: long + "line\nnext; end\\")
        let folded = property.serialized
        #expect(folded.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 75 })
        let parsed = try ICalendarComponent.parse("BEGIN:VCALENDAR\r\n" + folded + "END:VCALENDAR\r\n")
        #expect(parsed[0].property("DESCRIPTION")?.text == long + "line\nnext; end\\")
    }

    /// A parameter's values are split at each comma, empty ones too, and written back so that they read
    /// the same (a leading comma was taken for a separator, and `P=,a` read as "a" alone).
    @Test(arguments: [
        ("P=,a", ["", "a"]), ("P=a,,b", ["a", "", "b"]), ("P=", [""]), ("P=a,", ["a", ""]),
        ("P=\"x:y\",,z", ["x:y", "", "z"]), ("P=,,", ["", "", ""]),
    ])
    func parameterValuesKeepTheirEmptyOnes(parameter: String, values: [String]) throws {
        let calendar = "BEGIN:VCALENDAR\r\nX-TEST;\(parameter):value\r\nEND:VCALENDAR\r\n"
        let property = try #require(try ICalendarComponent.parse(calendar).first?.property("X-TEST"))
        #expect(property.parameters["P"] == values)
        let again = try ICalendarComponent.parse("BEGIN:VCALENDAR\r\n" + property.serialized + "END:VCALENDAR\r\n")
        #expect(again.first?.property("X-TEST")?.parameters["P"] == values)
    }

    @Test(arguments: [
        ("-PT15M", 0, -900), ("P1D", 1, 0), ("-P1W", -7, 0), ("-P0DT0H30M0S", 0, -1800), ("PT0S", 0, 0),
        ("-P300S", 0, -300), ("+P1DT2H", 1, 7200),
    ])
    func durations(text: String, days: Int, seconds: Int) {
        #expect(ICalendarDuration.parse(text) == ICalendarDuration(days: days, seconds: seconds))
    }

    @Test(arguments: ["", "P", "-PT", "P1Y", "PT5", "T5M", "P1D2D3", "PT99999999999999H"])
    func notDurations(text: String) {
        #expect(ICalendarDuration.parse(text) == nil)
    }
}

/// `chime export --ics` writes what `chime import` reads back to the same notifications.
@Suite struct CalendarExportTests {
    static let now = CalendarImportTests.now

    /// Exported and read back: every entry fires at the same times up to the horizon.
    static func roundTrip(_ result: CalendarImport, zone: Zone = Fixture.berlin) throws -> (String, CalendarImport) {
        let fires = try CalendarImportTests.fires(result, zone: zone)
        let items = result.entries.map { entry in
            CalendarExport.Item(uid: "\(entry.id)@chime", entry: entry, next: [])
        }
        let text = CalendarExport.document(
            items, name: "round trip", now: now, systemTimeZone: zone, horizon: CalendarImportTests.horizon)
        let back = try CalendarImport.read(text, now: now, systemTimeZone: zone)
        #expect(try CalendarImportTests.fires(back, zone: zone) == fires)
        return (text, back)
    }

    @Test(arguments: [
        "apple-calendar.ics", "calcurse-export.ics", "google-calendar.ics", "outlook.ics", "thunderbird.ics",
        "khal-weekly-exdate-two-alarms.ics", "khal-weekly-endless-alarm15m.ics", "khal-new-york-tz-alarm30m.ics",
    ])
    func everyFixtureSurvivesExportAndImport(name: String) throws {
        let (text, back) = try Self.roundTrip(CalendarImportTests.read(name))
        #expect(back.calendarName == "round trip")
        #expect(text.split(separator: "\r\n").allSatisfy { $0.utf8.count <= 75 })
    }

    @Test func aRepeatingEntryIsOneRepeatingEventWithItsOffsetAsTheAlarm() throws {
        let entry = TimelineEntry(
            id: "review",
            trigger: .rule(.phrase("every month on the first friday at 20:15"), timeZone: "Europe/Berlin"),
            content: .fixed(NotificationContent(summary: "Review, monthly; bring notes")),
            offset: OccurrenceOffset(seconds: -900))
        let text = CalendarExport.document(
            [CalendarExport.Item(uid: "review@chime", entry: entry, next: [])], name: nil, now: Self.now,
            systemTimeZone: Fixture.berlin, horizon: CalendarImportTests.horizon)
        let calendar = try ICalendarComponent.parse(text)[0]
        let event = try #require(calendar.components("VEVENT").first)
        #expect(event.property("RRULE")?.value.contains("BYDAY=1FR") == true)
        #expect(event.property("DTSTART")?.parameter("TZID") == "Europe/Berlin")
        #expect(event.property("SUMMARY")?.text == "Review, monthly; bring notes")
        #expect(event.components("VALARM").first?.property("TRIGGER")?.value == "-PT15M")
        // A VTIMEZONE for the zone, whose offsets are Berlin's.
        let zone = try ICalendarTimeZone(try #require(calendar.components("VTIMEZONE").first))
        for text in ["2026-12-04T19:15:00Z", "2027-07-02T18:15:00Z", "2028-03-26T00:59:59Z", "2028-03-26T01:00:00Z"] {
            #expect(zone.utcOffset(at: Fixture.utc(text)) == Fixture.berlin.secondsFromGMT(for: Fixture.utc(text)))
        }
        let back = try CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin)
        let fires = try CalendarImportTests.fires(back)["Review, monthly; bring notes"] ?? []
        #expect(Array(fires.prefix(2)) == CalendarImportTests.dates("2026-12-04T19:00:00Z", "2027-01-01T19:00:00Z"))
    }

    @Test func anEntryWithAnEndIsExportedAsItsOccurrences() throws {
        let times = CalendarImportTests.dates("2026-12-01T08:00:00Z", "2026-12-02T08:00:00Z")
        let entry = TimelineEntry(
            id: "pill", trigger: .rule(.phrase("every day at 9:00"), timeZone: nil),
            content: .fixed(NotificationContent(summary: "Pill")), maximumOccurrences: 2)
        let text = CalendarExport.document(
            [CalendarExport.Item(uid: "pill@chime", entry: entry, next: times)], name: nil, now: Self.now,
            systemTimeZone: Fixture.berlin, horizon: CalendarImportTests.horizon)
        let back = try CalendarImport.read(text, now: Self.now, systemTimeZone: Fixture.berlin)
        #expect(try CalendarImportTests.fires(back)["Pill"] == times)
    }
}
