import ChimeCore
import Foundation

/// What happened to an item, as delivery history records it.
public enum HistoryEvent: String, Codable, Sendable, CaseIterable {
    case scheduled
    case delivered
    case cancelled
    /// A repeating item moved on to its next occurrence.
    case advanced
    /// A repeating item has no further occurrence.
    case finished
}

/// One line of delivery history.
public struct HistoryEntry: Hashable, Sendable {
    public var itemID: UInt64
    public var date: Date
    public var event: HistoryEvent
    public var detail: String?

    public init(itemID: UInt64, date: Date, event: HistoryEvent, detail: String? = nil) {
        self.itemID = itemID
        self.date = date
        self.event = event
        self.detail = detail
    }
}

/// Durable state of chimed. Every method returns only after its change is committed.
public protocol ItemStore: Sendable {
    /// The pending items, soonest first.
    func pendingItems() async throws -> [ScheduledItem]
    /// The largest item id ever stored (0 when none), so ids are never reused.
    func largestItemID() async throws -> UInt64
    /// Stores a newly scheduled item.
    func insert(_ item: ScheduledItem, now: Date) async throws
    /// Marks a pending item cancelled; false when it was not pending.
    func cancel(_ id: UInt64, now: Date) async throws -> Bool
    /// Moves a repeating item to its next occurrence.
    func advance(_ id: UInt64, to fireDate: Date, now: Date) async throws
    /// Ends a repeating item that has no further occurrence.
    func finish(_ id: UInt64, now: Date) async throws
    /// Records a delivery to the notification server; a one-off item stops being pending.
    func markDelivered(_ id: UInt64, notificationID: UInt32, now: Date) async throws
    /// The newest history entries first, at most `limit`.
    func history(limit: Int) async throws -> [HistoryEntry]
}

/// A failure of the state store, with what to do about it.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
