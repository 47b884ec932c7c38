import ChimeCore
import Foundation

/// Where a group's definition comes from.
public enum GroupSource: String, Codable, Hashable, Sendable {
    /// Scheduled over D-Bus (an app, or `chime reschedule`).
    case api
    /// A file in the groups directory: it goes when the file goes.
    case config
}

/// A group as stored: its settings and where it came from (its entries are stored as items).
public struct StoredGroup: Hashable, Sendable {
    public var key: GroupKey
    public var settings: GroupSettings
    public var source: GroupSource

    public init(key: GroupKey, settings: GroupSettings, source: GroupSource) {
        self.key = key
        self.settings = settings
        self.source = source
    }
}

/// One due occurrence waiting to reach the notification server. It is written in the same transaction
/// that moves its item on, so a crash between firing and delivering loses nothing.
public struct OutboxRecord: Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        /// One occurrence of one item.
        case occurrence
        /// A digest of a group's missed occurrences (the `coalesce` policy); `itemID` is 0.
        case missedDigest = "missed-digest"
    }

    /// Arrival order; 0 until stored.
    public var seq: UInt64
    public var kind: Kind
    public var itemID: UInt64
    public var group: GroupKey?
    public var occurrence: Date
    public var number: Int
    public var late: Bool
    /// The content to show; nil while it has still to be made by a command or the owning app.
    public var content: NotificationContent?
    /// What makes the content when `content` is nil.
    public var source: ContentSource?
    /// The item's end date: a popup still shown then is closed.
    public var endDate: Date?

    public init(
        seq: UInt64 = 0, kind: Kind = .occurrence, itemID: UInt64, group: GroupKey?, occurrence: Date, number: Int,
        late: Bool, content: NotificationContent?, source: ContentSource? = nil, endDate: Date? = nil
    ) {
        self.seq = seq
        self.kind = kind
        self.itemID = itemID
        self.group = group
        self.occurrence = occurrence
        self.number = number
        self.late = late
        self.content = content
        self.source = source
        self.endDate = endDate
    }
}

/// Everything chimed keeps, as it reads it at start.
public struct StoredState: Sendable {
    public var groups: [StoredGroup]
    /// Pending items, and the finished items of groups (a reschedule needs to know they are done).
    public var items: [ScheduledItem]
    /// Due occurrences not yet delivered, in arrival order.
    public var outbox: [OutboxRecord]
    /// Popups shown whose item has an end date still to come.
    public var popups: [ShownPopup]
    /// The largest item id ever stored (0 when none), so ids are never reused.
    public var largestItemID: UInt64
}

/// What a scheduler step changed, stored in one transaction before anything is delivered.
public struct StepRecord: Sendable {
    public var updated: [ScheduledItem]
    public var finished: [ScheduledItem]
    public var missed: [MissedOccurrences]
    /// New outbox rows (their `seq` is assigned when stored).
    public var outbox: [OutboxRecord]

    public init(
        updated: [ScheduledItem] = [], finished: [ScheduledItem] = [], missed: [MissedOccurrences] = [],
        outbox: [OutboxRecord] = []
    ) {
        self.updated = updated
        self.finished = finished
        self.missed = missed
        self.outbox = outbox
    }

    public var isEmpty: Bool { updated.isEmpty && finished.isEmpty && missed.isEmpty && outbox.isEmpty }
}

/// What happened to an item, as delivery history records it.
public enum HistoryEvent: String, Codable, Hashable, Sendable, CaseIterable {
    /// Scheduled on its own, or added to a group's timeline.
    case scheduled
    /// Its entry was changed by a reschedule.
    case changed
    /// It reached the notification server.
    case delivered
    /// It was not shown on its own but inside a digest (quiet hours, flood control, missed occurrences).
    case suppressed
    /// Occurrences passed undelivered; the detail says how many and what the policy did.
    case missed
    /// It has no further occurrence; the detail says why.
    case finished
    case cancelled
    /// Its group was rescheduled without it, or removed.
    case removed
    /// Its popup was closed; the detail gives the reason.
    case closed
    /// An action was chosen on its popup.
    case action
    /// The notification server refused it.
    case failed
}

/// One line of history.
public struct HistoryEntry: Hashable, Sendable {
    public var seq: UInt64
    public var date: Date
    public var event: HistoryEvent
    public var itemID: UInt64
    public var group: GroupKey?
    public var entryID: String?
    public var summary: String
    public var detail: String?

    public init(
        seq: UInt64 = 0, date: Date, event: HistoryEvent, itemID: UInt64, group: GroupKey? = nil,
        entryID: String? = nil, summary: String = "", detail: String? = nil
    ) {
        self.seq = seq
        self.date = date
        self.event = event
        self.itemID = itemID
        self.group = group
        self.entryID = entryID
        self.summary = summary
        self.detail = detail
    }
}

/// Which history to read.
public struct HistoryQuery: Hashable, Sendable {
    /// At most this many entries, newest first.
    public var limit: Int
    /// Only this group's.
    public var group: GroupKey?
    /// Only this item's.
    public var itemID: UInt64?
    /// Only entries at or after this instant.
    public var since: Date?

    public init(limit: Int = 100, group: GroupKey? = nil, itemID: UInt64? = nil, since: Date? = nil) {
        self.limit = limit
        self.group = group
        self.itemID = itemID
        self.since = since
    }
}

/// A failure of the state store, with what to do about it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
