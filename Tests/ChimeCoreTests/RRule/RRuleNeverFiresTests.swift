import Foundation
import Testing

@testable import ChimeCore

/// Rules that never fire must say so at once, and sparse rules must find their next occurrence without
/// walking the calendar one step at a time. Answers are asserted; timings are only printed.
@Suite struct RRuleNeverFiresTests {
    static let start = LocalDateTime(year: 2026, month: 1, day: 1, hour: 9, minute: 30)

    static let neverFiring = [
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30,31;BYDAY=MO",
        "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
        "FREQ=MONTHLY;BYMONTHDAY=31;BYMONTH=2",
        "FREQ=WEEKLY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=DAILY;INTERVAL=7;BYDAY=TU",  // 2026-01-01 is a Thursday: every 7 days stays on Thursday
        "FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30;BYHOUR=9",
        "FREQ=HOURLY;INTERVAL=168;BYDAY=MO",
        "FREQ=MINUTELY;BYYEARDAY=366;BYMONTH=1",
        "FREQ=SECONDLY;BYMONTH=4;BYMONTHDAY=31",
        "FREQ=SECONDLY;BYSETPOS=2",
        "FREQ=HOURLY;BYSETPOS=3;BYMINUTE=0,30",
        "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29",  // 2026, 2030, 2034…: never a leap year
        "FREQ=YEARLY;BYWEEKNO=53;BYMONTH=6",
        "FREQ=MONTHLY;BYDAY=MO,1FR",  // dateutil requires both a Monday and the first Friday
        "FREQ=MONTHLY;INTERVAL=2;BYMONTH=2",  // odd months only, from January
        "FREQ=YEARLY;BYYEARDAY=-366;BYMONTH=2",
    ]

    @Test(arguments: neverFiring)
    func neverFiringRulesAnswerAtOnce(rule: String) throws {
        let set = try RRuleSet.parse(rule, dtstart: RRuleNeverFiresTests.start)
        let clock = ContinuousClock()
        var next: LocalDateTime?
        let elapsed = clock.measure { next = set.nextOccurrence(after: RRuleNeverFiresTests.start) }
        #expect(next == nil)
        #expect(set.neverFires)
        #expect(set.occurrences(after: LocalDateTime(year: 3000, month: 1, day: 1), limit: 3).isEmpty)
        print("never fires: \(rule) answered in \(elapsed)")
    }

    /// dateutil agrees that these never fire; it scans to year 9999 to find out, which is slow for the
    /// finer frequencies, so only the coarse ones are asked.
    @Test func dateutilAgreesTheyNeverFire() throws {
        try #require(RRuleOracle.isAvailable)
        let coarse = RRuleNeverFiresTests.neverFiring.filter { $0.contains("YEARLY") || $0.contains("MONTHLY") }
        let answers = try RRuleOracle.run(
            coarse.enumerated().map {
                .init(
                    id: $0, text: $1, dtstart: RRuleOracle.iso(RRuleNeverFiresTests.start), after: nil, inc: false, n: 1
                )
            }, secondsPerCase: 20)
        for (i, rule) in coarse.enumerated() {
            #expect(answers[i]?.occ == [], "\(rule)")
            #expect(answers[i]?.timeout == false, "\(rule)")
        }
    }

    static let sparse: [(rule: String, after: String, expected: String)] = [
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "2026-03-01T00:00:00", "2028-02-29T09:30:00"),
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29", "2026-03-01T00:00:00", "2028-02-29T09:30:00"),
        ("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "2026-03-01T00:00:00", "2044-02-29T09:30:00"),
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO", "2044-03-01T00:00:00", "2072-02-29T09:30:00"),
        ("FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=7", "2026-03-01T00:00:00", "2044-02-29T07:30:00"),
        (
            "FREQ=MINUTELY;INTERVAL=7;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23", "2044-03-01T00:00:00",
            "2072-02-29T23:03:00"
        ),
        ("FREQ=SECONDLY", "2500-06-15T12:00:00", "2500-06-15T12:00:01"),
        ("FREQ=MINUTELY;INTERVAL=7", "2400-01-01T00:00:00", "2400-01-01T00:07:00"),
        ("FREQ=WEEKLY;INTERVAL=3;BYDAY=SU", "3000-01-01T00:00:00", "3000-01-19T09:30:00"),
    ]

    @Test(arguments: sparse.indices)
    func sparseRulesJumpAhead(index: Int) throws {
        let (rule, after, expected) = RRuleNeverFiresTests.sparse[index]
        let set = try RRuleSet.parse(rule, dtstart: RRuleNeverFiresTests.start)
        let bound = try #require(LocalDateTime(iso: after))
        let clock = ContinuousClock()
        var next: LocalDateTime?
        let elapsed = clock.measure { next = set.nextOccurrence(after: bound) }
        #expect(next?.description == expected, "\(rule) after \(after)")
        print("sparse: \(rule) after \(after) -> \(next?.description ?? "nil") in \(elapsed)")
    }

    @Test func sparseRulesAgreeWithDateutil() throws {
        try #require(RRuleOracle.isAvailable)
        let cases = RRuleNeverFiresTests.sparse.enumerated().filter {
            !$1.rule.contains("SECONDLY") && !$1.after.hasPrefix("2400") && !$1.after.hasPrefix("3000")
        }
        let answers = try RRuleOracle.run(
            cases.map {
                .init(
                    id: $0.offset, text: $0.element.rule, dtstart: RRuleOracle.iso(RRuleNeverFiresTests.start),
                    after: $0.element.after, inc: false, n: 1)
            }, secondsPerCase: 20)
        for (i, c) in cases { #expect(answers[i]?.occ == [c.expected], "\(c.rule)") }
    }

    /// Starting near `after` must give what expanding from DTSTART gives (checked without the oracle, so
    /// `after` can be far away).
    @Test func fastForwardMatchesExpandingFromTheStart() throws {
        var g = SplitMix64(seed: 7)
        var checked = 0
        for _ in 0..<600 {
            let c = RRuleRandomCase.make(&g)
            guard let set = try? RRuleSet.parse(c.text, dtstart: c.dtstart), set.rules.count == 1,
                set.rules[0].count == nil, case .success(let compiled) = set.compile(set.rules[0])
            else { continue }
            let unit = RRuleRandomCase.unitSeconds(set.rules[0].frequency) * set.rules[0].interval
            let after = set.dtstart.adding(seconds: g.int(0...400) * unit + g.int(0...86_399))
            guard after.year < 9000 else { continue }
            var slow = RRuleExpander(rule: compiled)
            var expected: [Int] = []
            var steps = 0
            while expected.count < 5, steps < 200_000, let key = slow.nextKey() {
                steps += 1
                if key > after.secondsSinceEpoch { expected.append(key) }
            }
            guard steps < 200_000 else { continue }
            var fast = RRuleExpander(rule: compiled)
            fast.fastForward(to: after.secondsSinceEpoch)
            var got: [Int] = []
            while got.count < 5, let key = fast.nextKey() { if key > after.secondsSinceEpoch { got.append(key) } }
            #expect(got == expected, "\(c.text) dtstart=\(set.dtstart) after=\(after)")
            checked += 1
        }
        #expect(checked > 300)
    }
}
