/// Items by id, with each owner's count and bytes kept as items come and go, so a quota check per call
/// costs nothing however many items there are.
struct ItemTable: Sendable {
    private(set) var byID: [UInt64: ScheduledItem] = [:]
    private var perOwner: [String: Int] = [:]
    /// The bytes of each app's items (`ContentSource.byteSize`); the user's items are not counted.
    private var bytesPerOwner: [String: Int] = [:]

    subscript(id: UInt64) -> ScheduledItem? {
        get { byID[id] }
        set {
            let old = newValue.map { byID.updateValue($0, forKey: id) } ?? byID.removeValue(forKey: id)
            if let old { count(old, -1) }
            if let newValue { count(newValue, 1) }
        }
    }

    @discardableResult
    mutating func removeValue(forKey id: UInt64) -> ScheduledItem? {
        guard let old = byID.removeValue(forKey: id) else { return nil }
        count(old, -1)
        return old
    }

    var values: Dictionary<UInt64, ScheduledItem>.Values { byID.values }
    var count: Int { byID.count }

    /// How many of the items `owner` has.
    func count(owner: String) -> Int { perOwner[owner] ?? 0 }

    /// The bytes the items of app `owner` take.
    func bytes(owner: String) -> Int { bytesPerOwner[owner] ?? 0 }

    private mutating func count(_ item: ScheduledItem, _ sign: Int) {
        let now = (perOwner[item.owner] ?? 0) + sign
        perOwner[item.owner] = now == 0 ? nil : now
        guard !item.owner.isEmpty else { return }
        let bytes = (bytesPerOwner[item.owner] ?? 0) + sign * item.entry.content.byteSize
        bytesPerOwner[item.owner] = bytes == 0 ? nil : bytes
    }
}
