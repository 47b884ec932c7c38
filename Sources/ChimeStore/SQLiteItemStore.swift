import ChimeCore
import Foundation
import GRDB

/// The item store in SQLite (WAL mode) through GRDB.
///
/// Content is stored as JSON so that later fields need no schema change; times as integer
/// microseconds since the Unix epoch.
public final class SQLiteItemStore: ItemStore {
    let pool: DatabasePool
    public let path: String

    /// Opens (creating when absent) the database at `path` and migrates it.
    ///
    /// A file that is not a readable Chime database is an error: it is never replaced, so nothing
    /// a user scheduled is silently lost.
    public init(path: String) throws(StoreError) {
        self.path = path
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError("cannot create the state directory \(directory): \(error.localizedDescription)")
        }
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(5)
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw StoreError(
                "cannot open the state database \(path): \(error). chimed does not replace it; move it aside "
                    + "(mv \(path) \(path).broken) to start with an empty schedule, or restore a backup")
        }
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: items and history") { db in
            try db.create(table: "item") { t in
                t.column("id", .integer).primaryKey()
                t.column("fireAtUsec", .integer).notNull()
                t.column("content", .text).notNull()
                t.column("state", .text).notNull()
                t.column("createdUsec", .integer).notNull()
                t.column("notificationID", .integer)
            }
            try db.create(index: "item_pending", on: "item", columns: ["state", "fireAtUsec"])
            try db.create(table: "history") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("itemID", .integer).notNull()
                t.column("atUsec", .integer).notNull()
                t.column("event", .text).notNull()
                t.column("detail", .text)
            }
        }
        migrator.registerMigration("v2: repeating items") { db in
            try db.alter(table: "item") { t in t.add(column: "recurrence", .text) }
        }
        return migrator
    }

    static func usec(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
    static func date(_ usec: Int64) -> Date { Date(timeIntervalSince1970: Double(usec) / 1_000_000) }

    public func pendingItems() async throws -> [ScheduledItem] {
        try await pool.read { db in
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT id, fireAtUsec, content, recurrence FROM item WHERE state = 'pending' ORDER BY fireAtUsec, id"
            )
            return try rows.map { row in
                let json: String = row["content"]
                let content = try JSONDecoder().decode(NotificationContent.self, from: Data(json.utf8))
                let rule: String? = row["recurrence"]
                let recurrence = try rule.map { try JSONDecoder().decode(Recurrence.self, from: Data($0.utf8)) }
                return ScheduledItem(
                    id: UInt64(row["id"] as Int64), content: content, fireDate: Self.date(row["fireAtUsec"]),
                    recurrence: recurrence)
            }
        }
    }

    public func largestItemID() async throws -> UInt64 {
        try await pool.read { db in
            UInt64(try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM item") ?? 0)
        }
    }

    public func insert(_ item: ScheduledItem, now: Date) async throws {
        let json = String(decoding: try JSONEncoder().encode(item.content), as: UTF8.self)
        let rule = try item.recurrence.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await pool.write { db in
            try db.execute(
                sql: "INSERT INTO item (id, fireAtUsec, content, recurrence, state, createdUsec) "
                    + "VALUES (?, ?, ?, ?, 'pending', ?)",
                arguments: [Int64(item.id), Self.usec(item.fireDate), json, rule, Self.usec(now)])
            try Self.record(db, item.id, now, .scheduled, "due \(Self.usec(item.fireDate))")
        }
    }

    public func cancel(_ id: UInt64, now: Date) async throws -> Bool {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE item SET state = 'cancelled' WHERE id = ? AND state = 'pending'", arguments: [Int64(id)])
            guard db.changesCount > 0 else { return false }
            try Self.record(db, id, now, .cancelled, nil)
            return true
        }
    }

    public func advance(_ id: UInt64, to fireDate: Date, now: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE item SET fireAtUsec = ? WHERE id = ? AND state = 'pending'",
                arguments: [Self.usec(fireDate), Int64(id)])
            try Self.record(db, id, now, .advanced, "next \(Self.usec(fireDate))")
        }
    }

    public func finish(_ id: UInt64, now: Date) async throws {
        try await pool.write { db in
            try db.execute(
                sql: "UPDATE item SET state = 'finished' WHERE id = ? AND state = 'pending'", arguments: [Int64(id)])
            try Self.record(db, id, now, .finished, nil)
        }
    }

    public func markDelivered(_ id: UInt64, notificationID: UInt32, now: Date) async throws {
        try await pool.write { db in
            // A repeating item stays pending: its next occurrence is already stored.
            try db.execute(
                sql: "UPDATE item SET notificationID = ?, state = CASE WHEN recurrence IS NULL AND state = 'pending' "
                    + "THEN 'delivered' ELSE state END WHERE id = ?",
                arguments: [Int64(notificationID), Int64(id)])
            try Self.record(db, id, now, .delivered, "notification \(notificationID)")
        }
    }

    public func history(limit: Int) async throws -> [HistoryEntry] {
        try await pool.read { db in
            try Row.fetchAll(
                db, sql: "SELECT itemID, atUsec, event, detail FROM history ORDER BY seq DESC LIMIT ?",
                arguments: [limit]
            ).compactMap { row in
                guard let event = HistoryEvent(rawValue: row["event"]) else { return nil }
                return HistoryEntry(
                    itemID: UInt64(row["itemID"] as Int64), date: Self.date(row["atUsec"]), event: event,
                    detail: row["detail"])
            }
        }
    }

    static func record(_ db: Database, _ id: UInt64, _ now: Date, _ event: HistoryEvent, _ detail: String?) throws {
        try db.execute(
            sql: "INSERT INTO history (itemID, atUsec, event, detail) VALUES (?, ?, ?, ?)",
            arguments: [Int64(id), usec(now), event.rawValue, detail])
    }
}

/// The same store in memory, for tests and `--ephemeral` runs.
public actor MemoryItemStore: ItemStore {
    var items: [UInt64: (item: ScheduledItem, state: String)] = [:]
    var events: [HistoryEntry] = []

    public init() {}

    public func pendingItems() -> [ScheduledItem] {
        items.values.filter { $0.state == "pending" }.map(\.item).sorted { ($0.fireDate, $0.id) < ($1.fireDate, $1.id) }
    }

    public func largestItemID() -> UInt64 { items.keys.max() ?? 0 }

    public func insert(_ item: ScheduledItem, now: Date) {
        items[item.id] = (item, "pending")
        events.append(HistoryEntry(itemID: item.id, date: now, event: .scheduled))
    }

    public func cancel(_ id: UInt64, now: Date) -> Bool {
        guard items[id]?.state == "pending" else { return false }
        items[id]?.state = "cancelled"
        events.append(HistoryEntry(itemID: id, date: now, event: .cancelled))
        return true
    }

    public func advance(_ id: UInt64, to fireDate: Date, now: Date) {
        guard items[id]?.state == "pending" else { return }
        items[id]?.item.fireDate = fireDate
        events.append(HistoryEntry(itemID: id, date: now, event: .advanced))
    }

    public func finish(_ id: UInt64, now: Date) {
        guard items[id]?.state == "pending" else { return }
        items[id]?.state = "finished"
        events.append(HistoryEntry(itemID: id, date: now, event: .finished))
    }

    public func markDelivered(_ id: UInt64, notificationID: UInt32, now: Date) {
        if items[id]?.item.recurrence == nil, items[id]?.state == "pending" { items[id]?.state = "delivered" }
        events.append(HistoryEntry(itemID: id, date: now, event: .delivered, detail: "notification \(notificationID)"))
    }

    public func history(limit: Int) -> [HistoryEntry] { Array(events.reversed().prefix(limit)) }
}
