import ChimeCore
import Foundation
import GRDB
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
    /// Where a damaged database found at open was moved, and why; nil when the file was sound. chimed
    /// then starts with an empty schedule and tells the user where the old one went.
    public let movedAside: MovedAside?
    /// The most entries one history query returns, and the default of `[history] max-entries`.
    public static let historyLimit = 100_000
    /// At most this many shown notifications are remembered (for their actions); older ones are dropped.
    public static let shownLimit = 10_000
    /// At most this many actions are kept for one app that is not there to take them; the oldest go.
    public static let keptActionsLimit = 1000
    /// How long an action is kept for an app that is not there to take it: a response a week old is no
    /// longer the user's answer to anything, so it is not handed over.
    public static let keptActionLifetime: TimeInterval = 7 * 86_400
    /// How long a write waits for another process that holds the database locked, in seconds.
    public static let busyTimeout: TimeInterval = 5
    /// How much history is kept: older entries, and the oldest beyond the count, are pruned at open and
    /// every `HistoryLimits.pruneInterval` records. chimed sets it from chime.toml's `[history]`.
    public var historyLimits: HistoryLimits {
        get { limits.withLock { $0 } }
        set { limits.withLock { $0 = newValue } }
    }
    let limits: Mutex<HistoryLimits>

    /// Opens (creating when absent) the database at `path` and migrates it.
    ///
    /// The state folder is made private (0700) and every file in it 0600, whatever the umask: the
    /// schedule says what the user does and when. A file that is not a database, or is damaged, is moved
    /// aside (see `movedAside`) and an empty store opens; it is never deleted. A file that cannot be
    /// opened for another reason (locked by another process, an unreadable folder) is an error, so
    /// nothing a user scheduled is silently set aside.
    public init(path: String, historyLimits: HistoryLimits = HistoryLimits()) throws(StoreError) {
        self.path = path
        limits = Mutex(historyLimits)
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw StoreError("cannot create the state directory \(directory): \(error.localizedDescription)")
        }
        try Self.makePrivate(directory: directory)
        // Kept for the user to look at or restore; chimed must start, and can only with a new file.
        var movedAside = try Self.notADatabase(path).map { reason throws(StoreError) in
            try Self.moveAside(path, because: reason)
        }
        do {
            writer = try Self.openPool(path: path, historyLimits: historyLimits)
        } catch let error as DatabaseError where Self.isDamage(error) && movedAside == nil {
            let aside = try Self.moveAside(path, because: error.message ?? "\(error.resultCode)")
            movedAside = aside
            do {
                writer = try Self.openPool(path: path, historyLimits: historyLimits)
            } catch {
                throw StoreError(
                    "cannot open a new state database \(path) after moving the damaged one to \(aside.path): \(error)")
            }
        } catch {
            throw StoreError(
                "cannot open the state database \(path): \(error). chimed does not replace it; move it aside "
                    + "(mv \(path) \(path).broken) to start with an empty schedule, or restore a backup")
        }
        self.movedAside = movedAside
    }

    /// A store in memory, for tests.
    public init(historyLimits: HistoryLimits = HistoryLimits()) throws(StoreError) {
        path = nil
        movedAside = nil
        limits = Mutex(historyLimits)
        do {
            writer = try DatabaseQueue()
            try Self.open(writer, historyLimits: historyLimits)
        } catch {
            throw StoreError("cannot create an in-memory database: \(error)")
        }
    }

    /// Opens the file with chimed's settings and migrates it. History outgrown its limits is pruned later
    /// (`upkeep`), once chimed is ready.
    private static func openPool(path: String, historyLimits: HistoryLimits) throws -> DatabasePool {
        // Created here, private, before SQLite creates it with 0644 less the umask: SQLite gives the
        // -wal and -shm files the mode of the database file.
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            fchmod(descriptor, 0o600)
            close(descriptor)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.prepareDatabase { db in
            // Takes effect on a new database only (before its first table); an older one is converted
            // by `convertToIncrementalVacuum` after its migrations.
            if !db.configuration.readonly { try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL") }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        // Durable before acknowledged: every commit reaches the disk before chimed answers. (GRDB's WAL
        // default, NORMAL, survives chimed crashing but may lose the last commits to a power cut.)
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        try open(pool, historyLimits: historyLimits)
        return pool
    }

    private static func open(_ writer: any DatabaseWriter, historyLimits: HistoryLimits) throws {
        try StoreMigrations.migrator.migrate(writer)
        try convertToIncrementalVacuum(writer)
        try writer.write { db in
            // Popups are read at start (`load`): the ones that need no closing are trimmed first.
            try db.execute(
                sql: """
                    DELETE FROM shown WHERE untilUsec IS NULL AND notificationID NOT IN
                        (SELECT notificationID FROM shown ORDER BY shownUsec DESC LIMIT ?)
                    """, arguments: [shownLimit])
            try giveBackSpace(db)
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
    ///
    /// A row that cannot be read (broken JSON, a missing value, a time outside `Time.validRange`) is set
    /// aside: moved to the table `set_aside` with its table's name and its content, and counted in
    /// `StoredState.setAside`. No stored row can stop chimed from starting.
    public func load() throws -> StoredState {
        try write { db in
            var aside = SetAside()
            let groups = try aside.rows(
                db, "timelineGroup", sql: "SELECT rowid, owner, id, settings, source FROM timelineGroup"
            ) { row in
                StoredGroup(
                    key: GroupKey(owner: try row.decode(atIndex: 1), id: try row.decode(atIndex: 2)),
                    settings: try Coding.decode(GroupSettings.self, row.decode(atIndex: 3)),
                    source: GroupSource(rawValue: try row.decode(atIndex: 4)) ?? .api)
            }
            // By position (see `item(from:)`); `id` is the rowid. In the order they were scheduled: one
            // scan of the table, without sorting it (the scheduler orders them by their next occurrence).
            let itemStatement = try db.makeStatement(
                sql: """
                    SELECT \(Self.itemColumns) FROM item NOT INDEXED
                    WHERE state = 'pending' OR (state = 'finished' AND groupRef IS NOT NULL)
                    ORDER BY id
                    """)
            var columns = ItemColumns(itemStatement, names: try NameTable(db))
            let items = try aside.rows("item", itemStatement) { _ in try Self.item(from: &columns) }
            let outbox = try aside.rows(
                db, "outbox", sql: "SELECT rowid, * FROM outbox ORDER BY seq", decode: Self.outbox(from:))
            let shown = try aside.rows(
                db, "shown", sql: "SELECT rowid, * FROM shown ORDER BY shownUsec", decode: Self.shown(from:))
            var categories: [String: [ActionCategory]] = [:]
            for (owner, category) in try aside.rows(
                db, "category", sql: "SELECT rowid, owner, definition FROM category ORDER BY owner, id",
                decode: { row in
                    (
                        try row.decode(String.self, atIndex: 1),
                        try Coding.decode(ActionCategory.self, row.decode(atIndex: 2))
                    )
                })
            {
                categories[owner, default: []].append(category)
            }
            var consents: [String: AppConsent] = [:]
            for (app, consent) in try aside.rows(
                db, "appConsent", sql: "SELECT rowid, app, consent FROM appConsent",
                decode: { row in
                    (
                        try row.decode(String.self, atIndex: 1),
                        try AppConsent(rawValue: row.decode(atIndex: 2)).orProblem("consent")
                    )
                })
            {
                consents[app] = consent
            }
            var authorizations: [GroupKey: GroupAuthorization] = [:]
            var turnedOffByApp = Set<GroupKey>()
            for (key, status, byApp) in try aside.rows(
                db, "groupAuthorization",
                sql: "SELECT rowid, owner, groupID, status, byApp FROM groupAuthorization",
                decode: { row in
                    (
                        GroupKey(owner: try row.decode(atIndex: 1), id: try row.decode(atIndex: 2)),
                        try GroupAuthorization(rawValue: row.decode(atIndex: 3)).orProblem("status"),
                        try row.decode(Int64.self, atIndex: 4) != 0
                    )
                })
            {
                authorizations[key] = status
                if byApp, status == .denied { turnedOffByApp.insert(key) }
            }
            var keptActionBytes: [String: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT owner, SUM(\(Self.keptActionSize)) FROM pendingAction GROUP BY owner")
            {
                keptActionBytes[row[0]] = row[1]
            }
            try aside.store(in: db, now: Date())
            var state = StoredState(
                groups: groups, items: items, outbox: outbox, shown: shown, categories: categories,
                consents: consents, groupAuthorizations: authorizations, largestItemID: try Self.largestItemID(db),
                setAside: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM set_aside") ?? 0,
                setAsideNow: aside.descriptions)
            state.groupsTurnedOffByTheirApp = turnedOffByApp
            state.keptActionBytes = keptActionBytes
            return state
        }
    }

    /// The largest item id ever stored, also of items whose rows were deleted or set aside.
    static func largestItemID(_ db: Database) throws -> UInt64 {
        let largest = try Int64.fetchOne(
            db,
            sql: """
                SELECT MAX(COALESCE((SELECT MAX(id) FROM item), 0),
                    COALESCE((SELECT value FROM meta WHERE key = 'largestItemID'), 0))
                """)
        return UInt64(max(0, largest ?? 0))
    }

    /// Keeps `ids` reserved after their rows go: `largestItemID` still counts them.
    static func reserve(_ ids: [Int64], in db: Database) throws {
        guard let largest = ids.max() else { return }
        try db.cachedStatement(
            sql: "UPDATE meta SET value = MAX(value, ?) WHERE key = 'largestItemID'"
        ).execute(arguments: [largest])
    }

    /// The number of stored rows set aside, because chimed could not read them, at this or an earlier
    /// start.
    public func setAsideCount() throws -> Int {
        try read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM set_aside") ?? 0 }
    }

    /// History, newest first.
    public func history(_ query: HistoryQuery) throws -> [HistoryEntry] {
        try read { db in try Self.history(query, in: db) }
    }

    static func history(_ query: HistoryQuery, in db: Database) throws -> [HistoryEntry] {
        var conditions: [String] = []
        var arguments: StatementArguments = []
        if let owner = query.owner {
            conditions.append("h.appRef = \(NameRefs.appSQL)")
            arguments += [owner]
        }
        if let group = query.group {
            conditions.append("h.groupRef = \(NameRefs.groupSQL)")
            arguments += [group.owner, group.id]
        }
        if let item = query.itemID {
            conditions.append("h.itemID = ?")
            arguments += [Int64(clamping: item)]
        }
        if let since = query.since {
            conditions.append("h.atUsec >= ?")
            arguments += [Time.usec(since)]
        }
        if let before = query.before {
            conditions.append("h.seq < ?")
            arguments += [Int64(clamping: before)]
        }
        let filter = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        arguments += [query.limit]
        return try Row.fetchAll(
            db,
            sql: """
                SELECT h.seq, h.itemID, h.atUsec, h.event, h.detail, a.name, g.name, h.entryID, h.summary
                FROM history h LEFT JOIN appName a ON a.ref = h.appRef LEFT JOIN groupName g ON g.ref = h.groupRef
                \(filter) ORDER BY h.seq DESC LIMIT ?
                """,
            arguments: arguments
        ).compactMap { row in
            // A record chimed cannot read is left out of the answer rather than stop it; pruning
            // removes it in time.
            guard let event = HistoryEvent(rawValue: (try? row.decode(String.self, atIndex: 3)) ?? ""),
                let seq = try? Self.storedID(row.decode(atIndex: 0), "seq"),
                let itemID = try? Self.storedID(row.decode(atIndex: 1), "itemID"),
                let at = try? Self.storedDate(row.decode(atIndex: 2), "atUsec")
            else { return nil }
            let groupID = try? row.decode(String?.self, atIndex: 6)
            let owner = (try? row.decode(String?.self, atIndex: 5)) ?? ""
            return HistoryEntry(
                seq: seq, date: at, event: event, itemID: itemID, owner: owner,
                group: groupID.map { GroupKey(owner: owner, id: $0) },
                entryID: (try? row.decode(String?.self, atIndex: 7)) ?? nil,
                summary: (try? row.decode(String?.self, atIndex: 8)) ?? "",
                detail: (try? row.decode(String?.self, atIndex: 4)) ?? nil)
        }
    }

    // MARK: - Items on their own

    /// Stores a newly scheduled item.
    public func insert(_ item: ScheduledItem, now: Date) throws {
        try write { db in
            let refs = try NameRefs.of(owner: item.owner, groupID: item.groupID, in: db)
            try Self.save(item, refs: refs, state: "pending", in: db, now: now)
            try record(db, now, .scheduled, item, refs: refs, detail: "due \(Time.iso(item.fireDate))")
        }
    }

    /// Inserts several items in one transaction and one sync to the disk, each in a savepoint of its own:
    /// one that cannot be stored fails alone, and the others are stored. Returns each item's failure (nil:
    /// stored), in order. When the transaction itself fails, every item fails with its error.
    public func insert(_ items: [(item: ScheduledItem, now: Date)]) -> [StoreError?] {
        guard let last = items.last else { return [] }
        var failures = [StoreError?](repeating: nil, count: items.count)
        do {
            try write { db in
                try recordingMany(db, now: last.now) {
                    for (index, entry) in items.enumerated() {
                        do {
                            // Outside the savepoint: a name stored stays stored when the item fails.
                            let refs = try NameRefs.of(owner: entry.item.owner, groupID: entry.item.groupID, in: db)
                            try db.inSavepoint {
                                try Self.save(entry.item, refs: refs, state: "pending", in: db, now: entry.now)
                                try record(
                                    db, entry.now, .scheduled, entry.item, refs: refs,
                                    detail: "due \(Time.iso(entry.item.fireDate))", prunes: false)
                                return .commit
                            }
                        } catch let error as DatabaseError {
                            failures[index] = failure(error)
                        } catch {
                            failures[index] = StoreError("cannot store item \(entry.item.id): \(error)")
                        }
                    }
                }
            }
        } catch {
            let failure = error as? StoreError ?? StoreError("\(error)")
            return [StoreError?](repeating: failure, count: items.count)
        }
        return failures
    }

    /// Cancels a pending item: its row is deleted, its history stays; false when it was not pending.
    public func cancel(_ id: UInt64, now: Date) throws -> Bool {
        try write { db in
            let key = Int64(clamping: id)
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM item WHERE id = ? AND state = 'pending'", arguments: [key]) != nil
            else { return false }
            // Recorded first: the record takes the item's owner and summary from its row.
            try record(db, now, .cancelled, itemID: id)
            try Self.deleteItems([key], in: db)
            try Self.giveBackSpace(db)
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
            var done: [Int64] = []
            for item in step.finished {
                try record(db, now, .finished, item, detail: item.finished?.rawValue)
                // A group's finished entry is kept while it is in the group: a reschedule must know it is
                // done. An item on its own is over: its row goes.
                if item.groupID == nil {
                    done.append(Int64(clamping: item.id))
                } else {
                    try Self.saveProgress(item, state: "finished", in: db, now: now)
                }
            }
            try Self.deleteItems(done, in: db)
            if !done.isEmpty { try Self.giveBackSpace(db) }
            for missed in step.missed {
                let count = "\(missed.count)\(missed.countIsLowerBound ? "+" : "")"
                let span =
                    missed.count == 1
                    ? Time.iso(missed.first) : "\(Time.iso(missed.first)) to \(Time.iso(missed.last))"
                let cause = missed.cause.map { ", \($0.words)" } ?? ""
                try record(
                    db, now, .missed, missed.item, detail: "\(count) \(missed.handling.rawValue)\(cause) (\(span))")
            }
            var stored: [OutboxRecord] = []
            for var row in step.outbox {
                if row.seq != 0 {
                    // Prepared before it came due (`prepare`): the row becomes an ordinary one. A receipt or
                    // a sending mark stored on it meanwhile stays.
                    try db.cachedStatement(
                        sql: """
                            UPDATE outbox SET kind = ?, itemID = ?, owner = ?, groupID = ?, occurrenceUsec = ?,
                                number = ?, late = ?, content = ?, source = ?, endUsec = ?, category = ?,
                                replacesID = ?, escalation = ?, snoozeOf = ?, prepared = 0
                            WHERE seq = ?
                            """
                    ).execute(arguments: Self.outboxValues(row) + [Int64(clamping: row.seq)])
                    if db.changesCount == 0 { try Self.insert(row, seq: row.seq, prepared: false, in: db, now: now) }
                } else {
                    row.seq = try Self.insert(row, seq: nil, prepared: false, in: db, now: now)
                }
                row.prepared = false
                stored.append(row)
            }
            return stored
        }
    }

    /// Stores the rows of occurrences that are to come due next, before they do, so that when they do
    /// they can be sent at once and stored after (`commit` finds them by `seq`). Rows prepared earlier are
    /// forgotten: only the next deadline's rows are kept prepared. Returns the rows with their `seq`.
    ///
    /// A prepared row is not yet an occurrence: at start (`load`), one whose item still waits for that
    /// occurrence and that was handed to the relay is one; any other is left to the scheduler.
    public func prepare(_ rows: [OutboxRecord], now: Date) throws -> [OutboxRecord] {
        try write(synced: false) { db in
            try db.cachedStatement(sql: "DELETE FROM outbox WHERE prepared = 1").execute()
            var stored: [OutboxRecord] = []
            for var row in rows {
                row.seq = try Self.insert(row, seq: nil, prepared: true, in: db, now: now)
                row.prepared = true
                stored.append(row)
            }
            return stored
        }
    }

    /// Makes prepared rows ordinary ones: at start, those found to have been sent before chimed stopped.
    public func keepPrepared(_ seqs: [UInt64]) throws {
        guard !seqs.isEmpty else { return }
        try write(synced: false) { db in
            for seq in seqs {
                try db.cachedStatement(sql: "UPDATE outbox SET prepared = 0 WHERE seq = ?").execute(arguments: [
                    Int64(clamping: seq)
                ])
            }
        }
    }

    /// The values of an outbox row's columns, in the order `insert` and `commit` write them.
    static func outboxValues(_ row: OutboxRecord) throws -> StatementArguments {
        [
            row.kind.rawValue, Int64(clamping: row.itemID), row.owner, row.groupID, Time.usec(row.occurrence),
            row.number, row.late, try row.content.map(Coding.encode), try row.source.map(Coding.encode),
            row.endDate.map(Time.usec), row.category, row.replacesID.map { Int64($0) },
            try row.escalation.map(Coding.encode), row.snoozeOf.map { Int64(clamping: $0) },
        ]
    }

    /// Inserts an outbox row, under `seq` when given; returns its `seq`.
    @discardableResult
    static func insert(_ row: OutboxRecord, seq: UInt64?, prepared: Bool, in db: Database, now: Date) throws
        -> UInt64
    {
        try db.cachedStatement(
            sql: """
                INSERT INTO outbox (kind, itemID, owner, groupID, occurrenceUsec, number, late, content, source,
                    endUsec, category, replacesID, escalation, snoozeOf, seq, prepared, createdUsec)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(
            arguments: try outboxValues(row) + [
                seq.map { Int64(clamping: $0) }, prepared ? 1 : 0, Time.usec(now),
            ])
        return UInt64(db.lastInsertedRowID)
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
                    .execute(arguments: [Time.usec(now), Int64(clamping: row.seq)])
            }
        }
    }

    /// Moves the relay's receipts (the database at `path`, `DeliveryReceipts`) onto the outbox rows they
    /// are for, then clears them; returns how many rows got one. At start, with the relay lock held (no
    /// relay writes them then), before `load`.
    ///
    /// The receipts database is attached to chimed's own connection for this, rather than opened on its
    /// own: a database queue of its own, released at once, would start one of libdispatch's watched
    /// threads, which then wakes chimed every second for the rest of its life. The rows' update is synced
    /// before the receipts are cleared, so a crash in between leaves them to the next start, which finds
    /// the same rows (seqs are never used twice: `AUTOINCREMENT`).
    @discardableResult
    public func takeReceipts(at path: String) throws -> Int {
        guard FileManager.default.fileExists(atPath: path) else { return 0 }
        do {
            return try writer.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS receipts", arguments: [path])
                defer { try? db.execute(sql: "DETACH DATABASE receipts") }
                let present = try Int.fetchOne(
                    db, sql: "SELECT COUNT(*) FROM receipts.sqlite_master WHERE type = 'table' AND name = 'receipt'")
                guard present == 1 else { return 0 }
                var updated = 0
                try db.inTransaction {
                    try db.execute(
                        sql: """
                            UPDATE outbox SET receivedID = (SELECT notificationID FROM receipts.receipt AS r
                                WHERE r.seq = outbox.seq)
                            WHERE seq IN (SELECT seq FROM receipts.receipt)
                            """)
                    updated = db.changesCount
                    return .commit
                }
                try db.inTransaction {
                    try db.execute(sql: "DELETE FROM receipts.receipt")
                    return .commit
                }
                return updated
            }
        } catch let error as DatabaseError {
            throw failure(error)
        }
    }

    /// Which notification server the shown notifications' ids are of (a fingerprint of its bus and its
    /// connection's unique name, `forgetShown(server:)`); nil when none was recorded.
    public func shownServer() throws -> Int64? {
        try read { db in try Int64.fetchOne(db, sql: "SELECT value FROM meta WHERE key = 'shownServer'") }
    }

    /// A notification server other than the one the shown notifications' ids are of came: those ids name
    /// nothing, or another server's popups, so they are forgotten; `server` is recorded as the one the
    /// ids are of from now on.
    public func forgetShown(server: Int64) throws {
        try write(synced: false) { db in
            try db.execute(sql: "DELETE FROM shown")
            try db.execute(
                sql: "INSERT OR REPLACE INTO meta (key, value) VALUES ('shownServer', ?)", arguments: [server])
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
                try db.cachedStatement(sql: "DELETE FROM outbox WHERE seq = ?").execute(arguments: [
                    Int64(clamping: row.seq)
                ])
                guard row.kind == .occurrence else { continue }
                let late = row.late ? ", late" : ""
                if let digest {
                    try record(
                        db, now, .suppressed, itemID: row.itemID,
                        detail: "in the \(digest) notification \(notificationID)")
                } else {
                    let again =
                        row.receivedID == notificationID
                        ? ", received after a restart"
                        : row.sentBeforeRestart ? ", sent again after a restart (it may show twice)" : ""
                    try record(
                        db, now, .delivered, itemID: row.itemID,
                        detail: "notification \(notificationID)\(late)\(again)\(note.map { " (\($0))" } ?? "")")
                }
            }
            if let shown {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO shown (notificationID, itemID, owner, groupID, entryID, category,
                            content, occurrenceUsec, untilUsec, shownUsec, snoozeOf)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        Int64(shown.notificationID), Int64(clamping: shown.itemID), shown.owner, shown.group,
                        shown.entryID,
                        shown.category, try shown.content.map(Coding.encode), Time.usec(shown.occurrence),
                        shown.until.map(Time.usec), Time.usec(now), shown.snoozeOf.map { Int64(clamping: $0) },
                    ])
            }
        }
    }

    /// Records that an outbox row was not shown, for `reason`, and forgets it.
    public func suppressed(_ row: OutboxRecord, reason: String, now: Date) throws {
        try write(synced: false) { db in
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [Int64(clamping: row.seq)])
            try record(db, now, .suppressed, itemID: row.itemID, detail: reason)
        }
    }

    /// Records that the server refused an outbox row; it is dropped so it cannot block the others.
    public func failed(_ row: OutboxRecord, reason: String, now: Date) throws {
        try write(synced: false) { db in
            try db.execute(sql: "DELETE FROM outbox WHERE seq = ?", arguments: [Int64(clamping: row.seq)])
            try record(db, now, .failed, itemID: row.itemID, detail: reason)
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
            try record(db, now, .closed, itemID: UInt64(clamping: itemID), detail: reason)
            return true
        }
    }

    /// Adds a line to an item's history.
    public func recordHistory(_ event: HistoryEvent, itemID: UInt64, detail: String, now: Date) throws {
        try write(synced: false) { db in
            try record(db, now, event, itemID: itemID, detail: detail)
        }
    }

    /// Records an action chosen on an item's notification, and what chimed did with it.
    public func recordAction(itemID: UInt64, key: String, outcome: String, now: Date) throws {
        try write { db in
            try record(db, now, .action, itemID: itemID, detail: "\(key): \(outcome)")
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

    /// Stores a group's authorization; nil forgets it. `byApp`: the group's own app set it with its switch
    /// (a denial the app may undo), not the user.
    public func setAuthorization(
        _ status: GroupAuthorization?, group: GroupKey, byApp: Bool = false, now: Date
    ) throws {
        try write { db in
            if let status {
                try db.execute(
                    sql: """
                        INSERT OR REPLACE INTO groupAuthorization (owner, groupID, status, updatedUsec, byApp)
                        VALUES (?, ?, ?, ?, ?)
                        """, arguments: [group.owner, group.id, status.rawValue, Time.usec(now), byApp ? 1 : 0])
            } else {
                try db.execute(
                    sql: "DELETE FROM groupAuthorization WHERE owner = ? AND groupID = ?",
                    arguments: [group.owner, group.id])
            }
        }
    }

    /// Forgets the authorization of group `key` unless it is the user's "no" (a denial its app did not
    /// make), which stays when the group goes; false when there was none to forget.
    public func forgetAuthorization(of key: GroupKey) throws -> Bool {
        try write { db in
            try Self.forgetAuthorization(of: key, in: db)
            return db.changesCount > 0
        }
    }

    /// `forgetAuthorization(of:)` within a transaction: also what removing a group does.
    static func forgetAuthorization(of key: GroupKey, in db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM groupAuthorization
                WHERE owner = ? AND groupID = ? AND NOT (status = ? AND byApp = 0)
                """, arguments: [key.owner, key.id, GroupAuthorization.denied.rawValue])
    }

    // MARK: - Actions waiting for their app

    /// Keeps an action for an app that is not there; returns it with its sequence number.
    public func queue(_ action: PendingAction) throws -> PendingAction {
        try queue(action, maximumBytes: .max).action
    }

    /// What one kept action takes, in bytes, as an app's byte quota counts it: its key, group and entry
    /// ids, and its user info as stored.
    static let keptActionSize = """
        length(CAST(key AS BLOB)) + length(CAST(userInfo AS BLOB)) + coalesce(length(CAST(groupID AS BLOB)), 0)
            + coalesce(length(CAST(entryID AS BLOB)), 0)
        """

    /// Keeps an action for an app that is not there, keeping at most `keptActionsLimit` of the app's
    /// actions and at most `maximumBytes` of them (`keptActionSize`): the oldest go first, the newest
    /// stays. Any app's actions older than `keptActionLifetime` (from the new one's date) go too. Returns it
    /// with its sequence number, and the bytes the app's kept actions take now.
    public func queue(_ action: PendingAction, maximumBytes: Int) throws -> (action: PendingAction, keptBytes: Int) {
        try write { db in
            try Self.forgetExpiredActions(db, owner: nil, now: action.date)
            try db.execute(
                sql: """
                    INSERT INTO pendingAction (owner, itemID, groupID, entryID, key, userInfo, atUsec)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    action.owner, Int64(clamping: action.itemID), action.group, action.entryID, action.key,
                    try Coding.encode(action.userInfo), Time.usec(action.date),
                ])
            var stored = action
            stored.seq = UInt64(db.lastInsertedRowID)
            // An app that never asks for its actions cannot fill the disk with them: its oldest go.
            try db.cachedStatement(
                sql: """
                    DELETE FROM pendingAction WHERE owner = ? AND seq <= (SELECT seq FROM pendingAction
                        WHERE owner = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                    """
            ).execute(arguments: [action.owner, action.owner, Self.keptActionsLimit])
            // Then within its bytes, counted from the newest: the oldest that no longer fit go.
            try db.cachedStatement(
                sql: """
                    DELETE FROM pendingAction WHERE owner = ? AND seq < ? AND seq <= (
                        SELECT seq FROM (
                            SELECT seq, SUM(size) OVER (ORDER BY seq DESC ROWS UNBOUNDED PRECEDING) AS kept
                            FROM (SELECT seq, \(Self.keptActionSize) AS size FROM pendingAction WHERE owner = ?))
                        WHERE kept > ? ORDER BY seq DESC LIMIT 1)
                    """
            ).execute(arguments: [
                action.owner, Int64(clamping: stored.seq), action.owner, Int64(clamping: maximumBytes),
            ])
            let kept = try Int.fetchOne(
                db, sql: "SELECT SUM(\(Self.keptActionSize)) FROM pendingAction WHERE owner = ?",
                arguments: [action.owner])
            return (stored, kept ?? 0)
        }
    }

    /// Hands over `owner`'s kept actions, oldest first, as many as fit in `maximumBytes` (one at least), and
    /// forgets them; `more` says whether others wait, and `keptBytes` what those take (`keptActionSize`).
    /// Those older than `keptActionLifetime` at `now` are forgotten without being handed over. One that
    /// cannot be read is set aside (see `load()`).
    public func takeActions(owner: String, maximumBytes: Int = .max, now: Date) throws -> (
        actions: [PendingAction], more: Bool, keptBytes: Int
    ) {
        try write { db in
            try Self.forgetExpiredActions(db, owner: owner, now: now)
            // The oldest first, as many as fit in `maximumBytes` (one at least); the rest wait for the next call.
            var taken = 0
            var bytes = 0
            var more = false
            let sizes = try Row.fetchCursor(
                db, sql: "SELECT \(Self.keptActionSize) FROM pendingAction WHERE owner = ? ORDER BY seq",
                arguments: [owner])
            while let row = try sizes.next() {
                let size = (row[0] as Int? ?? 0) + Self.actionOverheadBytes
                guard taken == 0 || bytes + size <= maximumBytes else {
                    more = true
                    break
                }
                taken += 1
                bytes += size
            }
            var aside = SetAside()
            let actions = try aside.rows(
                db, "pendingAction",
                sql: "SELECT rowid, * FROM pendingAction WHERE owner = ? ORDER BY seq LIMIT ?",
                arguments: [owner, taken]
            ) { row in
                PendingAction(
                    seq: try Self.storedID(row.decode(forColumn: "seq"), "seq"),
                    owner: try row.decode(forColumn: "owner"),
                    itemID: try Self.storedID(row.decode(forColumn: "itemID"), "itemID"),
                    group: try row.decode(forColumn: "groupID"), entryID: try row.decode(forColumn: "entryID"),
                    key: try row.decode(forColumn: "key"),
                    userInfo: try Coding.decode([String: UserInfoValue].self, row.decode(forColumn: "userInfo")),
                    date: try Self.storedDate(row.decode(forColumn: "atUsec"), "atUsec"))
            }
            try aside.store(in: db, now: Date())
            try db.execute(
                sql: """
                    DELETE FROM pendingAction WHERE seq IN (
                        SELECT seq FROM pendingAction WHERE owner = ? ORDER BY seq LIMIT ?)
                    """, arguments: [owner, taken])
            let kept =
                try Int.fetchOne(
                    db, sql: "SELECT SUM(\(Self.keptActionSize)) FROM pendingAction WHERE owner = ?", arguments: [owner]
                )
                ?? 0
            return (actions, more, kept)
        }
    }

    /// What a kept action takes in a reply besides its user info and names: its item, time and keys.
    static let actionOverheadBytes = 200

    /// Forgets the kept actions (of `owner`, or of every app) older than `keptActionLifetime` at `now`.
    private static func forgetExpiredActions(_ db: Database, owner: String?, now: Date) throws {
        let oldest = Time.usec(now.addingTimeInterval(-keptActionLifetime))
        if let owner {
            try db.cachedStatement(sql: "DELETE FROM pendingAction WHERE owner = ? AND atUsec < ?")
                .execute(arguments: [owner, oldest])
        } else {
            try db.cachedStatement(sql: "DELETE FROM pendingAction WHERE atUsec < ?").execute(arguments: [oldest])
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
            let refs = try NameRefs.of(owner: key.owner, groupID: key.id, in: db)
            try recordingMany(db, now: now) {
                for item in plan.upserts {
                    try Self.save(
                        item, refs: refs, state: item.finished == nil ? "pending" : "finished", in: db, now: now)
                    let event: HistoryEvent
                    switch kinds[item.entryID] {
                    case .added?: event = .scheduled
                    case .changed?: event = .changed
                    default: continue
                    }
                    try record(
                        db, now, event, item, refs: refs, detail: "due \(Time.iso(item.fireDate))", prunes: false)
                }
                for id in plan.removed {
                    try record(
                        db, now, .removed, itemID: id, detail: "no longer in the timeline of \(key)", prunes: false)
                }
            }
            try Self.deleteItems(plan.removed.map { Int64(clamping: $0) }, in: db)
            if !plan.removed.isEmpty { try Self.giveBackSpace(db) }
        }
    }

    /// Removes a group and its items; false when there is no such group.
    public func removeGroup(_ key: GroupKey, now: Date) throws -> Bool {
        try write { db in
            try db.execute(
                sql: "DELETE FROM timelineGroup WHERE owner = ? AND id = ?", arguments: [key.owner, key.id])
            guard db.changesCount > 0 else { return false }
            try Self.forgetAuthorization(of: key, in: db)
            let ids = try Int64.fetchAll(
                db, sql: "SELECT id FROM item WHERE groupRef = \(NameRefs.groupSQL)", arguments: [key.owner, key.id])
            try recordingMany(db, now: now) {
                for id in ids {
                    try record(
                        db, now, .removed, itemID: UInt64(clamping: id), detail: "group \(key) removed", prunes: false)
                }
            }
            try Self.deleteItems(ids, in: db)
            try Self.giveBackSpace(db)
            return true
        }
    }

    /// Cancels pending items on their own and removes groups with their entries, in one transaction, as
    /// `cancel` and `removeGroup` each do (history: `cancelled`, `removed`); returns how many items went.
    public func cancelAll(items: [UInt64], groups: [GroupKey], now: Date) throws -> Int {
        try write { db in
            var gone: [Int64] = []
            try recordingMany(db, now: now) {
                for id in items {
                    let key = Int64(clamping: id)
                    guard
                        try Bool.fetchOne(
                            db, sql: "SELECT 1 FROM item WHERE id = ? AND state = 'pending'", arguments: [key]) != nil
                    else { continue }
                    try record(db, now, .cancelled, itemID: id, prunes: false)
                    gone.append(key)
                }
                for key in groups {
                    try db.execute(
                        sql: "DELETE FROM timelineGroup WHERE owner = ? AND id = ?", arguments: [key.owner, key.id])
                    guard db.changesCount > 0 else { continue }
                    try Self.forgetAuthorization(of: key, in: db)
                    let ids = try Int64.fetchAll(
                        db, sql: "SELECT id FROM item WHERE groupRef = \(NameRefs.groupSQL)",
                        arguments: [key.owner, key.id])
                    for id in ids {
                        try record(
                            db, now, .removed, itemID: UInt64(clamping: id), detail: "group \(key) removed",
                            prunes: false)
                    }
                    gone += ids
                }
            }
            try Self.deleteItems(gone, in: db)
            try Self.giveBackSpace(db)
            return gone.count
        }
    }

    /// Deletes the rows of items that are over, keeping their ids reserved.
    static func deleteItems(_ ids: [Int64], in db: Database) throws {
        guard !ids.isEmpty else { return }
        try reserve(ids, in: db)
        for id in ids { try db.cachedStatement(sql: "DELETE FROM item WHERE id = ?").execute(arguments: [id]) }
    }

    // MARK: - Rows

    /// The columns `item(from:)` reads, in the order it reads them.
    static let itemColumns = """
        id, appRef, groupRef, fireAtUsec, entry, recurrence, entryState, finishReason, snoozeOf, replacesID, entryID,
        endUsec, maxOccurrences, contentBytes, occurrences, lastFiredUsec, definitionCheck, wake
        """

    /// `itemColumns` as `item.id, a.name, g.name, item.fireAtUsec, …`, for a statement that joins the names
    /// of the owner (`a`) and the group (`g`) in place of their references.
    static let namedItemColumns = itemColumns.split(separator: ",").enumerated()
        .map { index, column in
            switch index {
            case 1: "a.name"
            case 2: "g.name"
            default: "item." + column.trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        .joined(separator: ", ")

    /// An item from a row of `itemColumns`, read by position (a read by name compared the names
    /// case-insensitively, column by column, which cost a start with a million items over a second), with
    /// SQLite's column functions (`ItemColumns`).
    ///
    /// Nothing is decoded, and the definition is not copied: the item holds its fingerprint
    /// (`EntryDefinition.released`), and the daemon reads the definition from the row when it needs it
    /// (`entries(of:)`). The rule is kept as stored (`StoredRecurrence`), and what a step needs comes from
    /// columns. The row's checksum must match its definition columns, so a row changed by anything but
    /// chimed is found here, not when it comes due. Throws for a value chimed cannot use, so that the row
    /// is set aside.
    static func item(from row: inout ItemColumns) throws -> ScheduledItem {
        // Hashed where SQLite holds it: the fingerprint is the checksum's state after the entry's bytes.
        let entry = try row.definition(4, "entry")
        let fingerprint = EntryDefinition.fingerprint(of: entry)
        let encodedBytes = entry.count
        let rule = try row.optionalDefinition(5, "recurrence")
        let pool = try row.optionalText(6, "entryState")
        let reason = try row.optionalText(7, "finishReason")
        let snoozeOf = try row.optionalInt(8, "snoozeOf")
        let replacesID = try row.optionalInt(9, "replacesID")
        let entryID = try row.text(10, "entryID")
        let end = try row.optionalInt(11, "endUsec")
        let maximum = try row.optionalInt(12, "maxOccurrences")
        let bytes = try row.int(13, "contentBytes")
        let occurrences = try row.int(14, "occurrences")
        let lastFired = try row.optionalInt(15, "lastFiredUsec")
        let check = try row.optionalInt(16, "definitionCheck")
        let wakes = try row.int(17, "wake") != 0
        guard
            check
                == definitionCheck(
                    entryFingerprint: fingerprint, recurrence: rule, entryID: entryID, end: end, maximum: maximum,
                    bytes: bytes, wakes: wakes)
        else { throw RowProblem("its definition does not match its checksum (definitionCheck)") }
        var state = EntryState()
        if let pool { state = try Coding.decode(EntryState.self, pool) }
        guard let count = Int(exactly: occurrences), count >= 0 else {
            throw RowProblem("occurrences is \(occurrences), below 0")
        }
        state.occurrences = count
        state.lastFired = try lastFired.map { try storedDate($0, "lastFiredUsec") }
        return ScheduledItem(
            id: try storedID(row.int(0, "id"), "id"), owner: try row.owner(1), groupID: try row.group(2),
            definition: EntryDefinition(
                encoded: nil, fingerprint: fingerprint, encodedBytes: encodedBytes, id: entryID,
                endDate: try end.map { try storedDate($0, "endUsec") },
                maximumOccurrences: maximum.map { Int(clamping: $0) }, contentBytes: Int(clamping: bytes),
                wakes: wakes),
            storedRecurrence: rule.map(StoredRecurrence.init(encoded:)),
            fireDate: try storedDate(row.int(3, "fireAtUsec"), "fireAtUsec"), state: state,
            finished: reason.flatMap(FinishReason.init(rawValue:)),
            snoozeOf: try snoozeOf.map { try storedID($0, "snoozeOf") },
            replacesID: replacesID.map { UInt32(truncatingIfNeeded: $0) })
    }

    /// The entries of items, read from their rows: what the daemon reads when an occurrence is due or a
    /// listing asks, since the scheduler holds definitions released (`EntryDefinition.released`). An id
    /// without a row (cancelled meanwhile) has no entry in the result. A row whose definition does not
    /// match its checksum or does not decode reads as `EntryDefinition.unreadable`, so that chimed goes on.
    public func entries(of ids: some Collection<UInt64>) throws -> [UInt64: TimelineEntry] {
        try read { db in try Self.entries(of: ids, in: db) }
    }

    static func entries(of ids: some Collection<UInt64>, in db: Database) throws -> [UInt64: TimelineEntry] {
        var result: [UInt64: TimelineEntry] = [:]
        result.reserveCapacity(ids.count)
        let keys = ids.map { Int64(clamping: $0) }
        for start in stride(from: 0, to: keys.count, by: Self.idsPerStatement) {
            let chunk = keys[start..<min(start + Self.idsPerStatement, keys.count)]
            let marks = repeatElement("?", count: chunk.count).joined(separator: ",")
            let rows = try Row.fetchCursor(
                db,
                sql: """
                    SELECT id, entry, recurrence, entryID, endUsec, maxOccurrences, contentBytes, definitionCheck,
                        wake
                    FROM item WHERE id IN (\(marks))
                    """, arguments: StatementArguments(Array(chunk)))
            while let row = try rows.next() {
                result[UInt64(clamping: row[0] as Int64)] = Self.entry(
                    Self.bytes(row[1]), recurrence: Self.optionalBytes(row[2]), entryID: row[3], end: row[4],
                    maximum: row[5], bytes: row[6],
                    check: row[7], wakes: row[8] as Int64 != 0)
            }
        }
        return result
    }

    /// Runs `body` with one of the database's reader connections (on the calling thread, never waiting for
    /// the writer): for the work a call asks for that needs stored definitions (planning a group's new
    /// timeline), done on the caller's time.
    public func readEntries<T>(_ body: (EntryReader) throws -> T) throws -> T {
        try read { db in try body(EntryReader(db: db)) }
    }

    /// The most ids one statement binds (SQLite allows 32,766).
    static let idsPerStatement = 500

    /// An entry from its row's columns; one whose definition does not match its checksum or does not
    /// decode reads as `EntryDefinition.unreadable`, so that chimed goes on.
    static func entry(
        _ entry: [UInt8], recurrence: [UInt8]?, entryID: String, end: Int64?, maximum: Int64?, bytes: Int64,
        check: Int64?, wakes: Bool
    ) -> TimelineEntry {
        let intact =
            check
            == definitionCheck(
                entryFingerprint: EntryDefinition.fingerprint(of: entry), recurrence: recurrence, entryID: entryID,
                end: end, maximum: maximum, bytes: bytes, wakes: wakes)
        if intact, let decoded = try? DefinitionCoding.decode(TimelineEntry.self, entry) { return decoded }
        return EntryDefinition.unreadable(
            id: entryID, endDate: end.map(Time.date), maximumOccurrences: maximum.map { Int(clamping: $0) })
    }

    // MARK: - Listings, off the writer

    /// A page of pending items, soonest first (by next occurrence, then id), each with its entry, read with
    /// one of the database's reader connections on the calling thread, never waiting for the writer;
    /// `transform` gets the rows there. Items of disabled groups are not pending.
    public func pendingPage<T>(
        _ query: PendingPageQuery, _ transform: ([(ScheduledItem, TimelineEntry)]) throws -> T
    ) throws -> T {
        try read { db in
            // An app's pending items in order through its index, as far as the page goes (of one group: those
            // of the group among them). A group id of any app: that id's items through the index on the
            // group, then sorted (a group holds at most `TimelineGroup.maximumEntries`); without the `+`,
            // SQLite walks everyone's pending items in order instead.
            let anyApp = query.owner == nil && query.group != nil
            var conditions = [anyApp ? "+item.state = 'pending'" : "item.state = 'pending'"]
            var arguments: StatementArguments = []
            switch (query.owner, query.group) {
            case (let owner?, let group?):
                conditions.append("item.appRef = \(NameRefs.appSQL) AND item.groupRef = \(NameRefs.groupSQL)")
                arguments += [owner, owner, group]
            case (let owner?, nil):
                conditions.append("item.appRef = \(NameRefs.appSQL)")
                arguments += [owner]
            case (nil, let group?):
                conditions.append("item.groupRef IN (SELECT ref FROM groupName WHERE name = ?)")
                arguments += [group]
            case (nil, nil): break
            }
            if let until = query.until {
                conditions.append("item.fireAtUsec <= ?")
                arguments += [Time.usec(until)]
            }
            if let after = query.after {
                conditions.append("(item.fireAtUsec, item.id) > (?, ?)")
                arguments += [after.fireUsec, Int64(clamping: after.id)]
            }
            arguments += [query.limit]
            let statement = try db.makeStatement(
                sql: """
                    SELECT \(Self.namedItemColumns)
                    FROM item JOIN appName a ON a.ref = item.appRef LEFT JOIN groupName g ON g.ref = item.groupRef
                        LEFT JOIN timelineGroup t ON t.owner = a.name AND t.id = g.name
                    WHERE \(conditions.joined(separator: " AND "))
                        AND (t.settings IS NULL OR json_extract(t.settings, '$.enabled') IS NOT 0)
                    ORDER BY item.fireAtUsec, item.id LIMIT ?
                    """)
            statement.arguments = arguments
            let rows = try Row.fetchCursor(statement)
            var columns = ItemColumns(statement, names: nil)
            var page: [(ScheduledItem, TimelineEntry)] = []
            while let row = try rows.next() {
                // A row chimed cannot read is left out of a listing; the next start sets it aside.
                guard let item = try? Self.item(from: &columns) else { continue }
                page.append(
                    (
                        item,
                        Self.entry(
                            Self.bytes(row[4]), recurrence: Self.optionalBytes(row[5]), entryID: row[10], end: row[11],
                            maximum: row[12],
                            bytes: row[13], check: row[16], wakes: row[17] as Int64 != 0)
                    ))
            }
            return try transform(page)
        }
    }

    /// A page of groups, by owner then id, each with how many items it has and has pending and when the
    /// next is due, read with one of the database's reader connections on the calling thread, never waiting
    /// for the writer. The page ends after `query.limit` groups, or after the group whose items took the
    /// items counted over `query.itemBudget` (a page holds at least one group). A disabled group has nothing
    /// pending. A group whose settings chimed cannot read is left out (the next start sets it aside).
    public func groupPage(_ query: GroupPageQuery) throws -> GroupPage {
        try read { db in
            var conditions = ["1"]
            var arguments: StatementArguments = []
            if let owner = query.owner {
                conditions.append("owner = ?")
                arguments += [owner]
            }
            if let after = query.after {
                conditions.append("(owner, id) > (?, ?)")
                arguments += [after.owner, after.id]
            }
            arguments += [query.limit + 1]
            let groups = try Row.fetchAll(
                db,
                sql: """
                    SELECT owner, id, settings, source FROM timelineGroup
                    WHERE \(conditions.joined(separator: " AND ")) ORDER BY owner, id LIMIT ?
                    """, arguments: arguments)
            // Through the index on the group's reference: one group's items, never another's.
            let counts = try db.cachedStatement(
                sql: """
                    SELECT COUNT(*), TOTAL(state = 'pending'), MIN(CASE WHEN state = 'pending' THEN fireAtUsec END)
                    FROM item WHERE groupRef = \(NameRefs.groupSQL) AND state IN ('pending', 'finished')
                    """)
            var page = GroupPage()
            var looked = 0
            for row in groups.prefix(query.limit) {
                guard page.itemsCounted < query.itemBudget else { break }
                looked += 1
                guard let key = try? GroupKey(owner: row.decode(atIndex: 0), id: row.decode(atIndex: 1)) else {
                    continue
                }
                page.last = key
                guard let text = try? row.decode(String.self, atIndex: 2),
                    let settings = try? Coding.decode(GroupSettings.self, text)
                else { continue }
                let counted = try Row.fetchOne(counts, arguments: [key.owner, key.id])
                let entries = Int(counted?[0] as Int64? ?? 0)
                page.itemsCounted += entries
                page.groups.append(
                    GroupSummary(
                        key: key, settings: settings,
                        source: (try? row.decode(String.self, atIndex: 3)).flatMap(GroupSource.init) ?? .api,
                        entries: entries, pending: settings.enabled ? Int(counted?[1] as Double? ?? 0) : 0,
                        next: settings.enabled ? (counted?[2] as Int64?).map(Time.date) : nil))
            }
            page.more = looked < groups.count
            return page
        }
    }

    /// The checksum of a row's definition and of the columns kept beside it (FNV-1a, 64 bits): over the
    /// entry's bytes (its fingerprint is the hash after them), a zero byte, then the other columns. `wake`
    /// counts only when set, so that the checksums of rows stored before the column existed stay right.
    static func definitionCheck(
        entryFingerprint: UInt64, recurrence: [UInt8]?, entryID: String, end: Int64?, maximum: Int64?,
        bytes: Int64, wakes: Bool
    ) -> Int64 {
        var hash = entryFingerprint
        func add(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= EntryDefinition.fnvPrime
        }
        func add(_ text: String?) {
            if var text {
                text.withUTF8 { hash = EntryDefinition.fingerprint(of: UnsafeRawBufferPointer($0), from: hash) }
            }
            add(0)
        }
        func add(_ bytes: [UInt8]?) {
            if let bytes { bytes.withUnsafeBytes { hash = EntryDefinition.fingerprint(of: $0, from: hash) } }
            add(0)
        }
        func add(_ number: Int64?) {
            guard let number else { return add(0) }
            add(1)
            for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: number >> shift)) }
        }
        add(0)
        add(recurrence)
        add(entryID)
        add(end)
        add(maximum)
        add(bytes)
        if wakes { add(1) }
        return Int64(bitPattern: hash)
    }

    /// The definition columns of an item and of its state, in the order of `save`: entry, recurrence,
    /// entryState (a pool's position, or NULL), endUsec, maxOccurrences, contentBytes, occurrences,
    /// lastFiredUsec, definitionCheck (which covers `wake`, stored beside them by `save`).
    static func definitionValues(_ item: ScheduledItem, encoded: [UInt8]) -> StatementArguments {
        let definition = item.definition
        let end = definition.endDate.map(Time.usec)
        let maximum = definition.maximumOccurrences.map { Int64(clamping: $0) }
        let bytes = Int64(clamping: definition.contentBytes)
        let rule = item.storedRecurrence?.encoded
        return [
            Data(encoded), rule.map { Data($0) }, poolState(item.state), end, maximum, bytes,
            Int64(clamping: item.state.occurrences), item.state.lastFired.map(Time.usec),
            definitionCheck(
                entryFingerprint: definition.fingerprint, recurrence: rule, entryID: definition.id, end: end,
                maximum: maximum, bytes: bytes, wakes: definition.wakes),
        ]
    }

    /// A pool's place in the state (`entryState`); nil for the state of every entry without a pool.
    static func poolState(_ state: EntryState) -> String? {
        guard state.poolPosition != 0 || !state.poolBag.isEmpty else { return nil }
        return DefinitionCoding.encodeJSON(EntryState(poolPosition: state.poolPosition, poolBag: state.poolBag))
    }

    static func outbox(from row: Row) throws -> OutboxRecord {
        let groupID: String? = try row.decode(forColumn: "groupID")
        let owner: String = try row.decode(String?.self, forColumn: "owner") ?? ""
        let content: String? = try row.decode(forColumn: "content")
        let source: String? = try row.decode(forColumn: "source")
        let end: Int64? = try row.decode(forColumn: "endUsec")
        let replacesID: Int64? = try row.decode(forColumn: "replacesID")
        let sending: Int64? = try row.decode(forColumn: "sendingUsec")
        let receivedID: Int64? = try row.decode(forColumn: "receivedID")
        let escalation: String? = try row.decode(forColumn: "escalation")
        let snoozeOf: Int64? = try row.decode(forColumn: "snoozeOf")
        return OutboxRecord(
            seq: try storedID(row.decode(forColumn: "seq"), "seq"),
            kind: OutboxRecord.Kind(rawValue: try row.decode(forColumn: "kind")) ?? .occurrence,
            itemID: try storedID(row.decode(forColumn: "itemID"), "itemID"), owner: owner,
            group: groupID.map { GroupKey(owner: owner, id: $0) },
            occurrence: try storedDate(row.decode(forColumn: "occurrenceUsec"), "occurrenceUsec"),
            number: try row.decode(forColumn: "number"), late: try row.decode(forColumn: "late"),
            content: try content.map { try Coding.decode(NotificationContent.self, $0) },
            source: try source.map { try Coding.decode(ContentSource.self, $0) },
            endDate: try end.map { try storedDate($0, "endUsec") }, category: try row.decode(forColumn: "category"),
            replacesID: replacesID.map { UInt32(truncatingIfNeeded: $0) }, sentBeforeRestart: sending != nil,
            receivedID: receivedID.map { UInt32(truncatingIfNeeded: $0) },
            prepared: try row.decode(Int64.self, forColumn: "prepared") != 0,
            escalation: try escalation.map { try Coding.decode(EscalationStep.self, $0) },
            snoozeOf: try snoozeOf.map { try storedID($0, "snoozeOf") })
    }

    static func shown(from row: Row) throws -> ShownNotification {
        let content: String? = try row.decode(forColumn: "content")
        let until: Int64? = try row.decode(forColumn: "untilUsec")
        let snoozeOf: Int64? = try row.decode(forColumn: "snoozeOf")
        return ShownNotification(
            notificationID: UInt32(truncatingIfNeeded: try row.decode(Int64.self, forColumn: "notificationID")),
            itemID: try storedID(row.decode(forColumn: "itemID"), "itemID"), owner: try row.decode(forColumn: "owner"),
            group: try row.decode(forColumn: "groupID"), entryID: try row.decode(forColumn: "entryID"),
            category: try row.decode(forColumn: "category"),
            content: try content.map { try Coding.decode(NotificationContent.self, $0) },
            occurrence: try storedDate(row.decode(forColumn: "occurrenceUsec"), "occurrenceUsec"),
            until: try until.map { try storedDate($0, "untilUsec") },
            shownAt: try storedDate(row.decode(forColumn: "shownUsec"), "shownUsec"),
            snoozeOf: try snoozeOf.map { try storedID($0, "snoozeOf") })
    }

    /// A stored id or sequence number; a negative one is a value chimed cannot use.
    static func storedID(_ value: Int64, _ column: String) throws(RowProblem) -> UInt64 {
        guard value >= 0 else { throw RowProblem("\(column) is \(value), below 0") }
        return UInt64(value)
    }

    /// A stored time, which must lie in `Time.validRange`.
    static func storedDate(_ usec: Int64, _ column: String) throws(RowProblem) -> Date {
        guard Time.validRange.contains(usec) else {
            throw RowProblem(
                "\(column) is \(usec) µs, outside \(Time.validRange.lowerBound)…\(Time.validRange.upperBound)")
        }
        return Time.date(usec)
    }

    /// Refuses a date of a stored definition outside `Time.validRange`.
    static func checkDate(_ date: Date?, _ what: String) throws(RowProblem) {
        guard let date else { return }
        let usec = Time.usec(date)
        guard Time.validRange.contains(usec) else {
            throw RowProblem(
                "\(what) is \(date.timeIntervalSince1970) s since 1970, outside 1970-01-01…9999-12-31")
        }
    }

    /// Stores an item whole, under the references of its owner and group (`NameRefs.of`). An item whose
    /// definition the store holds already (`EntryDefinition.released`: one the scheduler had) is stored as
    /// `saveProgress` stores it.
    static func save(_ item: ScheduledItem, refs: NameRefs, state: String, in db: Database, now: Date) throws {
        guard let encoded = item.definition.encoded else {
            return try saveProgress(item, state: state, in: db, now: now)
        }
        try db.cachedStatement(
            sql: """
                INSERT INTO item (entry, recurrence, entryState, endUsec, maxOccurrences, contentBytes, occurrences,
                    lastFiredUsec, definitionCheck, id, appRef, groupRef, entryID, fireAtUsec, summary, state,
                    finishReason, createdUsec, snoozeOf, replacesID, wake)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (id) DO UPDATE SET appRef = excluded.appRef, groupRef = excluded.groupRef,
                    entryID = excluded.entryID, fireAtUsec = excluded.fireAtUsec, summary = excluded.summary,
                    entry = excluded.entry, recurrence = excluded.recurrence, entryState = excluded.entryState,
                    endUsec = excluded.endUsec, maxOccurrences = excluded.maxOccurrences,
                    contentBytes = excluded.contentBytes, occurrences = excluded.occurrences,
                    lastFiredUsec = excluded.lastFiredUsec, definitionCheck = excluded.definitionCheck,
                    wake = excluded.wake, state = excluded.state, finishReason = excluded.finishReason
                """
        ).execute(
            arguments: definitionValues(item, encoded: encoded) + [
                Int64(clamping: item.id), refs.app, refs.group, item.entryID, Time.usec(item.fireDate),
                item.content.summary, state, item.finished?.rawValue, Time.usec(now),
                item.snoozeOf.map { Int64(clamping: $0) }, item.replacesID.map { Int64($0) },
                item.definition.wakes ? 1 : 0,
            ])
    }

    /// Stores how an item moved on (its fire date, state and end), its definition being unchanged: the
    /// columns that change, without encoding the definition again. An item not stored yet is stored whole,
    /// unless the store was to hold its definition: then its row was deleted meanwhile (it was cancelled),
    /// and it stays deleted.
    static func saveProgress(_ item: ScheduledItem, state: String, in db: Database, now: Date) throws {
        try db.cachedStatement(
            sql: """
                UPDATE item SET fireAtUsec = ?, occurrences = ?, lastFiredUsec = ?, entryState = ?, state = ?,
                    finishReason = ?
                WHERE id = ?
                """
        ).execute(arguments: [
            Time.usec(item.fireDate), Int64(clamping: item.state.occurrences), item.state.lastFired.map(Time.usec),
            poolState(item.state), state, item.finished?.rawValue, Int64(clamping: item.id),
        ])
        if db.changesCount == 0, item.definition.isResident {
            let refs = try NameRefs.of(owner: item.owner, groupID: item.groupID, in: db)
            try save(item, refs: refs, state: state, in: db, now: now)
        }
    }

    /// Records an event for `item`, under `refs` (nil: its owner's and group's, looked up). Within
    /// `recordingMany`, `prunes` is false.
    func record(
        _ db: Database, _ now: Date, _ event: HistoryEvent, _ item: ScheduledItem, refs: NameRefs? = nil,
        detail: String? = nil, prunes: Bool = true
    ) throws {
        let refs = try refs ?? NameRefs.of(owner: item.owner, groupID: item.groupID, in: db)
        try db.cachedStatement(
            sql: """
                INSERT INTO history (itemID, atUsec, event, detail, appRef, groupRef, entryID, summary)
                VALUES (?, ?, ?, ?, ?, ?, ?, COALESCE(?, (SELECT summary FROM item WHERE id = ?)))
                """
        ).execute(
            arguments: [
                Int64(clamping: item.id), Time.usec(now), event.rawValue, detail, refs.app, refs.group,
                item.groupID == nil ? nil : item.entryID, item.definition.decodedEntry?.content.base.summary,
                Int64(clamping: item.id),
            ])
        if prunes { try recorded(db, now: now) }
    }

    /// Records an event for an item known only by id: its owner, group and summary come from its row, or,
    /// once the row is gone (a finished single item being delivered), from the item's latest record.
    func record(
        _ db: Database, _ now: Date, _ event: HistoryEvent, itemID: UInt64, detail: String? = nil, prunes: Bool = true
    ) throws {
        let id = Int64(clamping: itemID)
        try db.cachedStatement(
            sql: """
                INSERT INTO history (itemID, atUsec, event, detail, appRef, groupRef, entryID, summary)
                SELECT ?, ?, ?, ?, appRef, groupRef, entryID, summary FROM (
                    SELECT appRef, groupRef, CASE WHEN groupRef IS NULL THEN NULL ELSE entryID END AS entryID,
                        summary, 0 AS rank
                    FROM item WHERE id = ?
                    UNION ALL
                    SELECT * FROM (SELECT appRef, groupRef, entryID, summary, 1 FROM history WHERE itemID = ?
                        ORDER BY seq DESC LIMIT 1)
                    UNION ALL
                    SELECT NULL, NULL, NULL, NULL, 2
                ) ORDER BY rank LIMIT 1
                """
        ).execute(arguments: [id, Time.usec(now), event.rawValue, detail, id, id])
        if prunes { try recorded(db, now: now) }
    }

    /// Prunes history every `HistoryLimits.pruneInterval` records: it cannot outgrow its limits by
    /// more than that, and a record costs no more than a division.
    private func recorded(_ db: Database, now: Date) throws {
        guard db.lastInsertedRowID % HistoryLimits.pruneInterval == 0 else { return }
        try Self.pruneHistory(db, limits: historyLimits, now: now)
    }

    /// Runs `body`, which writes many records (with `prunes: false`), and prunes history once after them
    /// when they passed a multiple of `HistoryLimits.pruneInterval`: a prune counts every app's records,
    /// and a 10,000-entry group pruned ten times over while it was stored (docs/performance.md).
    func recordingMany<T>(_ db: Database, now: Date, _ body: () throws -> T) throws -> T {
        let last = try db.cachedStatement(sql: "SELECT seq FROM sqlite_sequence WHERE name = 'history'")
        let before = try Int64.fetchOne(last) ?? 0
        let result = try body()
        let after = try Int64.fetchOne(last) ?? 0
        if after / HistoryLimits.pruneInterval > before / HistoryLimits.pruneInterval {
            try Self.pruneHistory(db, limits: historyLimits, now: now)
        }
        return result
    }
}

/// Times as the database keeps them.
enum Time {
    /// The times chimed handles, in microseconds since the Unix epoch: 1970-01-01 to
    /// 9999-12-31T23:59:59.999999Z, as on the wire.
    static let validRange: ClosedRange<Int64> = 0...253_402_300_799_999_999

    /// `date` in microseconds since the epoch, saturating: a date beyond what Int64 holds gives its
    /// largest or smallest value (and NaN gives 0) instead of a trap; `validRange` tells whether it is
    /// usable.
    static func usec(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000_000).rounded()
        if value.isNaN { return 0 }
        if value >= 0x1p63 { return .max }
        if value < -0x1p63 { return .min }
        return Int64(value)
    }
    static func date(_ usec: Int64) -> Date { Date(timeIntervalSince1970: Double(usec) / 1_000_000) }
    static func iso(_ date: Date) -> String { WallClock.timestamp(date) }
}

/// The bytes of a definition column (a blob; a row written before definitions were binary holds text).
extension ScheduleStore {
    static func bytes(_ value: DatabaseValue) -> [UInt8] {
        switch value.storage {
        case .blob(let data): [UInt8](data)
        case .string(let text): Array(text.utf8)
        default: []
        }
    }

    static func optionalBytes(_ value: DatabaseValue) -> [UInt8]? { value.isNull ? nil : bytes(value) }
}

/// JSON for the columns that keep it: a pool's state and categories.
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
