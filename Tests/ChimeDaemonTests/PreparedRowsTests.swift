import ChimeCore
import ChimeStore
import Foundation
import Testing

@testable import ChimeDaemon

/// Rows stored before their occurrence came due, as chimed finds them at start: which of them are
/// occurrences it had sent (kept, and not made due again), and which the scheduler decides on.
@Suite struct PreparedRowsTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func item(_ id: UInt64, at date: Date) -> ScheduledItem {
        ScheduledItem(id: id, content: NotificationContent(summary: "item \(id)"), fireDate: date)
    }

    static func row(
        _ seq: UInt64, item: UInt64, at date: Date, prepared: Bool = true, sending: Bool = false,
        received: UInt32? = nil
    ) -> OutboxRecord {
        OutboxRecord(
            seq: seq, itemID: item, group: nil, occurrence: date, number: 1, late: false,
            content: NotificationContent(summary: "item \(item)"), sentBeforeRestart: sending, receivedID: received,
            prepared: prepared)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var row: OutboxRecord
        var items: [ScheduledItem]
        /// Whether the row is an occurrence of the outbox at start.
        var kept: Bool
        var testDescription: String { name }
    }

    static let due = t0 - 5

    static let cases: [Case] = [
        Case(
            name: "sent, answered, its step not stored", row: row(3, item: 1, at: due, received: 9),
            items: [item(1, at: due)], kept: true),
        Case(
            name: "sent, no answer stored, its step not stored", row: row(3, item: 1, at: due, sending: true),
            items: [item(1, at: due)], kept: true),
        Case(
            name: "never handed to the relay", row: row(3, item: 1, at: due), items: [item(1, at: due)], kept: false),
        Case(
            name: "its step was stored (the item moved on)", row: row(3, item: 1, at: due, received: 9),
            items: [item(1, at: t0 + 60)], kept: false),
        Case(
            name: "its item was cancelled", row: row(3, item: 1, at: due, sending: true), items: [], kept: false),
        Case(
            name: "not due yet", row: row(3, item: 1, at: t0 + 5, sending: true), items: [item(1, at: t0 + 5)],
            kept: false),
    ]

    @Test(arguments: cases) func aPreparedRowIsAnOccurrenceOnlyWhenItWasSentBeforeItsStepWasStored(_ c: Case) {
        let ordinary = Self.row(1, item: 2, at: Self.t0 - 60, prepared: false)
        let (rows, taken) = Daemon.outbox([ordinary, c.row], items: c.items, now: Self.t0)
        if c.kept {
            var kept = c.row
            kept.prepared = false
            #expect(rows == [ordinary, kept])
            #expect(taken == [c.row.itemID: c.row.occurrence])
        } else {
            #expect(rows == [ordinary])
            #expect(taken.isEmpty)
        }
    }
}
