import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation
import Synchronization

/// Listings (`ListPending`, `History`, `ListGroupsPaged`): read from the store on its reader connections, filtered by owner in
/// the query, and paged, so that what a listing costs grows with what the caller asked for and is spent
/// on the caller's time (`CallerWork`, at a lower CPU priority): never on the daemon's queue, where the timer
/// and deliveries run, nor on the store's writer, where their records are written.
///
/// A reply holds at most `ChimeBus.maximumReplyBytes`; when items are left, its last record is
/// `{next-page: CURSOR}` alone, and the call with options `after: CURSOR` lists the next page.
extension Daemon {
    /// The most items one `ListPending` page holds (without content; with it, `maximumPendingWithContent`).
    static let pendingPageItems = 1000

    /// The most occurrences of one item `ListPending` lists up to `until`.
    static let maximumOccurrencesUntil = 1000
    /// The most occurrences one `ListPending` page with `until` computes in all; the items after those get
    /// their first occurrence only, and `more`.
    static let occurrenceBudget = 100_000

    /// What a `ListPending` call asks for.
    struct PendingListing: Sendable {
        var next = 1
        var group: String?
        var content = false
        var until: Date?
        var after: PendingCursor?
    }

    /// One page of `ListPending` for `caller`: its own items (the user's: everyone's), soonest first.
    nonisolated func listPending(_ listing: PendingListing, caller: Caller) async throws -> [DBusValue] {
        await waitForEarlierWrites()
        let zone = published.withLock { $0.systemTimeZone }
        let pageItems = listing.content ? ChimeBus.maximumPendingWithContent : Self.pendingPageItems
        let query = PendingPageQuery(
            owner: caller.isUser ? nil : caller.appID, group: listing.group, until: listing.until,
            after: listing.after, limit: pageItems + 1)
        let store = self.store
        let (records, cost) = try await callerWork.run {
            try store.pendingPage(query) { rows in
                var page = ListingPage()
                var budget = Self.occurrenceBudget
                var cost = WorkCost(rows: rows.count)
                for (item, entry) in rows.prefix(pageItems) {
                    let pending = Self.pendingItem(
                        item, entry, listing: listing, zone: zone, budget: &budget, steps: &cost.steps)
                    guard page.add(pending.encoded.value, cursor: Self.cursor(item)) else { break }
                }
                if !page.isCut, rows.count > pageItems { page.cut() }
                return (page.records, cost)
            }
        }
        rates.charge(caller, cost, now: clock.now())
        return records
    }

    /// The most history entries one page reads.
    static let historyPageEntries = 10_000

    /// One page of `History`: at most `query.limit` entries, newest first.
    nonisolated func listHistory(_ query: HistoryQuery, caller: Caller) async throws -> [DBusValue] {
        await waitForEarlierWrites()
        var bounded = query
        bounded.limit = min(query.limit, Self.historyPageEntries)
        let store = self.store
        let asked = bounded
        let entries = try await callerWork.run { try store.history(asked) }
        rates.charge(caller, WorkCost(rows: entries.count), now: clock.now())
        var page = ListingPage()
        for entry in entries {
            let record = HistoryRecord(
                seq: entry.seq, date: entry.date, event: entry.event.rawValue, itemID: entry.itemID,
                owner: entry.owner, group: entry.group?.id, entry: entry.entryID, summary: entry.summary,
                detail: entry.detail
            ).encoded.value
            guard page.add(record, cursor: String(entry.seq)) else { break }
        }
        // A page that read as many as it may, fewer than were asked for: the rest may follow.
        if entries.count == bounded.limit, bounded.limit < query.limit { page.cut() }
        return page.records
    }

    /// The most groups one `ListGroupsPaged` page holds.
    static let groupsPageGroups = 1000
    /// The most items of its groups one `ListGroupsPaged` page counts (for their `entries`, `pending` and
    /// `next`): the page ends after the group that reaches it. One group has at most
    /// `TimelineGroup.maximumEntries`, so a page counts at most twice this many.
    static let groupsPageItems = 100_000
    /// How many items counted for a group listing cost as much as a row read (`WorkCost.rows`): counting
    /// walks the index of a group's items without showing them, about 0.4 µs an item (100,000 in 40 ms),
    /// where a row read and shown takes about 5 µs.
    static let countedItemsPerRow = 10

    /// One page of `ListGroupsPaged` for `caller`: its own groups (the user's: everyone's), by owner then
    /// id, after the group `after`.
    nonisolated func listGroups(after: GroupKey?, caller: Caller) async throws -> [DBusValue] {
        await waitForEarlierWrites()
        let query = GroupPageQuery(
            owner: caller.isUser ? nil : caller.appID, after: after, limit: Self.groupsPageGroups,
            itemBudget: Self.groupsPageItems)
        let store = self.store
        let found = try await callerWork.run { try store.groupPage(query) }
        rates.charge(
            caller, WorkCost(rows: found.groups.count + found.itemsCounted / Self.countedItemsPerRow),
            now: clock.now())
        var page = ListingPage()
        for group in found.groups {
            let record = GroupInfo(
                id: group.key.id, owner: group.key.owner, source: group.source.rawValue,
                enabled: group.settings.enabled, missed: GroupSettingsWire.name(group.settings),
                entries: group.entries, pending: group.pending, next: group.next
            ).encoded.value
            guard page.add(record, cursor: Self.cursor(group.key)) else { break }
        }
        if found.more, !page.isCut, let last = found.last { page.cut(after: Self.cursor(last)) }
        return page.records
    }

    /// Where a page of groups that ends with group `key` ends: `OWNER/ID` (`/ID` for the user's own).
    static func cursor(_ key: GroupKey) -> String { "\(key.owner)/\(key.id)" }

    /// The `after` option of `ListGroupsPaged`: a `next-page` cursor of an earlier reply.
    static func groupCursor(_ text: String) throws(DBusError) -> GroupKey {
        guard let slash = text.lastIndex(of: "/"), text.index(after: slash) < text.endIndex else {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "options key \"after\" must be the \"next-page\" of an earlier ListGroupsPaged reply")
        }
        return GroupKey(owner: String(text[..<slash]), id: String(text[text.index(after: slash)...]))
    }

    /// A pending item as a listing shows it, with its next `listing.next` occurrences (with `until`, those up
    /// to it, within `budget`, and `more` when some are left out).
    static func pendingItem(
        _ item: ScheduledItem, _ entry: TimelineEntry, listing: PendingListing, zone: Zone, budget: inout Int,
        steps: inout Int
    ) -> PendingItem {
        // A fire date past the end date only waits for the end: it is not an occurrence.
        let first = item.endDate.map { item.fireDate <= $0 } ?? true ? [item.fireDate] : []
        var more = false
        var upcoming = first
        if let until = listing.until {
            // One more than asked, to know whether any is left out; within the call's budget.
            let wanted = min(listing.next - 1, budget)
            let after = item.occurrencesAfterPending(
                count: wanted + 1, systemTimeZone: zone, until: until, stepsSpent: &steps)
            budget -= min(after.count, wanted)
            more = after.count > wanted
            upcoming += after.prefix(wanted)
        } else {
            upcoming += item.occurrencesAfterPending(
                count: listing.next - 1, systemTimeZone: zone, stepsSpent: &steps)
        }
        var rule: String?
        if item.repeats, case .rule(let written, _) = entry.trigger {
            rule = entry.offset.map { "\($0.words): \(written.text)" } ?? written.text
        }
        var pending = PendingItem(
            id: item.id, owner: item.owner, group: item.groupID,
            entry: item.groupID == nil ? nil : entry.id, appName: entry.content.base.appName,
            summary: entry.content.base.summary, fireDate: item.fireDate, next: upcoming,
            nextNotes: upcoming.map { item.daylightSavingNote(for: $0, systemTimeZone: zone) },
            rule: rule, more: more, escalation: escalationWords(entry),
            content: listing.content ? entry.content.base : nil, trigger: listing.content ? TriggerWire(entry) : nil)
        pending.wake = item.definition.wakes
        return pending
    }

    /// Where a page that ends with `item` ends: `MICROSECONDS.ID` of its next occurrence and its id.
    static func cursor(_ item: ScheduledItem) -> String { "\(WireTime.microseconds(item.fireDate)).\(item.id)" }

    /// The `after` option of `ListPending`: a `next-page` cursor of an earlier reply.
    static func pendingCursor(_ text: String) throws(DBusError) -> PendingCursor {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let usec = Int64(parts[0]), let id = UInt64(parts[1]) else {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "options key \"after\" must be the \"next-page\" of an earlier ListPending reply")
        }
        return PendingCursor(fireUsec: usec, id: id)
    }

    /// The `after` option of `History`: a `next-page` cursor of an earlier reply (an entry's seq).
    static func historyCursor(_ text: String) throws(DBusError) -> UInt64 {
        guard let seq = UInt64(text), seq > 0 else {
            throw DBusError(
                name: ChimeBus.ErrorName.invalidArgument,
                message: "options key \"after\" must be the \"next-page\" of an earlier History reply")
        }
        return seq
    }

    /// Waits until the store has carried out every write asked for before now (without adding work to it),
    /// so that a listing shows what chimed said before the call: an item's new occurrence once `Delivered`
    /// was signalled, a group once `Reschedule` answered.
    nonisolated func waitForEarlierWrites() async {
        await withCheckedContinuation { continuation in storeQueue.async { continuation.resume() } }
    }
}

/// The records of one page of a listing, within `ChimeBus.maximumReplyBytes`: when the next record would
/// not fit, the page ends with `{next-page: CURSOR}`, the cursor of its last record.
struct ListingPage {
    /// Whether a cut page ends with `{next-page: CURSOR}` (else it simply ends).
    var marksCut = true
    private(set) var records: [DBusValue] = []
    private var bytes = 0
    private var lastCursor: String?
    private(set) var isCut = false

    init(marksCut: Bool = true) {
        self.marksCut = marksCut
    }

    /// Room kept for the `next-page` record and the reply's own framing.
    static let reserve = 1024

    /// Adds a record, unless the page is full: then the page is cut and false returned. A first record is
    /// always added (a single one is far below the limit).
    mutating func add(_ record: DBusValue, cursor: String) -> Bool {
        let size = record.estimatedWireBytes
        guard records.isEmpty || bytes + size <= ChimeBus.maximumReplyBytes - Self.reserve else {
            cut()
            return false
        }
        records.append(record)
        bytes += size
        lastCursor = cursor
        return true
    }

    /// Ends the page with the cursor of its last record: more records follow it.
    mutating func cut() {
        guard let lastCursor else { return }
        cut(after: lastCursor)
    }

    /// Ends the page with `cursor`, where the next page starts: that of its last record, or of one after it
    /// that the listing looked at and left out (a row it could not read).
    mutating func cut(after cursor: String) {
        guard !isCut else { return }
        isCut = true
        guard marksCut else { return }
        var next = WireRecord()
        next.set("next-page", cursor)
        records.append(next.value)
    }
}

/// What the daemon's queue publishes for work done elsewhere (listings on the store's readers): values that
/// change rarely, read without waiting for the queue.
struct PublishedState: Sendable {
    /// The zone floating rules follow (`Scheduler.systemTimeZone`).
    var systemTimeZone = Zone.utc
    /// The times of day phrases mean (`Scheduler.phraseDefaults`, chime.toml's `[phrases]`).
    var phraseDefaults = PhraseDefaults.standard
    /// What `Status` answers (`Daemon.publishStatus`).
    var status = StatusFigures()
    /// The server properties as last announced (`Daemon.announce`), for `Get`.
    var serverProperties = Daemon.initialServerProperties
}
