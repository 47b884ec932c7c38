import Foundation
import HeapModule

/// A notification waiting for its moment.
public struct ScheduledItem: Codable, Hashable, Sendable, Identifiable {
    public var id: UInt64
    public var content: NotificationContent
    /// When it is due next, as an absolute instant.
    public var fireDate: Date
    /// For a repeating item, the rule that gives the occurrence after `fireDate`; nil for a one-off.
    public var recurrence: Recurrence?

    public init(id: UInt64, content: NotificationContent, fireDate: Date, recurrence: Recurrence? = nil) {
        self.id = id
        self.content = content
        self.fireDate = fireDate
        self.recurrence = recurrence
    }
}

/// What the I/O layer must do after a scheduler step.
public enum SchedulerAction: Hashable, Sendable {
    /// Arm the one timer at this wall-clock instant (replacing any earlier arming).
    case arm(Date)
    /// Nothing is pending: the timer may stay idle.
    case disarm
    /// These items are due: deliver them, in this order.
    case deliver([ScheduledItem])
    /// A repeating item moved on to its next occurrence: store the new fire date (before delivering the
    /// due one, so that a crash never delivers an occurrence twice).
    case advance(ScheduledItem)
    /// A repeating item fired for the last time: it is no longer pending.
    case finish(UInt64)
}

/// The scheduler's pure state machine: a min-heap of (fire date, sequence, item id).
///
/// It never reads the clock: every mutating method takes `now` and returns the actions the daemon
/// performs. Cancellation is lazy: a cancelled entry stays in the heap until it reaches the top, where
/// it is dropped, so cancelling costs O(1) and the heap never needs an O(n) scan.
///
/// A repeating item holds one trigger: when it fires, its next occurrence after `now` is computed and
/// pushed back. After downtime a repeating item fires once, late, not once per missed occurrence.
public struct Scheduler: Sendable {
    struct Trigger: Comparable, Sendable {
        var fireDate: Date
        /// Breaks ties so that items due together come out in the order they were scheduled.
        var sequence: UInt64
        var itemID: UInt64

        static func < (a: Trigger, b: Trigger) -> Bool {
            (a.fireDate, a.sequence) < (b.fireDate, b.sequence)
        }
    }

    private var heap = Heap<Trigger>()
    private(set) var items: [UInt64: ScheduledItem] = [:]
    /// The sequence number of each live item's current trigger; heap entries with another number are stale.
    private var liveSequence: [UInt64: UInt64] = [:]
    private var nextSequence: UInt64 = 0
    private var nextID: UInt64 = 1

    public init() {}

    /// The pending items, soonest first.
    public var pending: [ScheduledItem] {
        items.values.sorted { ($0.fireDate, $0.id) < ($1.fireDate, $1.id) }
    }

    /// How many items are pending.
    public var count: Int { items.count }

    /// Whether `id` is pending.
    public func contains(_ id: UInt64) -> Bool { items[id] != nil }

    /// The earliest live deadline.
    public var nextDeadline: Date? {
        mutating get {
            dropStaleTop()
            return heap.min?.fireDate
        }
    }

    /// Adds a notification due at `fireDate` and returns its new id with the actions to perform.
    public mutating func schedule(
        _ content: NotificationContent, at fireDate: Date, now: Date
    ) -> (id: UInt64, actions: [SchedulerAction]) {
        let id = nextID
        nextID += 1
        insert(ScheduledItem(id: id, content: content, fireDate: fireDate))
        return (id, step(now: now))
    }

    /// Takes the next item id without scheduling anything, so the caller can make the item durable
    /// before it becomes active (`restore`).
    public mutating func allocateID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Makes sure new ids are larger than `id` (ids of delivered or cancelled items are never reused).
    public mutating func reserveIDs(through id: UInt64) {
        nextID = max(nextID, id + 1)
    }

    /// Puts back an item with its own id (restoring state, or re-queueing an undelivered item).
    public mutating func restore(_ item: ScheduledItem, now: Date) -> [SchedulerAction] {
        restore([item], now: now)
    }

    /// Puts back many items at once, then steps once: what is already due is delivered in deadline order.
    public mutating func restore(_ items: [ScheduledItem], now: Date) -> [SchedulerAction] {
        for item in items {
            nextID = max(nextID, item.id + 1)
            insert(item)
        }
        return step(now: now)
    }

    private mutating func insert(_ item: ScheduledItem) {
        items[item.id] = item
        let sequence = nextSequence
        nextSequence += 1
        liveSequence[item.id] = sequence
        heap.insert(Trigger(fireDate: item.fireDate, sequence: sequence, itemID: item.id))
    }

    /// Removes a pending item; returns it (nil when unknown) with the actions to perform.
    public mutating func cancel(_ id: UInt64, now: Date) -> (item: ScheduledItem?, actions: [SchedulerAction]) {
        guard let item = items.removeValue(forKey: id) else { return (nil, []) }
        liveSequence.removeValue(forKey: id)
        return (item, step(now: now))
    }

    /// The zone floating rules follow; the daemon sets it from the system (and again when it changes).
    public var systemTimeZone = TimeZone(identifier: "UTC")!

    /// Delivers everything due at `now` and says when to wake next: call it when the timer fires,
    /// and after the clock jumped.
    public mutating func step(now: Date) -> [SchedulerAction] {
        var due: [ScheduledItem] = []
        var bookkeeping: [SchedulerAction] = []
        while let top = heap.min {
            guard liveSequence[top.itemID] == top.sequence, let item = items[top.itemID] else {
                heap.removeMin()
                continue
            }
            guard top.fireDate <= now else { break }
            heap.removeMin()
            items.removeValue(forKey: top.itemID)
            liveSequence.removeValue(forKey: top.itemID)
            due.append(item)
            if let recurrence = item.recurrence {
                if let next = recurrence.nextOccurrence(after: max(now, item.fireDate), systemTimeZone: systemTimeZone)
                {
                    var following = item
                    following.fireDate = next
                    insert(following)
                    bookkeeping.append(.advance(following))
                } else {
                    bookkeeping.append(.finish(item.id))
                }
            }
        }
        var actions = bookkeeping
        if !due.isEmpty { actions.append(.deliver(due)) }
        actions.append(heap.min.map { .arm($0.fireDate) } ?? .disarm)
        return actions
    }

    private mutating func dropStaleTop() {
        while let top = heap.min, liveSequence[top.itemID] != top.sequence {
            heap.removeMin()
        }
    }
}
