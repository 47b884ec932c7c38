import ChimeCore
import Foundation
import GRDB

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
    /// The owning app ("" for the user's).
    public var owner: String
    /// The group, when the item belongs to one.
    public var group: GroupKey? { groupID.map { GroupKey(owner: owner, id: $0) } }
    public var groupID: String?
    public var occurrence: Date
    public var number: Int
    public var late: Bool
    /// The content to show; nil while it has still to be made by a command or the owning app.
    public var content: NotificationContent?
    /// What makes the content when `content` is nil.
    public var source: ContentSource?
    /// The item's end date: a popup still shown then is closed.
    public var endDate: Date?
    /// The entry's category of actions, added when the notification is shown.
    public var category: String?
    /// The notification it replaces (a snooze, its own earlier popup).
    public var replacesID: UInt32?
    /// Whether an earlier chimed had handed it to the notification relay and stopped before it stored the
    /// delivery.
    public var sentBeforeRestart: Bool
    /// The id the server gave it, when the relay received the server's answer after chimed stopped: it is
    /// shown, and is not sent again. Nil with `sentBeforeRestart` means no answer was received: the row
    /// is sent again, and shows twice only if the server had it while the relay stopped as well.
    public var receivedID: UInt32?
    /// Stored before its occurrence came due (`ScheduleStore.prepare`); not yet an occurrence.
    public var prepared: Bool
    /// Its entry escalates: which showing this is (0 for the occurrence itself).
    public var escalation: EscalationStep?
    /// The item a snooze or a re-notification brings back: its popup's actions act on that item, also
    /// after the snooze itself is over.
    public var snoozeOf: UInt64?

    public init(
        seq: UInt64 = 0, kind: Kind = .occurrence, itemID: UInt64, owner: String = "", group: GroupKey?,
        occurrence: Date, number: Int, late: Bool, content: NotificationContent?, source: ContentSource? = nil,
        endDate: Date? = nil, category: String? = nil, replacesID: UInt32? = nil, sentBeforeRestart: Bool = false,
        receivedID: UInt32? = nil, prepared: Bool = false, escalation: EscalationStep? = nil, snoozeOf: UInt64? = nil
    ) {
        self.snoozeOf = snoozeOf
        self.escalation = escalation
        self.prepared = prepared
        self.sentBeforeRestart = sentBeforeRestart
        self.receivedID = receivedID
        self.owner = group?.owner ?? owner
        self.groupID = group?.id
        self.category = category
        self.replacesID = replacesID
        self.seq = seq
        self.kind = kind
        self.itemID = itemID
        self.occurrence = occurrence
        self.number = number
        self.late = late
        self.content = content
        self.source = source
        self.endDate = endDate
    }
}

/// A notification on the server that chimed showed, remembered so that an action chosen on it, its
/// closing, or its end date can be acted on, also after a restart.
public struct ShownNotification: Hashable, Sendable {
    public var notificationID: UInt32
    public var itemID: UInt64
    public var owner: String
    public var group: String?
    public var entryID: String?
    public var category: String?
    /// What was shown, actions included (a snooze shows it again).
    public var content: NotificationContent?
    public var occurrence: Date
    /// The item's end date, when the popup is to be closed then.
    public var until: Date?
    /// When the server showed it (its answer to Notify came); nil before it is stored.
    public var shownAt: Date?
    /// The item a snooze or a re-notification brought back (`OutboxRecord.snoozeOf`).
    public var snoozeOf: UInt64?

    public init(
        notificationID: UInt32, itemID: UInt64, owner: String = "", group: String? = nil, entryID: String? = nil,
        category: String? = nil, content: NotificationContent? = nil, occurrence: Date, until: Date? = nil,
        shownAt: Date? = nil, snoozeOf: UInt64? = nil
    ) {
        self.snoozeOf = snoozeOf
        self.shownAt = shownAt
        self.notificationID = notificationID
        self.itemID = itemID
        self.owner = owner
        self.group = group
        self.entryID = entryID
        self.category = category
        self.content = content
        self.occurrence = occurrence
        self.until = until
    }

    public var groupKey: GroupKey? { group.map { GroupKey(owner: owner, id: $0) } }
}

/// An action chosen on an app's notification while the app was not there to hear it: kept until the app
/// asks for it.
public struct PendingAction: Hashable, Sendable {
    public var seq: UInt64
    public var owner: String
    public var itemID: UInt64
    public var group: String?
    public var entryID: String?
    public var key: String
    public var userInfo: [String: UserInfoValue]
    public var date: Date

    public init(
        seq: UInt64 = 0, owner: String, itemID: UInt64, group: String?, entryID: String?, key: String,
        userInfo: [String: UserInfoValue], date: Date
    ) {
        self.seq = seq
        self.owner = owner
        self.itemID = itemID
        self.group = group
        self.entryID = entryID
        self.key = key
        self.userInfo = userInfo
        self.date = date
    }
}

/// Everything chimed keeps, as it reads it at start.
public struct StoredState: Sendable {
    public var groups: [StoredGroup]
    /// Pending items, and the finished items of groups (a reschedule needs to know they are done); the rows
    /// of other finished, cancelled and removed items are deleted.
    public var items: [ScheduledItem]
    /// Due occurrences not yet delivered, in arrival order.
    public var outbox: [OutboxRecord]
    /// Notifications shown lately (the newest `ScheduleStore.shownLimit`).
    public var shown: [ShownNotification]
    /// Categories of actions, by owner.
    public var categories: [String: [ActionCategory]]
    /// Each app's consent to schedule notifications (apps not listed: undetermined).
    public var consents: [String: AppConsent]
    /// Each group's authorization (groups not listed: not asked).
    public var groupAuthorizations: [GroupKey: GroupAuthorization]
    /// The largest item id ever stored (0 when none), also of items whose rows are gone, so ids are
    /// never reused.
    public var largestItemID: UInt64
    /// How many stored rows are set aside in the table `set_aside` because chimed could not read them
    /// (at this start or an earlier one).
    public var setAside: Int
    /// The rows set aside at this start, one line each (table, row, reason), for the log.
    public var setAsideNow: [String]
    /// The groups whose own app turned them off (their authorization is `denied` by the app's switch, not
    /// the user's): the app may turn them on again.
    public var groupsTurnedOffByTheirApp: Set<GroupKey> = []
    /// The bytes each app's kept actions take (`ScheduleStore.keptActionSize`), for its byte quota.
    public var keptActionBytes: [String: Int] = [:]

    /// Shown popups whose item has an end date.
    public var popups: [ShownPopup] {
        shown.compactMap { s in
            s.until.map { ShownPopup(notificationID: s.notificationID, itemID: s.itemID, until: $0) }
        }
    }
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
    /// Its occurrence was shown again because nobody reacted, or its escalation stopped; the detail says
    /// which.
    case escalated
}

/// One line of history.
public struct HistoryEntry: Hashable, Sendable {
    public var seq: UInt64
    public var date: Date
    public var event: HistoryEvent
    public var itemID: UInt64
    /// The app the item belongs to; empty for the user's own.
    public var owner: String
    public var group: GroupKey?
    public var entryID: String?
    public var summary: String
    public var detail: String?

    public init(
        seq: UInt64 = 0, date: Date, event: HistoryEvent, itemID: UInt64, owner: String = "", group: GroupKey? = nil,
        entryID: String? = nil, summary: String = "", detail: String? = nil
    ) {
        self.seq = seq
        self.date = date
        self.event = event
        self.itemID = itemID
        self.owner = owner
        self.group = group
        self.entryID = entryID
        self.summary = summary
        self.detail = detail
    }
}

/// Which history to read.
/// Reads stored definitions within one read of the database (`ScheduleStore.readingEntries`).
public struct EntryReader {
    let db: Database

    /// The entries of items, as `ScheduleStore.entries(of:)` reads them.
    public func entries(of ids: some Collection<UInt64>) throws -> [UInt64: TimelineEntry] {
        try ScheduleStore.entries(of: ids, in: db)
    }
}

/// Which pending items a listing page holds (`ScheduleStore.pendingPage`).
public struct PendingPageQuery: Hashable, Sendable {
    /// Only this app's items (nil: everyone's).
    public var owner: String?
    /// Only this group's items (of `owner`, or of any owner when nil).
    public var group: String?
    /// Only items whose next occurrence is at or before this instant.
    public var until: Date?
    /// Only items after this one in the order of the listing: next occurrence, then id.
    public var after: PendingCursor?
    /// At most this many items.
    public var limit: Int

    public init(owner: String?, group: String?, until: Date?, after: PendingCursor?, limit: Int) {
        self.owner = owner
        self.group = group
        self.until = until
        self.after = after
        self.limit = limit
    }
}

/// Which groups a listing page holds (`ScheduleStore.groupPage`).
public struct GroupPageQuery: Hashable, Sendable {
    /// Only this app's groups (nil: everyone's).
    public var owner: String?
    /// Only groups after this one, by owner then id.
    public var after: GroupKey?
    /// At most this many groups.
    public var limit: Int
    /// The page ends after the group whose items take those counted to this many or more.
    public var itemBudget: Int

    public init(owner: String?, after: GroupKey?, limit: Int, itemBudget: Int) {
        self.owner = owner
        self.after = after
        self.limit = limit
        self.itemBudget = itemBudget
    }
}

/// One page of groups (`ScheduleStore.groupPage`).
public struct GroupPage: Hashable, Sendable {
    /// The groups, by owner then id.
    public var groups: [GroupSummary] = []
    /// The last group the page looked at (also when it could not be read): where the next page starts.
    public var last: GroupKey?
    /// Whether groups follow `last`.
    public var more = false
    /// The items of the page's groups, counted.
    public var itemsCounted = 0

    public init() {}
}

/// A group as a listing shows it: its settings and source, how many items it has (pending and finished),
/// how many are pending, and when the next is due.
public struct GroupSummary: Hashable, Sendable {
    public var key: GroupKey
    public var settings: GroupSettings
    public var source: GroupSource
    public var entries: Int
    public var pending: Int
    public var next: Date?

    public init(
        key: GroupKey, settings: GroupSettings, source: GroupSource, entries: Int, pending: Int, next: Date?
    ) {
        self.key = key
        self.settings = settings
        self.source = source
        self.entries = entries
        self.pending = pending
        self.next = next
    }
}

/// Where a page of a listing of pending items ends: the last item's next occurrence and id.
public struct PendingCursor: Hashable, Sendable {
    public var fireUsec: Int64
    public var id: UInt64

    public init(fireUsec: Int64, id: UInt64) {
        self.fireUsec = fireUsec
        self.id = id
    }
}

public struct HistoryQuery: Hashable, Sendable {
    /// At most this many entries, newest first.
    public var limit: Int
    /// Only this app's items' (nil: everyone's).
    public var owner: String?
    /// Only this group's.
    public var group: GroupKey?
    /// Only this item's.
    public var itemID: UInt64?
    /// Only entries at or after this instant.
    public var since: Date?
    /// Only entries older than this one (by `seq`): the next page of a listing.
    public var before: UInt64?

    public init(
        limit: Int = 100, owner: String? = nil, group: GroupKey? = nil, itemID: UInt64? = nil, since: Date? = nil,
        before: UInt64? = nil
    ) {
        self.limit = limit
        self.owner = owner
        self.group = group
        self.itemID = itemID
        self.since = since
        self.before = before
    }
}

/// A failure of the state store, with what to do about it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
