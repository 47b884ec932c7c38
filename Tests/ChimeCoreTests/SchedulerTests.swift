import Foundation
import Testing

@testable import ChimeCore

/// The scheduler state machine, driven by a manual clock: no waiting, no real time.
@Suite struct SchedulerTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func content(_ s: String) -> NotificationContent { NotificationContent(summary: s) }

    func delivered(_ actions: [SchedulerAction]) -> [String] {
        actions.flatMap { action -> [String] in
            if case .deliver(let items) = action { return items.map(\.content.summary) }
            return []
        }
    }

    func armed(_ actions: [SchedulerAction]) -> Date? {
        for action in actions { if case .arm(let d) = action { return d } }
        return nil
    }

    @Test func armsTheTimerAtTheEarliestDeadline() {
        var s = Scheduler()
        let (_, a1) = s.schedule(content("later"), at: t0 + 60, now: t0)
        #expect(a1 == [.arm(t0 + 60)])
        let (_, a2) = s.schedule(content("sooner"), at: t0 + 10, now: t0)
        #expect(a2 == [.arm(t0 + 10)])
        let (_, a3) = s.schedule(content("latest"), at: t0 + 600, now: t0)
        #expect(a3 == [.arm(t0 + 10)])
    }

    @Test func deliversOnlyWhatIsDueInDeadlineOrder() {
        var s = Scheduler()
        for (name, offset) in [("c", 30.0), ("a", 10), ("b", 20), ("d", 40)] {
            _ = s.schedule(content(name), at: t0 + offset, now: t0)
        }
        #expect(delivered(s.step(now: t0 + 9.999)) == [])
        let step = s.step(now: t0 + 25)
        #expect(delivered(step) == ["a", "b"])
        #expect(armed(step) == t0 + 30)
        let last = s.step(now: t0 + 100)
        #expect(delivered(last) == ["c", "d"])
        #expect(last.last == .disarm)
    }

    @Test func itemsDueTogetherKeepTheirSchedulingOrder() {
        var s = Scheduler()
        for name in ["one", "two", "three", "four"] { _ = s.schedule(content(name), at: t0 + 5, now: t0) }
        #expect(delivered(s.step(now: t0 + 5)) == ["one", "two", "three", "four"])
    }

    @Test func aPastDeadlineIsDeliveredAtOnce() {
        var s = Scheduler()
        let (_, actions) = s.schedule(content("late"), at: t0 - 3600, now: t0)
        #expect(delivered(actions) == ["late"])
        #expect(actions.last == .disarm)
    }

    @Test func cancellingRemovesTheItemAndRearms() {
        var s = Scheduler()
        let (first, _) = s.schedule(content("first"), at: t0 + 10, now: t0)
        _ = s.schedule(content("second"), at: t0 + 20, now: t0)
        let (item, actions) = s.cancel(first, now: t0)
        #expect(item?.content.summary == "first")
        #expect(armed(actions) == t0 + 20)
        #expect(s.cancel(first, now: t0).item == nil)
        #expect(delivered(s.step(now: t0 + 30)) == ["second"])
        #expect(s.pending.isEmpty)
    }

    @Test func restoringKeepsIdsAndDoesNotReuseThem() {
        var s = Scheduler()
        _ = s.restore(ScheduledItem(id: 41, content: content("restored"), fireDate: t0 + 5), now: t0)
        let (id, _) = s.schedule(content("new"), at: t0 + 6, now: t0)
        #expect(id == 42)
        #expect(s.pending.map(\.id) == [41, 42])
    }

    @Test func restoringManyItemsDeliversEveryOverdueOneInOrder() {
        var s = Scheduler()
        let items = [
            ScheduledItem(id: 3, content: content("c"), fireDate: t0 - 10),
            ScheduledItem(id: 1, content: content("a"), fireDate: t0 - 30),
            ScheduledItem(id: 7, content: content("future"), fireDate: t0 + 60),
            ScheduledItem(id: 2, content: content("b"), fireDate: t0 - 20),
        ]
        let actions = s.restore(items, now: t0)
        #expect(delivered(actions) == ["a", "b", "c"])
        #expect(armed(actions) == t0 + 60)
        #expect(s.allocateID() == 8)
    }

    /// A long simulated run: 10 000 items over a simulated year, cancelled at random, stepped in
    /// random increments; every live item is delivered exactly once, in deadline order, never early.
    @Test func aSimulatedYearDeliversEveryLiveItemOnceInOrder() {
        var rng = SplitMix64(seed: 42)
        var s = Scheduler()
        var expected: [UInt64: Date] = [:]
        for i in 0..<10_000 {
            let at = t0 + Double(rng.next() % 31_536_000)
            let (id, _) = s.schedule(content("item \(i)"), at: at, now: t0)
            expected[id] = at
        }
        for id in expected.keys.sorted() where rng.next() % 4 == 0 {
            _ = s.cancel(id, now: t0)
            expected.removeValue(forKey: id)
        }
        var now = t0
        var seen: [(UInt64, Date)] = []
        while now < t0 + 31_536_001 {
            now += Double(rng.next() % 200_000)
            for action in s.step(now: now) {
                if case .deliver(let items) = action {
                    for item in items {
                        #expect(item.fireDate <= now)
                        seen.append((item.id, item.fireDate))
                    }
                }
            }
        }
        #expect(seen.count == expected.count)
        #expect(Set(seen.map(\.0)) == Set(expected.keys))
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.1 <= $1.1 })
    }
}

/// Repeating items: one trigger each, pushed back after every firing; years run in milliseconds.
@Suite struct RepeatingSchedulerTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00
    let t0 = Date(timeIntervalSince1970: 1_795_302_000)

    func recurrence(_ rule: WrittenRule) throws -> Recurrence {
        try Recurrence.parse(rule, now: t0, timeZone: .named("Europe/Berlin"), systemTimeZone: berlin)
    }

    func scheduler() -> Scheduler {
        var s = Scheduler()
        s.systemTimeZone = berlin
        return s
    }

    func schedule(_ s: inout Scheduler, _ r: Recurrence, _ summary: String) -> UInt64 {
        let id = s.allocateID()
        let first = r.nextOccurrence(after: t0, systemTimeZone: berlin)!
        _ = s.restore(ScheduledItem(id: id, content: .init(summary: summary), fireDate: first, recurrence: r), now: t0)
        return id
    }

    /// Steps the scheduler exactly at each deadline until `end`; returns the delivery times.
    func run(_ s: inout Scheduler, until end: Date) -> [Date] {
        var fired: [Date] = []
        while let next = s.nextDeadline, next <= end {
            for action in s.step(now: next) {
                if case .deliver(let items) = action { fired += items.map { _ in next } }
            }
        }
        return fired
    }

    @Test func firstFridaysForTwoYearsAreExactlyTheCalendarsFirstFridays() throws {
        var s = scheduler()
        _ = schedule(&s, try recurrence(.phrase("every month on the first friday at 20:15")), "First Friday")
        let fired = run(&s, until: t0 + 2 * 366 * 86_400)
        #expect(fired.count == 24)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        for date in fired {
            let c = calendar.dateComponents([.weekday, .day, .hour, .minute], from: date)
            #expect(c.weekday == 6 && c.day! <= 7 && c.hour == 20 && c.minute == 15)
        }
        #expect(s.count == 1)
    }

    @Test func aRuleWithACountFinishes() throws {
        var s = scheduler()
        let id = schedule(
            &s, try recurrence(.rrule("FREQ=DAILY;COUNT=3;BYHOUR=9;BYMINUTE=0;BYSECOND=0", dtstart: nil)), "3x")
        var finished: [UInt64] = []
        var delivered = 0
        while let next = s.nextDeadline {
            for action in s.step(now: next) {
                if case .deliver(let items) = action { delivered += items.count }
                if case .finish(let f) = action { finished.append(f) }
            }
        }
        #expect(delivered == 3)
        #expect(finished == [id])
        #expect(s.count == 0)
    }

    @Test func afterDowntimeItFiresOnceLateThenKeepsItsRhythm() throws {
        var s = scheduler()
        _ = schedule(&s, try recurrence(.phrase("every day at 9:00")), "daily")
        // Nobody stepped the scheduler for ten days (chimed was not running).
        let late = t0 + 10 * 86_400 + 12 * 3600
        let actions = s.step(now: late)
        let delivered = actions.compactMap { if case .deliver(let items) = $0 { items.count } else { nil } }
        #expect(delivered == [1])
        let advanced = actions.compactMap { if case .advance(let item) = $0 { item.fireDate } else { nil } }
        // The next one is the following 09:00 after the late delivery, not one of the missed ones.
        #expect(advanced == [t0 + 11 * 86_400 + 9 * 3600])
    }

    @Test func everyTwoSecondsForAYearTakesMillisecondsAndKeepsOneTrigger() throws {
        var s = scheduler()
        _ = schedule(&s, try recurrence(.phrase("every 2 seconds")), "tick")
        let fired = run(&s, until: t0 + 86_400)
        #expect(fired.count == 43_200)
        #expect(zip(fired, fired.dropFirst()).allSatisfy { $1.timeIntervalSince($0) == 2 })
        #expect(s.count == 1)
    }

    @Test func cancellingARepeatingItemStopsIt() throws {
        var s = scheduler()
        let id = schedule(&s, try recurrence(.onCalendar("*-*-* *:00:00")), "hourly")
        _ = run(&s, until: t0 + 3 * 3600)
        _ = s.cancel(id, now: t0 + 3 * 3600)
        #expect(run(&s, until: t0 + 30 * 86_400).isEmpty)
    }
}
