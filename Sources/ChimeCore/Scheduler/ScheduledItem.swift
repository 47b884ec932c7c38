import Foundation

/// Names a group: group ids are unique per owning app.
public struct GroupKey: Codable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The owning app's id; empty for the user's own groups.
    public var owner: String
    public var id: String

    public init(owner: String, id: String) {
        self.owner = owner
        self.id = id
    }

    public static func < (a: GroupKey, b: GroupKey) -> Bool { (a.owner, a.id) < (b.owner, b.id) }

    public var description: String { owner.isEmpty ? id : "\(owner)/\(id)" }
}

/// Why an item stopped being pending without being cancelled.
public enum FinishReason: String, Codable, Hashable, Sendable {
    /// Its last occurrence fired (a one-off fired, or its rule has no further occurrence).
    case lastOccurrence = "last-occurrence"
    /// Its end date passed.
    case ended
    /// It fired as many times as its count allows.
    case countReached = "count-reached"
    /// Its repeats were stopped (the Stop Repeat action).
    case stopped
    /// Its rule's next occurrence could not be found within the search budget: chimed cannot follow it.
    case searchExhausted = "search-exhausted"
}

/// One timeline entry as the scheduler keeps it: its definition, the rule parsed from it, when it is due
/// next, and what it remembers between firings. There is one per entry, however often it repeats.
///
/// The definition and the rule are held encoded (`EntryDefinition`, `StoredRecurrence`) and decoded when
/// read: `entry` and `recurrence` read and write them as values.
public struct ScheduledItem: Hashable, Sendable, Identifiable {
    public var id: UInt64
    /// The owning app's id; empty for the user's own items.
    public var owner: String
    /// The group it belongs to; nil for an item scheduled on its own (`chime send`, `Schedule`).
    public var groupID: String?
    // The fields are in the order that packs them tightest (the scheduler keeps one item per entry):
    // the small ones fill what the definition leaves before the next 8-byte boundary.
    /// The entry, encoded, with what every step needs beside it.
    public var definition: EntryDefinition
    /// The notification this item's popup replaces (a snooze replaces the popup it came from).
    public var replacesID: UInt32?
    /// Set once it is done; a finished group item is kept so that a reschedule knows not to start it again.
    public var finished: FinishReason?
    /// The parsed rule of a repeating entry; nil for a one-off. Kept as parsed at scheduling time, so that
    /// relative words ("for 50 days") do not start again when a group is loaded again unchanged.
    public var storedRecurrence: StoredRecurrence?
    /// When it is due next.
    public var fireDate: Date
    /// A snooze: the item it brings back.
    public var snoozeOf: UInt64?
    public var state: EntryState

    public init(
        id: UInt64, owner: String = "", groupID: String? = nil, entry: TimelineEntry, recurrence: Recurrence?,
        fireDate: Date, state: EntryState = EntryState(), finished: FinishReason? = nil, snoozeOf: UInt64? = nil,
        replacesID: UInt32? = nil
    ) {
        self.init(
            id: id, owner: owner, groupID: groupID, definition: EntryDefinition(entry),
            storedRecurrence: recurrence.map(StoredRecurrence.init), fireDate: fireDate, state: state,
            finished: finished, snoozeOf: snoozeOf, replacesID: replacesID)
    }

    /// An item as stored: its definition and rule as encoded.
    public init(
        id: UInt64, owner: String, groupID: String?, definition: EntryDefinition,
        storedRecurrence: StoredRecurrence?, fireDate: Date, state: EntryState, finished: FinishReason?,
        snoozeOf: UInt64?, replacesID: UInt32?
    ) {
        self.snoozeOf = snoozeOf
        self.replacesID = replacesID
        self.id = id
        self.owner = owner
        self.groupID = groupID
        self.definition = definition
        self.storedRecurrence = storedRecurrence
        self.fireDate = fireDate
        self.state = state
        self.finished = finished
    }

    /// The entry, decoded from its definition; setting it encodes it.
    public var entry: TimelineEntry {
        get { definition.entry }
        set { definition = EntryDefinition(newValue) }
    }

    /// The parsed rule, decoded; setting it encodes it.
    public var recurrence: Recurrence? {
        get { storedRecurrence?.value }
        set { storedRecurrence = newValue.map(StoredRecurrence.init) }
    }

    /// What the item takes in the store, as an app's byte quota counts it: its encoded entry (content,
    /// user info, ids, the rule as written…), its parsed rule, and its group's id.
    public var storedBytes: Int {
        definition.encodedBytes + (storedRecurrence?.encoded.count ?? 0) + (groupID?.utf8.count ?? 0)
    }

    /// Whether it repeats (it has a rule), known without decoding the rule.
    public var repeats: Bool { storedRecurrence != nil }
    /// The entry's id, without decoding the entry.
    public var entryID: String { definition.id }
    /// The entry's end date, without decoding the entry.
    public var endDate: Date? { definition.endDate }
    /// The entry's count, without decoding the entry.
    public var maximumOccurrences: Int? { definition.maximumOccurrences }

    /// An item on its own with fixed content: once at `fireDate`, or at each occurrence of `recurrence`
    /// (written as `rule`) from `fireDate` on.
    public init(
        id: UInt64, content: NotificationContent, fireDate: Date, recurrence: Recurrence? = nil,
        rule: WrittenRule? = nil, timeZone: String? = nil, owner: String = "", endDate: Date? = nil,
        maximumOccurrences: Int? = nil
    ) {
        let trigger: EntryTrigger =
            if let rule { .rule(rule, timeZone: timeZone) } else { .at(fireDate) }
        self.init(
            id: id, owner: owner,
            entry: TimelineEntry(
                id: "item-\(id)", trigger: trigger, content: .fixed(content), endDate: endDate,
                maximumOccurrences: maximumOccurrences),
            recurrence: recurrence, fireDate: fireDate)
    }

    /// The group it belongs to, when it belongs to one.
    public var groupKey: GroupKey? { groupID.map { GroupKey(owner: owner, id: $0) } }

    /// The content's fixed part, as listings show it.
    public var content: NotificationContent { entry.content.base }

    /// The occurrences that follow the pending one (`fireDate`), at most `count`, within its end date and
    /// count (the pending one is counted as one of those left).
    /// With `until`, only those up to it. All of them are searched for within ``listingBudget`` steps: a
    /// listing of a rule that fires rarely for its form ends where that runs out.
    public func occurrencesAfterPending(count: Int, systemTimeZone: Zone, until: Date? = nil) -> [Date] {
        var steps = 0
        return occurrencesAfterPending(count: count, systemTimeZone: systemTimeZone, until: until, stepsSpent: &steps)
    }

    /// `occurrencesAfterPending(count:systemTimeZone:until:)`, adding the search steps it took to `stepsSpent`:
    /// what the listing cost, for the caller to pay.
    public func occurrencesAfterPending(
        count: Int, systemTimeZone: Zone, until: Date? = nil, stepsSpent: inout Int
    ) -> [Date] {
        var result: [Date] = []
        var cursor = fireDate
        let left = maximumOccurrences.map { $0 - state.occurrences - 1 } ?? Int.max
        let end = [endDate, until].compactMap { $0 }.min()
        var budget = SearchBudget(steps: Self.listingBudget)
        while result.count < min(count, left) {
            guard let next = try? nextOccurrence(after: cursor, systemTimeZone: systemTimeZone, budget: &budget),
                end.map({ next <= $0 }) ?? true
            else { break }
            result.append(next)
            cursor = next
        }
        stepsSpent += budget.spent
        return result
    }

    /// The resolution instants are stored with (microseconds, as on the wire): two occurrences closer than
    /// this are one.
    public static let storedResolution: TimeInterval = 0.000_001

    /// The steps one item's listing of occurrences may take, all of them together.
    public static let listingBudget = 4 * SearchBudget.stepsPerSearch

    /// What daylight saving did to `occurrence` of this item's rule (moved it out of a gap, or met it
    /// twice in an overlap); nil for a one-off item or when nothing happened.
    public func daylightSavingNote(for occurrence: Date, systemTimeZone: Zone) -> String? {
        guard repeats else { return nil }
        return recurrence?.daylightSavingNote(for: occurrence, systemTimeZone: systemTimeZone)
    }

    /// The occurrence after `after` by its trigger alone (the end date and count are the scheduler's
    /// business); nil when there is none.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the rule's search needed more than `budget` allows.
    func nextOccurrence(after: Date, systemTimeZone: Zone, budget: inout SearchBudget)
        throws(SearchBudgetExhausted) -> Date?
    {
        if let recurrence = storedRecurrence?.value {
            // `after` is an occurrence as the store kept it, to the microsecond; the rule's own occurrence
            // may lie a fraction of a microsecond after it (an interval counted from a `now` with
            // nanoseconds) and is the same one, not the next.
            return try recurrence.nextOccurrence(
                after: after.addingTimeInterval(Self.storedResolution), systemTimeZone: systemTimeZone,
                budget: &budget)
        }
        return fireDate > after ? fireDate : nil
    }
}
