import Foundation

/// Decides what of the outbox goes to the notification server now: quiet hours hold non-critical
/// entries, a token bucket limits the rate, and whatever exceeds it is coalesced into digests.
///
/// A pure state machine: its only memory is the bucket, so the outbox (kept by the caller) stays the one
/// record of what is waiting. The caller passes every undelivered entry, removes what the plan sent or
/// digested, and plans again on a new arrival or at `wakeAt`. Every entry ends up exactly once in `send`
/// or in one digest, across successive plans.
///
/// Each notification sent, an entry or a digest, costs one token. Critical entries are never held and
/// never coalesced; they take the tokens first. Then, outside quiet hours, the non-critical entries whose
/// occurrence fell inside quiet hours go out as one `.quietHours` digest (a single one is simply sent),
/// and then the remaining entries, oldest first: when they outnumber the whole tokens left, all but one
/// token send the oldest individually and the last sends the rest as one `.flood` digest.
public struct DeliveryGate: Sendable {
    /// Nil: never quiet.
    public var quietHours: QuietHours?
    public var flood: FloodControl
    /// Tokens in the bucket at `refilledAt`, fractions included.
    private var tokens: Double
    private var refilledAt: Date

    /// A gate whose bucket is full at `now`.
    public init(quietHours: QuietHours?, flood: FloodControl, now: Date) {
        self.quietHours = quietHours
        self.flood = flood
        self.tokens = Double(flood.effectiveBurst)
        self.refilledAt = now
    }

    /// A token due within this many seconds counts as there: `Date` arithmetic rounds to about 0.1 µs, and
    /// planning at a `wakeAt` must find the token it promised rather than wake again a moment later.
    static let clockTolerance: TimeInterval = 1e-6

    /// What to send of `queue` (every undelivered entry, in arrival order) at `now`; takes the tokens the
    /// plan spends. Quiet hours are read on the wall clock of `timeZone`.
    public mutating func plan(_ queue: [OutboxEntry], now: Date, timeZone: TimeZone) -> DeliveryPlan {
        refill(now: now)
        let rate = flood.effectiveRate
        let quietNow = quietHours?.contains(now, timeZone: timeZone) ?? false

        var critical: [Int] = []
        var heldEarlier: [Int] = []
        var ordinary: [Int] = []
        var heldNow = false
        for (index, entry) in queue.enumerated() {
            if entry.content.urgency == .critical {
                critical.append(index)
            } else if quietNow {
                heldNow = true
            } else if quietHours?.contains(entry.occurrence, timeZone: timeZone) == true {
                heldEarlier.append(index)
            } else {
                ordinary.append(index)
            }
        }
        if heldEarlier.count == 1 {
            // A digest of one would only hide its content; it goes out like any other entry.
            ordinary = queue.indices.filter { queue[$0].content.urgency != .critical }
            heldEarlier = []
        }

        let whole = max(0, Int((tokens + rate * Self.clockTolerance).rounded(.down)))
        var budget = whole
        var sent: [Int] = []
        var digests: [Digest] = []
        var waitsForToken = false

        let criticalNow = min(critical.count, budget)
        sent += critical.prefix(criticalNow)
        budget -= criticalNow
        waitsForToken = criticalNow < critical.count

        if !heldEarlier.isEmpty {
            if budget >= 1 {
                digests.append(Self.digest(.quietHours, heldEarlier.map { queue[$0] }, timeZone: timeZone))
                budget -= 1
            } else {
                waitsForToken = true
            }
        }

        if ordinary.count <= budget {
            sent += ordinary
            budget -= ordinary.count
        } else if budget >= 1 {
            // The last token carries the rest as one digest, which then holds at least two entries.
            sent += ordinary.prefix(budget - 1)
            digests.append(Self.digest(.flood, ordinary.dropFirst(budget - 1).map { queue[$0] }, timeZone: timeZone))
            budget = 0
        } else {
            waitsForToken = true
        }
        tokens -= Double(whole - budget)

        var wakeAt: Date?
        if heldNow, let end = quietHours?.end(of: now, timeZone: timeZone) { wakeAt = end }
        if waitsForToken {
            let nextToken = now + (1 - tokens) / rate
            wakeAt = min(wakeAt ?? nextToken, nextToken)
        }
        return DeliveryPlan(send: sent.sorted().map { queue[$0] }, digests: digests, wakeAt: wakeAt)
    }

    /// Adds what the bucket gained since the last plan, up to the burst (which `flood` may have lowered).
    /// A clock that went back adds nothing but restarts the count from `now`, so it cannot stall the refill.
    mutating func refill(now: Date) {
        let elapsed = max(0, now.timeIntervalSince(refilledAt))
        tokens = min(Double(flood.effectiveBurst), tokens + elapsed * flood.effectiveRate)
        refilledAt = now
    }

    static func digest(_ kind: Digest.Kind, _ entries: [OutboxEntry], timeZone: TimeZone) -> Digest {
        Digest(kind: kind, entries: entries, content: Digest.content(kind: kind, entries: entries, timeZone: timeZone))
    }
}

extension FloodControl {
    /// The fastest refill `validate()` accepts, in notifications per second; more is no limit at all.
    public static let maximumRate = 1_000.0
    /// The slowest refill `validate()` accepts: one notification a minute.
    public static let minimumRate = 1.0 / 60
    /// The largest burst `validate()` accepts.
    public static let maximumBurst = 10_000

    /// Checks the rate and burst; the message says what to change.
    public func validate() throws(ContentError) {
        guard rate.isFinite, rate >= Self.minimumRate, rate <= Self.maximumRate else {
            throw ContentError(
                "the flood-control rate \(rate) is out of range; give notifications per second from "
                    + "\(Self.minimumRate) (one a minute) to \(Int(Self.maximumRate))")
        }
        guard (1...Self.maximumBurst).contains(burst) else {
            throw ContentError("the flood-control burst \(burst) is out of range; give 1 to \(Self.maximumBurst)")
        }
    }

    /// The rate the gate uses: clamped to the valid range, so a bad setting slows delivery but can never
    /// strand an entry or break the arithmetic.
    var effectiveRate: Double {
        rate.isNaN ? Self.minimumRate : min(max(rate, Self.minimumRate), Self.maximumRate)
    }

    /// The burst the gate uses, clamped likewise.
    var effectiveBurst: Int { min(max(burst, 1), Self.maximumBurst) }
}
