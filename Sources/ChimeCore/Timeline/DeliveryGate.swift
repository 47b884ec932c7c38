import Foundation

/// Decides what of the outbox goes to the notification server now: quiet hours hold non-critical
/// entries, a token bucket limits the rate, the tokens are shared fairly among the apps that wait, and
/// whatever exceeds an app's share is coalesced into digests of that app's entries.
///
/// A pure state machine: its memory is the bucket and, for the apps that wait, when each last got a
/// token, so the outbox (kept by the caller) stays the one record of what is waiting. The caller passes
/// every undelivered entry, removes what the plan sent or digested, and plans again on a new arrival or
/// at `wakeAt`. Every entry ends up exactly once in `send` or in one digest, across successive plans.
///
/// Each notification sent, an entry or a digest, costs one token. The whole tokens of a plan are dealt
/// out one at a time to the owners (apps, and the user) that have something waiting, in turns: the owner
/// that got a token longest ago (or never) first, so that no owner waits behind another's burst or
/// another's critical entries for longer than the others' turns. Within its share an owner's critical
/// entries come first, never held and never coalesced; then, outside quiet hours, its non-critical
/// entries whose occurrence fell inside quiet hours go out as one `.quietHours` digest (a single one is
/// simply sent), and then its remaining entries, oldest first: when they outnumber the tokens its share
/// has left, all but one send the oldest individually and the last sends the rest as one `.flood`
/// digest. A digest holds one owner's entries only.
public struct DeliveryGate: Sendable {
    /// Nil: never quiet.
    public var quietHours: QuietHours?
    public var flood: FloodControl
    /// Tokens in the bucket at `refilledAt`, fractions included.
    private var tokens: Double
    private var refilledAt: Date
    /// For each owner with entries waiting, the turn at which it last got a token; forgotten once it has
    /// none waiting, so the memory is bounded by the outbox.
    private var lastTurn: [String: UInt64] = [:]
    private var turn: UInt64 = 0

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

    /// One owner's waiting entries, by the way they go (indices into the queue, in arrival order).
    private struct Waiting {
        var critical: [Int] = []
        var heldEarlier: [Int] = []
        var ordinary: [Int] = []
        var first: Int
        /// The tokens it could use in this plan.
        var demand: Int { critical.count + (heldEarlier.isEmpty ? 0 : 1) + ordinary.count }
    }

    /// What to send of `queue` (every undelivered entry, in arrival order) at `now`; takes the tokens the
    /// plan spends. Quiet hours are read on the wall clock of `timeZone`.
    public mutating func plan(_ queue: [OutboxEntry], now: Date, timeZone: Zone) -> DeliveryPlan {
        refill(now: now)
        let rate = flood.effectiveRate
        let quietNow = quietHours?.contains(now, timeZone: timeZone) ?? false

        var owners: [String: Waiting] = [:]
        var heldNow = false
        for (index, entry) in queue.enumerated() {
            var waiting = owners[entry.owner] ?? Waiting(first: index)
            if entry.content.urgency == .critical {
                waiting.critical.append(index)
            } else if quietNow {
                heldNow = true
            } else if quietHours?.contains(entry.occurrence, timeZone: timeZone) == true {
                waiting.heldEarlier.append(index)
            } else {
                waiting.ordinary.append(index)
            }
            owners[entry.owner] = waiting
        }
        for (owner, waiting) in owners where waiting.heldEarlier.count == 1 {
            // A digest of one would only hide its content; it goes out like any other entry.
            owners[owner]?.ordinary = (waiting.ordinary + waiting.heldEarlier).sorted()
            owners[owner]?.heldEarlier = []
        }
        lastTurn = lastTurn.filter { owners[$0.key] != nil }

        let whole = max(0, Int((tokens + rate * Self.clockTolerance).rounded(.down)))
        let (shares, turns) = deal(whole, to: owners)
        var sentByOwner: [String: [Int]] = [:]
        var digests: [(first: Int, digest: Digest)] = []
        var waitsForToken = false
        var spent = 0
        for (owner, waiting) in owners {
            var budget = shares[owner] ?? 0
            spent += budget
            var sent: [Int] = []
            defer { sentByOwner[owner] = sent.sorted() }
            let criticalNow = min(waiting.critical.count, budget)
            sent += waiting.critical.prefix(criticalNow)
            budget -= criticalNow
            if criticalNow < waiting.critical.count { waitsForToken = true }

            if !waiting.heldEarlier.isEmpty {
                if budget >= 1 {
                    let entries = waiting.heldEarlier.map { queue[$0] }
                    digests.append((waiting.heldEarlier[0], Self.digest(.quietHours, entries, timeZone: timeZone)))
                    budget -= 1
                } else {
                    waitsForToken = true
                }
            }

            let ordinary = waiting.ordinary
            if ordinary.count <= budget {
                sent += ordinary
                budget -= ordinary.count
            } else if budget >= 1 {
                // The last token of its share carries the rest as one digest of at least two entries.
                sent += ordinary.prefix(budget - 1)
                let rest = ordinary.dropFirst(budget - 1)
                digests.append((rest.first!, Self.digest(.flood, rest.map { queue[$0] }, timeZone: timeZone)))
                budget = 0
            } else {
                waitsForToken = true
            }
            // A share is never more than the owner can use; what is left goes back to the bucket.
            spent -= budget
        }
        tokens -= Double(spent)

        var wakeAt: Date?
        if heldNow, let end = quietHours?.end(of: now, timeZone: timeZone) { wakeAt = end }
        if waitsForToken {
            let nextToken = now + (1 - tokens) / rate
            wakeAt = min(wakeAt ?? nextToken, nextToken)
        }
        // The owners take turns in what is sent, in the order they were dealt their tokens (the one served
        // longest ago first), each owner's entries in arrival order: one owner's long run never keeps another
        // owner's entry more than one entry behind.
        var send: [OutboxEntry] = []
        var round = 0
        while send.count < sentByOwner.values.reduce(0, { $0 + $1.count }) {
            for owner in turns where round < sentByOwner[owner]?.count ?? 0 {
                send.append(queue[sentByOwner[owner]![round]])
            }
            round += 1
        }
        return DeliveryPlan(
            send: send, digests: digests.sorted { $0.first < $1.first }.map(\.digest), wakeAt: wakeAt)
    }

    /// Gives back the tokens of notifications a plan had taken them for but that were not sent (the plan
    /// was made again because another owner's entries came), up to the burst.
    public mutating func giveBack(_ count: Int, now: Date) {
        refill(now: now)
        tokens = min(Double(flood.effectiveBurst), tokens + Double(max(0, count)))
    }

    /// Deals `tokens` out one at a time to the owners that can use them, in turns: the owner that got
    /// one longest ago (or never; then the one whose entries came first) first, until every owner has
    /// what it can use or the tokens are gone. Each token dealt moves its owner to the end of the turns.
    private mutating func deal(_ tokens: Int, to owners: [String: Waiting]) -> (shares: [String: Int], turns: [String])
    {
        var order = owners.keys.filter { owners[$0]!.demand > 0 }.sorted { a, b in
            let (x, y) = (lastTurn[a], lastTurn[b])
            if x != y { return (x.map { Int64($0) } ?? -1) < (y.map { Int64($0) } ?? -1) }
            return owners[a]!.first < owners[b]!.first
        }
        let turns = order
        var shares: [String: Int] = [:]
        var left = tokens
        while left > 0, !order.isEmpty {
            var stillWanting: [String] = []
            for owner in order where left > 0 {
                shares[owner, default: 0] += 1
                left -= 1
                turn += 1
                lastTurn[owner] = turn
                if shares[owner]! < owners[owner]!.demand { stillWanting.append(owner) }
            }
            // Owners not reached when the tokens ran out keep their place at the front.
            order = left > 0 ? stillWanting : []
        }
        return (shares, turns)
    }

    /// Adds what the bucket gained since the last plan, up to the burst (which `flood` may have lowered).
    /// A clock that went back adds nothing but restarts the count from `now`, so it cannot stall the refill.
    mutating func refill(now: Date) {
        let elapsed = max(0, now.timeIntervalSince(refilledAt))
        tokens = min(Double(flood.effectiveBurst), tokens + elapsed * flood.effectiveRate)
        refilledAt = now
    }

    static func digest(_ kind: Digest.Kind, _ entries: [OutboxEntry], timeZone: Zone) -> Digest {
        Digest(kind: kind, entries: entries, content: Digest.content(kind: kind, entries: entries, timeZone: timeZone))
    }
}

/// Flood control for chimed's own questions (an app's consent, a group's permission), beside the
/// deliveries' and never taking their tokens: a bucket of its own with the same rate and burst, at most one
/// question on screen per asker (the process that asks, whatever names it owns), and turns among askers,
/// the one asked longest ago (or never) first. So one process with many bus names cannot fill the screen
/// with questions, nor keep another's question or any delivery waiting.
///
/// A pure state machine: the caller keeps the questions that wait, asks `admit` which may be shown now,
/// shows them, tells `closed` when one is off the screen (answered, closed, expired, or not shown), and
/// admits again then and at `wakeAt`.
public struct QuestionGate: Sendable {
    /// One question waiting to be shown.
    public struct Request: Hashable, Sendable {
        public var id: UInt64
        /// Who asks: one process, however many apps (bus names) it is.
        public var asker: String

        public init(id: UInt64, asker: String) {
            self.id = id
            self.asker = asker
        }
    }

    /// What may be shown now, and when to admit again if something still waits for a token.
    public struct Admission: Hashable, Sendable {
        public var ask: [UInt64]
        public var wakeAt: Date?
    }

    private var tokens: Double
    private var refilledAt: Date
    /// The askers with a question on screen.
    public private(set) var open: Set<String> = []
    private var lastTurn: [String: UInt64] = [:]
    private var turn: UInt64 = 0

    /// A gate whose bucket is full at `now`.
    public init(flood: FloodControl, now: Date) {
        tokens = Double(flood.effectiveBurst)
        refilledAt = now
    }

    /// Which of `waiting` (in the order they came) may be shown now, at most one per asker and one token
    /// each; their askers count as open until `closed`. `flood` gives the rate and burst (chime.toml's
    /// `[flood]`, as for deliveries).
    public mutating func admit(_ waiting: [Request], flood: FloodControl, now: Date) -> Admission {
        let elapsed = max(0, now.timeIntervalSince(refilledAt))
        tokens = min(Double(flood.effectiveBurst), tokens + elapsed * flood.effectiveRate)
        refilledAt = now
        var first: [String: (index: Int, id: UInt64)] = [:]
        for (index, request) in waiting.enumerated() where first[request.asker] == nil {
            first[request.asker] = (index, request.id)
        }
        lastTurn = lastTurn.filter { first[$0.key] != nil || open.contains($0.key) }
        let ready = first.keys.filter { !open.contains($0) }.sorted { a, b in
            let (x, y) = (lastTurn[a], lastTurn[b])
            if x != y { return (x.map { Int64($0) } ?? -1) < (y.map { Int64($0) } ?? -1) }
            return first[a]!.index < first[b]!.index
        }
        var ask: [UInt64] = []
        let tolerance = flood.effectiveRate * DeliveryGate.clockTolerance
        for asker in ready where tokens + tolerance >= 1 {
            tokens -= 1
            turn += 1
            lastTurn[asker] = turn
            open.insert(asker)
            ask.append(first[asker]!.id)
        }
        let waitsForToken = ready.count > ask.count
        return Admission(ask: ask, wakeAt: waitsForToken ? now + (1 - tokens) / flood.effectiveRate : nil)
    }

    /// `asker`'s question is off the screen: its next one may be shown.
    public mutating func closed(asker: String) {
        open.remove(asker)
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
