/// Items by id, with each owner's count kept as items come and go, so a quota check per call costs
/// nothing however many items there are.
struct ItemTable: Sendable {
    private(set) var byID: [UInt64: ScheduledItem] = [:]
    private var perOwner: [String: Int] = [:]

    subscript(id: UInt64) -> ScheduledItem? {
        get { byID[id] }
        set {
            let old = newValue.map { byID.updateValue($0, forKey: id) } ?? byID.removeValue(forKey: id)
            if let old { count(old.owner, -1) }
            if let newValue { count(newValue.owner, 1) }
        }
    }

    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> ScheduledItem? {
        guard let old = byID.removeValue(forKey: id) else { return nil }
        count(old.owner, -1)
        return old
    }

    var values: Dictionary<UInt64, ScheduledItem>.Values { byID.values }
    var count: Int { byID.count }

    /// How many of the items `owner` has.
    func count(owner: String) -> Int { perOwner[owner] ?? 0 }

    private mutating func count(_ owner: String, _ change: Int) {
        let now = (perOwner[owner] ?? 0) + change
        perOwner[owner] = now == 0 ? nil : now
    }
}
