import Foundation
import Testing

@testable import ChimeCore

/// A phrase's own `in ZONE` decides its wall clock on every path that reads phrases: `RulePreview`
/// (`chime next`) and `Recurrence.parse` (chimed for `chime send`, D-Bus, group files and ChimeKit), also
/// when the caller names a zone of its own (`--tz`, a group file's `tz`). Expected instants are worked
/// out by hand from the zones' offsets.
private enum Z {
    static let berlin = Zone(identifier: "Europe/Berlin")!
    static let auckland = Zone(identifier: "Pacific/Auckland")!
    static let utc = Zone(identifier: "UTC")!

    static func date(_ iso: String) throws -> Date {
        try #require(ISO8601DateFormatter().date(from: iso))
    }

    static func preview(_ phrase: String, after: String, in zone: Zone, count: Int) throws -> [String] {
        let start = try date(after)
        let result = try RulePreview.next(.phrase(phrase), after: start, now: start, timeZone: zone, count: count)
        guard case .occurrences(let dates) = result else { return [] }
        return dates.map { WallClock.iso8601($0, in: zone) }
    }
}

@Test func aPhrasesZoneIsHonouredInThePreview() throws {
    // 09:00 in New York is 15:00 in Berlin (EST, CET), 14:00 between the US change on 2027-03-14 and the
    // European one on 2027-03-28 (EDT, CET), and 15:00 again after it (EDT, CEST).
    #expect(
        try Z.preview(
            "every weekday at 9:00 in America/New_York", after: "2026-11-22T00:00:00+01:00", in: Z.berlin, count: 3)
            == ["2026-11-23T15:00:00+01:00", "2026-11-24T15:00:00+01:00", "2026-11-25T15:00:00+01:00"])
    #expect(
        try Z.preview(
            "every weekday at 9:00 in America/New_York", after: "2027-03-12T00:00:00+01:00", in: Z.berlin, count: 2)
            == ["2027-03-12T15:00:00+01:00", "2027-03-15T14:00:00+01:00"])
    #expect(
        try Z.preview(
            "every weekday at 9:00 in America/New_York", after: "2027-03-27T00:00:00+01:00", in: Z.berlin, count: 2)
            == ["2027-03-29T15:00:00+02:00", "2027-03-30T15:00:00+02:00"])
}

@Test func aPhrasesZoneIsHonouredFromAucklandAndKolkata() throws {
    // 09:00 in Kolkata (UTC+05:30) is 16:30 in Auckland in November (NZDT, UTC+13).
    #expect(
        try Z.preview("every day at 9:00 in Asia/Kolkata", after: "2026-11-22T00:00:00+13:00", in: Z.auckland, count: 2)
            == ["2026-11-22T16:30:00+13:00", "2026-11-23T16:30:00+13:00"])
    // 17:00 on the third friday in Auckland, seen from UTC: 04:00Z in December (NZDT), 05:00Z in May (NZST).
    #expect(
        try Z.preview(
            "every month on the third friday at 17:00 in Pacific/Auckland", after: "2026-11-30T00:00:00Z", in: Z.utc,
            count: 1)
            == ["2026-12-18T04:00:00+00:00"])
    #expect(
        try Z.preview(
            "every month on the third friday at 17:00 in Pacific/Auckland", after: "2027-05-01T00:00:00Z", in: Z.utc,
            count: 1)
            == ["2027-05-21T05:00:00+00:00"])
}

@Test func aPhrasesZoneWinsOverTheCallersZone() throws {
    let now = try Z.date("2026-11-22T00:00:00+01:00")
    let tokyo = RuleTimeZone.named("Asia/Tokyo")
    let pinned = try Recurrence.parse(
        .phrase("every weekday at 9:00 in America/New_York"), now: now, timeZone: tokyo, systemTimeZone: Z.berlin)
    guard case .dateRule(let rule) = pinned else {
        Issue.record("a phrase is a DateBuilder rule")
        return
    }
    #expect(rule.timeZone == .named("America/New_York"))
    // 2026-11-23 09:00 EST = 14:00Z.
    #expect(pinned.nextOccurrence(after: now, systemTimeZone: Z.berlin) == (try Z.date("2026-11-23T14:00:00Z")))
    // Without `in ZONE` the caller's zone pins it: 09:00 in Tokyo (UTC+9) is 00:00Z.
    let floating = try Recurrence.parse(
        .phrase("every weekday at 9:00"), now: now, timeZone: tokyo, systemTimeZone: Z.berlin)
    #expect(floating.nextOccurrence(after: now, systemTimeZone: Z.berlin) == (try Z.date("2026-11-23T00:00:00Z")))
    // With neither it follows the system zone at evaluation time.
    let system = try Recurrence.parse(
        .phrase("every weekday at 9:00"), now: now, timeZone: .floating, systemTimeZone: Z.berlin)
    #expect(system.nextOccurrence(after: now, systemTimeZone: Z.auckland) == (try Z.date("2026-11-22T20:00:00Z")))
}

@Test func aDateBuilderRulesZoneWinsOverTheCallersZone() throws {
    let now = try Z.date("2026-11-22T00:00:00+01:00")
    let rule = try #require(
        EveryDay().at(hour: 9, minute: 0).in(timeZone: .named("Asia/Kolkata")).rule(now: now, systemTimeZone: Z.berlin))
    let recurrence = try Recurrence.parse(
        .dateRule(rule), now: now, timeZone: .named("Asia/Tokyo"), systemTimeZone: Z.berlin)
    // 2026-11-22 09:00 in Kolkata = 03:30Z.
    #expect(recurrence.nextOccurrence(after: now, systemTimeZone: Z.berlin) == (try Z.date("2026-11-22T03:30:00Z")))
}
