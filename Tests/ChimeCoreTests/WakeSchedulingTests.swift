import Foundation
import Testing

@testable import ChimeCore

/// The earliest occurrence of an item that asks to wake the machine, found from the scheduler's own data
/// (time is an input): what chimed arms its wake alarm for.
@Suite struct WakeSchedulingTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    let utc = Zone(identifier: "UTC")!

    func item(_ s: inout Scheduler, _ summary: String, at date: Date, wake: Bool) -> ScheduledItem {
        var item = ScheduledItem(id: s.allocateID(), content: NotificationContent(summary: summary), fireDate: date)
        item.entry.wake = wake
        return item
    }

    @Test func theEarliestWakeIsTheSoonestItemThatAsksToWakeNotTheSoonestItem() {
        var s = Scheduler()
        let plain = item(&s, "plain", at: t0 + 10, wake: false)
        let late = item(&s, "late", at: t0 + 600, wake: true)
        let soon = item(&s, "soon", at: t0 + 60, wake: true)
        #expect(s.earliestWake(after: t0) == nil && s.wakeItemCount == 0)
        for i in [plain, late, soon] { _ = s.add(i, now: t0) }
        #expect(s.wakeItemCount == 2)
        #expect(s.earliestWake(after: t0) == t0 + 60)
        // A cancelled item no longer wakes the machine; the next one does, and with none left, nothing does.
        _ = s.cancel(soon.id, now: t0)
        #expect(s.earliestWake(after: t0) == t0 + 600 && s.wakeItemCount == 1)
        _ = s.cancel(late.id, now: t0)
        #expect(s.earliestWake(after: t0) == nil && s.wakeItemCount == 0)
    }

    @Test func anOccurrenceThatHasPassedIsNotWokenFor() {
        var s = Scheduler()
        _ = s.add(item(&s, "past", at: t0 + 10, wake: true), now: t0)
        _ = s.add(item(&s, "later", at: t0 + 100, wake: true), now: t0)
        #expect(s.earliestWake(after: t0 + 10) == t0 + 100)
    }

    @Test func aRepeatingItemWakesForItsNextOccurrenceAfterEachFiring() throws {
        var s = Scheduler()
        let rule = WrittenRule.phrase("every 10 minutes")
        let recurrence = try Recurrence.parse(rule, now: t0, timeZone: .named("UTC"), systemTimeZone: utc)
        let first = try #require(recurrence.nextOccurrence(after: t0, systemTimeZone: utc))
        var repeating = ScheduledItem(
            id: s.allocateID(), content: NotificationContent(summary: "tick"), fireDate: first,
            recurrence: recurrence, rule: rule, timeZone: "UTC")
        repeating.entry.wake = true
        _ = s.add(repeating, now: t0)
        #expect(s.earliestWake(after: t0) == first)
        let generation = s.wakeGeneration
        let step = s.step(now: first)
        #expect(step.due.count == 1)
        // It moved on: the generation says to look again, and the next wake is its next occurrence.
        #expect(s.wakeGeneration != generation)
        #expect(s.earliestWake(after: first) == first + 600)
    }

    @Test func anEntryThatDoesNotWakeEncodesAsBeforeTheFlagExisted() {
        let entry = TimelineEntry(id: "e", trigger: .at(t0), content: .fixed(NotificationContent(summary: "x")))
        #expect(!String(decoding: DefinitionCoding.encode(entry), as: UTF8.self).contains("wake"))
        var waking = entry
        waking.wake = true
        #expect(String(decoding: DefinitionCoding.encode(waking), as: UTF8.self).contains("wake"))
        #expect(EntryDefinition(waking).wakes && !EntryDefinition(entry).wakes)
        // The flag shares its word with the content's size, which it leaves as it is.
        #expect(EntryDefinition(waking).contentBytes == EntryDefinition(entry).contentBytes)
    }
}
