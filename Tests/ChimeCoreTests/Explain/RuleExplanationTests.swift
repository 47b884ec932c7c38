import Foundation
import Testing

@testable import ChimeCore

/// The RRULE a phrase is explained as fires exactly when python-dateutil says the phrase's hand-written
/// RRULE does (the phrase corpus's oracle): the explanation is checked against an independent answer, not
/// against the phrase's own expansion.
@Test(arguments: PhraseCorpus.lines)
func phraseExplainedAsRRuleAgreesWithDateutil(_ line: PhraseCorpusLine) throws {
    let zone = try #require(Zone(identifier: line.zone))
    let now = try line.now()
    let explanation = try PhraseParser.recurrence(line.phrase, now: now, systemTimeZone: zone)
        .explanation(after: now, systemTimeZone: zone)
    #expect(!explanation.words.isEmpty)
    let set = try #require(explanation.rrule, "\(line.phrase): no RRULE (\(explanation.noRRule ?? "no reason"))")
    // The printed text is what a user copies: parse it back, as `chime next --rrule` would.
    let text = set.rfcString
    let parsed = try RRuleSet.parse(text, timeZone: zone)
    let recurrence = Recurrence.rrule(parsed, timeZone: parsed.timeZoneIdentifier.map { .named($0) } ?? .floating)
    let wanted = line.expected.count < PhraseCorpus.shown ? line.expected.count + 1 : PhraseCorpus.shown
    var got: [Int] = []
    var cursor = now
    while got.count < wanted, let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: zone) {
        got.append(Int(next.timeIntervalSince1970))
        cursor = next
    }
    #expect(got == line.expected, "\(line.phrase) as \(text)")
}

/// A phrase RRULE cannot say gets the reason instead.
@Test func phrasesWithoutAnRRuleFormSayWhy() throws {
    let zone = try #require(Zone(identifier: "Europe/Berlin"))
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let random = try PhraseParser.rule(
        "every day at random time between 15:00 and 19:00", now: now, systemTimeZone: zone)
    let explained = Recurrence.dateRule(random).explanation(after: now, systemTimeZone: zone)
    #expect(explained.rrule == nil)
    #expect(explained.noRRule == "a random time of day has no RRULE form")
    #expect(explained.words == "every day at a random time between 15:00 and 19:00")
}

/// Words for phrases read as a person would say them; the expected texts are written by hand.
@Test(arguments: [
    ("every weekday at 9:00", "every weekday at 09:00"),
    ("every monday, wednesday and friday at 7:30", "every Monday, Wednesday and Friday at 07:30"),
    ("every 2 weeks on monday and thursday at 8:30", "every 2 weeks on Monday and Thursday at 08:30"),
    ("every month on the first friday at 20:15", "every month on the first Friday at 20:15"),
    ("every 1st and 15th at 9:00", "every month on the 1st and the 15th at 09:00"),
    ("every jan 27th", "every year on January 27th at 09:00"),
    ("every 3 hours", "every 3 hours"),
    ("every 90 minutes", "every 90 minutes"),
    ("every day at 9:00 for 3 days", "every day at 09:00, 3 times"),
])
func phraseWords(_ phrase: String, _ words: String) throws {
    let utc = try #require(Zone(identifier: "UTC"))
    let rule = try PhraseParser.rule(phrase, now: Date(timeIntervalSince1970: 1_795_000_000), systemTimeZone: utc)
    #expect(rule.summary == words)
}

/// RRULEs in words; each text is written by hand from RFC 5545's meaning of the rule.
@Test(arguments: [
    ("FREQ=MONTHLY;BYDAY=1FR;BYHOUR=20;BYMINUTE=15", "every month on the first Friday at 20:15"),
    ("FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=9;BYMINUTE=0", "every Monday, Wednesday and Friday at 09:00"),
    ("FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR", "every weekday at 09:00"),
    ("FREQ=WEEKLY", "every week on Tuesday at 09:00"),
    ("FREQ=MONTHLY;BYMONTHDAY=1,15", "every month on the 1st and 15th at 09:00"),
    ("FREQ=MONTHLY;BYMONTHDAY=-1", "every month on the last day at 09:00"),
    ("FREQ=MONTHLY;BYMONTHDAY=31", "every month on the 31st (months without it are skipped) at 09:00"),
    ("FREQ=YEARLY", "every year on December 1st at 09:00"),
    ("FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU;BYHOUR=2;BYMINUTE=30", "every year in March on the last Sunday at 02:30"),
    ("FREQ=YEARLY;BYDAY=20MO", "every year on the 20th Monday of the year at 09:00"),
    ("FREQ=YEARLY;BYYEARDAY=1,-1", "every year on the first and last days of the year at 09:00"),
    ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "every month on the last weekday at 09:00"),
    ("FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR", "every month on the 13th when it is a Friday at 09:00"),
    ("FREQ=HOURLY;BYMINUTE=0,30", "every hour at :00 and :30"),
    ("FREQ=HOURLY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0,30", "every hour at minutes 00 and 30 of hours 09 to 17"),
    ("FREQ=MINUTELY;INTERVAL=15", "every 15 minutes at second 00 from 2026-12-01"),
    ("FREQ=WEEKLY;INTERVAL=2;COUNT=5", "every 2 weeks on Tuesday at 09:00 from 2026-12-01, 5 times"),
    ("FREQ=DAILY;UNTIL=20261224T235959", "every day at 09:00 until 2026-12-24 23:59:59"),
])
func rruleWords(_ rule: String, _ words: String) throws {
    let set = try RRuleSet.parse(rule, dtstart: LocalDateTime(year: 2026, month: 12, day: 1, hour: 9))
    #expect(set.summary == words)
}

@Test func rruleSetWordsNameExtraAndExcludedDates() throws {
    let set = try RRuleSet.parse(
        "DTSTART:20261201T090000\nRRULE:FREQ=DAILY;COUNT=3\nRDATE:20261225T100000\nEXDATE:20261202T090000")
    #expect(
        set.summary == "every day at 09:00 from 2026-12-01, 3 times, and on 2026-12-25 10:00, except 2026-12-02 09:00")
}

/// systemd calendar events and their RRULE form: both fire at the same instants (the OnCalendar engine is
/// the one checked against `systemd-analyze calendar`), in UTC and in a zone with daylight saving.
@Test(arguments: [
    "Mon..Fri *-*-* 09:00", "*:0/15", "*-*-01 00:00:00", "2027-*-* 12:00 Europe/Berlin", "*-02~03", "hourly",
    "Sat,Sun 10:00:30", "*-*-* *:*:0/10", "quarterly", "*-1,4,7,10-15 08:00", "Fri *-*-13 13:13",
    "2027..2028-03-* 09:30 UTC", "*-*~01 18:00", "*-*-* 06,18:00", "Mon *-*-1..7 10:00", "*-12-25",
    "minutely", "*:*:*",
])
func onCalendarExplainedAsRRuleFiresAtTheSameInstants(_ expression: String) throws {
    let spec = try CalendarSpec.parse(expression)
    for zoneName in ["UTC", "America/New_York"] {
        let zone = try #require(Zone(identifier: zoneName))
        let after = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
        let explanation = Recurrence.onCalendar(spec).explanation(after: after, systemTimeZone: zone)
        let set = try #require(explanation.rrule, "\(expression): \(explanation.noRRule ?? "")")
        let recurrence = Recurrence.rrule(set, timeZone: set.timeZoneIdentifier.map { .named($0) } ?? .floating)
        var expected: [Date] = []
        var got: [Date] = []
        var a = after
        var b = after
        for _ in 0..<40 {
            guard let e = spec.nextElapse(after: a, defaultTimeZone: zone) else { break }
            expected.append(e)
            a = e
            if let g = recurrence.nextOccurrence(after: b, systemTimeZone: zone) {
                got.append(g)
                b = g
            }
        }
        #expect(!expected.isEmpty)
        #expect(got == expected, "\(expression) in \(zoneName) as \(set.rfcString)")
    }
}

@Test(arguments: [
    ("*-*-* 09:00", "every day at 09:00"),
    ("Mon..Fri *-*-* 09:00", "every weekday at 09:00"),
    ("*:0/15", "every hour at :00, :15, :30 and :45"),
    ("2027-*-* 12:00 Europe/Berlin", "every day at 12:00 in 2027 (Europe/Berlin)"),
    ("*-02~03", "every year in February on the third to last day at 00:00"),
    ("*:*:*", "every second"),
])
func onCalendarWords(_ expression: String, _ words: String) throws {
    let explanation = Recurrence.onCalendar(try CalendarSpec.parse(expression))
        .explanation(
            after: Date(timeIntervalSince1970: 1_795_000_000), systemTimeZone: try #require(Zone(identifier: "UTC"))
        )
    #expect(explanation.words == words)
}

@Test(arguments: [
    ("*:*:0.5", "fractions of a second have no RRULE form"),
    ("2027,2029-*-* 00:00", "a list of years has no RRULE form"),
])
func onCalendarWithoutAnRRuleFormSaysWhy(_ expression: String, _ reason: String) throws {
    let explanation = Recurrence.onCalendar(try CalendarSpec.parse(expression))
        .explanation(
            after: Date(timeIntervalSince1970: 1_795_000_000), systemTimeZone: try #require(Zone(identifier: "UTC"))
        )
    #expect(explanation.rrule == nil)
    #expect(explanation.noRRule == reason)
    #expect(explanation.words.hasPrefix("the systemd calendar event "))
}

/// An RRULE whose DTSTART names a zone (`TZID=` or a UTC `Z`) fires on that zone's clock, whatever zone the
/// caller gives (as a phrase's `in ZONE` does): the RRULE printed for a rule in New York means New York.
@Test func anRRuleWithItsOwnZoneKeepsIt() throws {
    let berlin = try #require(Zone(identifier: "Europe/Berlin"))
    let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z
    for (text, expected) in [
        // 09:00 in New York is 14:00 UTC in November; read on Berlin's clock it would be 08:00 UTC tomorrow.
        ("DTSTART;TZID=America/New_York:20261118T090000\nRRULE:FREQ=DAILY", 1_795_010_400),
        // 12:00 UTC; on Berlin's clock, 11:00 UTC, which is already past.
        ("DTSTART:20261118T120000Z\nRRULE:FREQ=DAILY", 1_795_003_200),
    ] {
        let recurrence = try Recurrence.parse(
            .rrule(text, dtstart: nil), now: now, timeZone: .named("Europe/Berlin"), systemTimeZone: berlin)
        let next = recurrence.nextOccurrence(after: now, systemTimeZone: berlin)
        #expect(next == Date(timeIntervalSince1970: TimeInterval(expected)), "\(text)")
    }
}
