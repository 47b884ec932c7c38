import Foundation
import Testing

@testable import ChimeCore

/// A week of random arrivals fed to the gate by a manual clock that steps from arrival to arrival and to
/// every `wakeAt`, as chimed does, with the properties checked independently of the gate's own code.
@Suite struct DeliveryGateSimulationTests {
    static let flood = FloodControl(rate: 0.1, burst: 4)
    static let nights = QuietHours(start: TimeOfDay(hour: 22, minute: 0), end: TimeOfDay(hour: 7, minute: 0))

    struct Arrival {
        let at: Date
        let entry: OutboxEntry
    }

    /// Bursts of 1 to 120 entries about every 45 minutes, each spread over up to half a minute; some
    /// critical, some due hours before they arrive (delivered late after a suspend).
    static func arrivals(seed: UInt64, from start: Date, days: Int) -> [Arrival] {
        var random = SplitMix64(seed: seed)
        var drawn: [(at: Date, occurrence: Date, urgency: Urgency?)] = []
        var time = start
        let end = start + Double(days) * 86_400
        while true {
            time += Double.random(in: 1...5400, using: &random)
            guard time < end else { break }
            let size = random.chance(0.7) ? 1 : random.chance(0.67) ? random.int(2...6) : random.int(10...120)
            for _ in 0..<size {
                let at = time + (size == 1 ? 0 : Double.random(in: 0..<30, using: &random))
                let urgency = random.pick([Urgency.critical, .low, .low, nil] + Array(repeating: .normal, count: 8))
                let occurrence = random.chance(0.15) ? at - Double(random.int(0...43_200)) : at
                drawn.append((at, occurrence, urgency))
            }
        }
        return drawn.sorted { $0.at < $1.at }.enumerated().map { index, arrival in
            Arrival(
                at: arrival.at,
                entry: Fixture.entry(UInt64(index + 1), at: arrival.occurrence, urgency: arrival.urgency))
        }
    }

    /// Whether Berlin's clock reads 22:00–06:59, read with Foundation's calendar rather than WallClock.
    static func isNight(_ date: Date) -> Bool {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: Fixture.berlin.identifier)!
        let hour = calendar.component(.hour, from: date)
        return hour >= 22 || hour < 7
    }

    @Test(arguments: [
        (UInt64(1), "2026-03-25T12:00:00Z"),  // spans the spring-forward night
        (UInt64(2), "2026-10-21T12:00:00Z"),  // spans the fall-back night
        (UInt64(3), "2026-07-06T12:00:00Z"),
    ])
    func aWeekOfRandomArrivalsComesOutExactlyOnceOnTimeAndWithinTheRate(_ seed: UInt64, _ start: String) throws {
        let t0 = Fixture.utc(start)
        let arrivals = Self.arrivals(seed: seed, from: t0, days: 7)
        let arrivedAt = Dictionary(uniqueKeysWithValues: arrivals.map { ($0.entry.seq, $0.at) })
        var gate = DeliveryGate(quietHours: Self.nights, flood: Self.flood, now: t0)
        var queue: [OutboxEntry] = []
        var next = 0
        var wakeAt: Date?
        var emitted = Set<UInt64>()
        var notifications: [(at: Date, count: Int)] = []
        var floodDigests = 0
        var quietDigests = 0
        var criticalAtNight = 0
        var plans = 0

        while next < arrivals.count || wakeAt != nil {
            let now = min(next < arrivals.count ? arrivals[next].at : .distantFuture, wakeAt ?? .distantFuture)
            while next < arrivals.count && arrivals[next].at <= now {
                queue.append(arrivals[next].entry)
                next += 1
            }
            let plan = gate.plan(queue, now: now, timeZone: Fixture.berlin)
            plans += 1
            try #require(plans < 200_000, "the gate keeps waking without progress")

            let out = plan.send + plan.digests.flatMap(\.entries)
            for entry in out {
                #expect(emitted.insert(entry.seq).inserted, "entry \(entry.seq) came out twice")
                #expect(arrivedAt[entry.seq]! <= now, "entry \(entry.seq) came out before it arrived")
            }
            if Self.isNight(now) {
                #expect(plan.send.allSatisfy { $0.content.urgency == .critical }, "non-critical sent at \(now)")
                #expect(plan.digests.isEmpty, "digest sent at \(now)")
                criticalAtNight += plan.send.count
            }
            for digest in plan.digests {
                #expect(digest.entries.count >= 2)
                #expect(digest.entries.allSatisfy { $0.content.urgency != .critical })
                #expect(digest.content.summary.hasPrefix("\(digest.entries.count) "))
                switch digest.kind {
                case .quietHours:
                    quietDigests += 1
                    #expect(digest.entries.allSatisfy { Self.isNight($0.occurrence) })
                case .flood:
                    floodDigests += 1
                case .missed:
                    Issue.record("the gate made a missed digest")
                }
            }
            if !plan.send.isEmpty || !plan.digests.isEmpty {
                notifications.append((now, plan.send.count + plan.digests.count))
            }

            let gone = Set(out.map(\.seq))
            queue.removeAll { gone.contains($0.seq) }
            if !queue.isEmpty { #expect(plan.wakeAt != nil, "entries wait at \(now) with no wake") }
            if let wake = plan.wakeAt { #expect(wake > now) }
            wakeAt = plan.wakeAt
        }

        #expect(queue.isEmpty)
        #expect(emitted == Set(arrivals.map(\.entry.seq)))
        // Any run of sends fits the bucket: at most `burst` plus what `rate` refills between its ends.
        var worst = -Double.infinity
        for j in notifications.indices {
            var total = 0
            for i in stride(from: j, through: 0, by: -1) {
                total += notifications[i].count
                let allowed =
                    Double(Self.flood.burst) + Self.flood.rate
                    * notifications[j].at.timeIntervalSince(notifications[i].at)
                worst = max(worst, Double(total) - allowed)
            }
        }
        #expect(worst <= 1e-3, "the send rate exceeded the bucket by \(worst) notifications")
        // The week exercised every path.
        #expect(floodDigests > 0)
        #expect(quietDigests > 0)
        #expect(criticalAtNight > 0)
    }
}
