import Foundation

/// One occurrence to deliver now.
public struct DueOccurrence: Hashable, Sendable {
    /// The item after this firing (its state counts this occurrence; its fire date is the next one).
    public var item: ScheduledItem
    /// When the occurrence was due.
    public var occurrence: Date
    /// Its number, 1-based, counting every occurrence the item had (delivered, missed or coalesced).
    public var number: Int
    /// True when it is delivered late under the deliver-late policy.
    public var late: Bool

    public init(item: ScheduledItem, occurrence: Date, number: Int, late: Bool) {
        self.item = item
        self.occurrence = occurrence
        self.number = number
        self.late = late
    }
}

/// Occurrences of one item that passed without being delivered on time.
public struct MissedOccurrences: Hashable, Sendable {
    public enum Handling: String, Codable, Hashable, Sendable {
        /// Not delivered: the policy is `skip`, or a later occurrence was delivered instead.
        case skipped
        /// Not delivered: older than the deliver-late window.
        case tooLate = "too-late"
        /// Part of the group's digest notification (the `coalesce` policy).
        case coalesced
        /// Delivered late (the `deliver-late` policy); recorded when the cause is known.
        case deliveredLate = "delivered-late"
    }

    public var item: ScheduledItem
    /// The first and last missed occurrence.
    public var first: Date
    public var last: Date
    /// How many occurrences were missed (at most `Scheduler.missedCountLimit`, then `countIsLowerBound`).
    public var count: Int
    public var countIsLowerBound: Bool
    public var handling: Handling
    /// Why they were missed, when chimed knows.
    public var cause: MissedCause?

    public init(
        item: ScheduledItem, first: Date, last: Date, count: Int, countIsLowerBound: Bool = false,
        handling: Handling, cause: MissedCause? = nil
    ) {
        self.cause = cause
        self.item = item
        self.first = first
        self.last = last
        self.count = count
        self.countIsLowerBound = countIsLowerBound
        self.handling = handling
    }
}

/// A popup still shown whose item has an end date, or whose expiry time a server does not keep: close
/// it then.
public struct ShownPopup: Hashable, Sendable {
    public var notificationID: UInt32
    public var itemID: UInt64
    public var until: Date
    /// Closed in the server's stead at its expiry time (`until`), as an expiry, not for an end date.
    public var expires: Bool

    public init(notificationID: UInt32, itemID: UInt64, until: Date, expires: Bool = false) {
        self.notificationID = notificationID
        self.itemID = itemID
        self.until = until
        self.expires = expires
    }
}

/// What the daemon must do after a scheduler step, in this order: store `updated`, `finished` and
/// `missed` (with the outbox rows for `due`) in one transaction, then deliver `due` and the digests of
/// `missed` occurrences handled as `coalesced`, close `closePopups`, and arm the timer at `deadline`.
public struct SchedulerStep: Hashable, Sendable {
    /// Occurrences to deliver now, in deadline order.
    public var due: [DueOccurrence] = []
    /// Occurrences that passed undelivered, and what the missed-trigger policy made of them.
    public var missed: [MissedOccurrences] = []
    /// Items that moved on (a new fire date, an updated state): store them before delivering.
    public var updated: [ScheduledItem] = []
    /// Items that are done, with why.
    public var finished: [ScheduledItem] = []
    /// Popups to close because their item's end date passed.
    public var closePopups: [ShownPopup] = []
    /// The one timer's next deadline; nil when nothing is pending.
    public var deadline: Date?

    public init() {}

    /// Whether the step changed anything that must be stored.
    public var needsStoring: Bool { !updated.isEmpty || !finished.isEmpty || !missed.isEmpty || !due.isEmpty }

    /// The missed occurrences to coalesce into one digest per group (nil: items on their own), by group.
    public var coalesced: [(group: GroupKey?, occurrences: [MissedOccurrences])] {
        var order: [GroupKey?] = []
        var byGroup: [GroupKey?: [MissedOccurrences]] = [:]
        for missed in missed where missed.handling == .coalesced {
            let key = missed.item.groupKey
            if byGroup[key] == nil { order.append(key) }
            byGroup[key, default: []].append(missed)
        }
        return order.map { ($0, byGroup[$0]!) }
    }
}

/// How a reschedule changes one entry.
public struct EntryChange: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        case added, removed, changed, unchanged
    }

    public var entryID: String
    public var kind: Kind
    /// The next occurrence before the reschedule (nil: none pending).
    public var before: Date?
    /// The next occurrence after it (nil: none pending).
    public var after: Date?

    public init(entryID: String, kind: Kind, before: Date?, after: Date?) {
        self.entryID = entryID
        self.kind = kind
        self.before = before
        self.after = after
    }
}

/// A group's new timeline, computed but not yet applied: the diff a dry run reports, and what the daemon
/// stores before `Scheduler.apply(_:now:)` makes it active.
public struct ReschedulePlan: Hashable, Sendable {
    public var group: TimelineGroup
    public var key: GroupKey { GroupKey(owner: group.owner, id: group.id) }
    /// One change per entry: the new timeline's entries in order, then the removed ones.
    public var changes: [EntryChange]
    /// Items to store and put in place: added and changed entries (ids of added ones are 0 until
    /// `Scheduler.assignIDs(_:)`).
    public var upserts: [ScheduledItem]
    /// Items of entries no longer in the timeline.
    public var removed: [UInt64]

    public init(group: TimelineGroup, changes: [EntryChange], upserts: [ScheduledItem], removed: [UInt64]) {
        self.group = group
        self.changes = changes
        self.upserts = upserts
        self.removed = removed
    }
}
