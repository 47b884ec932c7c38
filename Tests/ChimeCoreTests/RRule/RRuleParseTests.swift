import Foundation
import Testing

@testable import ChimeCore

@Suite struct RRuleParseTests {
    @Test func parsesEveryPart() throws {
        let rule = try RRule.parse(
            "RRULE:FREQ=YEARLY;INTERVAL=2;COUNT=10;BYMONTH=1,2;BYMONTHDAY=-1,15;BYYEARDAY=100,-1;BYWEEKNO=20,-1;"
                + "BYDAY=MO,+2TU,-1FR;BYHOUR=9;BYMINUTE=0,30;BYSECOND=15;BYSETPOS=1,-1;WKST=SU")
        #expect(rule.frequency == .yearly)
        #expect(rule.interval == 2)
        #expect(rule.count == 10)
        #expect(rule.byMonth == [1, 2])
        #expect(rule.byMonthDay == [-1, 15])
        #expect(rule.byYearDay == [100, -1])
        #expect(rule.byWeekNo == [20, -1])
        #expect(
            rule.byDay == [.init(.monday), .init(.tuesday, ordinal: 2), .init(.friday, ordinal: -1)])
        #expect(rule.byHour == [9])
        #expect(rule.byMinute == [0, 30])
        #expect(rule.bySecond == [15])
        #expect(rule.bySetPos == [1, -1])
        #expect(rule.weekStart == .sunday)
    }

    /// A set's rules are compiled once and kept: a copy changed after a query answers by its new start,
    /// rules and zone, and the original by its own; the kept rules take no part in equality.
    @Test func aSetChangedAfterAQueryAnswersByWhatItIsNow() throws {
        let start = try #require(LocalDateTime(iso: "2026-01-05T09:00:00"))
        let daily = try RRuleSet.parse("FREQ=DAILY;COUNT=3", dtstart: start, timeZone: nil)
        let days = daily.occurrences(limit: 5).map(\.description)
        #expect(days == ["2026-01-05T09:00:00", "2026-01-06T09:00:00", "2026-01-07T09:00:00"])
        var weekly = daily
        weekly.rules = [try RRule.parse("FREQ=WEEKLY;COUNT=2")]
        #expect(weekly.occurrences(limit: 5).map(\.description) == ["2026-01-05T09:00:00", "2026-01-12T09:00:00"])
        var later = weekly
        later.dtstart = try #require(LocalDateTime(iso: "2026-02-02T18:30:00"))
        #expect(later.occurrences(limit: 5).map(\.description) == ["2026-02-02T18:30:00", "2026-02-09T18:30:00"])
        var zoned = try RRuleSet.parse("DTSTART;TZID=UTC:20260105T090000\nRRULE:FREQ=DAILY;UNTIL=20260106T080000Z")
        #expect(zoned.occurrences(limit: 5).map(\.description) == ["2026-01-05T09:00:00"])
        // The same UTC UNTIL is an hour later on Berlin's wall clock in winter.
        zoned.timeZoneIdentifier = "Europe/Berlin"
        #expect(zoned.occurrences(limit: 5).map(\.description) == ["2026-01-05T09:00:00", "2026-01-06T09:00:00"])
        #expect(daily.occurrences(limit: 5).map(\.description) == days)
        let fresh = try RRuleSet.parse("FREQ=DAILY;COUNT=3", dtstart: start, timeZone: nil)
        #expect(fresh == daily)
        #expect(try JSONDecoder().decode(RRuleSet.self, from: JSONEncoder().encode(daily)) == fresh)
    }

    @Test func isCaseInsensitiveLikeDateutil() throws {
        #expect(try RRule.parse("rrule:freq=weekly;byday=mo,we") == RRule.parse("RRULE:FREQ=WEEKLY;BYDAY=MO,WE"))
    }

    @Test(arguments: [
        "FREQ=DAILY;UNTIL=20261231", "FREQ=DAILY;UNTIL=20261231T235959", "FREQ=DAILY;UNTIL=20261231T235959Z",
    ])
    func keepsTheUntilForm(text: String) throws {
        let rule = try RRule.parse(text)
        #expect(rule.rfcString == text)
    }

    static let roundTrip = [
        "FREQ=DAILY", "FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=TU,TH", "FREQ=MONTHLY;COUNT=10;BYDAY=1FR",
        "FREQ=MONTHLY;BYMONTHDAY=-3", "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO",
        "FREQ=MONTHLY;BYSETPOS=-2;BYDAY=MO,TU,WE,TH,FR",
        "FREQ=MINUTELY;INTERVAL=20;BYHOUR=9,10,11,12,13,14,15,16", "FREQ=YEARLY;BYMONTH=3,1,3;BYDAY=+2SU",
        "FREQ=SECONDLY;UNTIL=20300101T000000Z;BYSECOND=0,30", "freq=yearly;interval=1;bymonth=2;bymonthday=29",
    ]

    @Test(arguments: roundTrip)
    func roundTripsThroughItsText(text: String) throws {
        let rule = try RRule.parse(text)
        #expect(try RRule.parse(rule.rfcString) == rule)
        #expect(try RRule.parse("RRULE:" + rule.rfcString) == rule)
        #expect(rule.description == rule.rfcString)
    }

    @Test func randomRulesRoundTrip() throws {
        var g = SplitMix64(seed: 42)
        var parsed = 0
        for _ in 0..<2000 {
            let c = RRuleRandomCase.make(&g)
            guard let set = try? RRuleSet.parse(c.text, dtstart: c.dtstart) else { continue }
            parsed += 1
            for rule in set.rules { #expect(try RRule.parse(rule.rfcString) == rule) }
            let again = try RRuleSet.parse(set.rfcString)
            #expect(again == set, "\(c.text) -> \(set.rfcString)")
            let data = try JSONEncoder().encode(set)
            #expect(try JSONDecoder().decode(RRuleSet.self, from: data) == set)
        }
        #expect(parsed > 1500)
    }

    @Test func setParsesContentLines() throws {
        let set = try RRuleSet.parse(
            """
            DTSTART:20260105T090000
            RRULE:FREQ=WEEKLY;BYDAY=MO,WE
            EXDATE:20260107T090000,20260112T090000
            RDATE:20260110T120000
            """)
        #expect(set.dtstart == LocalDateTime(year: 2026, month: 1, day: 5, hour: 9))
        #expect(set.rules.count == 1)
        #expect(set.exdates.count == 2)
        #expect(set.rdates == [LocalDateTime(year: 2026, month: 1, day: 10, hour: 12)])
        #expect(
            set.occurrences(limit: 4).map(\.description) == [
                "2026-01-05T09:00:00", "2026-01-10T12:00:00", "2026-01-14T09:00:00", "2026-01-19T09:00:00",
            ])
        #expect(try RRuleSet.parse(set.rfcString) == set)
    }

    @Test func dtstartLineWinsOverTheArgument() throws {
        let set = try RRuleSet.parse(
            "DTSTART:20260101T080000\nRRULE:FREQ=DAILY", dtstart: LocalDateTime(year: 2000, month: 1, day: 1))
        #expect(set.dtstart == LocalDateTime(year: 2026, month: 1, day: 1, hour: 8))
    }

    @Test func utcUntilNeedsAZoneWithAFloatingStart() throws {
        let text = "FREQ=DAILY;UNTIL=20260110T120000Z"
        let start = LocalDateTime(year: 2026, month: 1, day: 1, hour: 9)
        #expect(throws: RuleSyntaxError.self) { try RRuleSet.parse(text, dtstart: start) }
        let paris = try #require(Zone(identifier: "Europe/Paris"))
        let set = try RRuleSet.parse(text, dtstart: start, timeZone: paris)
        // 12:00 UTC is 13:00 in Paris in January, so 09:00 on the 10th is still included.
        #expect(set.rules[0].until == .local(LocalDateTime(year: 2026, month: 1, day: 10, hour: 13)))
        #expect(set.occurrences(limit: 100).count == 10)
    }

    @Test func zonedStartExpandsOnItsWallClock() throws {
        let set = try RRuleSet.parse(
            "DTSTART;TZID=Europe/Paris:20260320T090000\nRRULE:FREQ=DAILY;UNTIL=20260330T080000Z")
        #expect(set.timeZoneIdentifier == "Europe/Paris")
        // 08:00 UTC on March 30 is 10:00 in Paris (summer time began on the 29th): the 30th is included.
        #expect(set.occurrences(limit: 100).count == 11)
        #expect(try RRuleSet.parse(set.rfcString) == set)
        let utc = try RRuleSet.parse("DTSTART:20260320T090000Z\nRRULE:FREQ=DAILY;UNTIL=20260322T090000Z")
        #expect(utc.timeZoneIdentifier == "UTC")
        #expect(utc.occurrences(limit: 10).count == 3)
        #expect(try RRuleSet.parse(utc.rfcString) == utc)
    }

    @Test func zonedSetsAgreeWithDateutil() throws {
        try #require(RRuleOracle.isAvailable)
        let texts = [
            "DTSTART;TZID=Europe/Paris:20260320T090000\nRRULE:FREQ=DAILY;UNTIL=20260330T080000Z",
            "DTSTART;TZID=America/New_York:19970902T090000\nRRULE:FREQ=DAILY;UNTIL=19971224T000000Z",
            "DTSTART:20260320T090000Z\nRRULE:FREQ=WEEKLY;BYDAY=MO,FR;UNTIL=20260501T090000Z\nEXDATE:20260323T090000Z",
            "DTSTART;TZID=Europe/Paris:20260320T090000\nRRULE:FREQ=DAILY;COUNT=5\n"
                + "EXDATE;TZID=Europe/Paris:20260322T090000",
        ]
        let answers = try RRuleOracle.run(
            texts.enumerated().map { .init(id: $0, text: $1, dtstart: nil, after: nil, inc: false, n: 200) })
        for (i, text) in texts.enumerated() {
            let ours = try RRuleSet.parse(text).occurrences(limit: 200).map(\.description)
            #expect(ours == answers[i]?.occ, "\(text)")
        }
    }
}
