import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// Per-app limits, categories, the list of apps, and chimed's status.
extension Daemon {
    /// Refuses a change that would give an app more items than `[limits] entries-per-app`, or more bytes
    /// than `[limits] bytes-per-app`: its items as stored (`ScheduledItem.storedBytes`), its categories and
    /// the actions kept for it (`AppStorage`), all kept as they change. `adding` and `addingBytes` are what
    /// the change adds (less what it removes). The user's own tool is not limited.
    func checkQuota(_ caller: Caller, adding: Int, addingBytes: Int) throws {
        guard !caller.isUser else { return }
        try checkQuota(owner: caller.appID, adding: adding, addingBytes: addingBytes)
    }

    /// `checkQuota(_:adding:addingBytes:)` for app `owner` ("" the user, not limited).
    func checkQuota(owner: String, adding: Int, addingBytes: Int) throws {
        guard !owner.isEmpty, adding > 0 || addingBytes > 0 else { return }
        let count = scheduler.count(owner: owner)
        let bytes = storedBytes(owner: owner)
        guard adding <= 0 || count + adding <= settings.entriesPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(owner) would have \(count + adding) items, more than the \(settings.entriesPerApp) "
                    + "an app may have; remove some first")
        }
        guard addingBytes <= 0 || bytes + addingBytes <= settings.bytesPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(owner) would keep \(bytes + addingBytes) bytes in chimed (its items with their rules, "
                    + "ids and user info, its categories, the actions kept for it), more than the "
                    + "\(settings.bytesPerApp) an app may; remove some first")
        }
    }

    /// Refuses group `key` when it is new and its app has as many groups as `[limits] groups-per-app`
    /// allows, counting those being stored (`groupsBeingMade`).
    func checkGroupCount(adding key: GroupKey) throws {
        guard !key.owner.isEmpty, scheduler.settings(of: key) == nil else { return }
        let count = scheduler.groupCount(owner: key.owner) + (groupsBeingMade[key.owner]?.count ?? 0)
        guard count < settings.groupsPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(key.owner) has \(count) groups, the most an app may have ([limits] groups-per-app "
                    + "is \(settings.groupsPerApp)); group \(key.id) was not made: put its entries in one of the "
                    + "app's groups, or remove a group first")
        }
    }

    /// The bytes app `owner` keeps in chimed: its items as stored, its categories, its kept actions.
    func storedBytes(owner: String) -> Int {
        scheduler.bytes(owner: owner) + interaction.storage.bytes(owner: owner)
    }

    /// Refuses a planned timeline that would take the app beyond its limits: a group more than
    /// `[limits] groups-per-app`, or its new and changed items in place of what they were, less the items
    /// it removes. Counted over the plan, the caller's own work.
    func checkQuota(_ caller: Caller, plan: ReschedulePlan) throws {
        guard !caller.isUser else { return }
        try checkGroupCount(adding: plan.key)
        var adding = 0
        var bytes = 0
        for item in plan.upserts {
            if let old = scheduler.item(item.id) {
                bytes -= old.storedBytes
            } else {
                adding += 1
            }
            bytes += item.storedBytes
        }
        for id in plan.removed {
            guard let old = scheduler.item(id) else { continue }
            adding -= 1
            bytes -= old.storedBytes
        }
        try checkQuota(caller, adding: adding, addingBytes: bytes)
    }

    /// Takes the actions kept for `owner` (TakeActions): they are handed over once, and their bytes are
    /// the app's again.
    func takeActions(owner: String) async throws -> (actions: [PendingAction], more: Bool) {
        let now = clock.now()
        let taken = try await persisted {
            try $0.takeActions(owner: owner, maximumBytes: ChimeBus.maximumReplyBytes / 2, now: now)
        }
        interaction.storage.keptActionBytes[owner] = taken.keptBytes == 0 ? nil : taken.keptBytes
        return (taken.actions, taken.more)
    }

    /// The most apps whose categories chimed keeps: every app id needs only a bus name, so without a bound
    /// one process could make chimed store categories for any number of made-up apps.
    static let maximumAppsWithCategories = 1_000

    /// Replaces an app's categories of actions.
    func setCategories(_ list: [ActionCategory], owner: String) async throws {
        let full = !list.isEmpty && categories[owner] == nil && categories.count >= Self.maximumAppsWithCategories
        guard !full else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "chimed keeps the categories of \(Self.maximumAppsWithCategories) apps already, the most it "
                    + "keeps; no more apps' categories are taken")
        }
        // The categories count in the app's bytes, in place of those it had.
        let bytes = AppStorage.bytes(of: list)
        try checkQuota(owner: owner, adding: 0, addingBytes: bytes - interaction.storage.bytes(ofCategoriesOf: owner))
        try await persisted { try $0.setCategories(list, owner: owner) }
        // Another app's categories may have come meanwhile: this app's list is kept even if that makes one
        // more than the most, as it is stored.
        categories[owner] = list.isEmpty ? nil : list
        interaction.storage.categoryBytes[owner] = list.isEmpty ? nil : bytes
        logger.info("\(owner.isEmpty ? "the user" : owner) registered \(list.count) categories of actions")
    }

    /// Every app chimed knows: with items, groups, a consent, or a connection.
    func apps() -> [AppInfo] {
        let connected = callers.connectedApps()
        let names = Set(interaction.consents.keys).union(connected)
            .union(scheduler.pendingOwners).union(scheduler.groupOwners).subtracting([""])
        return names.sorted().map { app in
            AppInfo(
                app: app, consent: (interaction.consents[app] ?? .undetermined).rawValue,
                items: scheduler.pendingCount(owner: app), groups: scheduler.groupCount(owner: app),
                connected: connected.contains(app))
        }
    }

    /// Publishes what `Status` answers: called on every change of the scheduler, the delivery core or the
    /// set-aside rows, so that a caller's `Status` after its own call sees that call's effect.
    func publishStatus() {
        let owner = serverOwner
        let figures = StatusFigures(
            server: owner == nil ? nil : serverInfo, paused: owner == nil ? nil : serverPausedState,
            pending: scheduler.count, groups: scheduler.groupCount, toDeliver: outbox.count,
            apps: scheduler.ownersWithPendingItems, setAside: setAsideRows, wake: wake)
        published.withLock { $0.status = figures }
    }

    /// The server and what chimed holds: `server-present` (b), `server-name`, `server-vendor`,
    /// `server-version`, `spec-version` (s), `capabilities` (as), `paused` (b, when the server says),
    /// `pending` (u), `groups` (u), `to-deliver` (u), `apps` (u), `set-aside` (u: stored rows chimed
    /// could not read, kept in the table `set_aside`), `version` (s); `wake-items` (u: pending items that
    /// ask to wake the machine), `wake-alarm` (s: `armed`, `idle` or `unavailable`), `wake-at` (x, µs
    /// since 1970: when the armed alarm wakes it) and `wake-problem` (s: why it is unavailable).
    ///
    /// Answered from what the daemon published (`publishStatus`), without visiting it: neither a server
    /// that hangs nor another app's work on the daemon's queue delays it.
    nonisolated func status() -> WireRecord {
        let figures = published.withLock { $0.status }
        var r = WireRecord()
        r.set("version", ChimeBus.version)
        r.set("server-present", figures.server != nil)
        if let server = figures.server {
            r.set("server-name", server.name)
            r.set("server-vendor", server.vendor)
            r.set("server-version", server.version)
            r.set("spec-version", server.specVersion)
            r.set("capabilities", strings: server.capabilities)
            if let paused = figures.paused { r.set("paused", paused) }
        }
        r.set("pending", .uint32(UInt32(clamping: figures.pending)))
        r.set("groups", .uint32(UInt32(clamping: figures.groups)))
        r.set("to-deliver", .uint32(UInt32(clamping: figures.toDeliver)))
        r.set("apps", .uint32(UInt32(clamping: figures.apps)))
        r.set("set-aside", .uint32(UInt32(clamping: figures.setAside)))
        r.set("wake-items", .uint32(UInt32(clamping: figures.wake.items)))
        if let problem = figures.wake.problem {
            r.set("wake-alarm", "unavailable")
            r.set("wake-problem", problem)
        } else if let date = figures.wake.armedFor {
            r.set("wake-alarm", "armed")
            r.set("wake-at", date)
        } else {
            r.set("wake-alarm", "idle")
        }
        return r
    }
}

/// What `Status` answers, as the daemon last published it.
struct StatusFigures: Sendable {
    /// The present server's description; nil when there is none.
    var server: ServerInfo?
    /// Whether the present server said it is paused; nil: it has not said (or there is none).
    var paused: Bool?
    var pending = 0
    var groups = 0
    var toDeliver = 0
    var apps = 0
    var setAside = 0
    var wake = WakeStatus()
}

/// A token bucket for one app's calls.
/// The work a call did beyond itself, in calls of an app's budget: a call costs one; a listing costs one
/// more for every `rowsPerCall` rows it read and every `stepsPerCall` steps its occurrence searches took
/// (`SearchBudget`). One call is about 0.1 ms of chimed's time; a row read and shown, about 5 µs; 2,500
/// steps, about 0.1 ms (a whole search's 100,000, at most 4 ms).
struct WorkCost: Sendable {
    var rows = 0
    var steps = 0

    static let rowsPerCall = 20
    static let stepsPerCall = 2_500

    /// Whole calls: a listing of fewer than 20 rows and 2,500 steps costs nothing beyond its own call.
    var tokens: Double { Double(rows / Self.rowsPerCall + steps / Self.stepsPerCall) }
}

struct RateBucket {
    var tokens: Double
    var updated: Date

    mutating func refill(now: Date, rate: Double, capacity: Double) {
        tokens = min(capacity, tokens + max(0, now.timeIntervalSince(updated)) * rate)
        updated = now
    }
}

/// What each app keeps in chimed besides its items, in bytes, for its byte quota: its categories of
/// actions and the actions kept for it while it is away. Kept as they change (the items' bytes the
/// scheduler keeps), so a quota check costs nothing however much is stored.
struct AppStorage {
    /// The encoded size of each app's categories.
    var categoryBytes: [String: Int] = [:]
    /// What each app's kept actions take in the store (`ScheduleStore.keptActionSize`).
    var keptActionBytes: [String: Int] = [:]

    init() {}

    /// The ledger of a store as loaded: each app's categories measured once.
    init(categories: [String: [ActionCategory]], keptActions: [String: Int]) {
        categoryBytes = categories.mapValues(Self.bytes(of:))
        keptActionBytes = keptActions
    }

    /// What categories take as stored: their encodings.
    static func bytes(of categories: [ActionCategory]) -> Int {
        categories.reduce(0) { $0 + DefinitionCoding.encodeJSON($1).utf8.count }
    }

    func bytes(ofCategoriesOf owner: String) -> Int { categoryBytes[owner] ?? 0 }

    /// Everything of `owner`'s counted here.
    func bytes(owner: String) -> Int { (categoryBytes[owner] ?? 0) + (keptActionBytes[owner] ?? 0) }
}
