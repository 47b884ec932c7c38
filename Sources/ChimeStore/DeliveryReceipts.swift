import Foundation
import GRDB
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
public final class DeliveryReceipts: Sendable {
    let writer: DatabaseQueue
    /// Receipts written since the oldest were last dropped (`record`).
    private let written = Mutex(0)

    /// The most receipts kept while a relay runs (a tenth more between two prunings); older ones are
    /// dropped. chimed records a delivery within milliseconds of its answer, so a receipt is needed only
    /// for the last few notifications before a chimed was killed or the power went.
    public let keptLimit: Int

    /// Where the receipts of the relay of the state database at `databasePath` are kept.
    public static func path(besides databasePath: String) -> String { databasePath + ".receipts" }

    /// Opens the receipts database at `path`, creating it when absent; it keeps the newest `keptLimit`.
    public init(path: String, keptLimit: Int = 10_000) throws(StoreError) {
        self.keptLimit = max(keptLimit, 10)
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(ScheduleStore.busyTimeout)
            writer = try DatabaseQueue(path: path, configuration: configuration)
            try writer.writeWithoutTransaction { db in
                // One sync a commit (the log's), not three; the file is the relay's alone.
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = FULL")
                try db.execute(
                    sql: "CREATE TABLE IF NOT EXISTS receipt (seq INTEGER PRIMARY KEY, notificationID INTEGER NOT NULL)"
                )
            }
        } catch {
            throw StoreError("cannot open the delivery receipts \(path): \(error)")
        }
    }

    /// Stores that the outbox rows `seqs` were shown as notification `notificationID`; synced before it
    /// returns.
    public func record(notificationID: UInt32, seqs: [UInt64]) throws(StoreError) {
        let interval = keptLimit / 10
        let prune = written.withLock { count in
            count += 1
            defer { if count >= interval { count = 0 } }
            return count >= interval
        }
        do {
            try writer.write { db in
                for seq in seqs {
                    try db.cachedStatement(sql: "INSERT OR REPLACE INTO receipt (seq, notificationID) VALUES (?, ?)")
                        .execute(arguments: [Int64(clamping: seq), Int64(notificationID)])
                }
                if prune {
                    try db.execute(
                        sql: """
                            DELETE FROM receipt WHERE seq <= (SELECT seq FROM receipt ORDER BY seq DESC LIMIT 1 OFFSET ?)
                            """, arguments: [keptLimit])
                }
            }
        } catch {
            throw StoreError("cannot store the id of notification \(notificationID): \(error)")
        }
    }

    /// Every receipt stored, by outbox row.
    public func all() throws(StoreError) -> [UInt64: UInt32] {
        do {
            return try writer.read { db in
                var receipts: [UInt64: UInt32] = [:]
                let rows = try Row.fetchCursor(db, sql: "SELECT seq, notificationID FROM receipt")
                while let row = try rows.next() {
                    let seq: Int64 = row[0]
                    let id: Int64 = row[1]
                    receipts[UInt64(clamping: seq)] = UInt32(truncatingIfNeeded: id)
                }
                return receipts
            }
        } catch {
            throw StoreError("cannot read the delivery receipts: \(error)")
        }
    }
}
