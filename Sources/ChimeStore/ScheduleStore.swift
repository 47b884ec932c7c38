import ChimeCore
import Foundation
import GRDB

/// chimed's durable state in SQLite (WAL mode) through GRDB: groups, their entries as items with their
/// state, one-off items, the outbox of due occurrences, popups with end dates, and delivery history.
///
/// Every method returns only after its transaction committed, so a D-Bus call that changes state can
/// answer only when the change is on disk. Definitions are stored as JSON, so later fields need no
/// schema change; times as integer microseconds since the Unix epoch.
public final class ScheduleStore: Sendable {
    let writer: any DatabaseWriter
    /// The database file; nil for an in-memory store.
    public let path: String?
    /// History keeps at most this many entries; older ones are dropped when the store opens.
    public static let historyLimit = 100_000
    /// At most this many shown notifications are remembered (for their actions); older ones are dropped.
    public static let shownLimit = 10_000
    /// How long a write waits for another process that holds the database locked, in seconds.
    public static let busyTimeout: TimeInterval = 5

    /// Opens (creating when absent) the database at `path` and migrates it.
    ///
    /// A file that is not a readable Chime database is an error: it is never replaced, so nothing a user
    /// scheduled is silently lost.
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
            configuration.busyMode = .timeout(Self.busyTimeout)
            writer = try DatabasePool(path: path, configuration: configuration)
            // Durable before acknowledged: every commit reaches the disk before chimed answers. (GRDB's WAL
            // default, NORMAL, survives chimed crashing but may lose the last commits to a power cut.)
            try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.open(writer)
        } catch {
            throw StoreError(
                "cannot open the state database \(path): \(error). chimed does not replace it; move it aside "
                    + "(mv \(path) \(path).broken) to start with an empty schedule, or restore a backup")
        }
    }

    /// A store in memory, for tests.
    public init() throws(StoreError) {
        path = nil
        do {
            writer = try DatabaseQueue()
            try Self.open(writer)
        } catch {
            throw StoreError("cannot create an in-memory database: \(error)")
        }
    }

    private static func open(_ writer: any DatabaseWriter) throws {
        try StoreMigrations.migrator.migrate(writer)
        try writer.write { db in
            try db.execute(
                sql: "DELETE FROM history WHERE seq <= (SELECT MAX(seq) FROM history) - ?", arguments: [historyLimit])
            try db.execute(
                sql: """
                    DELETE FROM shown WHERE untilUsec IS NULL AND notificationID NOT IN
                        (SELECT notificationID FROM shown ORDER BY shownUsec DESC LIMIT ?)
                    """, arguments: [shownLimit])
        }
    }

    // MARK: - Failures

    /// Runs a write transaction. A failure of the disk or the database becomes a `StoreError` that says
    /// what is wrong and what to do; the transaction is rolled back, so nothing of it is stored.
    ///
    /// The commit is synced to the disk before this returns, unless `synced` is false: then it survives
    /// chimed being killed, but a power cut before the next synced commit (or checkpoint) may undo it.
    func write<T>(synced: Bool = true, _ updates: (Database) throws -> T) throws -> T {
        do {
            guard !synced else { return try writer.write(updates) }
            return try writer.writeWithoutTransaction { db in
                try db.cachedStatement(sql: "PRAGMA synchronous = NORMAL").execute()
                let outcome = Result {
                    var result: T?
                    try db.inTransaction {
                        result = try updates(db)
                        return .commit
                    }
                    return result!
                }
                try db.cachedStatement(sql: "PRAGMA synchronous = FULL").execute()
                return try outcome.get()
            }
        } catch let error as DatabaseError {
            throw failure(error)
        }
    }

    /// Runs a read; failures as in `write`.
    func read<T>(_ value: (Database) throws -> T) throws -> T {
        do {
            return try writer.read(value)
        } catch let error as DatabaseError {
            throw failure(error)
        }
    }

    /// What a database error means for the person running chimed.
    func failure(_ error: DatabaseError) -> StoreError {
        let file = path ?? "the in-memory database"
        let directory = path.map { ($0 as NSString).deletingLastPathComponent } ?? file
        let sqlite = error.message ?? "\(error.resultCode)"
        switch error.resultCode {
        case .SQLITE_FULL:
            return StoreError("the disk holding \(directory) is full (\(sqlite)); free some space there")
        case .SQLITE_READONLY:
            return StoreError("\(file) is read-only (\(sqlite)); make \(directory) and the files in it writable")
        case .SQLITE_BUSY, .SQLITE_LOCKED:
            return StoreError(
                "\(file) is locked by another process (chimed waited \(Int(Self.busyTimeout)) s); close the "
                    + "program that holds it, such as an open sqlite3 shell or a backup tool")
        case .SQLITE_CORRUPT, .SQLITE_NOTADB:
            return StoreError(
                "\(file) is damaged (\(sqlite)); stop chimed and move it aside (mv \(file) \(file).broken) to start "
                    + "with an empty schedule, or restore a backup")
        case .SQLITE_IOERR, .SQLITE_CANTOPEN, .SQLITE_PERM:
            if let reason = Self.unwritable([file, file + "-wal", directory]) {
                return StoreError(
                    "\(file) cannot be written (\(reason)); make \(directory) and the files in it writable")
            }
            return StoreError("cannot write \(file) (\(sqlite)); the disk may be full or failing")
        default:
            return StoreError("the state database \(file) failed: \(sqlite)")
        }
    }

    /// Why the first of `paths` that exists cannot be written (a read-only file system, an immutable
    /// file, missing permissions), or nil when all of them can.
    static func unwritable(_ paths: [String]) -> String? {
        for path in paths where access(path, F_OK) == 0 {
            if access(path, W_OK) != 0 {
                return "\((path as NSString).lastPathComponent): \(String(cString: strerror(errno)))"
            }
        }
        return nil
    }

    // MARK: - Reading

    /// Everything chimed needs at start.
    public func load() throws -> StoredState {
        try read { db in
            let groups = try Row.fetchAll(db, sql: "SELECT owner, id, settings, source FROM timelineGroup").map {
                row in
                StoredGroup(
                    key: GroupKey(owner: row["owner"], id: row["id"]),
                    settings: try Coding.decode(GroupSettings.self, row["settings"]),
                    source: GroupSource(rawValue: row["source"]) ?? .api)
            }
            let items = try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.itemColumns) FROM item
                    WHERE state = 'pending' OR (state = 'finished' AND groupID IS NOT NULL)
                    ORDER BY fireAtUsec, id
                    """
            ).map(Self.item(from:))
            let outbox = try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq").map(Self.outbox(from:))
            let shown = try Row.fetchAll(db, sql: "SELECT * FROM shown ORDER BY shownUsec").map(Self.shown(from:))
            var categories: [String: [ActionCategory]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT owner, definition FROM category ORDER BY owner, id") {
                categories[row["owner"], default: []].append(try Coding.decode(ActionCategory.self, row["definition"]))
            }
            var consents: [String: AppConsent] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT app, consent FROM appConsent") {
                if let consent = AppConsent(rawValue: row["consent"]) { consents[row["app"]] = consent }
            }
            var authorizations: [GroupKey: GroupAuthorization] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT owner, groupID, status FROM groupAuthorization") {
                if let status = GroupAuthorization(rawValue: row["status"]) {
                    authorizations[GroupKey(owner: row["owner"], id: row["groupID"])] = status
                }
            }
            let largest = UInt64(try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(id), 0) FROM item") ?? 0)
            return StoredState(
                groups: groups, items: items, outbox: outbox, shown: shown, categories: categories,
                consents: consents, groupAuthorizations: authorizations, largestItemID: largest)
        }
    }

    /// History, newest first.
    public func history(_ query: HistoryQuery) throws -> [HistoryEntry] {
        try read { db in
            var conditions: [String] = []
            var arguments: StatementArguments = []
            if let owner = query.owner {
                conditions.append("owner = ?")
                arguments += [owner]
            }
            if let group = query.group {
                conditions.append("owner = ? AND groupID = ?")
                arguments += [group.owner, group.id]
            }
            if let item = query.itemID {
                conditions.append("itemID = ?")
                arguments += [Int64(item)]
            }
            if let since = query.since {
                conditions.append("atUsec >= ?")
                arguments += [Time.usec(since)]
            }
            let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
            arguments += [query.limit]
            return try Row.fetchAll(
                db,
                sql: """
                    SELECT seq, itemID, atUsec, event, detail, owner, groupID, entryID, summary FROM history
                    \(filter) ORDER BY seq DESC LIMIT ?
                    """,
                arguments: arguments
            ).compactMap { row in
                guard let event = HistoryEvent(rawValue: row["event"]) else { return nil }
                let groupID: String? = row["groupID"]
                let owner: String = row["owner"] ?? ""
                return HistoryEntry(
                    seq: UInt64(row["seq"] as Int64), date: Time.date(row["atUsec"]), event: event,
                    itemID: UInt64(row["itemID"] as Int64), owner: owner,
                    group: groupID.map { GroupKey(owner: owner, id: $0) }, entryID: row["entryID"],
                    summary: row["summary"] ?? "", detail: row["detail"])
            }
        }
    }

    // MARK: - Items on their own

    /// Stores a newly scheduled item.
    public func insert(_ item: ScheduledItem, now: Date) throws {
        try write { db in
            try Self.save(item, state: "pending", in: db, now: now)
            try Self.record(db, now, .scheduled, item, detail: "due \(Time.iso(item.fireDate))")
        }
    }

    /// Marks a pending item cancelled; false when it was not pending.
    public func cancel(_ id: UInt64, now: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: "UPDATE item SET state = 'cancelled' WHERE id = ? AND state = 'pending'", arguments: [Int64(id)])
            guard db.changesCount > 0 else { return false }
            try Self.record(db, now, .cancelled, itemID: id)
            return true
        }
    }

    // MARK: - Time passes

    /// Stores what a scheduler step changed, in one transaction; returns the new outbox rows with their
    /// sequence numbers.
    ///
    /// This commit is on the way from the due instant to the notification, and answers no one: it is
    /// not synced to the disk (a sync costs about 0.1 ms there). chimed killed loses none of it; a power
    /// cut before the next synced commit may, and then the occurrence is handled again at the next start,
    /// as missed, while the notification it showed went with the power too.
    public func commit(_ step: StepRecord, now: Date) throws -> [OutboxRecord] {
        guard !step.isEmpty else { return [] }
        return try write(synced: false) { db in
            for item in step.updated { try Self.saveProgress(item, state: "pending", in: db, now: now) }
            for item in step.finished {
                try Self.saveProgress(item, state: "finished", in: db, now: now)
                try Self.record(db, now, .finished, item, detail: item.finished?.rawValue)
            }
            for missed in step.missed {
                let count = "\(missed.count)\(missed.countIsLowerBound ? "+" : "")"
                let span =
                    missed.count == 1
                    ? Time.iso(missed.first) : "\(Time.iso(missed.first)) to \(Time.iso(missed.last))"
                try Self.record(
                    db, now, .missed, missed.item, detail: "\(count) \(missed.handling.rawValue) (\(span))")
            }
            var stored: [OutboxRecord] = []
            for var row in step.outbox {
                try db.cachedStatement(
                    sql: """
                        INSERT INTO outbox (kind, itemID, owner, groupID, occurrenceUsec, number, late, content,
                            source, endUsec, createdUsec, category, replacesID)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """
                ).execute(
                    arguments: [
                        row.kind.rawValue, Int64(row.itemID), row.owner, row.groupID,
                        Time.usec(row.occurrence), row.number, row.late, try row.content.map(Coding.encode),
                        try row.source.map(Coding.encode), row.endDate.map(Time.usec), Time.usec(now), row.category,
                        row.replacesID.map { Int64($0) },
                    ])
                row.seq = UInt64(db.lastInsertedRowID)
                stored.append(row)
            }
            return stored
        }
    }

    /// Marks outbox rows as being sent, as Notify is called for them. A row still marked, without a
    /// receipt, when chimed starts again was being sent when it stopped (`OutboxRecord.sentBeforeRestart`).
    ///
    /// Like the other records of a delivery (`delivered`, `failed`, `closed`), this answers no one and is
    /// not synced to the disk: a sync waits for whatever else the disk has to write, and the next due
    /// notification would wait for it. A power cut can undo such a record; the notification it was about
    /// went with the power.
    public func sending(_ rows: [OutboxRecord], now: Date) throws {
        try write(synced: false) { db in
            for row in rows {
                try db.cachedStatement(sql: "UPDATE outbox SET sendingUsec = ? WHERE seq = ?")
                    .execute(arguments: [Time.usec(now), Int64(row.seq)])
            }
        }
    }

    /// Records that outbox rows reached the server as notification `notificationID`: on their own when
    /// `digest` is nil, otherwise inside that digest (a flood, quiet-hours or missed digest). `shown` is
    /// remembered so that an action chosen on it, or its end date, can be acted on also after a restart.
    public func delivered(
        _ rows: [OutboxRecord], notificationID: UInt32, digest: String?, shown: ShownNotification?,
        note: String? = nil, now: Date
    ) throws {
        try write(synced: false) { db in
            for row in rows {
                try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?").execute(arguments: [Int64(row.seq)])
                guard row.kind == .occurrence else { continue }
                let late = row.late ? ", late" : ""
                if let digest {
                    try Self.record(
                        db, now, .suppressed, itemID: row.itemID,
                        detail: "in the \(digest) notification \(notificationID)")
                } else {
                    let again =
                        row.receivedID == notificationID
                        ? ", received after a restart"
                        : row.sentBeforeRestart ? ", sent again after a restart (it may show twice)" : ""
                    try Self.record(
                        db, now, .delivered, itemID: row.itemID,
                        detail: "notification \(notificationID)\(late)\(again)\(note.map { " (\($0))" } ?? "")")
                }
            }
            if let shown {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO shown (notificationID, itemID, owner, groupID, entryID, category,
                            content, occurrenceUsec, untilUsec, shownUsec)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        Int64(shown.notificationID), Int64(shown.itemID), shown.owner, shown.group, shown.entryID,
                        shown.category, try shown.content.map(Coding.encode), Time.usec(shown.occurrence),
                        shown.until.map(Time.usec), Time.usec(now),
                    ])
            }
        }
    }

    /// Records that the server refused an outbox row; it is dropped so it cannot block the others.
    public func failed(_ row: OutboxRecord, reason: String, now: Date) throws {
        try write(synced: false) { db in
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [Int64(row.seq)])
            try Self.record(db, now, .failed, itemID: row.itemID, detail: reason)
        }
    }

    /// Records that a notification closed (by the server, the user, or chimed at its end date) and
    /// forgets it; false when chimed did not know it.
    @discardableResult
    public func closed(notificationID: UInt32, reason: String, now: Date) throws -> Bool {
        try write(synced: false) { db in
            guard
                let itemID = try Int64.fetchOne(
                    db, sql: "SELECT itemID FROM shown WHERE notificationID = ?", arguments: [Int64(notificationID)])
            else { return false }
            try db.execute(sql: "DELETE FROM shown WHERE notificationID = ?", arguments: [Int64(notificationID)])
            try Self.record(db, now, .closed, itemID: UInt64(itemID), detail: reason)
            return true
        }
    }

    /// Records an action chosen on an item's notification, and what chimed did with it.
    public func recordAction(itemID: UInt64, key: String, outcome: String, now: Date) throws {
        try write { db in
            try Self.record(db, now, .action, itemID: itemID, detail: "\(key): \(outcome)")
        }
    }

    // MARK: - Categories

    /// Replaces an owner's categories of actions.
    public func setCategories(_ categories: [ActionCategory], owner: String) throws {
        try write { db in
            try db.execute(sql: "DELETE FROM category WHERE owner = ?", arguments: [owner])
            for category in categories {
                try db.execute(
                    sql: "INSERT INTO category (owner, id, definition) VALUES (?, ?, ?)",
                    arguments: [owner, category.id, try Coding.encode(category)])
            }
        }
    }

    // MARK: - Permissions

    /// Stores an app's consent; nil forgets it (the app will be asked again).
    public func setConsent(_ consent: AppConsent?, app: String, now: Date) throws {
        try write { db in
            if let consent {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO appConsent (app, consent, updatedUsec) VALUES (?, ?, ?)",
                    arguments: [app, consent.rawValue, Time.usec(now)])
            } else {
                try db.execute(sql: "DELETE FROM appConsent WHERE app = ?", arguments: [app])
            }
        }
    }

    /// Stores a group's authorization; nil forgets it.
    public func setAuthorization(_ status: GroupAuthorization?, group: GroupKey, now: Date) throws {
        try write { db in
            if let status {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO groupAuthorization (owner, groupID, status, updatedUsec)
                        VALUES (?, ?, ?, ?)
                        """, arguments: [group.owner, group.id, status.rawValue, Time.usec(now)])
            } else {
                try db.execute(
                    sql: "DELETE FROM groupAuthorization WHERE owner = ? AND groupID = ?",
                    arguments: [group.owner, group.id])
            }
        }
    }

    // MARK: - Actions waiting for their app

    /// Keeps an action for an app that is not there; returns it with its sequence number.
    public func queue(_ action: PendingAction) throws -> PendingAction {
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO pendingAction (owner, itemID, groupID, entryID, key, userInfo, atUsec)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    action.owner, Int64(action.itemID), action.group, action.entryID, action.key,
                    try Coding.encode(action.userInfo), Time.usec(action.date),
                ])
            var stored = action
            stored.seq = UInt64(db.lastInsertedRowID)
            return stored
        }
    }

    /// The actions kept for `owner`, oldest first; they are handed over once and then forgotten.
    public func takeActions(owner: String) throws -> [PendingAction] {
        try write { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM pendingAction WHERE owner = ? ORDER BY seq", arguments: [owner])
            try db.execute(sql: "DELETE FROM pendingAction WHERE owner = ?", arguments: [owner])
            return try rows.map { row in
                PendingAction(
                    seq: UInt64(row["seq"] as Int64), owner: row["owner"], itemID: UInt64(row["itemID"] as Int64),
                    group: row["groupID"], entryID: row["entryID"], key: row["key"],
                    userInfo: try Coding.decode([String: String].self, row["userInfo"]), date: Time.date(row["atUsec"]))
            }
        }
    }

    // MARK: - Groups

    /// Stores a group's new timeline in one transaction: its settings, its added and changed entries,
    /// and the removal of the others.
    public func replaceGroup(_ plan: ReschedulePlan, source: GroupSource, now: Date) throws {
        let key = plan.key
        let kinds = Dictionary(plan.changes.map { ($0.entryID, $0.kind) }, uniquingKeysWith: { a, _ in a })
        try write { db in
            try db.execute(
                sql: """
                    INSERT INTO timelineGroup (owner, id, settings, source, createdUsec, updatedUsec)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (owner, id) DO UPDATE SET settings = excluded.settings, source = excluded.source,
                        updatedUsec = excluded.updatedUsec
                    """,
                arguments: [
                    key.owner, key.id, try Coding.encode(plan.group.settings), source.rawValue, Time.usec(now),
                    Time.usec(now),
                ])
            for item in plan.upserts {
                try Self.save(item, state: item.finished == nil ? "pending" : "finished", in: db, now: now)
                switch kinds[item.entry.id] {
                case .added?: try Self.record(db, now, .scheduled, item, detail: "due \(Time.iso(item.fireDate))")
                case .changed?: try Self.record(db, now, .changed, item, detail: "due \(Time.iso(item.fireDate))")
                default: break
                }
            }
            for id in plan.removed {
                try db.execute(sql: "UPDATE item SET state = 'removed' WHERE id = ?", arguments: [Int64(id)])
                try Self.record(db, now, .removed, itemID: id, detail: "no longer in the timeline of \(key)")
            }
        }
    }

    /// Removes a group and its items; false when there is no such group.
    public func removeGroup(_ key: GroupKey, now: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: "DELETE FROM timelineGroup WHERE owner = ? AND id = ?", arguments: [key.owner, key.id])
            guard db.changesCount > 0 else { return false }
            let ids = try Int64.fetchAll(
                db, sql: "SELECT id FROM item WHERE owner = ? AND groupID = ? AND state IN ('pending', 'finished')",
                arguments: [key.owner, key.id])
            for id in ids {
                try db.execute(sql: "UPDATE item SET state = 'removed' WHERE id = ?", arguments: [id])
                try Self.record(db, now, .removed, itemID: UInt64(id), detail: "group \(key) removed")
            }
            return true
        }
    }

    // MARK: - Rows

    /// The columns `item(from:)` reads, in the order it reads them.
    static let itemColumns =
        "id, owner, groupID, fireAtUsec, entry, recurrence, entryState, finishReason, snoozeOf, replacesID"

    /// An item from a row of `itemColumns`, read by position: a read by name compares the names
    /// case-insensitively, column by column, which cost a start with a million items over a second.
    static func item(from row: Row) throws -> ScheduledItem {
        let rule: String? = row[5]
        let reason: String? = row[7]
        return ScheduledItem(
            id: UInt64(row[0] as Int64), owner: row[1], groupID: row[2],
            entry: try Coding.decode(TimelineEntry.self, row[4]),
            recurrence: try rule.map { try Coding.decode(Recurrence.self, $0) },
            fireDate: Time.date(row[3]), state: try Coding.decode(EntryState.self, row[6]),
            finished: reason.flatMap(FinishReason.init(rawValue:)),
            snoozeOf: (row[8] as Int64?).map { UInt64($0) },
            replacesID: (row[9] as Int64?).map { UInt32(truncatingIfNeeded: $0) })
    }

    static func outbox(from row: Row) throws -> OutboxRecord {
        let groupID: String? = row["groupID"]
        let content: String? = row["content"]
        let source: String? = row["source"]
        let end: Int64? = row["endUsec"]
        return OutboxRecord(
            seq: UInt64(row["seq"] as Int64), kind: OutboxRecord.Kind(rawValue: row["kind"]) ?? .occurrence,
            itemID: UInt64(row["itemID"] as Int64), owner: row["owner"] ?? "",
            group: groupID.map { GroupKey(owner: row["owner"] ?? "", id: $0) },
            occurrence: Time.date(row["occurrenceUsec"]), number: row["number"], late: row["late"],
            content: try content.map { try Coding.decode(NotificationContent.self, $0) },
            source: try source.map { try Coding.decode(ContentSource.self, $0) }, endDate: end.map(Time.date),
            category: row["category"], replacesID: (row["replacesID"] as Int64?).map { UInt32(truncatingIfNeeded: $0) },
            sentBeforeRestart: (row["sendingUsec"] as Int64?) != nil,
            receivedID: (row["receivedID"] as Int64?).map { UInt32(truncatingIfNeeded: $0) })
    }

    static func shown(from row: Row) throws -> ShownNotification {
        let content: String? = row["content"]
        let until: Int64? = row["untilUsec"]
        return ShownNotification(
            notificationID: UInt32(truncatingIfNeeded: row["notificationID"] as Int64),
            itemID: UInt64(row["itemID"] as Int64), owner: row["owner"], group: row["groupID"], entryID: row["entryID"],
            category: row["category"], content: try content.map { try Coding.decode(NotificationContent.self, $0) },
            occurrence: Time.date(row["occurrenceUsec"]), until: until.map(Time.date))
    }

    static func save(_ item: ScheduledItem, state: String, in db: Database, now: Date) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO item (id, owner, groupID, entryID, fireAtUsec, summary, entry, recurrence, entryState,
                    state, finishReason, createdUsec, snoozeOf, replacesID)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, groupID = excluded.groupID,
                    entryID = excluded.entryID, fireAtUsec = excluded.fireAtUsec, summary = excluded.summary,
                    entry = excluded.entry, recurrence = excluded.recurrence, entryState = excluded.entryState,
                    state = excluded.state, finishReason = excluded.finishReason
                """
        ).execute(
            arguments: [
                Int64(item.id), item.owner, item.groupID, item.entry.id, Time.usec(item.fireDate),
                item.content.summary, try Coding.encode(item.entry),
                try item.recurrence.map(Coding.encode), try Coding.encode(item.state), state,
                item.finished?.rawValue, Time.usec(now), item.snoozeOf.map { Int64($0) },
                item.replacesID.map { Int64($0) },
            ])
    }

    /// Stores how an item moved on (its fire date, state and end), its definition being unchanged: the
    /// columns that change, without encoding the definition again. An item not stored yet is stored whole.
    static func saveProgress(_ item: ScheduledItem, state: String, in db: Database, now: Date) throws {
        try db.cachedStatement(
            sql: """
                UPDATE item SET fireAtUsec = ?, entryState = ?, state = ?, finishReason = ? WHERE id = ?
                """
        ).execute(arguments: [
            Time.usec(item.fireDate), try Coding.encode(item.state), state, item.finished?.rawValue, Int64(item.id),
        ])
        if db.changesCount == 0 { try save(item, state: state, in: db, now: now) }
    }

    static func record(
        _ db: Database, _ now: Date, _ event: HistoryEvent, _ item: ScheduledItem, detail: String? = nil
    ) throws {
        try db.cachedStatement(
            sql: """
                INSERT INTO history (itemID, atUsec, event, detail, owner, groupID, entryID, summary)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: [
                Int64(item.id), Time.usec(now), event.rawValue, detail, item.owner, item.groupID,
                item.groupID == nil ? nil : item.entry.id, item.content.summary,
            ])
    }

    /// Records an event for an item known only by id: its group and summary come from its row.
    static func record(_ db: Database, _ now: Date, _ event: HistoryEvent, itemID: UInt64, detail: String? = nil)
        throws
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO history (itemID, atUsec, event, detail, owner, groupID, entryID, summary)
                SELECT ?, ?, ?, ?, owner, groupID, CASE WHEN groupID IS NULL THEN NULL ELSE entryID END, summary
                FROM (SELECT 1) LEFT JOIN item ON item.id = ?
                """
        ).execute(arguments: [Int64(itemID), Time.usec(now), event.rawValue, detail, Int64(itemID)])
    }
}

/// Times as the database keeps them.
enum Time {
    static func usec(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1_000_000).rounded()) }
    static func date(_ usec: Int64) -> Date { Date(timeIntervalSince1970: Double(usec) / 1_000_000) }
    static func iso(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: false))
    }
}

/// JSON for the definition columns.
enum Coding {
    // One of each, shared: both are safe to use from several threads, and making one per value cost
    // a visible part of storing and loading items.
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }
}
