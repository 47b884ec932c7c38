import Foundation
import Testing

@testable import ChimeCore

/// Every occurrence search works within a `SearchBudget`: sparse rules are found within it (and agree
/// with python-dateutil), searches that need more say so instead of going on, and the scheduler ends an
/// item whose rule it cannot follow.
@Suite struct SearchBudgetTests {
    static let utc = Zone(identifier: "UTC")!
    static let berlin = Zone(identifier: "Europe/Berlin")!
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18

    static func local(_ text: String) -> LocalDateTime { LocalDateTime(iso: text)! }

    static func rrule(_ text: String, dtstart: String = "2026-11-28T10:20:30", zone: Zone = utc) throws
        -> Recurrence
    {
        try Recurrence.parse(
            .rrule(text, dtstart: local(dtstart)), now: now, timeZone: .named(zone.identifier), systemTimeZone: zone)
    }

    // MARK: - Sparse rules, found fast and as dateutil finds them

    /// Sub-daily rules whose BY-parts leave a few days in years, each with a start a little before its
    /// first occurrence (dateutil itself steps through such rules for minutes): each occurrence is found
    /// within one search's budget (before, the issue's rule took seconds per search), and the
    /// occurrences are dateutil's.
    static let sparse: [(rule: String, dtstart: String)] = [
        ("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59", "2044-02-28T12:00:00"),
        ("FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=9;BYMINUTE=30", "2026-11-28T10:20:30"),
        ("FREQ=HOURLY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29", "2026-11-28T10:20:30"),
        ("FREQ=SECONDLY;INTERVAL=7;BYMONTHDAY=13;BYDAY=WE;BYHOUR=13;BYMINUTE=13;BYSECOND=13", "2026-11-12T13:13:00"),
        ("FREQ=MINUTELY;INTERVAL=1001;BYHOUR=23;BYMINUTE=59", "2026-11-28T10:20:30"),
        ("FREQ=SECONDLY;INTERVAL=86399;BYHOUR=3", "2026-11-28T10:20:30"),
        ("FREQ=SECONDLY;BYYEARDAY=366;BYHOUR=12;BYMINUTE=0;BYSECOND=0", "2028-12-30T12:00:00"),
        ("FREQ=SECONDLY;BYMONTHDAY=-1;BYMONTH=2;BYHOUR=0;BYMINUTE=0;BYSECOND=0", "2027-02-27T23:00:00"),
        ("FREQ=DAILY;INTERVAL=3;BYMONTH=2;BYMONTHDAY=29", "2026-11-28T10:20:30"),
        ("FREQ=WEEKLY;INTERVAL=2;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "2026-11-28T10:20:30"),
        ("FREQ=MINUTELY;INTERVAL=13;BYMONTHDAY=31;BYMONTH=12;BYHOUR=22,23", "2026-12-30T22:00:00"),
    ]

    @Test(arguments: sparse)
    func aSparseRuleIsFoundWithinTheBudgetAsDateutilFindsIt(_ rule: String, _ dtstart: String) throws {
        try #require(RRuleOracle.isAvailable)
        let set = try RRuleSet.parse(rule, dtstart: Self.local(dtstart), timeZone: nil)
        var found: [LocalDateTime] = []
        var cursor = Self.local(dtstart)
        while found.count < 4 {
            var budget = SearchBudget()
            guard let next = try set.nextOccurrence(after: cursor, budget: &budget) else { break }
            found.append(next)
            cursor = next
        }
        let answers = try RRuleOracle.run(
            [.init(id: 1, text: rule, dtstart: dtstart, after: nil, inc: false, n: 4, horizon: 2300)],
            secondsPerCase: 10)
        let answer = try #require(answers[1])
        // dateutil may not get through four of them in its time; what it found must agree.
        #expect(!answer.occ.isEmpty)
        #expect(found.prefix(answer.occ.count).map(\.description) == answer.occ)
        #expect(found.count == 4)
    }

    @Test func theIssuesRuleIsAdmittedWithItsFirstOccurrence() throws {
        let rule = try Self.rrule("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59")
        let first = try rule.admissionCheck(after: Self.now, systemTimeZone: Self.utc)
        #expect(WallClock.iso8601(first, in: Self.utc) == "2044-02-29T23:59:59+00:00")
    }

    @Test func aDenseRuleCostsAFewStepsPerOccurrence() throws {
        let rule = try Self.rrule("FREQ=SECONDLY", zone: Self.berlin)
        var budget = SearchBudget()
        var cursor = Self.now
        for _ in 0..<100 {
            cursor = try #require(try rule.nextOccurrence(after: cursor, systemTimeZone: Self.berlin, budget: &budget))
        }
        // Before, each search started two days early: 172,800 candidates, each converted to an instant.
        #expect(budget.spent < 100 * 100)
    }

    // MARK: - Out of budget: a typed answer for every rule form

    @Test func everyRuleFormSaysWhenItsBudgetRanOut() throws {
        let rules: [Recurrence] = [
            try Self.rrule("FREQ=DAILY;BYHOUR=9"),
            try Recurrence.parse(
                .onCalendar("Mon *-*-* 09:00"), now: Self.now, timeZone: .floating, systemTimeZone: Self.utc),
            try Recurrence.parse(
                .phrase("every month on the last friday at 9:00"), now: Self.now, timeZone: .floating,
                systemTimeZone: Self.utc),
            try Self.rrule("FREQ=WEEKLY;BYDAY=MO").shifted(by: OccurrenceOffset(days: -1, seconds: -900)),
        ]
        for rule in rules {
            var ample = SearchBudget()
            #expect(try rule.nextOccurrence(after: Self.now, systemTimeZone: Self.utc, budget: &ample) != nil)
            var tiny = SearchBudget(steps: 5)
            #expect(throws: SearchBudgetExhausted.self) {
                try rule.nextOccurrence(after: Self.now, systemTimeZone: Self.utc, budget: &tiny)
            }
            #expect(tiny.isExhausted)
        }
    }

    @Test func aCountThatMakesEverySearchTooLongIsRefused() throws {
        // COUNT counts from DTSTART, so a later occurrence is found only by expanding from there: the
        // first ones after a recent start are quick, the last would not be.
        let rule = try Self.rrule("FREQ=SECONDLY;COUNT=1000000", dtstart: "2026-11-18T11:00:00")
        do {
            _ = try rule.admissionCheck(after: Self.now, systemTimeZone: Self.utc)
            Issue.record("a million counted seconds were admitted")
        } catch {
            #expect(error.kind == .tooSparse)
            #expect(error.description.contains("COUNT"))
        }
        // Started long ago, even the first occurrence after now is out of reach.
        let old = try Self.rrule("FREQ=SECONDLY;COUNT=1000000", dtstart: "2026-11-10T00:00:00")
        #expect(throws: RuleRefusal.self) { try old.admissionCheck(after: Self.now, systemTimeZone: Self.utc) }
        // A small COUNT is fine.
        let small = try Self.rrule("FREQ=MINUTELY;COUNT=1000", dtstart: "2026-11-18T00:00:00")
        #expect(throws: Never.self) { try small.admissionCheck(after: Self.now, systemTimeZone: Self.utc) }
    }

    @Test func aRuleThatNeverFiresIsToldFromOneThatIsTooSparse() throws {
        let never = try Self.rrule("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30")
        do {
            _ = try never.admissionCheck(after: Self.now, systemTimeZone: Self.utc)
            Issue.record("February 30 was admitted")
        } catch {
            #expect(error.kind == .neverFires)
        }
        // Every second of a whole month is a candidate of one monthly period: more than a search may look at.
        func list(_ range: ClosedRange<Int>) -> String { range.map(String.init).joined(separator: ",") }
        let crowded = try Self.rrule(
            "FREQ=MONTHLY;BYMONTHDAY=\(list(1...31));BYHOUR=\(list(0...23));BYMINUTE=\(list(0...59));"
                + "BYSECOND=\(list(0...59))")
        do {
            _ = try crowded.admissionCheck(after: Self.now, systemTimeZone: Self.utc)
            Issue.record("a monthly rule with 2.6 million candidates a month was admitted")
        } catch {
            #expect(error.kind == .tooSparse)
            #expect(error.description.contains("search budget"))
        }
        // Every 7 seconds lands on 13:13:13 once a week, always on a Wednesday: proving that it never meets
        // a Friday takes 400 years of weeks, more than a search may; refused all the same.
        let impossible = try Self.rrule(
            "FREQ=SECONDLY;INTERVAL=7;BYDAY=FR;BYHOUR=13;BYMINUTE=13;BYSECOND=13", dtstart: "2026-11-12T13:13:00")
        #expect(throws: RuleRefusal.self) { try impossible.admissionCheck(after: Self.now, systemTimeZone: Self.utc) }
    }

    // MARK: - The scheduler ends an item it cannot follow

    @Test func anItemWhoseNextOccurrenceRunsOutOfBudgetIsFinishedWithAReason() throws {
        let rule = try Self.rrule("FREQ=SECONDLY;COUNT=1000000", dtstart: "2026-11-18T11:00:00")
        var scheduler = Scheduler()
        let start = Date(timeIntervalSince1970: 1_795_000_000)
        let fire = try #require(rule.nextOccurrence(after: start, systemTimeZone: Self.utc))
        let item = ScheduledItem(
            id: scheduler.allocateID(), content: NotificationContent(summary: "tick"), fireDate: fire, recurrence: rule)
        _ = scheduler.add(item, now: start)
        // Days later the count is far from reached, but each search expands the rule from its start.
        let later = start.addingTimeInterval(3 * 86_400)
        let step = scheduler.step(now: later)
        #expect(step.finished.map(\.finished) == [.searchExhausted])
        #expect(scheduler.pending.isEmpty)
    }

    // MARK: - Occurrences after the year 9999 are none

    @Test func aFirstOccurrenceInTheYear10000IsNoOccurrenceAndRefused() throws {
        // 9999-12-31T23:00 at UTC-12 is 10000-01-01T11:00Z.
        let zone = Zone(identifier: "Etc/GMT+12")!
        let rule = try Self.rrule("FREQ=DAILY", dtstart: "9999-12-31T23:00:00", zone: zone)
        #expect(rule.nextOccurrence(after: Self.now, systemTimeZone: zone) == nil)
        do {
            _ = try rule.admissionCheck(after: Self.now, systemTimeZone: zone)
            Issue.record("an occurrence in the year 10000 was admitted")
        } catch {
            #expect(error.kind == .afterLatest)
            #expect(error.description.contains("10000-01-01T11:00:00"))
        }
        // The last occurrence before the limit is still one; the one after it ends the rule.
        let late = try Self.rrule("FREQ=HOURLY", dtstart: "9999-12-31T20:00:00", zone: Self.utc)
        let last = try #require(late.nextOccurrence(after: Self.now, systemTimeZone: Self.utc))
        let item = ScheduledItem(
            id: 1, content: NotificationContent(summary: "late"), fireDate: last, recurrence: late)
        let listed = item.occurrencesAfterPending(count: 10, systemTimeZone: Self.utc)
        #expect(listed.count == 3)
        #expect(listed.allSatisfy { $0 <= Recurrence.latestOccurrence })
        // An offset that moves an occurrence of the year 10000 back before it keeps it.
        let shifted = try Self.rrule("FREQ=DAILY", dtstart: "9999-12-31T12:00:00", zone: zone)
            .shifted(by: OccurrenceOffset(days: -1))
        #expect(shifted.nextOccurrence(after: Self.now, systemTimeZone: zone) != nil)
    }

    // MARK: - Decoded date rules and civil-date arithmetic are total

    static let extremes: [Int] = [Int.min, Int.min + 1, -1, 0, 1, Int.max - 1, Int.max]

    @Test func civilDateArithmeticNeverTraps() {
        for a in Self.extremes {
            for b in Self.extremes {
                _ = LocalDateTime.days(fromCivil: a, b, a)
                _ = LocalDateTime.days(fromCivil: a, 2, b)
                _ = LocalDateTime.civil(fromDays: a)
                let t = LocalDateTime(year: a, month: b, day: a, hour: b, minute: a, second: b)
                _ = (t.secondsSinceEpoch, t.dayOfYear, t.isoWeekday, t.adding(days: b), t.adding(seconds: a))
                #expect(!t.isValid || (a == 1 && (b == 1)))
            }
        }
        // Exact where it matters.
        #expect(LocalDateTime.days(fromCivil: 9999, 12, 31) == 2_932_896)
        #expect(LocalDateTime.civil(fromDays: 2_932_896) == (9999, 12, 31))
    }

    @Test func aDecodedDateRuleWithExtremeFieldsIsRefusedByName() throws {
        let good = try JSONEncoder().encode(
            EveryDay(forDays: 5, starting: .today).at(hour: 9, minute: 0).rule(now: Self.now, systemTimeZone: Self.utc)
        )
        var json = try #require(try JSONSerialization.jsonObject(with: good) as? [String: Any])
        let badDate: [String: Any] = [
            "year": Int.max, "month": Int.min, "day": Int.max, "hour": Int.min, "minute": Int.max, "second": Int.min,
        ]
        for field in ["until", "from"] {
            var copy = json
            copy[field] = badDate
            let rule = try JSONDecoder().decode(DateRule.self, from: JSONSerialization.data(withJSONObject: copy))
            #expect(rule.rangeProblem?.hasPrefix(field) == true)
            #expect(rule.nextOccurrence(after: Self.now, systemTimeZone: Self.utc) == nil)
            #expect(throws: RuleSyntaxError.self) {
                try Recurrence.parse(.dateRule(rule), now: Self.now, timeZone: .floating, systemTimeZone: Self.utc)
            }
        }
        json["count"] = Int.max
        json["time"] = ["fixed": ["_0": ["hour": Int.max, "minute": Int.min, "second": 0]]]
        let rule = try JSONDecoder().decode(DateRule.self, from: JSONSerialization.data(withJSONObject: json))
        #expect(rule.rangeProblem?.hasPrefix("time") == true)
    }

    // MARK: - chime import's time zones and series are bounded

    /// A VTIMEZONE with an invented name, whose offsets match no zone and must be compared with all.
    static func madeUpZone(_ n: Int) -> String {
        """
        BEGIN:VTIMEZONE
        TZID:Made Up Standard Time \(n)
        BEGIN:STANDARD
        DTSTART:16011104T020000
        RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11
        TZOFFSETFROM:+0\(n % 9)17
        TZOFFSETTO:+0\(n % 9)07
        END:STANDARD
        BEGIN:DAYLIGHT
        DTSTART:16010311T020000
        RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3
        TZOFFSETFROM:+0\(n % 9)07
        TZOFFSETTO:+0\(n % 9)17
        END:DAYLIGHT
        END:VTIMEZONE
        """
    }

    static func event(_ n: Int, tzid: String, rrule: String? = nil) -> String {
        """
        BEGIN:VEVENT
        UID:event-\(n)@test
        SUMMARY:Event \(n)
        DTSTART;TZID=\(tzid):20270301T090000
        \(rrule.map { "RRULE:\($0)\n" } ?? "")BEGIN:VALARM
        ACTION:DISPLAY
        TRIGGER:-PT15M
        END:VALARM
        END:VEVENT
        """
    }

    static func calendar(_ parts: [String]) -> String {
        (["BEGIN:VCALENDAR", "VERSION:2.0"] + parts + ["END:VCALENDAR"]).joined(separator: "\n")
    }

    @Test func aThousandMadeUpTimeZonesAreMatchedWithinTheFilesBudget() throws {
        let zones = (0..<1000).map(Self.madeUpZone)
        let events = (0..<1000).map { Self.event($0, tzid: "Made Up Standard Time \($0)") }
        let text = Self.calendar(zones + events)
        let read = try CalendarImport.read(text, now: Self.now, systemTimeZone: Self.utc)
        #expect(read.entries.isEmpty)
        // The budget ran out: the zones after that are not even tried, and the notes say why.
        #expect(read.notes.contains { $0.message.contains("steps chime gives them") })
        #expect(read.notes.count >= 1000)
        // Unused definitions cost nothing: they are read when an event names one.
        let unused = try CalendarImport.read(
            Self.calendar(zones + [Self.event(1, tzid: "Europe/Berlin")]), now: Self.now, systemTimeZone: Self.utc)
        #expect(unused.entries.count == 1)
        #expect(unused.notes.isEmpty)
    }

    @Test func aSparseSeriesIsImportedAndAnUnfollowableOneIsANote() throws {
        let sparse = "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"
        let counted = "FREQ=SECONDLY;COUNT=1000000"
        let text = Self.calendar([
            Self.event(1, tzid: "Europe/Berlin", rrule: sparse), Self.event(2, tzid: "Europe/Berlin", rrule: counted),
        ])
        let read = try CalendarImport.read(text, now: Self.now, systemTimeZone: Self.utc)
        #expect(read.entries.map(\.id).count == 1)
        let note = try #require(read.notes.first { $0.message.contains("Event 2") })
        #expect(note.message.contains("COUNT"))
        #expect(note.line > 0)
    }
}
