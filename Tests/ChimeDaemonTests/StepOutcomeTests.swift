import ChimeCore
import ChimeStore
import Foundation
import Logging
import Testing

@testable import ChimeDaemon

/// A scheduler step turned into outbox rows (`Daemon.outcome`), as the store's queue does it when the
/// step's definitions had to be read there: steps still on their way have not yet given the scheduler
/// the pool places they took, and the next step goes on from them.
@Suite struct StepOutcomeTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)
    static let pool = ContentPool(
        base: NotificationContent(summary: "Tip"),
        items: [.init(body: "one"), .init(body: "two"), .init(body: "three")],
        order: .inOrder)
    static let entry = TimelineEntry(
        id: "tips", trigger: .at(t0), content: .pool(pool))
    static let context = Daemon.StepContext(
        zone: Zone(identifier: "UTC")!, downtime: Downtime(), now: t0, logger: Logger(label: "test"))

    /// The step of the item's `number`th occurrence, as the scheduler gives it: the item's state counts
    /// the occurrence; its pool place is what the scheduler holds.
    static func step(number: Int, poolPosition: Int) -> SchedulerStep {
        let occurrence = t0 + Double(number - 1) * 60
        let item = ScheduledItem(
            id: 7, entry: entry, recurrence: nil, fireDate: occurrence + 60,
            state: EntryState(occurrences: number, lastFired: occurrence, poolPosition: poolPosition))
        var step = SchedulerStep()
        step.due = [DueOccurrence(item: item, occurrence: occurrence, number: number, late: false)]
        step.updated = [item]
        return step
    }

    @Test func theNextStepGoesOnFromThePlaceAStepOnItsWayTookInAPool() throws {
        let first = Daemon.outcome(
            of: Self.step(number: 1, poolPosition: 0), entries: [7: Self.entry], taken: [:], ready: [:],
            context: Self.context)
        #expect(first.record.outbox.map(\.content?.body) == ["one"])
        #expect(first.states[7]?.poolPosition == 1)
        // The scheduler has not heard of the first step's pool place yet: its item still says 0.
        let second = Daemon.outcome(
            of: Self.step(number: 2, poolPosition: 0), entries: [7: Self.entry], taken: [:], ready: [:],
            context: Self.context, states: first.states)
        #expect(second.record.outbox.map(\.content?.body) == ["two"])
        // What is stored keeps the second step's count and the pool's new place.
        let stored = try #require(second.record.updated.first?.state)
        #expect(stored.occurrences == 2)
        #expect(stored.poolPosition == 2)
    }

    @Test func anItemWithoutItsEntryIsNotDelivered() {
        // Its row went while the step waited: it is being cancelled.
        let outcome = Daemon.outcome(
            of: Self.step(number: 1, poolPosition: 0), entries: [:], taken: [:], ready: [:], context: Self.context)
        #expect(outcome.record.outbox.isEmpty)
        #expect(outcome.record.updated.count == 1)
    }

    @Test func theSchedulerTakesOnlyThePoolPlaceOfAStepThatCameBackLate() {
        var scheduler = Scheduler()
        let item = ScheduledItem(
            id: 7, entry: Self.entry, recurrence: nil, fireDate: Self.t0 + 600,
            state: EntryState(occurrences: 5, lastFired: Self.t0 + 300, poolPosition: 0))
        _ = scheduler.add(item, now: Self.t0)
        // An older step's state: fewer occurrences, a newer pool place.
        scheduler.updatePool(of: 7, from: EntryState(occurrences: 3, lastFired: Self.t0, poolPosition: 2))
        let state = scheduler.item(7)?.state
        #expect(state?.occurrences == 5)
        #expect(state?.lastFired == Self.t0 + 300)
        #expect(state?.poolPosition == 2)
    }
}
