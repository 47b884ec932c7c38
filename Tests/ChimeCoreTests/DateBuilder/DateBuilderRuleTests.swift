import Foundation
import Testing

@testable import ChimeCore

private typealias F = DateBuilderFixture

private func epoch(_ seconds: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

// MARK: DST policy applied by rules (expected instants from python zoneinfo).

@Test func dateBuilderRuleSpringForwardGapDefaultAndSkip() throws {
    // Every day at 02:30 in Berlin around 2026-03-29 (02:00→03:00).
    let now = epoch(1_774_566_000)  // 2026-03-27T00:00:00+01:00
    let expression = EveryDay(forDays: 3, starting: .tomorrow).at(hour: 2, minute: 30).in(timeZone: F.berlin)
    let dates = expression.dates(now: now, systemTimeZone: F.berlin).map { F.iso($0) }
    #expect(dates == ["2026-03-28T02:30:00+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"])
    let skipped = expression.dstPolicy(DSTPolicy(gap: .skip)).dates(now: now, systemTimeZone: F.berlin).map {
        F.iso($0)
    }
    #expect(skipped == ["2026-03-28T02:30:00+01:00", "2026-03-30T02:30:00+02:00"])
}

@Test func dateBuilderRuleFallBackOverlapFirstAndBoth() throws {
    // Every day at 02:30 in Berlin around 2026-10-25 (03:00→02:00).
    let now = epoch(1_792_706_400)  // 2026-10-23T00:00:00+02:00
    let expression = EveryDay(forDays: 3, starting: .tomorrow).at(hour: 2, minute: 30).in(timeZone: F.berlin)
    let first = expression.dates(now: now, systemTimeZone: F.berlin).map { F.iso($0) }
    #expect(first == ["2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"])
    let both = expression.dstPolicy(DSTPolicy(overlap: .both)).dates(now: now, systemTimeZone: F.berlin).map {
        F.iso($0)
    }
    #expect(
        both == [
            "2026-10-24T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-10-25T02:30:00+01:00",
            "2026-10-26T02:30:00+01:00",
        ])
}

@Test func dateBuilderRuleApiaSkippedDay() throws {
    let apia = try #require(Zone(identifier: "Pacific/Apia"))
    // now = 2011-12-28T12:00:00-10:00; every day at 09:00 for 4 days from tomorrow.
    let now = epoch(1_325_109_600)
    let dates = EveryDay(forDays: 4, starting: .tomorrow).at(hour: 9, minute: 0).in(timeZone: apia)
        .dates(now: now, systemTimeZone: F.berlin).map { F.iso($0, in: apia) }
    // 12-30 does not exist: the default fires at the end of the gap, 12-31 00:00.
    #expect(
        dates == [
            "2011-12-29T09:00:00-10:00", "2011-12-31T00:00:00+14:00", "2011-12-31T09:00:00+14:00",
            "2012-01-01T09:00:00+14:00",
        ])
}

// MARK: Floating versus named zones.

@Test func dateBuilderRuleFloatingFollowsTheSystemZone() throws {
    let tokyo = try #require(Zone(identifier: "Asia/Tokyo"))
    let rule = try #require(EveryDay().at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin))
    #expect(rule.timeZone == .floating)
    // After 2021-02-10T00:00Z: 09:00 in Tokyo is 00:00Z the same day... strictly after → 02-11T00:00Z.
    let after = epoch(1_612_915_200)
    #expect(F.iso(rule.nextOccurrence(after: after, systemTimeZone: tokyo), in: tokyo) == "2021-02-11T09:00:00+09:00")
    #expect(F.iso(rule.nextOccurrence(after: after, systemTimeZone: F.berlin)) == "2021-02-10T09:00:00+01:00")
    let named = try #require(
        EveryDay().at(hour: 9, minute: 0).in(timeZone: F.berlin).rule(now: F.now, systemTimeZone: F.berlin))
    #expect(F.iso(named.nextOccurrence(after: after, systemTimeZone: tokyo)) == "2021-02-10T09:00:00+01:00")
}

// MARK: Unbounded rules are lazy and jump straight to the period.

struct DateBuilderFarCase: Sendable, CustomStringConvertible {
    let description: String
    let after: Int
    let expected: String
    let rule: @Sendable () -> DateRule?
}

// Expected values from python-dateutil rrule(...).after() plus zoneinfo.
let dateBuilderFarCases = [
    DateBuilderFarCase(
        description: "every day at 9:00, after 2400-06-15T12Z", after: 13_583_851_200,
        expected: "2400-06-16T09:00:00+02:00"
    ) {
        EveryDay().at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin)
    },
    DateBuilderFarCase(
        description: "every month first friday 20:15, after 2399-12-31T23Z", after: 13_569_462_000,
        expected: "2400-01-07T20:15:00+01:00"
    ) { EveryMonth().first(.friday).at(hour: 20, minute: 15).rule(now: F.now, systemTimeZone: F.berlin) },
    DateBuilderFarCase(
        description: "every year Feb 29 at 9:00, after 2097-03-01 (2100 is not leap)", after: 4_012_934_400,
        expected: "2104-02-29T09:00:00+01:00"
    ) { EveryYear().month(2).day(29).at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin) },
    DateBuilderFarCase(
        description: "every week thursday 8:00, after 3000-01-01", after: 32_503_680_000,
        expected: "3000-01-02T08:00:00+01:00"
    ) { EveryWeek().weekday(.thursday).at(hour: 8, minute: 0).rule(now: F.now, systemTimeZone: F.berlin) },
]

@Test(arguments: dateBuilderFarCases)
func dateBuilderRuleUnboundedJumpsAhead(_ c: DateBuilderFarCase) throws {
    let rule = try #require(c.rule())
    #expect(!rule.isFinite)
    #expect(rule.end == .never)
    let clock = ContinuousClock()
    var result: Date?
    let elapsed = clock.measure { result = rule.nextOccurrence(after: epoch(c.after), systemTimeZone: F.berlin) }
    #expect(F.iso(result) == c.expected)
    #expect(elapsed < .milliseconds(50), "took \(elapsed)")
}

@Test func dateBuilderRuleUnboundedSequenceIsLazy() {
    let dates = EveryDay().at(hour: 9, minute: 0).dates(now: F.now, systemTimeZone: F.berlin).prefix(3).map {
        F.iso($0)
    }
    #expect(dates == ["2021-01-31T09:00:00+01:00", "2021-02-01T09:00:00+01:00", "2021-02-02T09:00:00+01:00"])
    let months = F.ymd(EveryMonth().lastDay, limit: 3)
    #expect(months == ["2021-01-31", "2021-02-28", "2021-03-31"])
    let years = F.ymd(EveryYear().lastMonth.lastDay, limit: 2)
    #expect(years == ["2021-12-31", "2022-12-31"])
}

// MARK: Rules that can never fire are answered quickly.

struct DateBuilderNeverCase: Sendable, CustomStringConvertible {
    let description: String
    let rule: @Sendable () -> DateRule?
}

let dateBuilderNeverCases = [
    DateBuilderNeverCase(description: "every year on February 30") {
        EveryYear().month(2).day(30).at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin)
    },
    DateBuilderNeverCase(description: "every 12 months from April on day 31") {
        EveryMonth(starting: ExactMonth(year: 2026, month: 4), stride: 12).day(31).at(hour: 9, minute: 0)
            .rule(now: F.now, systemTimeZone: F.berlin)
    },
    DateBuilderNeverCase(description: "every 4 years from 2027 on February 29") {
        EveryYear(starting: ExactYear(year: 2027), stride: 4).month(2).day(29).at(hour: 9, minute: 0)
            .rule(now: F.now, systemTimeZone: F.berlin)
    },
    DateBuilderNeverCase(description: "every month on day 32") {
        EveryMonth().day(32).at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin)
    },
    DateBuilderNeverCase(description: "every month, for 0 months") {
        EveryMonth(forMonths: 0).firstDay.at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin)
    },
]

@Test(arguments: dateBuilderNeverCases)
func dateBuilderRuleNeverFiresQuickly(_ c: DateBuilderNeverCase) throws {
    let rule = try #require(c.rule())
    let clock = ContinuousClock()
    var result: Date? = Date()
    var first: Date? = Date()
    let elapsed = clock.measure {
        result = rule.nextOccurrence(after: F.now, systemTimeZone: F.berlin)
        first = rule.firstOccurrence(systemTimeZone: F.berlin)
    }
    #expect(result == nil)
    #expect(first == nil)
    #expect(elapsed < .milliseconds(200), "took \(elapsed)")
}

// MARK: Ends, next-occurrence boundaries.

@Test func dateBuilderRuleEndsAndBoundaries() throws {
    let rule = try #require(
        EveryDay(forDays: 3, starting: .today).at(hour: 9, minute: 0).rule(now: F.now, systemTimeZone: F.berlin))
    #expect(rule.isFinite)
    #expect(rule.end == .afterPeriods(3))
    let first = try #require(rule.firstOccurrence(systemTimeZone: F.berlin))
    #expect(F.iso(first) == "2021-01-31T09:00:00+01:00")
    // Strictly after: asking at an occurrence gives the next one.
    #expect(F.iso(rule.nextOccurrence(after: first, systemTimeZone: F.berlin)) == "2021-02-01T09:00:00+01:00")
    #expect(F.iso(rule.nextOccurrence(after: F.now, systemTimeZone: F.berlin)) == "2021-02-01T09:00:00+01:00")
    // After the last one (2021-02-02T09:00+01:00): nothing.
    #expect(rule.nextOccurrence(after: epoch(1_612_252_800), systemTimeZone: F.berlin) == nil)
    let until = try #require(
        EveryDay().at(hour: 9, minute: 0).until(.tomorrow).rule(now: F.now, systemTimeZone: F.berlin))
    #expect(until.end == .until(LocalDateTime(year: 2021, month: 2, day: 1, hour: 23, minute: 59, second: 59)))
    // Unknown named zone: never fires rather than guessing.
    let unknown = try #require(
        EveryDay().at(hour: 9, minute: 0).in(timeZone: .named("Mars/Base")).rule(now: F.now, systemTimeZone: F.berlin)
            ?? DateRule.never as DateRule?)
    #expect(unknown.nextOccurrence(after: F.now, systemTimeZone: F.berlin) == nil)
}

// MARK: Random times.

@Test func dateBuilderRandomTimeIsReproducibleAndInRange() throws {
    let expression = EveryDay(forDays: 60, starting: .today)
        .at(.randomTime(from: .time(hour: 15, minute: 0), to: .time(hour: 19, minute: 0), seed: 42))
    let first = expression.dateComponents(now: F.now, systemTimeZone: F.berlin).prefix(1000).map(F.components)
    let second = expression.dateComponents(now: F.now, systemTimeZone: F.berlin).prefix(1000).map(F.components)
    #expect(first.count == 60)
    #expect(first == second)
    let times = Set(first.map { $0.suffix(8) })
    #expect(times.count > 50, "times should differ from day to day")
    #expect(times.allSatisfy { $0 >= "15:00:00" && $0 < "19:00:00" })
    // The seed travels in the Codable value.
    let decoded = try JSONDecoder().decode(DateBuilder.ResolvedDates.self, from: JSONEncoder().encode(expression))
    #expect(decoded.dateComponents(now: F.now, systemTimeZone: F.berlin).prefix(1000).map(F.components) == first)
    // A different seed gives different times; the same day gives the same time whatever the start.
    let other = EveryDay(forDays: 60, starting: .today)
        .at(.randomTime(from: .time(hour: 15, minute: 0), to: .time(hour: 19, minute: 0), seed: 43))
    #expect(other.dateComponents(now: F.now, systemTimeZone: F.berlin).prefix(1000).map(F.components) != first)
    let later = EveryDay(forDays: 1, starting: .tomorrow)
        .at(.randomTime(from: .time(hour: 15, minute: 0), to: .time(hour: 19, minute: 0), seed: 42))
    #expect(later.dateComponents(now: F.now, systemTimeZone: F.berlin).prefix(1000).map(F.components) == [first[1]])
    // README form without a seed: a fresh seed, still within the range.
    let unseeded = Today().at(.randomTime(from: .time(hour: 10, minute: 15), to: .time(hour: 15, minute: 30)))
    let components = F.components(unseeded.dateComponents(now: F.now, systemTimeZone: F.berlin))
    #expect(components >= "2021-01-31T10:15:00" && components < "2021-01-31T15:30:00")
}

// MARK: Codable.

@Test func dateBuilderRulesAndExpressionsRoundTripThroughJSON() throws {
    let expressions: [DateBuilder.ResolvedDates] = [
        EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20, minute: 15),
        EveryWeek(starting: .nextWeek).weekendStartDay.at(hour: 9, minute: 0).in(locale: Locale(identifier: "he_IL")),
        EveryYear().lastMonth.lastDay.addingDays(-1).at(hour: 23, minute: 50).in(timeZone: F.berlin)
            .dstPolicy(DSTPolicy(gap: .skip, overlap: .both)),
        EveryWeek(forWeeks: 1, starting: WeekOf(Today()), stride: 1).allDays.at(hour: 7, minute: 0).until(.tomorrow),
    ]
    for expression in expressions {
        let data = try JSONEncoder().encode(expression)
        let decoded = try JSONDecoder().decode(DateBuilder.ResolvedDates.self, from: data)
        #expect(decoded == expression)
        let rule = try #require(expression.rule(now: F.now, systemTimeZone: F.berlin))
        let decodedRule = try JSONDecoder().decode(DateRule.self, from: JSONEncoder().encode(rule))
        #expect(decodedRule == rule)
        #expect(
            Array(decodedRule.occurrences(systemTimeZone: F.berlin).prefix(5))
                == Array(rule.occurrences(systemTimeZone: F.berlin).prefix(5)))
    }
    let single = ExactlyAt(F.createdAt).addingDays(15)
    #expect(try JSONDecoder().decode(DateBuilder.Moment.self, from: JSONEncoder().encode(single)) == single)
}

@Test func dateBuilderRuleRejectsHostileDecodedValues() throws {
    let hostile = [
        DateRule(pattern: .days(start: Int.max, stride: 1, offsets: [0])),
        DateRule(pattern: .days(start: 0, stride: 0, offsets: [0])),
        DateRule(pattern: .days(start: 0, stride: 1, offsets: [Int.min])),
        DateRule(pattern: .months(start: Int.max, stride: 1, monthOffsets: [0], days: [.firstDay], dayOffset: 0)),
        DateRule(pattern: .months(start: 24_000, stride: -5, monthOffsets: [0], days: [.firstDay], dayOffset: 0)),
        DateRule(pattern: .interval(start: Date(timeIntervalSince1970: 1e300), seconds: 1)),
        DateRule(pattern: .interval(start: F.now, seconds: 0)),
        DateRule(pattern: .days(start: 0, stride: 1, offsets: [0]), time: .fixed(TimeOfDay(hour: 99, minute: 0))),
        DateRule(pattern: .days(start: 0, stride: 1, offsets: [0]), count: -3),
    ]
    for rule in hostile {
        #expect(rule.nextOccurrence(after: F.now, systemTimeZone: F.berlin) == nil)
        #expect(rule.firstOccurrence(systemTimeZone: F.berlin) == nil)
    }
    #expect(WallClock.localDateTime(for: Date(timeIntervalSince1970: .infinity), in: F.berlin).year == 1970)
}
