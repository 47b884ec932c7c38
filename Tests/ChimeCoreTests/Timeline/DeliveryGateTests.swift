import Foundation
import Testing

@testable import ChimeCore

@Suite struct DeliveryGateTests {
    /// Noon in Berlin (CEST), well outside quiet hours.
    let t0 = Fixture.utc("2026-06-01T10:00:00Z")
    let nights = QuietHours(start: TimeOfDay(hour: 22, minute: 0), end: TimeOfDay(hour: 7, minute: 0))

    func entries(_ seqs: ClosedRange<UInt64>, at date: Date, urgency: Urgency? = .normal) -> [OutboxEntry] {
        seqs.map { Fixture.entry($0, at: date, urgency: urgency) }
    }

    @Test func fiveHundredAtOnceWithBurstTenAreNineAndOneFloodDigest() throws {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 5, burst: 10), now: t0)
        let plan = gate.plan(entries(1...500, at: t0), now: t0, timeZone: Fixture.berlin)
        #expect(plan.send.map(\.seq) == Array(1...9))
        let digest = try #require(plan.digests.first)
        #expect(plan.digests.count == 1)
        #expect(digest.kind == .flood)
        #expect(digest.entries.map(\.seq) == Array(10...500))
        #expect(digest.content.summary == "491 more notifications")
        #expect(plan.wakeAt == nil)
    }

    @Test func withNoWholeTokenNothingGoesUntilTheNextToken() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 5, burst: 10), now: t0)
        _ = gate.plan(entries(1...500, at: t0), now: t0, timeZone: Fixture.berlin)
        // The bucket is empty; 0.1 s later it holds half a token, the next whole one comes at 0.2 s.
        let late = entries(501...501, at: t0 + 0.1)
        let waiting = gate.plan(late, now: t0 + 0.1, timeZone: Fixture.berlin)
        #expect(waiting.send.isEmpty && waiting.digests.isEmpty)
        #expect(Fixture.isClose(waiting.wakeAt, t0 + 0.2))
        let woken = gate.plan(late, now: waiting.wakeAt!, timeZone: Fixture.berlin)
        #expect(woken.send.map(\.seq) == [501])
        #expect(woken.wakeAt == nil)
    }

    @Test func theBucketRefillsContinuouslyUpToTheBurst() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 0.5, burst: 3), now: t0)
        #expect(gate.plan(entries(1...3, at: t0), now: t0, timeZone: Fixture.berlin).send.count == 3)
        // 4 s at 0.5 a second: two tokens.
        let refilled = gate.plan(entries(4...5, at: t0 + 4), now: t0 + 4, timeZone: Fixture.berlin)
        #expect(refilled.send.map(\.seq) == [4, 5])
        // A day of idling fills the bucket to its burst of 3, no more: two sent, the rest in one digest.
        let dayLater = t0 + 86_400
        let burst = gate.plan(entries(6...10, at: dayLater), now: dayLater, timeZone: Fixture.berlin)
        #expect(burst.send.map(\.seq) == [6, 7])
        #expect(burst.digests.map(\.entries).map { $0.map(\.seq) } == [[8, 9, 10]])
    }

    @Test func criticalEntriesTakeTheTokensFirstAndAreNeverCoalesced() throws {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 4), now: t0)
        let queue = (1...50).map { seq in
            Fixture.entry(UInt64(seq), at: t0, urgency: seq % 10 == 0 && seq < 40 ? .critical : .normal)
        }
        let plan = gate.plan(queue, now: t0, timeZone: Fixture.berlin)
        // Three tokens for the three critical entries, the fourth for one digest of the other 47.
        #expect(plan.send.map(\.seq) == [10, 20, 30])
        let digest = try #require(plan.digests.first)
        #expect(plan.digests.count == 1)
        #expect(digest.entries.count == 47)
        #expect(digest.entries.allSatisfy { $0.content.urgency != .critical })
        #expect(plan.wakeAt == nil)
    }

    @Test func criticalEntriesBeyondTheTokensWaitForThem() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 3), now: t0)
        var queue = entries(1...5, at: t0, urgency: .critical) + entries(6...7, at: t0)
        var now = t0
        var sentAt: [[UInt64]] = []
        var digested: [[UInt64]] = []
        var wakes: [Date?] = []
        for _ in 0..<4 {
            let plan = gate.plan(queue, now: now, timeZone: Fixture.berlin)
            sentAt.append(plan.send.map(\.seq))
            digested.append(contentsOf: plan.digests.map { $0.entries.map(\.seq) })
            let gone = Set(plan.send.map(\.seq) + plan.digests.flatMap { $0.entries.map(\.seq) })
            queue.removeAll { gone.contains($0.seq) }
            wakes.append(plan.wakeAt)
            guard let next = plan.wakeAt else { break }
            now = next
        }
        // One token a second: the three critical ones left over each take the next token; only then do the
        // two ordinary ones go, as one digest on the last token.
        #expect(sentAt == [[1, 2, 3], [4], [5], []])
        #expect(digested == [[6, 7]])
        #expect(queue.isEmpty)
        #expect(zip(wakes, [t0 + 1, t0 + 2, t0 + 3, nil]).allSatisfy { Fixture.isClose($0, $1) })
    }

    @Test func quietHoursHoldOthersLetCriticalPassAndEndInOneDigest() throws {
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(rate: 5, burst: 10), now: t0)
        var queue = [
            // 21:50, before quiet hours; still waiting (as if the server had been away).
            Fixture.entry(1, at: Fixture.utc("2026-06-01T19:50:00Z"), urgency: .normal),
            Fixture.entry(2, at: Fixture.utc("2026-06-01T21:00:00Z"), urgency: .normal),  // 23:00
            Fixture.entry(3, at: Fixture.utc("2026-06-01T21:10:00Z"), urgency: .critical),  // 23:10
            Fixture.entry(4, at: Fixture.utc("2026-06-01T21:20:00Z"), urgency: .low),  // 23:20
            Fixture.entry(5, at: Fixture.utc("2026-06-01T21:30:00Z"), urgency: nil),  // 23:30
        ]
        let night = gate.plan(queue, now: Fixture.utc("2026-06-01T21:30:00Z"), timeZone: Fixture.berlin)
        #expect(night.send.map(\.seq) == [3])
        #expect(night.digests.isEmpty)
        // 07:00 CEST.
        let morning = Fixture.utc("2026-06-02T05:00:00Z")
        #expect(night.wakeAt == morning)

        queue.removeAll { $0.seq == 3 }
        let plan = gate.plan(queue, now: morning, timeZone: Fixture.berlin)
        // The entry due before quiet hours is simply late; those due during them make one digest.
        #expect(plan.send.map(\.seq) == [1])
        let digest = try #require(plan.digests.first)
        #expect(plan.digests.count == 1)
        #expect(digest.kind == .quietHours)
        #expect(digest.entries.map(\.seq) == [2, 4, 5])
        #expect(digest.content.summary == "3 notifications during quiet hours")
        #expect(plan.wakeAt == nil)
    }

    @Test func aSingleEntryHeldByQuietHoursIsSimplySent() {
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(), now: t0)
        let queue = [
            Fixture.entry(1, at: Fixture.utc("2026-06-01T23:00:00Z")),  // 01:00
            Fixture.entry(2, at: Fixture.utc("2026-06-02T05:00:00Z")),  // 07:00
        ]
        let plan = gate.plan(queue, now: Fixture.utc("2026-06-02T05:00:00Z"), timeZone: Fixture.berlin)
        #expect(plan.send.map(\.seq) == [1, 2])
        #expect(plan.digests.isEmpty)
    }

    @Test func wakeAtIsTheEarliestReasonToPlanAgain() {
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(rate: 0.5, burst: 1), now: t0)
        let now = Fixture.utc("2026-06-01T21:00:00Z")  // 23:00
        let queue = [
            Fixture.entry(1, at: now, urgency: .normal),
            Fixture.entry(2, at: now, urgency: .critical),
            Fixture.entry(3, at: now, urgency: .critical),
        ]
        let plan = gate.plan(queue, now: now, timeZone: Fixture.berlin)
        #expect(plan.send.map(\.seq) == [2])
        // The next token (2 s) comes long before the end of quiet hours (07:00).
        #expect(Fixture.isClose(plan.wakeAt, now + 2))
    }

    @Test func heldEntriesAloneWakeTheGateWhenQuietHoursEnd() {
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(), now: t0)
        let now = Fixture.utc("2026-06-01T21:00:00Z")  // 23:00
        let plan = gate.plan([Fixture.entry(1, at: now, urgency: .low)], now: now, timeZone: Fixture.berlin)
        #expect(plan.send.isEmpty && plan.digests.isEmpty)
        #expect(plan.wakeAt == Fixture.utc("2026-06-02T05:00:00Z"))
    }

    @Test func nothingWaitingMeansNoWake() {
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(), now: t0)
        #expect(gate.plan([], now: t0, timeZone: Fixture.berlin) == DeliveryPlan())
        let plan = gate.plan(entries(1...3, at: t0), now: t0, timeZone: Fixture.berlin)
        #expect(plan.send.map(\.seq) == [1, 2, 3])
        #expect(plan.wakeAt == nil)
    }

    @Test func aClockThatWentBackNeitherAddsTokensNorStallsTheRefill() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 2), now: t0)
        _ = gate.plan(entries(1...2, at: t0), now: t0, timeZone: Fixture.berlin)
        let back = t0 - 3600
        #expect(gate.plan(entries(3...3, at: back), now: back, timeZone: Fixture.berlin).send.isEmpty)
        // One second after the jump back, one token is there again.
        #expect(gate.plan(entries(3...3, at: back), now: back + 1, timeZone: Fixture.berlin).send.map(\.seq) == [3])
    }

    @Test(arguments: [
        (5.0, 10, true), (1.0 / 60, 1, true), (1_000.0, 10_000, true),
        (0.0, 10, false), (-1.0, 10, false), (Double.nan, 10, false), (Double.infinity, 10, false),
        (5.0, 0, false), (5.0, 10_001, false),
    ])
    func floodControlValidatesRateAndBurst(_ rate: Double, _ burst: Int, _ valid: Bool) {
        let flood = FloodControl(rate: rate, burst: burst)
        #expect(((try? flood.validate()) != nil) == valid)
    }

    @Test func anInvalidFloodControlStillDeliversEverything() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 0, burst: 0), now: t0)
        let plan = gate.plan(entries(1...3, at: t0), now: t0, timeZone: Fixture.berlin)
        // Treated as a burst of 1 refilled once a minute: one token, spent on one digest of all three.
        #expect(plan.send.isEmpty)
        #expect(plan.digests.map { $0.entries.count } == [3])
        let next = gate.plan(entries(4...4, at: t0), now: t0, timeZone: Fixture.berlin)
        #expect(Fixture.isClose(next.wakeAt, t0 + 60))
    }
}
