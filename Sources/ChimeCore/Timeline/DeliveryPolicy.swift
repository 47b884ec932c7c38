import Foundation

extension TimeOfDay {
    /// Parses `HH:MM` (00:00 to 23:59), as config files write a time of day; nil when malformed.
    public init?(clock text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            let h = Int(parts[0]), let m = Int(parts[1]), (0...23).contains(h), (0...59).contains(m)
        else { return nil }
        self.init(hour: h, minute: m)
    }
}

/// A daily span on the system zone's wall clock during which non-critical notifications are held and then
/// delivered as one digest when it ends. `start` after `end` spans midnight (22:00 to 07:00).
public struct QuietHours: Codable, Hashable, Sendable {
    public var start: TimeOfDay
    public var end: TimeOfDay

    public init(start: TimeOfDay, end: TimeOfDay) {
        self.start = start
        self.end = end
    }
}

/// How fast notifications may reach the server: a token bucket of `burst` notifications refilled at
/// `rate` per second. What exceeds it is coalesced into one summary notification; nothing is lost.
public struct FloodControl: Codable, Hashable, Sendable {
    public var rate: Double
    public var burst: Int

    public init(rate: Double = 5, burst: Int = 10) {
        self.rate = rate
        self.burst = burst
    }
}

/// One occurrence that is due and waiting to be shown, with its content already resolved. chimed keeps
/// these on disk until the server has them, so nothing due is lost to a crash, a missing server, quiet
/// hours or flood control.
public struct OutboxEntry: Codable, Hashable, Sendable {
    /// Arrival order.
    public var seq: UInt64
    public var itemID: UInt64
    /// The app it belongs to ("" the user's): flood control gives each owner its share, and a digest
    /// holds one owner's entries only.
    public var owner: String
    public var groupID: String?
    /// When the occurrence was due.
    public var occurrence: Date
    public var content: NotificationContent

    public init(
        seq: UInt64, itemID: UInt64, owner: String = "", groupID: String?, occurrence: Date,
        content: NotificationContent
    ) {
        self.seq = seq
        self.itemID = itemID
        self.owner = owner
        self.groupID = groupID
        self.occurrence = occurrence
        self.content = content
    }
}

/// One notification standing for several occurrences.
public struct Digest: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// Occurrences held during quiet hours, delivered when they end.
        case quietHours
        /// Occurrences beyond the flood-control rate.
        case flood
        /// Missed occurrences of one group under the `coalesce` policy.
        case missed(groupID: String?)
    }

    public var kind: Kind
    /// The occurrences it stands for, in arrival order.
    public var entries: [OutboxEntry]
    /// What the digest notification shows.
    public var content: NotificationContent

    public init(kind: Kind, entries: [OutboxEntry], content: NotificationContent) {
        self.kind = kind
        self.entries = entries
        self.content = content
    }
}

/// What to do with the outbox now: what `DeliveryGate.plan` returns.
public struct DeliveryPlan: Hashable, Sendable {
    /// Send each of these as its own notification, in this order.
    public var send: [OutboxEntry]
    /// Send each digest as one notification standing for its entries.
    public var digests: [Digest]
    /// Plan again at this instant (quiet hours end, or the flood-control bucket refills); nil when the
    /// entries not sent or digested need nothing but a new arrival.
    public var wakeAt: Date?

    public init(send: [OutboxEntry] = [], digests: [Digest] = [], wakeAt: Date? = nil) {
        self.send = send
        self.digests = digests
        self.wakeAt = wakeAt
    }
}
