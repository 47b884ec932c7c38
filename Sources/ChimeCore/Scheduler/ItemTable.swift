/// Items by id, with each owner's count and bytes kept as items come and go, so a quota check per call
/// costs nothing however many items there are.
///
/// Items sit in one array of slots, found through an index of small slot numbers: a dictionary of the
/// items themselves would grow to twice their count in slots of an item's whole size. Items are kept
/// with their definitions compact (`EntryDefinition.compact`), or without their encodings when the store
/// holds them (`releasesDefinitions`, `EntryDefinition.released`).
struct ItemTable: Sendable {
    var releasesDefinitions = false
    private var slots: [ScheduledItem?] = []
    /// Beside each slot, the sequence number of its item's current trigger (`Scheduler.Trigger.sequence`):
    /// heap entries with another are stale. An array beside the slots costs 8 bytes an item, where a
    /// dictionary by id cost about 32.
    private var sequences: [UInt64] = []
    /// Slots emptied by removals, reused first.
    private var free: [Int32] = []
    private var index: [UInt64: Int32] = [:]
    private var perOwner: [String: Int] = [:]
    /// The ids of each owner's items that belong to no group: a group keeps its own (`GroupRecord.items`).
    private var singlesPerOwner: [String: Set<UInt64>] = [:]
    /// The bytes each app's items take in the store (`ScheduledItem.storedBytes`); the user's items are not
    /// counted.
    private var bytesPerOwner: [String: Int] = [:]
    /// The items that ask to wake the machine (`EntryDefinition.wakes`): few, so the earliest of them is
    /// found without looking at the others.
    private(set) var wakeIDs: Set<UInt64> = []
    /// Counts every change of an item in `wakeIDs` (added, moved, removed), so that the earliest is
    /// looked for again only when one changed.
    private(set) var wakeGeneration: UInt64 = 0

    subscript(id: UInt64) -> ScheduledItem? {
        get { index[id].flatMap { slots[Int($0)] } }
        set {
            if let newValue {
                let item = kept(newValue)
                // One lookup for a new item: its slot is offered, and taken back if the item had one.
                let offered = free.last ?? Int32(slots.count)
                if let slot = index.updateValue(offered, forKey: id) {
                    // Replaced in place: its trigger's sequence stays. The old one is uncounted first, as the
                    // new one may have the same owner and id.
                    index[id] = slot
                    if let old = slots[Int(slot)] { count(old, -1) }
                    count(item, 1)
                    slots[Int(slot)] = item
                    return
                }
                count(item, 1)
                if free.popLast() != nil {
                    slots[Int(offered)] = item
                    sequences[Int(offered)] = Self.noSequence
                } else {
                    slots.append(item)
                    sequences.append(Self.noSequence)
                }
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// The item as the table keeps it: its definition released when the store holds definitions, else
    /// compact.
    private func kept(_ newItem: consuming ScheduledItem) -> ScheduledItem {
        var item = newItem
        if releasesDefinitions {
            if item.definition.isResident { item.definition = item.definition.released }
        } else if item.definition.decodedEntry != nil {
            item.definition = item.definition.compact
        }
        return item
    }

    /// The owner whose items `add(_:sequence:)` is adding, with the count and bytes not yet added to
    /// `perOwner` and `bytesPerOwner`.
    private var adding: (owner: String, count: Int, bytes: Int)?

    /// Adds an item with its trigger's sequence number, for a start (`Scheduler.restore`): one lookup of
    /// the index, and the owner's count and bytes added once for each run of one owner's items (a start
    /// reads them stored together) instead of two lookups by the owner's name for each item.
    /// `finishAdding()` must come before anything reads the counts.
    mutating func add(_ newItem: consuming ScheduledItem, sequence: UInt64) {
        let item = kept(newItem)
        let offered = free.last ?? Int32(slots.count)
        if let slot = index.updateValue(offered, forKey: item.id) {
            // Held already: replaced as any change is.
            index[item.id] = slot
            finishAdding()
            self[item.id] = item
            sequences[Int(slot)] = sequence
            return
        }
        if free.popLast() != nil {
            slots[Int(offered)] = item
            sequences[Int(offered)] = sequence
        } else {
            slots.append(item)
            sequences.append(sequence)
        }
        countWakesAndSingles(item, 1)
        if adding?.owner != item.owner {
            finishAdding()
            adding = (item.owner, 0, 0)
        }
        adding!.count += 1
        adding!.bytes += item.storedBytes
    }

    /// Adds the counts `add(_:sequence:)` has kept back.
    mutating func finishAdding() {
        guard let (owner, count, bytes) = adding else { return }
        adding = nil
        add(owner: owner, count: count, bytes: bytes)
    }

    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> ScheduledItem? {
        guard let slot = index.removeValue(forKey: id), let old = slots[Int(slot)] else { return nil }
        slots[Int(slot)] = nil
        free.append(slot)
        count(old, -1)
        if slots.count >= 4096, free.count * 2 > slots.count { compact() }
        return old
    }

    /// Moves the items to the front when most slots are empty, so the array shrinks with the items.
    private mutating func compact() {
        let kept = slots.indices.filter { slots[$0] != nil }
        sequences = kept.map { sequences[$0] }
        slots = kept.map { slots[$0] }
        free = []
        index = Dictionary(uniqueKeysWithValues: slots.enumerated().map { ($1!.id, Int32($0)) })
    }

    mutating func reserveCapacity(_ capacity: Int) {
        slots.reserveCapacity(capacity)
        sequences.reserveCapacity(capacity)
        index.reserveCapacity(capacity)
    }

    private static let noSequence = UInt64.max

    /// The sequence number of the trigger of item `id`; nil when it has none, or there is no such item.
    func sequence(of id: UInt64) -> UInt64? {
        guard let slot = index[id] else { return nil }
        let sequence = sequences[Int(slot)]
        return sequence == Self.noSequence ? nil : sequence
    }

    /// Sets the sequence number of the trigger of item `id`, which must be in the table.
    mutating func setSequence(_ sequence: UInt64, of id: UInt64) {
        guard let slot = index[id] else { preconditionFailure("item \(id) has no slot") }
        sequences[Int(slot)] = sequence
    }

    var values: some Sequence<ScheduledItem> { slots.lazy.compactMap { $0 } }
    var count: Int { index.count }

    /// How many of the items `owner` has.
    func count(owner: String) -> Int { perOwner[owner] ?? 0 }

    /// The bytes the items of app `owner` take.
    func bytes(owner: String) -> Int { bytesPerOwner[owner] ?? 0 }

    /// The owners that have items here.
    var owners: Set<String> { Set(perOwner.keys) }

    /// `owner`'s items that belong to no group.
    func singles(owner: String) -> [ScheduledItem] { (singlesPerOwner[owner] ?? []).compactMap { self[$0] } }

    private mutating func count(_ item: ScheduledItem, _ sign: Int) {
        countWakesAndSingles(item, sign)
        add(owner: item.owner, count: sign, bytes: sign * item.storedBytes)
    }

    /// Adds to `owner`'s count and (for an app, not the user) bytes; a total of 0 leaves no entry.
    private mutating func add(owner: String, count: Int, bytes: Int) {
        let items = (perOwner[owner] ?? 0) + count
        perOwner[owner] = items == 0 ? nil : items
        guard !owner.isEmpty else { return }
        let total = (bytesPerOwner[owner] ?? 0) + bytes
        bytesPerOwner[owner] = total == 0 ? nil : total
    }

    private mutating func countWakesAndSingles(_ item: ScheduledItem, _ sign: Int) {
        if item.definition.wakes {
            if sign > 0 { wakeIDs.insert(item.id) } else { wakeIDs.remove(item.id) }
            wakeGeneration &+= 1
        }
        if item.groupID == nil {
            if sign > 0 {
                singlesPerOwner[item.owner, default: []].insert(item.id)
            } else {
                singlesPerOwner[item.owner]?.remove(item.id)
                if singlesPerOwner[item.owner]?.isEmpty == true { singlesPerOwner.removeValue(forKey: item.owner) }
            }
        }
    }
}
