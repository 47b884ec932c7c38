import Foundation
import Testing

@testable import ChimeCore

/// Expected values verified with python zoneinfo and `TZ=<zone> date -d @<epoch>`, not with WallClock.
struct WallClockCase: Sendable, CustomStringConvertible {
    let zone: String
    let local: String
    /// Epoch seconds of the instants; for a gap, the single transition instant.
    let instants: [Int]
    let isGap: Bool

    var description: String { "\(zone) \(local)" }
}

let wallClockCases: [WallClockCase] = [
    // Europe/Berlin: 2026-03-29 02:00→03:00, 2026-10-25 03:00→02:00.
    WallClockCase(zone: "Europe/Berlin", local: "2026-03-29T02:30:00", instants: [1_774_746_000], isGap: true),
    WallClockCase(zone: "Europe/Berlin", local: "2026-03-29T02:00:00", instants: [1_774_746_000], isGap: true),
    WallClockCase(zone: "Europe/Berlin", local: "2026-03-29T01:59:59", instants: [1_774_745_999], isGap: false),
    WallClockCase(zone: "Europe/Berlin", local: "2026-03-29T03:00:00", instants: [1_774_746_000], isGap: false),
    WallClockCase(
        zone: "Europe/Berlin", local: "2026-10-25T02:30:00", instants: [1_792_888_200, 1_792_891_800], isGap: false),
    WallClockCase(zone: "Europe/Berlin", local: "2026-10-25T01:59:59", instants: [1_792_886_399], isGap: false),
    WallClockCase(zone: "Europe/Berlin", local: "2026-10-25T03:00:00", instants: [1_792_893_600], isGap: false),
    WallClockCase(zone: "Europe/Berlin", local: "2026-07-01T12:00:00", instants: [1_782_900_000], isGap: false),
    // America/New_York: 2026-03-08 02:00→03:00, 2026-11-01 02:00→01:00.
    WallClockCase(zone: "America/New_York", local: "2026-03-08T02:30:00", instants: [1_772_953_200], isGap: true),
    WallClockCase(
        zone: "America/New_York", local: "2026-11-01T01:30:00", instants: [1_793_511_000, 1_793_514_600],
        isGap: false),
    WallClockCase(zone: "America/New_York", local: "2026-01-15T09:00:00", instants: [1_768_485_600], isGap: false),
    // Australia/Lord_Howe: 30-minute DST. 2026-10-04 02:00→02:30, 2026-04-05 02:00→01:30.
    WallClockCase(zone: "Australia/Lord_Howe", local: "2026-10-04T02:15:00", instants: [1_791_041_400], isGap: true),
    WallClockCase(zone: "Australia/Lord_Howe", local: "2026-10-04T02:30:00", instants: [1_791_041_400], isGap: false),
    WallClockCase(
        zone: "Australia/Lord_Howe", local: "2026-04-05T01:45:00", instants: [1_775_313_900, 1_775_315_700],
        isGap: false),
    WallClockCase(zone: "Australia/Lord_Howe", local: "2026-04-05T02:00:00", instants: [1_775_316_600], isGap: false),
    WallClockCase(zone: "Australia/Lord_Howe", local: "2026-04-05T01:29:59", instants: [1_775_312_999], isGap: false),
    // Asia/Kathmandu: +05:45; on 1986-01-01 it moved from +05:30, skipping 00:00–00:15.
    WallClockCase(zone: "Asia/Kathmandu", local: "2026-06-01T12:00:00", instants: [1_780_294_500], isGap: false),
    WallClockCase(zone: "Asia/Kathmandu", local: "1986-01-01T00:10:00", instants: [504_901_800], isGap: true),
    WallClockCase(zone: "Asia/Kathmandu", local: "1986-01-01T00:15:00", instants: [504_901_800], isGap: false),
    WallClockCase(zone: "Asia/Kathmandu", local: "1985-12-31T23:59:59", instants: [504_901_799], isGap: false),
    // Pacific/Apia: 2011-12-30 did not exist (-10:00 → +14:00 at midnight).
    WallClockCase(zone: "Pacific/Apia", local: "2011-12-30T09:00:00", instants: [1_325_239_200], isGap: true),
    WallClockCase(zone: "Pacific/Apia", local: "2011-12-30T00:00:00", instants: [1_325_239_200], isGap: true),
    WallClockCase(zone: "Pacific/Apia", local: "2011-12-30T23:59:59", instants: [1_325_239_200], isGap: true),
    WallClockCase(zone: "Pacific/Apia", local: "2011-12-29T23:59:59", instants: [1_325_239_199], isGap: false),
    WallClockCase(zone: "Pacific/Apia", local: "2011-12-31T00:00:00", instants: [1_325_239_200], isGap: false),
]

@Test(arguments: wallClockCases)
func wallClockResolvesTable(_ c: WallClockCase) throws {
    let zone = try #require(Zone(identifier: c.zone))
    let local = try #require(LocalDateTime(iso: c.local))
    let dates = c.instants.map { Date(timeIntervalSince1970: TimeInterval($0)) }
    let resolution = WallClock.resolve(local, in: zone)
    switch (c.isGap, dates.count) {
    case (true, _): #expect(resolution == .gap(transition: dates[0]))
    case (false, 1): #expect(resolution == .unique(dates[0]))
    default: #expect(resolution == .overlap(first: dates[0], second: dates[1]))
    }
    // Policies.
    let defaultInstants = WallClock.instants(for: local, in: zone)
    #expect(defaultInstants == [dates[0]])
    let skipBoth = WallClock.instants(for: local, in: zone, policy: DSTPolicy(gap: .skip, overlap: .both))
    #expect(skipBoth == (c.isGap ? [] : dates))
    // The inverse: a non-gap time round-trips; a gap maps to the end of the gap.
    for date in dates where !c.isGap {
        #expect(WallClock.localDateTime(for: date, in: zone) == local)
    }
}

@Test func wallClockSpringForwardDefaultFiresAtTransitionNotAfterIt() throws {
    // 02:30 on the day Berlin jumps 02:00→03:00 fires at 03:00 (the transition), not 03:30.
    let zone = try #require(Zone(identifier: "Europe/Berlin"))
    let local = LocalDateTime(year: 2026, month: 3, day: 29, hour: 2, minute: 30)
    let instant = try #require(WallClock.instants(for: local, in: zone).first)
    #expect(WallClock.iso8601(instant, in: zone) == "2026-03-29T03:00:00+02:00")
}

@Test func wallClockApiaSkippedDayEndOfGapIsNextMidnight() throws {
    let zone = try #require(Zone(identifier: "Pacific/Apia"))
    let local = LocalDateTime(year: 2011, month: 12, day: 30, hour: 9)
    let instant = try #require(WallClock.instants(for: local, in: zone).first)
    #expect(WallClock.iso8601(instant, in: zone) == "2011-12-31T00:00:00+14:00")
    #expect(WallClock.instants(for: local, in: zone, policy: DSTPolicy(gap: .skip)).isEmpty)
}

struct WallClockISOCase: Sendable {
    let zone: String
    let epoch: Int
    let expected: String
}

@Test(arguments: [
    WallClockISOCase(zone: "Europe/Berlin", epoch: 1_796_411_700, expected: "2026-12-04T20:15:00+01:00"),
    WallClockISOCase(zone: "America/New_York", epoch: 1_793_514_600, expected: "2026-11-01T01:30:00-05:00"),
    WallClockISOCase(zone: "Australia/Lord_Howe", epoch: 1_775_315_700, expected: "2026-04-05T01:45:00+10:30"),
    WallClockISOCase(zone: "Asia/Kathmandu", epoch: 1_780_294_500, expected: "2026-06-01T12:00:00+05:45"),
    WallClockISOCase(zone: "UTC", epoch: 0, expected: "1970-01-01T00:00:00+00:00"),
    WallClockISOCase(zone: "America/St_Johns", epoch: 1_768_485_600, expected: "2026-01-15T10:30:00-03:30"),
    // Local mean time before 1893: Berlin was +00:53:28.
    WallClockISOCase(zone: "Europe/Berlin", epoch: -2_524_521_600, expected: "1890-01-01T00:53:28+00:53:28"),
])
func wallClockFormatsISO(_ c: WallClockISOCase) throws {
    let zone = try #require(Zone(identifier: c.zone))
    #expect(WallClock.iso8601(Date(timeIntervalSince1970: TimeInterval(c.epoch)), in: zone) == c.expected)
}

@Test func wallClockRuleTimeZoneResolvesAndValidates() throws {
    let system = try #require(Zone(identifier: "Asia/Tokyo"))
    #expect(RuleTimeZone.floating.resolve(systemTimeZone: system)?.identifier == "Asia/Tokyo")
    #expect(RuleTimeZone.named("Europe/Berlin").resolve(systemTimeZone: system)?.identifier == "Europe/Berlin")
    #expect(RuleTimeZone.named("Mars/Olympus").resolve(systemTimeZone: system) == nil)
    #expect(throws: RuleSyntaxError.self) { try RuleTimeZone.validated("Mars/Olympus") }
    let decoded = try JSONDecoder().decode(
        RuleTimeZone.self, from: JSONEncoder().encode(RuleTimeZone.named("Europe/Berlin")))
    #expect(decoded == .named("Europe/Berlin"))
    let policy = DSTPolicy(gap: .skip, overlap: .both)
    #expect(try JSONDecoder().decode(DSTPolicy.self, from: JSONEncoder().encode(policy)) == policy)
    #expect(DSTPolicy() == DSTPolicy(gap: .endOfGap, overlap: .first))
}
