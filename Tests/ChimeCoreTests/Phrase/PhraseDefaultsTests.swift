import Foundation
import Testing

@testable import ChimeCore

/// The times the parts of the day and a phrase without a time mean come from `PhraseDefaults`
/// (chime.toml's `[phrases]`); expected instants are worked out by hand.
@Test func thePartsOfTheDayAndTheDefaultTimeAreSettable() throws {
    let berlin = try #require(Zone(identifier: "Europe/Berlin"))
    func date(_ iso: String) throws -> Date { try #require(ISO8601DateFormatter().date(from: iso)) }
    let now = try date("2026-11-22T00:00:00+01:00")
    let defaults = PhraseDefaults(
        morning: TimeOfDay(hour: 7, minute: 30), afternoon: TimeOfDay(hour: 13, minute: 0),
        evening: TimeOfDay(hour: 19, minute: 15), night: TimeOfDay(hour: 22, minute: 45),
        time: TimeOfDay(hour: 8, minute: 0))
    func first(_ phrase: String) throws -> String? {
        let rule = try PhraseParser.rule(phrase, now: now, systemTimeZone: berlin, defaults: defaults)
        return rule.nextOccurrence(after: now, systemTimeZone: berlin).map { WallClock.iso8601($0, in: berlin) }
    }
    #expect(try first("every morning") == "2026-11-22T07:30:00+01:00")
    #expect(try first("every afternoon") == "2026-11-22T13:00:00+01:00")
    #expect(try first("every monday evening") == "2026-11-23T19:15:00+01:00")
    #expect(try first("tonight") == "2026-11-22T22:45:00+01:00")
    #expect(try first("every weekday") == "2026-11-23T08:00:00+01:00")
    #expect(try first("every evening at 20:00") == "2026-11-22T20:00:00+01:00")
    // The same through Recurrence.parse, as chimed reads a phrase.
    let recurrence = try Recurrence.parse(
        .phrase("every night"), now: now, timeZone: .floating, systemTimeZone: berlin, phraseDefaults: defaults)
    #expect(
        recurrence.nextOccurrence(after: now, systemTimeZone: berlin) == (try date("2026-11-22T22:45:00+01:00")))
}

/// chimed's scheduler reads a group entry's phrase with the parts of the day chime.toml set.
@Test func theSchedulerReadsPhrasesWithItsPartsOfTheDay() throws {
    let berlin = try #require(Zone(identifier: "Europe/Berlin"))
    let now = try #require(ISO8601DateFormatter().date(from: "2026-11-22T00:00:00+01:00"))
    var scheduler = Scheduler(systemTimeZone: berlin)
    scheduler.phraseDefaults = PhraseDefaults(evening: TimeOfDay(hour: 19, minute: 30))
    let entry = TimelineEntry(
        id: "walk", trigger: .rule(.phrase("every evening"), timeZone: nil),
        content: .fixed(NotificationContent(summary: "Walk")))
    var plan = try scheduler.planReschedule(
        TimelineGroup(id: "g", settings: GroupSettings(), entries: [entry]), now: now)
    scheduler.assignIDs(&plan)
    _ = scheduler.apply(plan, now: now)
    #expect(
        scheduler.pending.first?.fireDate == ISO8601DateFormatter().date(from: "2026-11-22T19:30:00+01:00"))
}
