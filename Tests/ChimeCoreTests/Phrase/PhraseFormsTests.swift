import Foundation
import Testing

@testable import ChimeCore

/// The phrasings people type into reminder apps, each with the one meaning chime gives it, checked as the
/// RRULE it is explained back as (read on 2027-03-10, a Wednesday, in Berlin).
enum PhraseForms {
    static let zone = Zone(identifier: "Europe/Berlin")!
    static let now = Date(timeIntervalSince1970: 1_804_633_200)  // 2027-03-10T00:00:00+01:00

    static func rrule(_ phrase: String, defaults: PhraseDefaults = .standard) throws -> String {
        let recurrence = try PhraseParser.recurrence(phrase, now: now, systemTimeZone: zone, defaults: defaults)
        let explanation = recurrence.explanation(after: now, systemTimeZone: zone)
        return try #require(explanation.rruleText, "\(phrase): \(explanation.noRRule ?? "")")
            .replacingOccurrences(of: "\n", with: " ")
    }
}

@Test(arguments: [
    // A bare hour after "at" is on the 24-hour clock; a part of the day reads it.
    ("every monday at 9", "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0"),
    ("every day at 21", "DTSTART:20270310T210000 RRULE:FREQ=DAILY;BYHOUR=21;BYMINUTE=0;BYSECOND=0"),
    ("every morning at 6", "DTSTART:20270310T060000 RRULE:FREQ=DAILY;BYHOUR=6;BYMINUTE=0;BYSECOND=0"),
    ("every day at 7 in the morning", "DTSTART:20270310T070000 RRULE:FREQ=DAILY;BYHOUR=7;BYMINUTE=0;BYSECOND=0"),
    ("every day at 7 in the evening", "DTSTART:20270310T190000 RRULE:FREQ=DAILY;BYHOUR=19;BYMINUTE=0;BYSECOND=0"),
    ("every evening at 7", "DTSTART:20270310T190000 RRULE:FREQ=DAILY;BYHOUR=19;BYMINUTE=0;BYSECOND=0"),
    ("every night at 11", "DTSTART:20270310T230000 RRULE:FREQ=DAILY;BYHOUR=23;BYMINUTE=0;BYSECOND=0"),
    ("every evening at 7:30", "DTSTART:20270310T193000 RRULE:FREQ=DAILY;BYHOUR=19;BYMINUTE=30;BYSECOND=0"),
    (
        "every friday evening at 8:00",
        "DTSTART:20270312T200000 RRULE:FREQ=WEEKLY;BYDAY=FR;BYHOUR=20;BYMINUTE=0;BYSECOND=0"
    ),
    ("every evening at 7am", "DTSTART:20270310T070000 RRULE:FREQ=DAILY;BYHOUR=7;BYMINUTE=0;BYSECOND=0"),
    ("every morning at 7:00", "DTSTART:20270310T070000 RRULE:FREQ=DAILY;BYHOUR=7;BYMINUTE=0;BYSECOND=0"),
    ("every day at 11 at night", "DTSTART:20270310T230000 RRULE:FREQ=DAILY;BYHOUR=23;BYMINUTE=0;BYSECOND=0"),
    // Several times a day: one rule.
    ("every day at 9am and 5pm", "DTSTART:20270310T090000 RRULE:FREQ=DAILY;BYHOUR=9,17;BYMINUTE=0;BYSECOND=0"),
    (
        "every day at 6am, 12pm and 6pm",
        "DTSTART:20270310T060000 RRULE:FREQ=DAILY;BYHOUR=6,12,18;BYMINUTE=0;BYSECOND=0"
    ),
    ("twice a day at 9 and 21", "DTSTART:20270310T090000 RRULE:FREQ=DAILY;BYHOUR=9,21;BYMINUTE=0;BYSECOND=0"),
    (
        "every day at 9:15 and 17:40",
        "DTSTART:20270310T091500 RRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=15;BYSECOND=0 "
            + "RRULE:FREQ=DAILY;BYHOUR=17;BYMINUTE=40;BYSECOND=0"
    ),
    (
        "every day at 9 and 17 for 3 days",
        "DTSTART:20270310T090000 RRULE:FREQ=DAILY;UNTIL=20270312T170000;BYHOUR=9,17;BYMINUTE=0;BYSECOND=0"
    ),
    // No leading "every".
    ("at 8am every day", "DTSTART:20270310T080000 RRULE:FREQ=DAILY;BYHOUR=8;BYMINUTE=0;BYSECOND=0"),
    (
        "weekdays at 7:15",
        "DTSTART:20270308T071500 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=15;BYSECOND=0"
    ),
    (
        "mondays and fridays at 9",
        "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "the first monday of every month",
        "DTSTART:20270301T090000 RRULE:FREQ=MONTHLY;BYDAY=1MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "on the 1st of every month at 9",
        "DTSTART:20270301T090000 RRULE:FREQ=MONTHLY;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "biweekly on thursday at 15:00",
        "DTSTART:20270311T150000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TH;BYHOUR=15;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "fortnightly on friday",
        "DTSTART:20270312T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    ("once a week on monday", "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0"),
    // Dates as words after until and starting: the next such day.
    (
        "every day until november 28",
        "DTSTART:20270310T090000 RRULE:FREQ=DAILY;UNTIL=20271128T235959;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every day until march 1",
        "DTSTART:20270310T090000 RRULE:FREQ=DAILY;UNTIL=20280301T235959;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    ("every day starting dec 6", "DTSTART:20271206T090000 RRULE:FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0"),
    (
        "every day until the 3rd of april 2027",
        "DTSTART:20270310T090000 RRULE:FREQ=DAILY;UNTIL=20270403T235959;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    // Units and words.
    ("every 3 hrs", "DTSTART:20270310T020000Z RRULE:FREQ=HOURLY;INTERVAL=3"),
    ("every half hour", "DTSTART:20270309T233000Z RRULE:FREQ=MINUTELY;INTERVAL=30"),
    ("every quarter hour", "DTSTART:20270309T231500Z RRULE:FREQ=MINUTELY;INTERVAL=15"),
    (
        "every quarter on the 1st",
        "DTSTART:20270301T090000 RRULE:FREQ=MONTHLY;INTERVAL=3;BYMONTHDAY=1;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    ("every 2nd day", "DTSTART:20270310T090000 RRULE:FREQ=DAILY;INTERVAL=2;BYHOUR=9;BYMINUTE=0;BYSECOND=0"),
    (
        "every third week",
        "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;INTERVAL=3;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    // Day ranges and lists.
    (
        "every mon-fri at 7:00",
        "DTSTART:20270308T070000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every monday to friday at 7:30",
        "DTSTART:20270308T073000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=30;BYSECOND=0"
    ),
    (
        "every fri-mon at 10",
        "DTSTART:20270308T100000 RRULE:FREQ=WEEKLY;BYDAY=MO,FR,SA,SU;BYHOUR=10;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every monday wednesday friday at 7am",
        "DTSTART:20270308T070000 RRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR;BYHOUR=7;BYMINUTE=0;BYSECOND=0"
    ),
    // Exceptions and windows.
    (
        "every weekday except friday at 8",
        "DTSTART:20270308T080000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH;BYHOUR=8;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every day except weekends at 7",
        "DTSTART:20270308T070000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=7;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every day except sunday",
        "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every hour from 9am to 5pm",
        "DTSTART:20270310T090000 RRULE:FREQ=DAILY;BYHOUR=9,10,11,12,13,14,15,16,17;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every 2 hours from 8 to 20 on weekdays",
        "DTSTART:20270308T080000 RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=8,10,12,14,16,18,20;BYMINUTE=0;BYSECOND=0"
    ),
    // Weekdays of the month and days from its end.
    (
        "every last weekday of the month",
        "DTSTART:20270331T090000 RRULE:FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every first weekday of the month",
        "DTSTART:20270301T090000 RRULE:FREQ=MONTHLY;BYSETPOS=1;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every 3rd weekday",
        "DTSTART:20270303T090000 RRULE:FREQ=MONTHLY;BYSETPOS=3;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every month on the second to last day",
        "DTSTART:20270330T090000 RRULE:FREQ=MONTHLY;BYMONTHDAY=-2;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
    (
        "every penultimate day of the month",
        "DTSTART:20270330T090000 RRULE:FREQ=MONTHLY;BYMONTHDAY=-2;BYHOUR=9;BYMINUTE=0;BYSECOND=0"
    ),
])
func phraseFormsMeanOneThing(_ phrase: String, _ rrule: String) throws {
    #expect(try PhraseForms.rrule(phrase) == rrule, "\(phrase)")
}

/// chime.toml can read `biweekly` as twice a week; the days it names then say when.
@Test func biweeklyCanBeReadAsTwiceAWeek() throws {
    let twice = PhraseDefaults(biweekly: .twiceAWeek)
    #expect(
        try PhraseForms.rrule("biweekly on monday and thursday at 9", defaults: twice)
            == "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;BYDAY=MO,TH;BYHOUR=9;BYMINUTE=0;BYSECOND=0")
    let error = try #require(throws: RuleSyntaxError.self) {
        try PhraseParser.parse("biweekly on thursday", defaults: twice)
    }
    #expect(error.expected.contains("two days"))
}

/// A DateRule holds one time of day: `PhraseParser.rule` refuses a phrase with several rather than drop
/// the later ones, and `recurrence` keeps them all.
@Test func aDateRuleIsNeverGivenHalfOfSeveralTimes() throws {
    let error = try #require(throws: RuleSyntaxError.self) {
        try PhraseParser.rule("every day at 9 and 17", now: PhraseForms.now, systemTimeZone: PhraseForms.zone)
    }
    #expect(error.expected.contains("one time of day"))
    #expect(
        try PhraseParser.rule("every day at 9", now: PhraseForms.now, systemTimeZone: PhraseForms.zone).time
            == .fixed(TimeOfDay(hour: 9, minute: 0)))
}

/// Property: every phrase built from the grammar's parts (periods × times × modifiers) that is understood
/// is explained back as an RRULE which, read again as chimed reads an RRULE, fires at the phrase's
/// instants, across a daylight-saving change (New York's and Berlin's, alternately).
@Test(arguments: [
    "day", "other day", "3 days", "2nd day", "monday", "mon-fri", "monday wednesday friday", "weekday",
    "weekend", "2 weeks on tuesday", "month on the 15th", "month on the last weekday", "3rd weekday",
    "month on the second to last day", "3rd friday", "last day", "quarter on the 1st", "jan 27th",
    "year on the last friday of march", "evening",
])
func everyComposedPhraseRoundTripsThroughItsRRule(period: String) throws {
    let zoneName = period.count % 2 == 0 ? "Europe/Berlin" : "America/New_York"
    let zone = try #require(Zone(identifier: zoneName))
    let times = ["", " at 9", " at 7:30pm", " at 9 and 17", " at 8:15 and 20:45", " at 2:30"]
    let modifiers = ["", " until november 28", " starting dec 6", " except friday", " in Asia/Kolkata"]
    var understood = 0
    var failures: [String] = []
    for time in times {
        for modifier in modifiers {
            let phrase = "every \(period)\(time)\(modifier)"
            guard let recurrence = try? PhraseParser.recurrence(phrase, now: PhraseForms.now, systemTimeZone: zone)
            else { continue }
            understood += 1
            let explanation = recurrence.explanation(after: PhraseForms.now, systemTimeZone: zone)
            guard let text = explanation.rruleText else {
                failures.append("\(phrase): no RRULE (\(explanation.noRRule ?? ""))")
                continue
            }
            let again = try Recurrence.parse(
                .rrule(text, dtstart: nil), now: PhraseForms.now, timeZone: .floating, systemTimeZone: zone)
            let a = PhraseCorpus.occurrences(of: recurrence, after: PhraseForms.now, zone: zone, count: 12)
            let b = PhraseCorpus.occurrences(of: again, after: PhraseForms.now, zone: zone, count: 12)
            if a != b { failures.append("\(phrase) as \(text)") }
        }
    }
    // Only "except" is refused, and only after a period of months or years.
    #expect(understood >= times.count * (modifiers.count - 1), "only \(understood) phrases were understood")
    #expect(failures.isEmpty, "\(failures.count) of \(understood):\n\(failures.prefix(10).joined(separator: "\n"))")
}

/// chime.toml can anchor a rule of every few weeks at its first day from today on (Todoist's reading)
/// rather than at the week containing today; the RRULE's DTSTART says which was taken.
@Test func everyOtherWeekCanStartWithItsFirstDay() throws {
    let first = PhraseDefaults(everyOtherWeek: .firstOccurrence)
    // Read on Wednesday 2027-03-10: this week's Monday has passed.
    #expect(
        try PhraseForms.rrule("every other monday")
            == "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0")
    #expect(
        try PhraseForms.rrule("every other monday", defaults: first)
            == "DTSTART:20270315T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0")
    // Friday is still ahead this week, so both anchors agree.
    #expect(try PhraseForms.rrule("biweekly on friday", defaults: first) == PhraseForms.rrule("biweekly on friday"))
    // `starting` names the anchor itself.
    #expect(
        try PhraseForms.rrule("every 2 weeks on monday starting 2027-03-08", defaults: first)
            == "DTSTART:20270308T090000 RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;BYHOUR=9;BYMINUTE=0;BYSECOND=0")
}
