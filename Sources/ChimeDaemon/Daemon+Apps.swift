import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// Per-app limits, categories, the list of apps, and chimed's status.
extension Daemon {
    /// Refuses an app that calls faster than `[limits] calls-per-second` allows.
    func checkRate(_ caller: Caller) throws {
        guard !caller.isUser else { return }
        let now = clock.now()
        var bucket =
            interaction.rates[caller.appID]
            ?? RateBucket(tokens: Double(settings.callBurst), updated: now)
        bucket.refill(now: now, rate: settings.callsPerSecond, capacity: Double(settings.callBurst))
        let allowed = bucket.tokens >= 1
        if allowed { bucket.tokens -= 1 }
        interaction.rates[caller.appID] = bucket
        guard allowed else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(caller.appID) calls chimed more than \(settings.callsPerSecond) times a second; slow down")
        }
    }

    /// Refuses a change that would give an app more items than `[limits] entries-per-app`, or more bytes
    /// of content than `[limits] bytes-per-app`. `adding` and `addingBytes` are what the change adds (less
    /// what it removes).
    func checkQuota(_ caller: Caller, adding: Int, addingBytes: Int) throws {
        guard !caller.isUser, adding > 0 || addingBytes > 0 else { return }
        let count = scheduler.count(owner: caller.appID)
        let bytes = scheduler.bytes(owner: caller.appID)
        guard adding <= 0 || count + adding <= settings.entriesPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(caller.appID) would have \(count + adding) items, more than the \(settings.entriesPerApp) "
                    + "an app may have; remove some first")
        }
        guard addingBytes <= 0 || bytes + addingBytes <= settings.bytesPerApp else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(caller.appID) would have \(bytes + addingBytes) bytes of notifications, more than the "
                    + "\(settings.bytesPerApp) an app may have; remove some first")
        }
    }

    /// Refuses a new timeline of `count` entries and `bytes` bytes of content for group `key` when, in
    /// place of the group's entries now, it would take the app beyond its limits (`checkQuota`).
    func checkQuota(_ caller: Caller, replacing key: GroupKey, with count: Int, bytes: Int) throws {
        guard !caller.isUser else { return }
        let items = scheduler.items(of: key)
        let existingBytes = items.reduce(0) { $0 + $1.definition.contentBytes }
        try checkQuota(caller, adding: count - items.count, addingBytes: bytes - existingBytes)
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
        try await persisted { try $0.setCategories(list, owner: owner) }
        // Another app's categories may have come meanwhile: this app's list is kept even if that makes one
        // more than the most, as it is stored.
        categories[owner] = list.isEmpty ? nil : list
        logger.info("\(owner.isEmpty ? "the user" : owner) registered \(list.count) categories of actions")
    }

    /// Every app chimed knows: with items, groups, a consent, or a connection.
    func apps() -> [AppInfo] {
        let names = Set(interaction.consents.keys).union(interaction.appConnections.keys)
            .union(scheduler.pendingOwners).union(scheduler.groupOwners).subtracting([""])
        return names.sorted().map { app in
            AppInfo(
                app: app, consent: (interaction.consents[app] ?? .undetermined).rawValue,
                items: scheduler.pendingCount(owner: app), groups: scheduler.groupKeys(owner: app).count,
                connected: !(interaction.appConnections[app]?.isEmpty ?? true))
        }
    }

    /// The server and what chimed holds: `server-present` (b), `server-name`, `server-vendor`,
    /// `server-version`, `spec-version` (s), `capabilities` (as), `paused` (b, when the server says),
    /// `pending` (u), `groups` (u), `to-deliver` (u), `apps` (u), `set-aside` (u: stored rows chimed
    /// could not read, kept in the table `set_aside`), `version` (s).
    ///
    /// Answered from what chimed knows: a server that hangs delays no one.
    func status() -> WireRecord {
        var r = WireRecord()
        r.set("version", ChimeBus.version)
        r.set("server-present", serverOwner != nil)
        if serverOwner != nil {
            r.set("server-name", serverInfo.name)
            r.set("server-vendor", serverInfo.vendor)
            r.set("server-version", serverInfo.version)
            r.set("spec-version", serverInfo.specVersion)
            r.set("capabilities", strings: serverInfo.capabilities)
        }
        if serverOwner != nil, let paused = serverPausedState { r.set("paused", paused) }
        r.set("pending", .uint32(UInt32(clamping: scheduler.count)))
        r.set("groups", .uint32(UInt32(clamping: scheduler.groupCount)))
        r.set("to-deliver", .uint32(UInt32(clamping: delivery.outbox.count)))
        r.set("apps", .uint32(UInt32(clamping: scheduler.ownersWithPendingItems)))
        r.set("set-aside", .uint32(UInt32(clamping: setAsideRows)))
        return r
    }
}

/// A token bucket for one app's calls.
struct RateBucket {
    var tokens: Double
    var updated: Date

    mutating func refill(now: Date, rate: Double, capacity: Double) {
        tokens = min(capacity, tokens + max(0, now.timeIntervalSince(updated)) * rate)
        updated = now
    }
}
