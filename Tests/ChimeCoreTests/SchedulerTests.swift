import Foundation
import Testing

@testable import ChimeCore

/// Helpers shared by the scheduler suites: a manual clock and readable views of a step.
extension SchedulerStep {
    var deliveredSummaries: [String] { due.map(\.item.content.summary) }
}

/// The scheduler state machine, driven by a manual clock: no waiting, no real time.
@Suite struct SchedulerTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func content(_ s: String) -> NotificationContent { NotificationContent(summary: s) }

    func add(_ s: inout Scheduler, _ summary: String, at date: Date, now: Date) -> (UInt64, SchedulerStep) {
        let id = s.allocateID()
        return (id, s.add(ScheduledItem(id: id, content: content(summary), fireDate: date), now: now))
    }

    @Test func armsTheTimerAtTheEarliestDeadline() {
        var s = Scheduler()
        #expect(add(&s, "later", at: t0 + 60, now: t0).1.deadline == t0 + 60)
        #expect(add(&s, "sooner", at: t0 + 10, now: t0).1.deadline == t0 + 10)
        #expect(add(&s, "latest", at: t0 + 600, now: t0).1.deadline == t0 + 10)
    }

    @Test func eachOwnersCountFollowsItsItemsAsTheyComeFireAndGo() {
        var s = Scheduler()
        func item(_ owner: String, at date: Date) -> ScheduledItem {
            ScheduledItem(id: s.allocateID(), content: content(owner), fireDate: date, owner: owner)
        }
        let a1 = item("a", at: t0 + 10)
        let a2 = item("a", at: t0 + 60)
        let b1 = item("b", at: t0 + 20)
        for i in [a1, a2, b1] { _ = s.add(i, now: t0) }
        #expect(s.count(owner: "a") == 2 && s.count(owner: "b") == 1 && s.count(owner: "c") == 0)
        _ = s.cancel(a2.id, now: t0)
        #expect(s.count(owner: "a") == 1)
        // A one-off that fired is gone, and so is its count.
        let step = s.step(now: t0 + 15)
        #expect(step.deliveredSummaries == ["a"])
        #expect(s.count(owner: "a") == 0 && s.count(owner: "b") == 1)
        // Replacing an item with another owner's moves the count.
        _ = s.add(ScheduledItem(id: b1.id, content: content("a"), fireDate: t0 + 30, owner: "a"), now: t0 + 15)
        #expect(s.count(owner: "a") == 1 && s.count(owner: "b") == 0)
    }

    @Test func itemsDueAtTheNextDeadlineAreThoseTheStepThenDelivers() {
        var s = Scheduler()
        for (name, offset) in [("b", 10.0), ("later", 20), ("a", 10), ("c", 10)] {
            _ = add(&s, name, at: t0 + offset, now: t0)
        }
        let cancelled = add(&s, "cancelled", at: t0 + 10, now: t0).0
        _ = s.cancel(cancelled, now: t0)
        #expect(s.items(dueAt: t0 + 10, limit: 10)?.map(\.content.summary) == ["b", "a", "c"])
        // More than the limit, or a date that is not the next deadline: none.
        #expect(s.items(dueAt: t0 + 10, limit: 2) == nil)
        #expect(s.items(dueAt: t0 + 20, limit: 10) == nil)
        #expect(s.items(dueAt: t0 + 5, limit: 10)?.isEmpty == true)
        // Looking changed nothing.
        #expect(s.nextDeadline == t0 + 10)
        #expect(s.step(now: t0 + 10).deliveredSummaries == ["b", "a", "c"])
        #expect(s.items(dueAt: t0 + 20, limit: 10)?.map(\.content.summary) == ["later"])
        #expect(s.step(now: t0 + 20).deliveredSummaries == ["later"])
    }

    @Test func deliversOnlyWhatIsDueInDeadlineOrder() {
        var s = Scheduler()
        for (name, offset) in [("c", 30.0), ("a", 10), ("b", 20), ("d", 40)] {
            _ = add(&s, name, at: t0 + offset, now: t0)
        }
        #expect(s.step(now: t0 + 9.999).due.isEmpty)
        let step = s.step(now: t0 + 25)
        #expect(step.deliveredSummaries == ["a", "b"])
        #expect(step.deadline == t0 + 30)
        let last = s.step(now: t0 + 40)
        #expect(last.deliveredSummaries == ["c", "d"])
        #expect(last.deadline == nil)
        #expect(last.finished.map(\.finished) == [.lastOccurrence, .lastOccurrence])
    }

    @Test func itemsDueTogetherKeepTheirSchedulingOrder() {
        var s = Scheduler()
        for name in ["one", "two", "three", "four"] { _ = add(&s, name, at: t0 + 5, now: t0) }
        #expect(s.step(now: t0 + 5).deliveredSummaries == ["one", "two", "three", "four"])
    }

    @Test func aDeadlineSecondsAgoIsDeliveredAtOnceAndOnTime() {
        var s = Scheduler()
        let step = add(&s, "just now", at: t0 - 10, now: t0).1
        #expect(step.deliveredSummaries == ["just now"])
        #expect(step.due.first?.late == false)
        #expect(step.missed.isEmpty)
    }

    @Test func cancellingRemovesTheItemAndRearms() {
        var s = Scheduler()
        let (first, _) = add(&s, "first", at: t0 + 10, now: t0)
        _ = add(&s, "second", at: t0 + 20, now: t0)
        let (item, step) = s.cancel(first, now: t0)
        #expect(item?.content.summary == "first")
        #expect(step.deadline == t0 + 20)
        #expect(s.cancel(first, now: t0).item == nil)
        #expect(s.step(now: t0 + 30).deliveredSummaries == ["second"])
        #expect(s.pending.isEmpty)
    }

    @Test func restoringKeepsIdsAndDoesNotReuseThem() {
        var s = Scheduler()
        _ = s.restore(
            groups: [:], items: [ScheduledItem(id: 41, content: content("restored"), fireDate: t0 + 5)], now: t0)
        #expect(s.allocateID() == 42)
        #expect(s.pending.map(\.id) == [41])
    }

    @Test func restoringManyItemsDeliversEveryOverdueOneInOrder() {
        var s = Scheduler()
        let items = [
            ScheduledItem(id: 3, content: content("c"), fireDate: t0 - 10),
            ScheduledItem(id: 1, content: content("a"), fireDate: t0 - 30),
            ScheduledItem(id: 7, content: content("future"), fireDate: t0 + 60),
            ScheduledItem(id: 2, content: content("b"), fireDate: t0 - 20),
        ]
        let step = s.restore(groups: [:], items: items, now: t0)
        #expect(step.deliveredSummaries == ["a", "b", "c"])
        #expect(step.deadline == t0 + 60)
        #expect(s.allocateID() == 8)
    }

    /// A start counts each app's items and bytes by runs of one app's items: the counts must be what they
    /// are item by item, however the apps' items alternate, and go back to nothing as the items go.
    @Test func restoredItemsAreCountedPerAppAsTheyAreOneByOne() {
        var s = Scheduler()
        let owners =
            ["org.example.LongApplicationName", "org.example.LongApplicationName", "b", "", "b", "b"]
            + ["org.example.LongApplicationName", "", "c"]
        var items = owners.enumerated().map { index, owner in
            ScheduledItem(
                id: UInt64(index + 1), content: content(String(repeating: "x", count: index)),
                fireDate: t0 + Double(60 * (index + 1)), owner: owner)
        }
        items[4].groupID = "weekly"
        var finished = ScheduledItem(id: 20, content: content("done"), fireDate: t0 - 60, owner: "b")
        finished.groupID = "weekly"
        finished.finished = .lastOccurrence
        _ = s.restore(groups: [:], items: items + [finished], now: t0)
        for owner in Set(owners) {
            let pending = items.filter { $0.owner == owner }
            #expect(s.pendingCount(owner: owner) == pending.count, "\(owner)")
            let bytes = owner.isEmpty ? 0 : (pending + (owner == "b" ? [finished] : [])).map(\.storedBytes).reduce(0, +)
            #expect(s.bytes(owner: owner) == bytes, "\(owner)")
        }
        for item in items { _ = s.cancel(item.id, now: t0) }
        for owner in Set(owners) {
            #expect(s.pendingCount(owner: owner) == 0, "\(owner)")
        }
        #expect(s.bytes(owner: "b") == finished.storedBytes)
        #expect(s.bytes(owner: "org.example.LongApplicationName") == 0)
    }

    /// A long simulated run: 10 000 items over a simulated year, cancelled at random, stepped exactly at
    /// each deadline; every live item is delivered exactly once, in deadline order, never early or late.
    @Test func aSimulatedYearDeliversEveryLiveItemOnceInOrder() {
        var rng = SplitMix64(seed: 42)
        var s = Scheduler()
        var expected: [UInt64: Date] = [:]
        for i in 0..<10_000 {
            let at = t0 + Double(rng.next() % 31_536_000)
            let (id, _) = add(&s, "item \(i)", at: at, now: t0)
            expected[id] = at
        }
        for id in expected.keys.sorted() where rng.next() % 4 == 0 {
            _ = s.cancel(id, now: t0)
            expected.removeValue(forKey: id)
        }
        var seen: [(UInt64, Date)] = []
        while let now = s.nextDeadline {
            for due in s.step(now: now).due {
                #expect(due.occurrence == now)
                #expect(!due.late)
                seen.append((due.item.id, due.occurrence))
            }
        }
        #expect(seen.count == expected.count)
        #expect(Set(seen.map(\.0)) == Set(expected.keys))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.1 <= $1.1 })
    }

    @Test func aPopupWithAnEndDateIsClosedThenUnlessTheServerClosedItFirst() {
        var s = Scheduler()
        s.trackPopup(ShownPopup(notificationID: 7, itemID: 1, until: t0 + 60))
        s.trackPopup(ShownPopup(notificationID: 8, itemID: 2, until: t0 + 90))
        #expect(s.nextDeadline == t0 + 60)
        s.popupClosed(notificationID: 7)
        #expect(s.nextDeadline == t0 + 90)
        #expect(s.step(now: t0 + 89).closePopups.isEmpty)
        #expect(s.step(now: t0 + 90).closePopups.map(\.notificationID) == [8])
        #expect(s.nextDeadline == nil)
    }
}

/// Repeating items: one trigger each, pushed back after every firing; years run in milliseconds.
@Suite struct RepeatingSchedulerTests {
    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    func recurrence(_ rule: WrittenRule, zone: RuleTimeZone = .named("Europe/Berlin")) throws -> Recurrence {
        try Recurrence.parse(rule, now: t0, timeZone: zone, systemTimeZone: berlin)
    }

    func schedule(
        _ s: inout Scheduler, _ r: Recurrence, _ summary: String, endDate: Date? = nil, count: Int? = nil
    ) -> UInt64 {
        let id = s.allocateID()
        let first = r.nextOccurrence(after: t0, systemTimeZone: berlin)!
        _ = s.add(
            ScheduledItem(
                id: id, content: .init(summary: summary), fireDate: first, recurrence: r, endDate: endDate,
                maximumOccurrences: count), now: t0)
        return id
    }

    /// Steps the scheduler exactly at each deadline until `end`; returns the steps.
    func run(_ s: inout Scheduler, until end: Date) -> [SchedulerStep] {
        var steps: [SchedulerStep] = []
        while let next = s.nextDeadline, next <= end { steps.append(s.step(now: next)) }
        return steps
    }

    @Test func firstFridaysForTwoYearsAreExactlyTheCalendarsFirstFridays() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = schedule(&s, try recurrence(.phrase("every month on the first friday at 20:15")), "First Friday")
        let fired = run(&s, until: t0 + 2 * 366 * 86_400).flatMap(\.due).map(\.occurrence)
        #expect(fired.count == 24)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: berlin.identifier)!
        for date in fired {
            let c = calendar.dateComponents([.weekday, .day, .hour, .minute], from: date)
            #expect(c.weekday == 6 && c.day! <= 7 && c.hour == 20 && c.minute == 15)
        }
        #expect(s.count == 1)
    }

    @Test func aRuleWithACountFinishes() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let id = schedule(
            &s, try recurrence(.rrule("FREQ=DAILY;COUNT=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0", dtstart: nil)), "3x")
        let steps = run(&s, until: .distantFuture)
        #expect(steps.flatMap(\.due).count == 3)
        #expect(steps.flatMap(\.finished).map(\.id) == [id])
        #expect(steps.flatMap(\.due).map(\.number) == [1, 2, 3])
        #expect(s.count == 0)
    }

    @Test func anEntryCountStopsARuleThatWouldGoOnForever() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = schedule(&s, try recurrence(.phrase("every day at 9:00")), "five times", count: 5)
        let steps = run(&s, until: .distantFuture)
        #expect(steps.flatMap(\.due).count == 5)
        #expect(steps.flatMap(\.finished).map(\.finished) == [.countReached])
    }

    @Test func anEndDateRemovesTheItemAtThatMomentNotAtItsNextOccurrence() throws {
        var s = Scheduler(systemTimeZone: berlin)
        // Daily at 9:00 from 2026-11-22; ends 2026-11-24 12:00, between two occurrences.
        let end = t0 + 2 * 86_400 + 12 * 3600
        let id = schedule(&s, try recurrence(.phrase("every day at 9:00")), "until Tuesday noon", endDate: end)
        let steps = run(&s, until: .distantFuture)
        #expect(steps.flatMap(\.due).map(\.occurrence) == [t0 + 9 * 3600, t0 + 33 * 3600, t0 + 57 * 3600])
        let last = steps.last!
        #expect(last.finished.map(\.id) == [id])
        #expect(last.finished.first?.finished == .ended)
        // The step that removed it ran at the end date itself.
        #expect(s.step(now: end).deadline == nil)
        #expect(steps.count == 4)
    }

    @Test func everyTwoSecondsForADayTakesMillisecondsAndKeepsOneTrigger() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = schedule(&s, try recurrence(.phrase("every 2 seconds")), "tick")
        let fired = run(&s, until: t0 + 86_400).flatMap(\.due).map(\.occurrence)
        #expect(fired.count == 43_200)
        #expect(zip(fired, fired.dropFirst()).allSatisfy { $1.timeIntervalSince($0) == 2 })
        #expect(s.count == 1)
    }

    @Test func anOccurrenceKeptToTheMicrosecondIsNotMetAgainAFractionLater() throws {
        // An interval counted from a `now` with nanoseconds; the store keeps its occurrences to the
        // microsecond, rounding to the nearest (so the rule's own occurrence may lie just after it).
        let now = t0 + 0.123_456_2
        let rule = try Recurrence.parse(
            .phrase("every 30 minutes"), now: now, timeZone: .floating, systemTimeZone: berlin)
        let exact = try #require(rule.nextOccurrence(after: now, systemTimeZone: berlin))
        let stored = Date(timeIntervalSince1970: (exact.timeIntervalSince1970 * 1_000_000).rounded() / 1_000_000)
        #expect(stored < exact, "\(exact.timeIntervalSince1970) \(stored.timeIntervalSince1970)")
        let item = ScheduledItem(id: 1, content: .init(summary: "tick"), fireDate: stored, recurrence: rule)
        let next = item.occurrencesAfterPending(count: 3, systemTimeZone: berlin)
        #expect(next.map { $0.timeIntervalSince(stored).rounded() } == [1800, 3600, 5400])
        // And once fired, the scheduler moves it a whole interval on, not to the same occurrence again.
        var s = Scheduler(systemTimeZone: berlin)
        _ = s.add(item, now: now)
        let fired = run(&s, until: stored + 3601).flatMap(\.due).map(\.occurrence)
        #expect(fired.map { $0.timeIntervalSince(stored).rounded() } == [0, 1800, 3600])
    }

    @Test func cancellingARepeatingItemStopsIt() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let id = schedule(&s, try recurrence(.onCalendar("*-*-* *:00:00")), "hourly")
        _ = run(&s, until: t0 + 3 * 3600)
        _ = s.cancel(id, now: t0 + 3 * 3600)
        #expect(run(&s, until: t0 + 30 * 86_400).isEmpty)
    }

    @Test func aFloatingRuleFollowsANewSystemZoneAndAPinnedOneDoesNot() throws {
        let tokyo = Zone(identifier: "Asia/Tokyo")!
        var s = Scheduler(systemTimeZone: berlin)
        let floating = schedule(&s, try recurrence(.phrase("every day at 9:00"), zone: .floating), "floating")
        let pinned = schedule(&s, try recurrence(.phrase("every day at 9:00")), "pinned")
        let step = s.setSystemTimeZone(tokyo, now: t0)
        // 2026-11-22 09:00 in Tokyo is 00:00 UTC; in Berlin it is 08:00 UTC.
        #expect(step.updated.map(\.id) == [floating])
        #expect(s.item(floating)?.fireDate == Date(timeIntervalSince1970: 1_795_305_600))
        #expect(s.item(pinned)?.fireDate == t0 + 9 * 3600)
        #expect(step.deadline == Date(timeIntervalSince1970: 1_795_305_600))
    }
}

/// What happens to occurrences that passed while nobody could deliver them.
@Suite struct MissedTriggerTests {
    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    func daily(_ s: inout Scheduler, group: String = "g", policy: MissedPolicy?) throws -> UInt64 {
        let entry = TimelineEntry(
            id: "daily", trigger: .rule(.phrase("every day at 9:00"), timeZone: "Europe/Berlin"),
            content: .fixed(NotificationContent(summary: "Stand-up")))
        var plan = try s.planReschedule(
            TimelineGroup(id: group, settings: GroupSettings(missedPolicy: policy), entries: [entry]), now: t0)
        s.assignIDs(&plan)
        _ = s.apply(plan, now: t0)
        return plan.upserts[0].id
    }

    @Test(arguments: [
        // (policy, hours after the last missed 9:00, delivered late?, handling of the missed ones)
        (MissedPolicy.deliverLate(window: 3600), 0.5, true, MissedOccurrences.Handling.skipped),
        (MissedPolicy.deliverLate(window: 3600), 3.0, false, MissedOccurrences.Handling.tooLate),
        (MissedPolicy.coalesce, 3.0, false, MissedOccurrences.Handling.coalesced),
        (MissedPolicy.skip, 0.5, false, MissedOccurrences.Handling.skipped),
    ])
    func threeDaysDownThenAPolicy(
        policy: MissedPolicy, hoursLate: Double, deliveredLate: Bool, handling: MissedOccurrences.Handling
    ) throws {
        var s = Scheduler(systemTimeZone: berlin)
        let id = try daily(&s, policy: policy)
        // Nobody stepped the scheduler from Sunday 00:00 to Wednesday 9:00 + hoursLate.
        let now = t0 + 3 * 86_400 + 9 * 3600 + hoursLate * 3600
        let step = s.step(now: now)
        #expect(step.due.count == (deliveredLate ? 1 : 0))
        if deliveredLate {
            #expect(step.due[0].late)
            #expect(step.due[0].occurrence == t0 + 3 * 86_400 + 9 * 3600)
            #expect(step.due[0].number == 4)
        }
        let missed = try #require(step.missed.first)
        #expect(step.missed.count == 1)
        #expect(missed.count == (deliveredLate ? 3 : 4))
        #expect(missed.first == t0 + 9 * 3600)
        #expect(missed.handling == handling)
        // Whatever happened, the rhythm goes on: next is Thursday 9:00, and the count includes the missed.
        #expect(s.item(id)?.fireDate == t0 + 4 * 86_400 + 9 * 3600)
        #expect(s.item(id)?.state.occurrences == 4)
    }

    @Test func coalescedOccurrencesAreGroupedIntoOneDigestPerGroup() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = try daily(&s, group: "a", policy: .coalesce)
        _ = try daily(&s, group: "b", policy: .coalesce)
        let step = s.step(now: t0 + 86_400 + 12 * 3600)
        #expect(step.coalesced.map(\.group?.id) == ["a", "b"])
        #expect(step.coalesced.allSatisfy { $0.occurrences.count == 1 && $0.occurrences[0].count == 2 })
    }

    @Test func theDefaultPolicyAppliesToGroupsThatSetNone() throws {
        var s = Scheduler(systemTimeZone: berlin)
        s.defaultMissedPolicy = .skip
        _ = try daily(&s, policy: nil)
        let step = s.step(now: t0 + 9 * 3600 + 60)
        #expect(step.due.isEmpty)
        #expect(step.missed.map(\.handling) == [.skipped])
    }

    @Test func aSubSecondRuleAfterALongStallFiresOnceAndCountsTheRest() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let r = try Recurrence.parse(
            .phrase("every 2 seconds"), now: t0, timeZone: .floating, systemTimeZone: berlin)
        let id = s.allocateID()
        _ = s.add(ScheduledItem(id: id, content: .init(summary: "tick"), fireDate: t0 + 2, recurrence: r), now: t0)
        // A 10-second stall: five occurrences are due, the last one 0 s ago.
        let step = s.step(now: t0 + 10)
        #expect(step.due.map(\.occurrence) == [t0 + 10])
        #expect(step.missed.map(\.count) == [4])
        #expect(step.deadline == t0 + 12)
    }
}

/// Groups: a whole timeline replaced atomically, entries matched by id, a dry run's diff.
@Suite struct RescheduleTests {
    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00, a Sunday.
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    func entry(_ id: String, _ phrase: String, summary: String? = nil) -> TimelineEntry {
        TimelineEntry(
            id: id, trigger: .rule(.phrase(phrase), timeZone: "Europe/Berlin"),
            content: .fixed(NotificationContent(summary: summary ?? id)))
    }

    func apply(_ s: inout Scheduler, _ entries: [TimelineEntry], enabled: Bool = true, now: Date) throws
        -> ReschedulePlan
    {
        var plan = try s.planReschedule(
            TimelineGroup(id: "g", settings: GroupSettings(enabled: enabled), entries: entries), now: now)
        s.assignIDs(&plan)
        _ = s.apply(plan, now: now)
        return plan
    }

    @Test func aNewGroupAddsEveryEntryWithItsFirstOccurrence() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let plan = try apply(
            &s, [entry("morning", "every day at 9:00"), entry("evening", "every day at 21:00")], now: t0)
        #expect(plan.changes.map(\.kind) == [.added, .added])
        #expect(plan.changes.map(\.after) == [t0 + 9 * 3600, t0 + 21 * 3600])
        #expect(s.pending.map(\.entry.id) == ["morning", "evening"])
    }

    @Test func theSameTimelineAgainChangesNothingAndKeepsState() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let first = try apply(&s, [entry("morning", "every day at 9:00")], now: t0)
        _ = s.step(now: t0 + 9 * 3600)
        let again = try apply(&s, [entry("morning", "every day at 9:00")], now: t0 + 10 * 3600)
        #expect(again.changes.map(\.kind) == [.unchanged])
        #expect(again.upserts.isEmpty)
        #expect(s.pending.map(\.id) == first.upserts.map(\.id))
        #expect(s.pending[0].state.occurrences == 1)
        #expect(s.pending[0].fireDate == t0 + 33 * 3600)
    }

    /// With the store holding definitions, items keep only fingerprints; a reschedule still tells an
    /// unchanged entry (same fingerprint) from a changed one, and reads the old entry through
    /// `storedEntry` to keep the state of an entry whose content changed but whose trigger did not.
    @Test func definitionsLeftToTheStoreAreComparedByFingerprintAndReadWhenChanged() throws {
        var s = Scheduler(systemTimeZone: berlin)
        s.definitionsInStore = true
        let first = try apply(&s, [entry("a", "every day at 9:00"), entry("b", "every day at 10:00")], now: t0)
        #expect(s.pending.allSatisfy { !$0.definition.isResident && $0.definition.decodedEntry == nil })
        // The entries as the store would have them.
        let stored = Dictionary(uniqueKeysWithValues: first.upserts.map { ($0.id, $0.entry) })
        var read: [String] = []
        _ = s.step(now: t0 + 9 * 3600)
        let plan = try s.planReschedule(
            TimelineGroup(
                id: "g",
                entries: [
                    entry("a", "every day at 9:00"), entry("b", "every day at 10:00", summary: "b, reworded"),
                ]), now: t0 + 9 * 3600 + 1
        ) { item in
            read.append(item.entryID)
            return stored[item.id]
        }
        #expect(plan.changes.map(\.kind) == [.unchanged, .changed])
        #expect(read == ["b"])
        // "b" keeps its next occurrence: its trigger did not change.
        #expect(plan.changes[1].before == t0 + 10 * 3600 && plan.changes[1].after == t0 + 10 * 3600)
        // Without the stored entry, a changed definition counts as a changed trigger: it starts again.
        let blind = try s.planReschedule(
            TimelineGroup(
                id: "g", entries: [entry("a", "every day at 9:00", summary: "a, reworded")]),
            now: t0 + 9 * 3600 + 1)
        #expect(blind.changes.first?.kind == .changed)
        #expect(blind.upserts.first?.state.occurrences == 0)
    }

    @Test func aDryRunReportsTheDiffAndChangesNothing() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = try apply(
            &s,
            [
                entry("keep", "every day at 9:00"), entry("move", "every day at 10:00"),
                entry("drop", "every day at 11:00"),
            ], now: t0)
        let before = s.pending
        let plan = try s.planReschedule(
            TimelineGroup(
                id: "g",
                entries: [
                    entry("keep", "every day at 9:00"), entry("move", "every day at 12:00"),
                    entry("new", "every day at 8:00"),
                ]), now: t0)
        #expect(
            plan.changes == [
                EntryChange(entryID: "keep", kind: .unchanged, before: t0 + 9 * 3600, after: t0 + 9 * 3600),
                EntryChange(entryID: "move", kind: .changed, before: t0 + 10 * 3600, after: t0 + 12 * 3600),
                EntryChange(entryID: "new", kind: .added, before: nil, after: t0 + 8 * 3600),
                EntryChange(entryID: "drop", kind: .removed, before: t0 + 11 * 3600, after: nil),
            ])
        #expect(s.pending == before)
    }

    @Test func applyingReplacesTheWholeTimelineInOneStep() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let old = try apply(&s, [entry("a", "every day at 9:00"), entry("b", "every day at 10:00")], now: t0)
        let new = try apply(&s, [entry("b", "every day at 11:00"), entry("c", "every day at 8:00")], now: t0)
        #expect(s.pending.map(\.entry.id) == ["c", "b"])
        // "b" changed but kept its item id; "c" is new.
        #expect(s.pending.first { $0.entry.id == "b" }?.id == old.upserts[1].id)
        #expect(new.removed == [old.upserts[0].id])
        var fired: [String] = []
        while let next = s.nextDeadline, next < t0 + 86_400 { fired += s.step(now: next).deliveredSummaries }
        #expect(fired == ["c", "b"])
    }

    @Test func aOneOffEntryThatFiredDoesNotFireAgainWhenTheGroupIsLoadedAgain() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let once = TimelineEntry(
            id: "once", trigger: .at(t0 + 60), content: .fixed(NotificationContent(summary: "once")))
        _ = try apply(&s, [once], now: t0)
        #expect(s.step(now: t0 + 60).deliveredSummaries == ["once"])
        let again = try apply(&s, [once], now: t0 + 120)
        #expect(again.changes.map(\.kind) == [.unchanged])
        #expect(s.pending.isEmpty)
        #expect(s.step(now: t0 + 86_400).due.isEmpty)
    }

    @Test func reloadingAnUnchangedForFiftyDaysRuleDoesNotStartTheFiftyDaysAgain() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let fifty = entry("fifty", "every day at 9:00 for 50 days")
        _ = try apply(&s, [fifty], now: t0)
        var delivered = 0
        while let next = s.nextDeadline {
            delivered += s.step(now: next).due.count
            // The group file is read again every day (a reload), unchanged.
            _ = try apply(&s, [fifty], now: next + 3600)
        }
        #expect(delivered == 50)
    }

    @Test func disablingAGroupEmptiesItsPendingAndEnablingKeepsItsState() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = try apply(&s, [entry("daily", "every day at 9:00")], now: t0)
        _ = s.step(now: t0 + 9 * 3600)
        let off = try apply(&s, [entry("daily", "every day at 9:00")], enabled: false, now: t0 + 10 * 3600)
        #expect(off.changes.map(\.after) == [nil])
        #expect(s.pending.isEmpty)
        #expect(s.step(now: t0 + 5 * 86_400).due.isEmpty)
        let on = try apply(&s, [entry("daily", "every day at 9:00")], now: t0 + 5 * 86_400)
        #expect(on.changes.map(\.after) == [t0 + 5 * 86_400 + 9 * 3600])
        #expect(s.pending.map(\.state.occurrences) == [1])
    }

    @Test func anOccurrenceThatFiredWhileThePlanWasStoredIsNotFiredTwice() throws {
        var s = Scheduler(systemTimeZone: berlin)
        _ = try apply(&s, [entry("daily", "every day at 9:00")], now: t0)
        // A reschedule planned at 8:59 changes only the content; 9:00 fires before it is applied.
        var plan = try s.planReschedule(
            TimelineGroup(id: "g", entries: [entry("daily", "every day at 9:00", summary: "new text")]),
            now: t0 + 9 * 3600 - 60)
        s.assignIDs(&plan)
        #expect(s.step(now: t0 + 9 * 3600).due.count == 1)
        _ = s.apply(plan, now: t0 + 9 * 3600 + 1)
        #expect(s.pending.map(\.fireDate) == [t0 + 33 * 3600])
        #expect(s.pending.map(\.content.summary) == ["new text"])
    }

    @Test func removingAGroupRemovesAllItsItems() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let plan = try apply(&s, [entry("a", "every day at 9:00"), entry("b", "every day at 10:00")], now: t0)
        let removed = s.removeGroup(GroupKey(owner: "", id: "g"), now: t0)
        #expect(removed?.removed == plan.upserts.map(\.id).sorted())
        #expect(removed?.step.deadline == nil)
        #expect(s.pending.isEmpty)
        #expect(s.removeGroup(GroupKey(owner: "", id: "g"), now: t0) == nil)
    }

    @Test func aBadRuleNamesTheEntry() {
        let s = Scheduler(systemTimeZone: berlin)
        #expect(throws: TimelineError.self) {
            try s.planReschedule(TimelineGroup(id: "g", entries: [entry("broken", "every blue moon")]), now: t0)
        }
        do {
            _ = try s.planReschedule(TimelineGroup(id: "g", entries: [entry("broken", "every blue moon")]), now: t0)
        } catch {
            #expect(error.message.hasPrefix("entry broken:"))
            #expect(error.kind == .rule)
        }
    }

    @Test func aRuleThatNeverFiresIsRefusedAsARuleError() {
        let s = Scheduler(systemTimeZone: berlin)
        let never = TimelineEntry(
            id: "feb30", trigger: .rule(.onCalendar("*-02-30 09:00"), timeZone: nil),
            content: .fixed(NotificationContent(summary: "never")))
        let error = #expect(throws: TimelineError.self) {
            try s.planReschedule(TimelineGroup(id: "g", entries: [never]), now: t0)
        }
        #expect(error?.kind == .rule)
        #expect(error?.message == "entry feb30: the rule never fires (no date matches it); check it with `chime next`")
    }

    @Test func aBadEntryIsNotARuleError() {
        let s = Scheduler(systemTimeZone: berlin)
        let error = #expect(throws: TimelineError.self) {
            try s.planReschedule(
                TimelineGroup(id: "g", entries: [entry("a", "every day"), entry("a", "every day")]), now: t0)
        }
        #expect(error?.kind == .invalid)
    }

    @Test func anIdentifierNamesItsFirstCharacterOutsideLettersDigitsAndDashUnderscoreDot() {
        func problem(_ id: String) -> String? {
            do {
                try TimelineGroup.validateIdentifier(id, what: "entry id")
                return nil
            } catch {
                return error.message
            }
        }
        #expect(problem("Morning-pill_2.v1") == nil)
        #expect(
            problem("caf\u{E9}")
                == "the entry id \"caf\u{E9}\" contains \"\u{E9}\"; use letters, digits, '-', '_' and '.' only")
        // A letter with a combining accent is one character, named whole.
        #expect(problem("a\u{301}b")?.contains("contains \"a\u{301}\"") == true)
        #expect(problem("x/y")?.contains("contains \"/\"") == true)
        #expect(problem("") == "the entry id is empty")
        #expect(problem(String(repeating: "a", count: 201)) == "the entry id is longer than 200 bytes")
    }

    /// A 10 000-entry timeline over a simulated year: every occurrence once, in order, on time.
    @Test func tenThousandEntriesFireInOrder() throws {
        var s = Scheduler(systemTimeZone: berlin)
        var rng = SplitMix64(seed: 7)
        let entries = (0..<10_000).map { i in
            TimelineEntry(
                id: "e\(i)", trigger: .at(t0 + Double(rng.next() % 31_536_000)),
                content: .fixed(NotificationContent(summary: "e\(i)")))
        }
        _ = try apply(&s, entries, now: t0)
        var fired: [Date] = []
        while let next = s.nextDeadline { fired += s.step(now: next).due.map(\.occurrence) }
        #expect(fired.count == 10_000)
        #expect(fired == fired.sorted())
        let expected: [Date] = entries.map { if case .at(let d) = $0.trigger { d } else { .distantPast } }
        #expect(fired == expected.sorted())
    }
}

/// The built-in verbs the scheduler carries out: Stop Repeat and Skip Next.
@Suite struct VerbSchedulerTests {
    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    func daily(_ s: inout Scheduler) throws -> UInt64 {
        let r = try Recurrence.parse(
            .phrase("every day at 9:00"), now: t0, timeZone: .named("Europe/Berlin"), systemTimeZone: berlin)
        let id = s.allocateID()
        _ = s.add(
            ScheduledItem(id: id, content: .init(summary: "daily"), fireDate: t0 + 9 * 3600, recurrence: r), now: t0)
        return id
    }

    @Test func stopRepeatFinishesTheItemAsStoppedAndNothingFiresAgain() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let id = try daily(&s)
        _ = s.step(now: t0 + 9 * 3600)
        let stopped = s.stop(id, now: t0 + 10 * 3600)
        let step = try #require(stopped)
        #expect(step.finished.map(\.finished) == [.stopped])
        #expect(step.deadline == nil)
        #expect(s.stop(id, now: t0 + 10 * 3600) == nil)
        #expect(s.step(now: t0 + 30 * 86_400).due.isEmpty)
    }

    @Test func skipNextSkipsExactlyOneOccurrence() throws {
        var s = Scheduler(systemTimeZone: berlin)
        let id = try daily(&s)
        let skipped = s.skipNext(id, now: t0 + 3600)
        let step = try #require(skipped)
        #expect(step.missed.map(\.first) == [t0 + 9 * 3600])
        #expect(step.updated.map(\.fireDate) == [t0 + 33 * 3600])
        #expect(step.deadline == t0 + 33 * 3600)
        #expect(s.step(now: t0 + 33 * 3600).due.map(\.number) == [2])
    }
}

/// Occurrences missed for different causes get the group's policy for that cause.
@Suite struct MissedCauseTests {
    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    /// A group whose daily 9:00 entry is delivered late after a reboot, summed up in a digest after a
    /// sleep, and skipped when chimed was stopped; anything else (a clock set forward) falls back to
    /// `skip` too, through the group's general policy.
    func scheduler() throws -> (Scheduler, UInt64) {
        var s = Scheduler(systemTimeZone: berlin)
        let entry = TimelineEntry(
            id: "daily", trigger: .rule(.phrase("every day at 9:00"), timeZone: "Europe/Berlin"),
            content: .fixed(NotificationContent(summary: "Stand-up")))
        let settings = GroupSettings(
            missedPolicy: .skip,
            missedPolicyByCause: [.machineOff: .deliverLate(window: 86_400), .suspended: .coalesce])
        var plan = try s.planReschedule(TimelineGroup(id: "g", settings: settings, entries: [entry]), now: t0)
        s.assignIDs(&plan)
        _ = s.apply(plan, now: t0)
        return (s, plan.upserts[0].id)
    }

    @Test func theCauseOfAMissedOccurrenceIsToldByWhenItWasDue() {
        let nine = t0 + 9 * 3600
        var downtime = Downtime(bootTime: nine + 3600, startTime: nine + 7200)
        #expect(downtime.cause(of: nine) == .machineOff)
        #expect(downtime.cause(of: nine + 5400) == .notRunning)
        #expect(downtime.cause(of: nine + 9000) == nil)
        downtime.addSleep(from: nine + 8000, to: nine + 10_000)
        #expect(downtime.cause(of: nine + 9000) == .suspended)
        #expect(downtime.cause(of: nine + 10_001) == nil)
        for k in 0..<(Downtime.sleepLimit + 5) {
            downtime.addSleep(from: nine + 20_000 + Double(k) * 10, to: nine + 20_005 + Double(k) * 10)
        }
        #expect(downtime.sleeps.count == Downtime.sleepLimit)
        #expect(downtime.cause(of: nine + 9000) == nil, "the oldest sleeps are forgotten")
    }

    @Test(arguments: [
        // (machine started, chimed started, sleep, the cause told, delivered late?, handling)
        (9.5, 9.75, false, MissedCause.machineOff, true, MissedOccurrences.Handling.deliveredLate),
        (-24.0, 9.75, true, MissedCause.suspended, false, MissedOccurrences.Handling.coalesced),
        (-24.0, 9.75, false, MissedCause.notRunning, false, MissedOccurrences.Handling.skipped),
    ])
    func eachCauseGetsItsPolicy(
        bootHours: Double, startHours: Double, slept: Bool, cause: MissedCause, deliveredLate: Bool,
        handling: MissedOccurrences.Handling
    ) throws {
        var (s, _) = try scheduler()
        let now = t0 + 10 * 3600
        s.downtime = Downtime(bootTime: t0 + bootHours * 3600, startTime: t0 + startHours * 3600)
        if slept { s.downtime.addSleep(from: t0 + 8 * 3600, to: t0 + 9.9 * 3600) }
        let step = s.step(now: now)
        #expect(step.due.count == (deliveredLate ? 1 : 0))
        #expect(step.due.first?.late ?? deliveredLate == deliveredLate)
        let missed = try #require(step.missed.first)
        #expect(step.missed.count == 1)
        #expect(missed.cause == cause)
        #expect(missed.handling == handling)
        #expect(missed.first == t0 + 9 * 3600)
    }

    /// A late occurrence no cause covers (the clock was set forward while chimed ran) gets the group's
    /// general policy, and history names no cause.
    @Test func noCauseFallsBackToTheGeneralPolicy() throws {
        var (s, _) = try scheduler()
        s.downtime = Downtime(bootTime: t0 - 86_400, startTime: t0)
        let step = s.step(now: t0 + 10 * 3600)
        #expect(step.due.isEmpty)
        #expect(step.missed.map(\.cause) == [nil])
        #expect(step.missed.map(\.handling) == [.skipped])
    }
}
