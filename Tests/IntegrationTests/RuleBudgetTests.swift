import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// The work a rule can make chimed do, and the values a rule on the wire can carry, against a real chimed
/// (issue "Isolation", docs/security.md): every occurrence search works within a budget, a rule that
/// cannot be followed is refused with a message that says what to do, `date-rule` fields are
/// range-checked, computed times stay within the instants chimed keeps, and `chime import` is bounded.
///
/// Calls here get a reply timeout of 20 s, well above what each takes: before the budget, these calls
/// held chimed for 20 to 50 s and timed out. No test asserts how fast anything is.
@Suite(.serialized) struct RuleBudgetTests {
    static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
    static let invalidRule = "io.chime.Chime1.Error.InvalidRule"
    static let timeout: Duration = .seconds(20)

    /// February 29 when it is a Monday, at 23:59:59: four times a century, written second by second.
    static let sparse = "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"
    /// The latest instant the API takes, microseconds: 9999-12-31T23:59:59.999999Z.
    static let latestInstant: Int64 = 253_402_300_799_999_999

    static func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue { BusAPITests.record(pairs) }
    static let content = BusAPITests.record(["summary": .string("leap Monday")])

    static func call(_ s: Session, _ member: String, _ arguments: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await s.observer.call(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1", member: member,
            arguments, timeout: timeout)
    }

    static func reschedule(_ s: Session, _ group: String, _ entries: [DBusValue], dryRun: Bool) async throws(DBusError)
        -> [DBusValue]
    {
        try await call(
            s, "Reschedule",
            [
                .string(group), BusAPITests.empty, .array(element: BusAPITests.recordType, entries),
                record(["dry-run": .boolean(dryRun)]),
            ])
    }

    /// The `next` occurrences of every listed item, as instants in microseconds.
    static func listed(_ s: Session, until: Int64, next: UInt32) async throws -> [[Int64]] {
        let reply = try await call(s, "ListPending", [record(["until": .int64(until), "next": .uint32(next)])])
        guard case .array(_, let items)? = reply.first else { return [] }
        return items.map { item in
            guard case .array(_, let values)? = BusAPITests.fields(item)["next"] else { return [] }
            return values.compactMap { if case .int64(let v) = $0 { v } else { nil } }
        }
    }

    /// 2044-02-29T23:59:59Z and the next leap Mondays, in microseconds.
    static let leapMondays: [Int64] = ["2044-02-29", "2072-02-29", "2112-02-29"].map { day in
        let date = ISO8601DateFormatter().date(from: "\(day)T23:59:59Z")!
        return Int64(date.timeIntervalSince1970) * 1_000_000
    }

    // MARK: - Sparse rules

    @Test func aSparseRuleIsServedAtScheduleAndListedWithinTheBudget() async throws {
        try await Session.run { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let trigger = Self.record(["rrule": .string(Self.sparse), "tz": .string("UTC")])
            let reply = try await Self.call(s, "Schedule", [Self.content, trigger])
            guard case .uint64? = reply.first else { throw TestFailure("Schedule gave no id: \(reply)") }
            // The listing to the end of time, 1,000 occurrences asked: every one listed is a leap Monday.
            let lists = try await Self.listed(s, until: Self.latestInstant, next: 1000)
            let occurrences = try #require(lists.first)
            #expect(Array(occurrences.prefix(3)) == Self.leapMondays)
            #expect(occurrences.allSatisfy { $0 <= Self.latestInstant })
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aHundredSparseRulesAreServedAtRescheduleAndItsDryRun() async throws {
        try await Session.run { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let entries = (0..<100).map { n in
                Self.record([
                    "id": .string("leap-\(n)"), "rrule": .string(Self.sparse), "tz": .string("UTC"),
                    "content": Self.content,
                ])
            }
            for dryRun in [true, false] {
                let reply = try await Self.reschedule(s, "leap", entries, dryRun: dryRun)
                guard case .array(_, let changes)? = reply.first else { throw TestFailure("no changes: \(reply)") }
                #expect(changes.count == 100)
            }
            let pending = try await s.client().pending()
            #expect(pending.count == 100)
            #expect(pending.allSatisfy { Int64($0.fireDate.timeIntervalSince1970) * 1_000_000 == Self.leapMondays[0] })
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aRuleWhoseOccurrencesCannotBeFoundWithinTheBudgetIsRefused() async throws {
        try await Session.run { s in
            let pid = try await HostileAppTests.chimedPID(s)
            // Every 7 seconds meets 13:13:13 once a week, always on the same weekday: never on a Friday,
            // which only 400 years of weeks would prove.
            let rule = "FREQ=SECONDLY;INTERVAL=7;BYDAY=FR;BYHOUR=13;BYMINUTE=13;BYSECOND=13"
            let schedule = await HostileAppTests.error("Schedule of a rule too sparse to follow") {
                try await Self.call(
                    s, "Schedule",
                    [Self.content, Self.record(["rrule": .string(rule), "dtstart": .string("2026-11-12T13:13:00")])])
            }
            HostileAppTests.expect(schedule, Self.invalidRule, mentioning: "search budget", "Schedule")
            let entry = Self.record([
                "id": .string("friday"), "rrule": .string(rule), "dtstart": .string("2026-11-12T13:13:00"),
                "content": Self.content,
            ])
            for dryRun in [true, false] {
                let refused = await HostileAppTests.error("Reschedule (dry run \(dryRun))") {
                    try await Self.reschedule(s, "weekly", [entry], dryRun: dryRun)
                }
                // The message names the group and the entry.
                HostileAppTests.expect(refused, Self.invalidRule, mentioning: "entry friday", "Reschedule")
                HostileAppTests.expect(refused, Self.invalidRule, mentioning: "search budget", "Reschedule")
            }
            #expect(try await s.client().pending().isEmpty)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aGroupFileWithARuleChimedCannotFollowFailsWithItsLine() async throws {
        let text = """
            [[entry]]
            id = "friday"
            summary = "never"
            rrule = "FREQ=SECONDLY;INTERVAL=7;BYDAY=FR;BYHOUR=13;BYMINUTE=13;BYSECOND=13"
            dtstart = "2026-11-12T13:13:00"
            """
        try await Session.run { s in
            let file = s.bus.directory.appendingPathComponent("weekly.toml").path
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            for dryRun in [["--dry-run"], []] {
                let checked = try await s.chime(["reschedule", "--file", file] + dryRun)
                #expect(checked.status != 0)
                #expect(checked.stderr.contains("weekly.toml:4"), "\(checked.stderr)")
                #expect(checked.stderr.contains("search budget"), "\(checked.stderr)")
            }
            #expect(try await s.client().pending().isEmpty)
        }
    }

    // MARK: - date-rule from the wire

    @Test func dateRuleFieldsWithInt64ExtremesAreInvalidArgumentAndChimedLives() async throws {
        try await Session.run { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let rule = try #require(
                EveryDay(forDays: 5, starting: .today).at(hour: 9, minute: 0).rule(
                    now: Date(), systemTimeZone: .current))
            let encoded = try JSONEncoder().encode(rule)
            let json = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
            let extreme: [String: Any] = [
                "year": Int64.max, "month": Int64.min, "day": Int64.max, "hour": Int64.min, "minute": Int64.max,
                "second": Int64.min,
            ]
            var variants: [(String, [String: Any])] = []
            for field in ["until", "from"] {
                var copy = json
                copy[field] = extreme
                variants.append((field, copy))
            }
            var time = json
            time["time"] = ["fixed": ["_0": ["hour": Int64.max, "minute": Int64.min, "second": Int64.max]]]
            variants.append(("time", time))
            var pattern = json
            pattern["pattern"] = [
                "days": ["start": Int64.min, "stride": Int64.max, "offsets": [Int64.max, Int64.min]]
            ]
            variants.append(("pattern", pattern))
            for (field, variant) in variants {
                let text = String(decoding: try JSONSerialization.data(withJSONObject: variant), as: UTF8.self)
                let refused = await HostileAppTests.error("date-rule with extreme \(field)") {
                    try await Self.call(s, "Schedule", [Self.content, Self.record(["date-rule": .string(text)])])
                }
                HostileAppTests.expect(refused, Self.invalidArgument, mentioning: "date-rule", "date-rule \(field)")
                HostileAppTests.expect(refused, Self.invalidArgument, mentioning: field, "date-rule \(field)")
            }
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    // MARK: - The year 10000

    @Test func aFirstOccurrenceInTheYear10000IsRefusedAndChimePendingWorks() async throws {
        try await Session.run { s in
            // 9999-12-31T23:00 at UTC-12 is 10000-01-01T11:00Z.
            let fields: KeyValuePairs<String, DBusValue> = [
                "rrule": .string("FREQ=DAILY"), "dtstart": .string("9999-12-31T23:00:00"), "tz": .string("Etc/GMT+12"),
            ]
            let schedule = await HostileAppTests.error("Schedule in the year 10000") {
                try await Self.call(s, "Schedule", [Self.content, Self.record(fields)])
            }
            HostileAppTests.expect(schedule, Self.invalidRule, mentioning: "9999-12-31T23:59:59Z", "Schedule")
            let entry = Self.record([
                "id": .string("late"), "rrule": .string("FREQ=DAILY"), "dtstart": .string("9999-12-31T23:00:00"),
                "tz": .string("Etc/GMT+12"), "content": Self.content,
            ])
            for dryRun in [true, false] {
                let refused = await HostileAppTests.error("Reschedule in the year 10000 (dry run \(dryRun))") {
                    try await Self.reschedule(s, "late", [entry], dryRun: dryRun)
                }
                HostileAppTests.expect(refused, Self.invalidRule, mentioning: "9999-12-31T23:59:59Z", "Reschedule")
            }
            // Hourly from 9999-12-31T10:00 at UTC-12: two occurrences before the limit, the rest after it.
            let late = Self.record([
                "rrule": .string("FREQ=HOURLY"), "dtstart": .string("9999-12-31T10:00:00"),
                "tz": .string("Etc/GMT+12"),
            ])
            _ = try await Self.call(s, "Schedule", [Self.content, late])
            let lists = try await Self.listed(s, until: Self.latestInstant, next: 100)
            #expect(lists.first?.count == 2)
            #expect(lists.joined().allSatisfy { $0 <= Self.latestInstant })
            let pending = try await s.chime(["pending", "--next", "10"])
            #expect(pending.status == 0, "chime pending: \(pending.stderr)")
            #expect(pending.stdout.contains("leap Monday"))
            #expect(!pending.stdout.contains("10000-"))
            try await HostileAppTests.expectServingAfterRestart(s)
            #expect(try await s.chime(["pending"]).status == 0)
        }
    }

    // MARK: - chime import

    static func calendar(_ parts: [String]) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"] + parts + ["END:VCALENDAR"]).joined(separator: "\r\n")
    }

    static func event(_ n: Int, tzid: String, rrule: String?) -> String {
        var lines = [
            "BEGIN:VEVENT", "UID:event-\(n)@test", "SUMMARY:Event \(n)", "DTSTART;TZID=\(tzid):20270301T090000",
        ]
        if let rrule { lines.append("RRULE:\(rrule)") }
        lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M", "END:VALARM", "END:VEVENT"]
        return lines.joined(separator: "\r\n")
    }

    /// A VTIMEZONE with an invented name, whose offsets match no real zone (minutes past the hour).
    static func madeUpZone(_ n: Int) -> String {
        [
            "BEGIN:VTIMEZONE", "TZID:Made Up Standard Time \(n)", "BEGIN:STANDARD", "DTSTART:16011104T020000",
            "RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11", "TZOFFSETFROM:+0\(n % 9)17", "TZOFFSETTO:+0\(n % 9)07",
            "END:STANDARD", "BEGIN:DAYLIGHT", "DTSTART:16010311T020000", "RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3",
            "TZOFFSETFROM:+0\(n % 9)07", "TZOFFSETTO:+0\(n % 9)17", "END:DAYLIGHT", "END:VTIMEZONE",
        ].joined(separator: "\r\n")
    }

    @Test func anIcsOfSparseSeriesIsImportedAndOneChimedCannotFollowIsANote() async throws {
        try await Session.run { s in
            var events = (0..<150).map { Self.event($0, tzid: "Europe/Berlin", rrule: Self.sparse) }
            // Every 7 seconds from 09:00:00 on a Monday meets 13:13:13 on Sundays only: never on a Friday.
            events.append(
                Self.event(
                    150, tzid: "Europe/Berlin",
                    rrule: "FREQ=SECONDLY;INTERVAL=7;BYDAY=FR;BYHOUR=13;BYMINUTE=13;BYSECOND=13"
                ))
            let file = s.bus.directory.appendingPathComponent("leap.ics").path
            try Self.calendar(events).write(toFile: file, atomically: true, encoding: .utf8)
            let dry = try await s.chime(["import", "--dry-run", file])
            #expect(dry.status == 0, "\(dry.stderr)")
            #expect(dry.stdout.split(separator: "\n").filter { $0.hasPrefix("added") }.count == 150)
            // The series chimed cannot follow is left out with its line, the rest imported.
            #expect(dry.stderr.contains("Event 150"), "\(dry.stderr)")
            #expect(dry.stderr.contains("search budget"), "\(dry.stderr)")
            let imported = try await s.chime(["import", file])
            #expect(imported.status == 0, "\(imported.stderr)")
            #expect(try await s.chimeJSON(["pending", "--json"]).count == 150)
        }
    }

    @Test func anIcsOfAThousandMadeUpTimeZonesIsBounded() async throws {
        try await Session.run { s in
            let zones = (0..<1000).map(Self.madeUpZone)
            let events = (0..<1000).map { Self.event($0, tzid: "Made Up Standard Time \($0)", rrule: nil) }
            let file = s.bus.directory.appendingPathComponent("zones.ics").path
            try Self.calendar(zones + events).write(toFile: file, atomically: true, encoding: .utf8)
            let dry = try await s.chime(["import", "--dry-run", file])
            #expect(dry.status == 0, "\(dry.stderr)")
            // No zone matches; the file's time zones ran out of their budget, which the notes say.
            #expect(dry.stderr.contains("steps chime gives them"), "\(dry.stderr.prefix(2000))")
            #expect(dry.stdout.isEmpty)
        }
    }
}
