internal import GRDBSQLite
import Synchronization

/// The notification relay's receipts: the id the server answered each Notify with, by the outbox rows the
/// notification stands for, in a small database of the relay's own beside chimed's
/// (`chime.sqlite.receipts`).
///
/// The relay is a process of its own, so a receipt is stored even when chimed was killed while the
/// server was answering. The next chimed takes the relay lock (the last relay has exited, so every
/// receipt is stored), moves the receipts onto its outbox rows (`ScheduleStore.takeReceipts(at:)`), and
/// only then starts its relay: it finds those rows shown, with their id, instead of sending them again.
///
/// The database is the relay's alone while it runs: a receipt written to chimed's own database waited for
/// chimed's write lock (and chimed's writes for the relay's synced one) in SQLite's busy handler, whose
/// sleeps of 1 to 100 ms held up the next notification (docs/performance.md).
///
/// SQLite's C API directly (GRDB's module of it, `GRDBSQLite`, without GRDB), so that the relay needs
/// neither GRDB nor Foundation (docs/performance.md,
/// "Footprint"): its work is one INSERT per notification.
public final class DeliveryReceipts: @unchecked Sendable {
    // @unchecked Sendable: `connection` is used only under `lock`.
    private let connection: OpaquePointer
    private let lock = Mutex(0)

    /// The most receipts kept while a relay runs (a tenth more between two prunings); older ones are
    /// dropped. chimed records a delivery within milliseconds of its answer, so a receipt is needed only
    /// for the last few notifications before a chimed was killed or the power went.
    public let keptLimit: Int

    /// Where the receipts of the relay of the state database at `databasePath` are kept.
    public static func path(besides databasePath: String) -> String { databasePath + ".receipts" }

    /// How long a write waits for another connection's lock (chimed's, while it moves the receipts).
    static let busyMilliseconds: Int32 = 5000

    /// Opens the receipts database at `path`, creating it when absent; it keeps the newest `keptLimit`.
    public init(path: String, keptLimit: Int = 10_000) throws(ReceiptError) {
        self.keptLimit = max(keptLimit, 10)
        var handle: OpaquePointer?
        let opened = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard opened == SQLITE_OK, let handle else {
            let reason = handle.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(opened))
            sqlite3_close_v2(handle)
            throw ReceiptError("cannot open the delivery receipts \(path): \(reason)")
        }
        connection = handle
        sqlite3_busy_timeout(handle, Self.busyMilliseconds)
        do throws(ReceiptError) {
            // One sync a commit (the log's), not three; the file is the relay's alone.
            try execute("PRAGMA journal_mode = WAL")
            try execute("PRAGMA synchronous = FULL")
            try execute("CREATE TABLE IF NOT EXISTS receipt (seq INTEGER PRIMARY KEY, notificationID INTEGER NOT NULL)")
        } catch {
            sqlite3_close_v2(handle)
            throw ReceiptError("cannot open the delivery receipts \(path): \(error.message)")
        }
    }

    deinit { sqlite3_close_v2(connection) }

    /// Stores that the outbox rows `seqs` were shown as notification `notificationID`; synced before it
    /// returns.
    public func record(notificationID: UInt32, seqs: [UInt64]) throws(ReceiptError) {
        let interval = keptLimit / 10
        try lock.withLock { (written: inout Int) throws(ReceiptError) in
            written += 1
            let prune = written >= interval
            if prune { written = 0 }
            do throws(ReceiptError) {
                try execute("BEGIN IMMEDIATE")
                do throws(ReceiptError) {
                    for seq in seqs {
                        try run(
                            "INSERT OR REPLACE INTO receipt (seq, notificationID) VALUES (?, ?)",
                            Int64(clamping: seq), Int64(notificationID))
                    }
                    if prune {
                        try run(
                            """
                            DELETE FROM receipt WHERE seq <= (SELECT seq FROM receipt ORDER BY seq DESC LIMIT 1 OFFSET ?)
                            """, Int64(keptLimit))
                    }
                    try execute("COMMIT")
                } catch {
                    try? execute("ROLLBACK")
                    throw error
                }
            } catch {
                throw ReceiptError("cannot store the id of notification \(notificationID): \(error.message)")
            }
        }
    }

    /// Every receipt stored, by outbox row.
    public func all() throws(ReceiptError) -> [UInt64: UInt32] {
        try lock.withLock { _ throws(ReceiptError) in
            var receipts: [UInt64: UInt32] = [:]
            do throws(ReceiptError) {
                try query("SELECT seq, notificationID FROM receipt") { statement in
                    let seq = sqlite3_column_int64(statement, 0)
                    let id = sqlite3_column_int64(statement, 1)
                    receipts[UInt64(clamping: seq)] = UInt32(truncatingIfNeeded: id)
                }
            } catch {
                throw ReceiptError("cannot read the delivery receipts: \(error.message)")
            }
            return receipts
        }
    }

    // MARK: - SQLite

    private func execute(_ sql: String) throws(ReceiptError) {
        guard sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK else { throw lastError() }
    }

    /// Runs a statement that returns no rows, with integer arguments.
    private func run(_ sql: String, _ arguments: Int64...) throws(ReceiptError) {
        try query(sql, arguments) { _ in }
    }

    /// Runs `sql` with integer `arguments`, calling `row` for each row it returns.
    private func query(
        _ sql: String, _ arguments: [Int64] = [], row: (OpaquePointer) -> Void
    ) throws(ReceiptError) {
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
            throw lastError()
        }
        defer { sqlite3_finalize(statement) }
        for (index, argument) in arguments.enumerated() {
            guard sqlite3_bind_int64(statement, Int32(index + 1), argument) == SQLITE_OK else { throw lastError() }
        }
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: row(statement)
            case SQLITE_DONE: return
            default: throw lastError()
            }
        }
    }

    private func lastError() -> ReceiptError { ReceiptError(String(cString: sqlite3_errmsg(connection))) }
}

/// Why a receipt could not be stored or read.
public struct ReceiptError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var description: String { message }

    public init(_ message: String) { self.message = message }
}
