import Foundation
import Testing

@testable import ChimeCore

/// Flood control shared fairly among apps (issue 30): tokens are dealt in turns, so one app's critical
/// entries or burst never keep another app's notification waiting beyond the others' turns, and a
/// digest holds one app's entries only. Chimed's own questions have a bucket of their own, at most one on
/// screen per asking process.
@Suite struct DeliveryGateFairnessTests {
    let t0 = Fixture.utc("2026-06-01T10:00:00Z")
    let zone = Fixture.berlin

    func entries(_ seqs: ClosedRange<UInt64>, owner: String, at date: Date, urgency: Urgency? = .normal)
        -> [OutboxEntry]
    {
        seqs.map { Fixture.entry($0, at: date, urgency: urgency, appName: owner, owner: owner) }
    }

    /// Runs the gate as the pipeline does (plan, remove what went, plan again at `wakeAt` or at the next
    /// arrival) until `done` or nothing is left; returns when each entry went out (sent or digested).
    func drain(
        _ gate: inout DeliveryGate, _ arrivals: [(at: Date, entries: [OutboxEntry])], until end: Date
    ) -> [UInt64: Date] {
        var queue: [OutboxEntry] = []
        var pending = arrivals.sorted { $0.at < $1.at }
        var wakeAt: Date?
        var out: [UInt64: Date] = [:]
        var now = pending.first?.at ?? end
        while now <= end {
            while let next = pending.first, next.at <= now {
                queue += next.entries
                pending.removeFirst()
            }
            let plan = gate.plan(queue, now: now, timeZone: zone)
            for entry in plan.send + plan.digests.flatMap(\.entries) { out[entry.seq] = now }
            let gone = Set(out.keys)
            queue.removeAll { gone.contains($0.seq) }
            wakeAt = plan.wakeAt
            guard let next = [wakeAt, pending.first?.at].compactMap({ $0 }).min() else { break }
            now = next
        }
        return out
    }

    @Test func twoHundredCriticalEntriesOfOneAppDelayAnotherAppsEntryByOneTokenAtMost() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 5, burst: 10), now: t0)
        let flood = entries(1...200, owner: "org.example.Loud", at: t0, urgency: .critical)
        let quiet = entries(1001...1001, owner: "org.example.Quiet", at: t0 + 0.05)
        let out = drain(&gate, [(t0, flood), (t0 + 0.05, quiet)], until: t0 + 60)
        // Before: 37.7 s, behind all 190 critical entries left. Now: the next token (0.2 s apart).
        let delay = out[1001]!.timeIntervalSince(t0 + 0.05)
        #expect(delay <= 0.2 + 1e-6, "delayed \(delay) s")
        // Every critical entry of the loud app still goes out on its own, none in a digest, within the rate.
        #expect(flood.allSatisfy { out[$0.seq] != nil })
    }

    /// What a plan sends goes in turns: the owner dealt first (served longest ago) first, then one entry of
    /// each owner in turn, each owner's in arrival order; an owner that waited goes first at the next plan.
    @Test func aPlanSendsInTurnsTheOwnerServedLongestAgoFirst() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1000, burst: 10_000), now: t0)
        let loud = entries(1...5, owner: "org.example.Loud", at: t0)
        let quiet = entries(11...12, owner: "org.example.Quiet", at: t0)
        let first = gate.plan(loud + quiet, now: t0, timeZone: zone)
        #expect(first.send.map(\.seq) == [1, 11, 2, 12, 3, 4, 5])
        // Later, while the loud app's next burst waits, the quiet app (served longer ago) goes first.
        let next = gate.plan(
            entries(21...23, owner: "org.example.Loud", at: t0 + 1)
                + entries(31...31, owner: "org.example.Quiet", at: t0 + 1), now: t0 + 1, timeZone: zone)
        #expect(next.send.map(\.seq) == [31, 21, 22, 23])
    }

    @Test func oneAppsBurstCostsItsOwnShareNotAnothers() throws {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 5, burst: 10), now: t0)
        let queue =
            entries(1...500, owner: "org.example.Loud", at: t0) + entries(501...503, owner: "org.example.Quiet", at: t0)
        let plan = gate.plan(queue, now: t0, timeZone: zone)
        // The quiet app's three go on their own; the loud app's seven tokens carry six and a digest.
        #expect(plan.send.filter { $0.owner == "org.example.Quiet" }.map(\.seq) == [501, 502, 503])
        #expect(plan.send.filter { $0.owner == "org.example.Loud" }.map(\.seq) == Array(1...6))
        let digest = try #require(plan.digests.first)
        #expect(plan.digests.count == 1)
        #expect(digest.entries.allSatisfy { $0.owner == "org.example.Loud" })
        #expect(digest.entries.map(\.seq) == Array(7...500))
        #expect(digest.content.appName == "org.example.Loud")
    }

    @Test func aDigestHoldsOneAppsEntriesOnly() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 4), now: t0)
        let queue = zip(1...100, (1...100).map { $0 % 2 == 0 ? "org.example.A" : "org.example.B" }).map {
            Fixture.entry(UInt64($0), at: t0, appName: "Mail", owner: $1)
        }
        let plan = gate.plan(queue, now: t0, timeZone: zone)
        // Two tokens each: one entry on its own and one digest of the other 49 per app.
        #expect(plan.send.count == 2)
        #expect(plan.digests.count == 2)
        for digest in plan.digests {
            #expect(Set(digest.entries.map(\.owner)).count == 1)
            #expect(digest.entries.count == 49)
            // The entries' own app name, which they share.
            #expect(digest.content.appName == "Mail")
        }
        #expect(plan.wakeAt == nil)
    }

    @Test func aDigestOfEntriesNamedLikeChimedsQuestionsCarriesItsOwnersID() {
        let chimeNamed = (1...3).map { Fixture.entry($0, at: t0, appName: "chime", owner: "org.example.A") }
        #expect(Digest.content(kind: .flood, entries: chimeNamed, timeZone: zone).appName == "org.example.A")
        let mixedNames = (1...3).map { Fixture.entry($0, at: t0, appName: "n\($0)", owner: "org.example.A") }
        #expect(Digest.content(kind: .flood, entries: mixedNames, timeZone: zone).appName == "org.example.A")
    }

    @Test func scarceTokensGoToEachAppInTurn() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 1), now: t0)
        var queue =
            entries(1...5, owner: "a", at: t0, urgency: .critical)
            + entries(11...15, owner: "b", at: t0, urgency: .critical)
            + entries(21...25, owner: "c", at: t0, urgency: .critical)
        var served: [String] = []
        var now = t0
        for _ in 0..<9 {
            let plan = gate.plan(queue, now: now, timeZone: zone)
            served += plan.send.map(\.owner)
            queue.removeAll { entry in plan.send.contains { $0.seq == entry.seq } }
            now = plan.wakeAt ?? now
        }
        // One token a second, to each app in turn, the one whose entries came first beginning.
        #expect(served == ["a", "b", "c", "a", "b", "c", "a", "b", "c"])
    }

    @Test func quietHoursEndInOneDigestPerApp() {
        let nights = QuietHours(start: TimeOfDay(hour: 22, minute: 0), end: TimeOfDay(hour: 7, minute: 0))
        var gate = DeliveryGate(quietHours: nights, flood: FloodControl(rate: 5, burst: 10), now: t0)
        let night = Fixture.utc("2026-06-01T23:00:00Z")  // 01:00 in Berlin
        let morning = Fixture.utc("2026-06-02T05:00:00Z")  // 07:00
        let queue =
            entries(1...3, owner: "a", at: night) + entries(4...6, owner: "b", at: night)
            + entries(7...7, owner: "c", at: night)
        let plan = gate.plan(queue, now: morning, timeZone: zone)
        #expect(plan.digests.map { $0.entries.map(\.seq) } == [[1, 2, 3], [4, 5, 6]])
        #expect(plan.digests.allSatisfy { $0.kind == .quietHours })
        // A lone held entry of an app goes as itself.
        #expect(plan.send.map(\.seq) == [7])
    }

    @Test func anAppArrivingLaterIsServedBeforeTheLongWaitingFloodsNextToken() {
        var gate = DeliveryGate(quietHours: nil, flood: FloodControl(rate: 1, burst: 2), now: t0)
        var queue = entries(1...10, owner: "loud", at: t0, urgency: .critical)
        let first = gate.plan(queue, now: t0, timeZone: zone)
        #expect(first.send.map(\.seq) == [1, 2])
        queue.removeAll { $0.seq <= 2 }
        queue += entries(100...100, owner: "quiet", at: t0 + 0.5)
        let second = gate.plan(queue, now: t0 + 1, timeZone: zone)
        #expect(second.send.map(\.seq) == [100])
    }

    // MARK: - Questions

    @Test func oneProcessShowsOneQuestionAtATimeWhateverNamesItOwns() {
        var gate = QuestionGate(flood: FloodControl(rate: 5, burst: 10), now: t0)
        let flood = FloodControl(rate: 5, burst: 10)
        let many = (1...100).map { QuestionGate.Request(id: UInt64($0), asker: "process 42") }
        let first = gate.admit(many, flood: flood, now: t0)
        #expect(first.ask == [1])
        #expect(first.wakeAt == nil)
        // Nothing more until that question is off the screen; then the next, in order.
        #expect(gate.admit(Array(many.dropFirst()), flood: flood, now: t0 + 1).ask.isEmpty)
        gate.closed(asker: "process 42")
        #expect(gate.admit(Array(many.dropFirst()), flood: flood, now: t0 + 2).ask == [2])
    }

    @Test func questionsOfManyProcessesAreRateLimitedInTurns() {
        let flood = FloodControl(rate: 1, burst: 2)
        var gate = QuestionGate(flood: flood, now: t0)
        var waiting = (1...6).map { QuestionGate.Request(id: UInt64($0), asker: "process \($0)") }
        let first = gate.admit(waiting, flood: flood, now: t0)
        #expect(first.ask == [1, 2])
        #expect(Fixture.isClose(first.wakeAt, t0 + 1))
        waiting.removeAll { first.ask.contains($0.id) }
        let second = gate.admit(waiting, flood: flood, now: t0 + 1)
        #expect(second.ask == [3])
    }

    @Test func questionsNeverTakeTheDeliveriesTokens() {
        let flood = FloodControl(rate: 1, burst: 2)
        var questions = QuestionGate(flood: flood, now: t0)
        var deliveries = DeliveryGate(quietHours: nil, flood: flood, now: t0)
        _ = questions.admit((1...5).map { .init(id: UInt64($0), asker: "p\($0)") }, flood: flood, now: t0)
        let plan = deliveries.plan(entries(1...2, owner: "app", at: t0), now: t0, timeZone: zone)
        #expect(plan.send.map(\.seq) == [1, 2])
    }
}
