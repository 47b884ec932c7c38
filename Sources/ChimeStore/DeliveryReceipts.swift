import Foundation
import GRDB

/// The notification relay's one write to chimed's database: the id the server answered Notify with,
/// stored on the outbox rows the notification stands for, before the relay exits.
///
/// The relay is a process of its own, so a receipt is stored even when chimed was killed while the
/// server was answering; chimed's next start then finds the rows shown, with their id, instead of
/// sending them again. It opens an existing, migrated database and never changes its schema.
public final class DeliveryReceipts: Sendable {
    let writer: DatabaseQueue

    public init(path: String) throws(StoreError) {
        do {
            var configuration = Configuration()
            configuration.busyMode = .timeout(ScheduleStore.busyTimeout)
            // The schema is chimed's: a missing file is an error here, not a new empty database.
            guard FileManager.default.fileExists(atPath: path) else {
                throw StoreError("\(path) does not exist")
            }
            writer = try DatabaseQueue(path: path, configuration: configuration)
            try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError("cannot open the state database \(path) for delivery receipts: \(error)")
        }
    }

    /// Stores that the outbox rows `seqs` were shown as notification `notificationID`.
    public func record(notificationID: UInt32, seqs: [UInt64]) throws(StoreError) {
        do {
            try writer.write { db in
                for seq in seqs {
                    try db.cachedStatement(sql: "UPDATE outbox SET receivedID = ? WHERE seq = ?")
                        .execute(arguments: [Int64(notificationID), Int64(seq)])
                }
            }
        } catch {
            throw StoreError("cannot store the id of notification \(notificationID): \(error)")
        }
    }
}
