import Foundation
import Testing

@testable import ChimeCore

/// now = 2026-11-22T00:00:00+01:00 (a Sunday) in Europe/Berlin.
enum PhraseFixture {
    static let now = Date(timeIntervalSince1970: 1_795_302_000)
    static let berlin = Zone(identifier: "Europe/Berlin")!

    static func rule(_ phrase: String) throws -> DateRule {
        try PhraseParser.rule(phrase, now: now, systemTimeZone: berlin)
    }
}

struct PhraseEquivalence: Sendable, CustomStringConvertible {
    let phrase: String
    let rule: @Sendable () -> DateRule?
    var description: String { phrase }
}

private typealias P = PhraseFixture

/// A phrase resolves to exactly the rule the corresponding DSL expression resolves to.
let phraseEquivalences: [PhraseEquivalence] = [
    PhraseEquivalence(phrase: "every day at 9:00 for 50 days") {
        EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every month on the first friday at 20:15") {
        EveryMonth(starting: .thisMonth).first(.friday).at(hour: 20, minute: 15).rule(
            now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "Every Month On The Last Day At 23:50") {
        EveryMonth().lastDay.at(hour: 23, minute: 50).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every week on the weekend start day at 9:00") {
        EveryWeek().weekendStartDay.at(hour: 9, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "tomorrow at 20:15") {
        Tomorrow().at(hour: 20, minute: 15).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "today at 8:15pm") {
        Today().at(hour: 20, minute: 15).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "on 2026-12-01 at 9:00") {
        ExactDay(year: 2026, month: 12, day: 1).at(hour: 9, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "in 10 minutes") {
        DateBuilder.Moment.now.addingMinutes(10).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every 2 hours") {
        DateBuilder.Interval(everySeconds: 7200).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every 2 seconds") {
        DateBuilder.Interval(everySeconds: 2).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every monday, wednesday and friday at 8:15am") {
        EveryWeek().weekdays([.monday, .wednesday, .friday]).at(hour: 8, minute: 15).rule(
            now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every year on the last day at 23:50") {
        EveryYear().lastMonth.lastDay.at(hour: 23, minute: 50).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every 3 months on the 15th at noon") {
        EveryMonth(stride: 3).day(15).at(hour: 12, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every month on the third friday at 7pm for 12 months") {
        EveryMonth(forMonths: 12).weekday(.third, .friday).at(hour: 19, minute: 0).rule(
            now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every week on thursday at 9:00 for 1 year") {
        // 12 months are not a whole number of weeks: rejected (tested below); weeks are fine:
        EveryWeek(forWeeks: 52).weekday(.thursday).at(hour: 9, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every day at 9:00 until 2026-12-31 in Europe/Berlin") {
        EveryDay().at(hour: 9, minute: 0).until(ExactDay(year: 2026, month: 12, day: 31)).in(timeZone: P.berlin)
            .rule(now: P.now, systemTimeZone: P.berlin)
    },
    PhraseEquivalence(phrase: "every year on march 1 at 9:00 for 10 years") {
        EveryYear(forYears: 10).month(3).firstDay.at(hour: 9, minute: 0).rule(now: P.now, systemTimeZone: P.berlin)
    },
]

@Test(arguments: phraseEquivalences)
func phraseMatchesDSL(_ c: PhraseEquivalence) throws {
    if c.phrase == "every week on thursday at 9:00 for 1 year" {
        #expect(throws: RuleSyntaxError.self) { try P.rule(c.phrase) }
        let weeks = try P.rule("every week on thursday at 9:00 for 52 weeks")
        #expect(weeks == c.rule())
        return
    }
    let rule = try P.rule(c.phrase)
    let expected = try #require(c.rule())
    // Equal occurrences (the phrase may anchor "this month" as "the month of today": same rule).
    let got = Array(rule.occurrences(after: P.now, systemTimeZone: P.berlin).prefix(30))
    let want = Array(expected.occurrences(after: P.now, systemTimeZone: P.berlin).prefix(30))
    #expect(got == want)
    #expect(rule.count == expected.count)
    #expect(rule.timeZone == expected.timeZone)
}

struct PhraseTimeCase: Sendable, CustomStringConvertible {
    let text: String
    let expected: String?  // HH:MM:SS or nil when invalid
    var description: String { text }
}

@Test(arguments: [
    PhraseTimeCase(text: "9:00", expected: "09:00:00"), PhraseTimeCase(text: "09:00", expected: "09:00:00"),
    PhraseTimeCase(text: "20:15", expected: "20:15:00"), PhraseTimeCase(text: "07:30:15", expected: "07:30:15"),
    PhraseTimeCase(text: "0:00", expected: "00:00:00"), PhraseTimeCase(text: "23:59", expected: "23:59:00"),
    PhraseTimeCase(text: "8pm", expected: "20:00:00"), PhraseTimeCase(text: "8:15am", expected: "08:15:00"),
    PhraseTimeCase(text: "8 pm", expected: "20:00:00"), PhraseTimeCase(text: "8:15 AM", expected: "08:15:00"),
    PhraseTimeCase(text: "12am", expected: "00:00:00"), PhraseTimeCase(text: "12pm", expected: "12:00:00"),
    PhraseTimeCase(text: "12:30am", expected: "00:30:00"), PhraseTimeCase(text: "11:59pm", expected: "23:59:00"),
    PhraseTimeCase(text: "noon", expected: "12:00:00"), PhraseTimeCase(text: "midnight", expected: "00:00:00"),
    PhraseTimeCase(text: "13pm", expected: nil), PhraseTimeCase(text: "0am", expected: nil),
    PhraseTimeCase(text: "9", expected: "09:00:00"), PhraseTimeCase(text: "21", expected: "21:00:00"),
    PhraseTimeCase(text: "0", expected: "00:00:00"), PhraseTimeCase(text: "24", expected: nil),
    PhraseTimeCase(text: "9:0", expected: nil),
    PhraseTimeCase(text: "9:000", expected: nil), PhraseTimeCase(text: "24:00", expected: nil),
    PhraseTimeCase(text: "9:60", expected: nil), PhraseTimeCase(text: "9.00", expected: nil),
    PhraseTimeCase(text: "９:００", expected: nil), PhraseTimeCase(text: "-1:00", expected: nil),
])
func phraseTimes(_ c: PhraseTimeCase) throws {
    let phrase = "on 2026-12-01 at \(c.text)"
    guard let expected = c.expected else {
        let error = try #require(throws: RuleSyntaxError.self) { try PhraseParser.parse(phrase) }
        #expect(error.offset == 17)
        #expect(error.expected.contains("time") || error.expected.contains("hour"))
        return
    }
    let rule = try P.rule(phrase)
    let first = try #require(rule.firstOccurrence(systemTimeZone: P.berlin))
    #expect(WallClock.iso8601(first, in: P.berlin) == "2026-12-01T\(expected)+01:00")
}

struct PhraseErrorCase: Sendable, CustomStringConvertible {
    let phrase: String
    let offset: Int
    let token: String
    let expectedContains: String
    var description: String { phrase }
}

@Test(
    arguments: [
        PhraseErrorCase(phrase: "", offset: 0, token: "", expectedContains: "'every'"),
        PhraseErrorCase(phrase: "every", offset: 5, token: "", expectedContains: "a unit such as day"),
        PhraseErrorCase(phrase: "every 0 days at 9:00", offset: 6, token: "0", expectedContains: "a number"),
        PhraseErrorCase(
            phrase: "every 99999999999999999999 days", offset: 6, token: "99999999999999999999",
            expectedContains: "a number"),
        PhraseErrorCase(
            phrase: "in 10 parsecs", offset: 6, token: "parsecs", expectedContains: "minutes, hours or days"),
        PhraseErrorCase(phrase: "every day at 9:00 at 10:00", offset: 18, token: "at", expectedContains: "'for'"),
        PhraseErrorCase(phrase: "every 2 hours at 9:00", offset: 14, token: "at", expectedContains: "'for'"),
        PhraseErrorCase(phrase: "tomorrow at 9:00 for 3 days", offset: 17, token: "for", expectedContains: "'in'"),
        PhraseErrorCase(
            phrase: "every month on the fifth frday at 9:00", offset: 25, token: "frday", expectedContains: "a weekday"),
        PhraseErrorCase(
            phrase: "every week on the weekend middle day at 9:00", offset: 26, token: "middle",
            expectedContains: "'start' or 'end'"),
        PhraseErrorCase(phrase: "on 2026-02-30 at 9:00", offset: 3, token: "2026-02-30", expectedContains: "a date"),
        PhraseErrorCase(
            phrase: "every day at 9:00 until tomorrow", offset: 24, token: "tomorrow", expectedContains: "a date"),
        PhraseErrorCase(
            phrase: "every day at 9:00 starting someday", offset: 27, token: "someday", expectedContains: "next week"),
        PhraseErrorCase(
            phrase: "every year on the 15th at 9:00", offset: 23, token: "at", expectedContains: "'of' and a month"),
        PhraseErrorCase(
            phrase: "every month on the 32nd at 9:00", offset: 19, token: "32nd", expectedContains: "a day of the month"
        ),
        PhraseErrorCase(
            phrase: "every 2 hours for 1 month", offset: 20, token: "month", expectedContains: "fixed length"),
        PhraseErrorCase(
            phrase: "every month on the 1st, at 9:00", offset: 24, token: "at", expectedContains: "a day of the month"),
    ] + phraseCorpusErrors)
func phraseErrors(_ c: PhraseErrorCase) throws {
    let error = try #require(throws: RuleSyntaxError.self) { try PhraseParser.parse(c.phrase) }
    #expect(error.grammar == "phrase")
    #expect(error.input == c.phrase)
    #expect(error.offset == c.offset)
    #expect(error.token == c.token)
    #expect(error.expected.contains(c.expectedContains), "\(error)")
}

@Test func phraseRandomTimesAreStablePerPhrase() throws {
    let phrase = "every day at a random time between 15:00 and 19:00"
    let a = try P.rule(phrase)
    let b = try P.rule(phrase.uppercased())
    #expect(a == b)
    let c = try P.rule("every day at random time between 15:00 and 19:00")
    #expect(a != c)
    let times = a.occurrences(after: P.now, systemTimeZone: P.berlin).prefix(30).map {
        WallClock.iso8601($0, in: P.berlin)
    }
    #expect(times.allSatisfy { $0.dropFirst(11).prefix(8) >= "15:00:00" && $0.dropFirst(11).prefix(8) < "19:00:00" })
    #expect(PhraseParser.seed(for: "abc") == 0xE71F_A219_0541_574B)  // FNV-1a 64 of "abc"
}

@Test func phraseSchedulesRoundTripThroughJSON() throws {
    for phrase in [
        "every month on the first friday at 20:15", "in 10 minutes", "every 2 hours until 2026-12-01",
        "every weekday at 9:00 starting next week in America/New_York",
        "every year on the first friday of march at 9:00",
    ] {
        let schedule = try PhraseParser.parse(phrase)
        let decoded = try JSONDecoder().decode(DateBuilder.Schedule.self, from: JSONEncoder().encode(schedule))
        #expect(decoded == schedule)
        let rule = try #require(schedule.rule(now: P.now, systemTimeZone: P.berlin))
        #expect(try JSONDecoder().decode(DateRule.self, from: JSONEncoder().encode(rule)) == rule)
    }
}

@Test func phraseRelativeRulesUseTheGivenNow() throws {
    let later = P.now.addingTimeInterval(3600)
    let rule = try PhraseParser.rule("in 10 minutes", now: later, systemTimeZone: P.berlin)
    #expect(
        WallClock.iso8601(try #require(rule.firstOccurrence(systemTimeZone: P.berlin)), in: P.berlin)
            == "2026-11-22T01:10:00+01:00")
    #expect(rule.nextOccurrence(after: later.addingTimeInterval(600), systemTimeZone: P.berlin) == nil)
}
