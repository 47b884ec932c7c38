import ChimeCore
import Foundation
import GRDB
import Testing

@testable import ChimeStore

/// Items and history records refer to their app and group by reference (`appName`, `groupName`): a
/// name is stored once, and forgotten when no row refers to it any more.
@Suite struct StoredNamesTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func item(_ id: UInt64, owner: String, group: String?) -> ScheduledItem {
        var item = ScheduledItem(
            id: id, content: NotificationContent(summary: "item \(id)"), fireDate: t0 + Double(id) * 60)
        item.owner = owner
        item.groupID = group
        return item
    }

    func names(_ path: String) throws -> (apps: [String], groups: [String]) {
        try DatabaseQueue(path: path).read { db in
            (
                try String.fetchAll(db, sql: "SELECT name FROM appName ORDER BY name"),
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT a.name || '/' || g.name FROM groupName g JOIN appName a ON a.ref = g.appRef
                        ORDER BY 1
                        """)
            )
        }
    }

    /// A database of the version before (owners and groups as names on every row) opens with each item
    /// and record under its own owner and group, found by them, and each name stored once.
    @Test func aVersionSixteenDatabaseKeepsEveryItemsAndRecordsOwnerAndGroup() throws {
        let path = ScheduleStoreTests.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try StoreMigrations.migrator.migrate(queue, upTo: "v16: definitions in the binary encoding")
        // The same group id for two apps, and the user's own item (owner "").
        let items = [
            item(1, owner: "org.example.A", group: nil), item(2, owner: "org.example.A", group: "g"),
            item(3, owner: "org.example.A", group: "g"), item(4, owner: "org.example.B", group: "g"),
            item(5, owner: "", group: nil),
        ]
        try queue.write { db in
            for item in items {
                try db.execute(
                    sql: """
                        INSERT INTO item (entry, recurrence, entryState, endUsec, maxOccurrences, contentBytes,
                            occurrences, lastFiredUsec, definitionCheck, id, owner, groupID, entryID, fireAtUsec,
                            summary, state, createdUsec)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0)
                        """,
                    arguments: ScheduleStore.definitionValues(item, encoded: try #require(item.definition.encoded))
                        + [
                            Int64(item.id), item.owner, item.groupID, item.entryID, Time.usec(item.fireDate),
                            item.content.summary,
                        ])
                try db.execute(
                    sql: """
                        INSERT INTO history (itemID, atUsec, event, detail, owner, groupID, entryID, summary)
                        VALUES (?, ?, 'scheduled', NULL, ?, ?, ?, ?)
                        """,
                    arguments: [
                        Int64(item.id), Time.usec(t0), item.owner, item.groupID,
                        item.groupID == nil ? nil : item.entryID, item.content.summary,
                    ])
            }
            // A record of an item chimed knew nothing of, and one of an app and group with no item left.
            try db.execute(
                sql: "INSERT INTO history (itemID, atUsec, event, detail) VALUES (9, ?, 'action', 'k: ok')",
                arguments: [Time.usec(t0)])
            try db.execute(
                sql: """
                    INSERT INTO history (itemID, atUsec, event, detail, owner, groupID, entryID, summary)
                    VALUES (8, ?, 'removed', NULL, 'org.example.Gone', 'old', 'e', 'gone')
                    """, arguments: [Time.usec(t0)])
        }
        try queue.close()

        let store = try ScheduleStore(path: path)
        let state = try store.load()
        #expect(state.setAside == 0)
        func described(_ items: [ScheduledItem]) -> [String] {
            items.map { "\($0.id) \($0.owner)/\($0.groupID ?? "-")" }
        }
        #expect(described(state.items) == described(items))
        func historyItems(_ query: HistoryQuery) throws -> [UInt64] { try store.history(query).map(\.itemID) }
        #expect(try historyItems(HistoryQuery(owner: "org.example.A")) == [3, 2, 1])
        #expect(try historyItems(HistoryQuery(group: GroupKey(owner: "org.example.B", id: "g"))) == [4])
        #expect(try historyItems(HistoryQuery(group: GroupKey(owner: "org.example.A", id: "g"))) == [3, 2])
        #expect(try historyItems(HistoryQuery(owner: "")) == [5])
        #expect(try historyItems(HistoryQuery(group: GroupKey(owner: "org.example.Gone", id: "old"))) == [8])
        let everything = try store.history(HistoryQuery())
        #expect(everything.map(\.itemID) == [8, 9, 5, 4, 3, 2, 1])
        #expect(
            everything.map(\.owner) == [
                "org.example.Gone", "", "", "org.example.B", "org.example.A", "org.example.A", "org.example.A",
            ])
        #expect(everything.map(\.group?.id) == ["old", nil, nil, "g", "g", "g", nil])

        func pending(owner: String?, group: String?) throws -> [UInt64] {
            try store.pendingPage(PendingPageQuery(owner: owner, group: group, until: nil, after: nil, limit: 10)) {
                $0.map(\.0.id)
            }
        }
        #expect(try pending(owner: nil, group: nil) == [1, 2, 3, 4, 5])
        #expect(try pending(owner: "org.example.A", group: nil) == [1, 2, 3])
        #expect(try pending(owner: "org.example.A", group: "g") == [2, 3])
        #expect(try pending(owner: nil, group: "g") == [2, 3, 4])
        #expect(try pending(owner: "org.example.C", group: nil) == [])

        let columns = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('item')")
        }
        #expect(!columns.contains("owner") && !columns.contains("groupID"))
        #expect(try names(path).apps == ["", "org.example.A", "org.example.B", "org.example.Gone"])
        #expect(try names(path).groups == ["org.example.A/g", "org.example.B/g", "org.example.Gone/old"])
        // A new item of a known app and group stores no name again.
        try store.insert(item(6, owner: "org.example.B", group: "g"), now: t0)
        #expect(try names(path).groups == ["org.example.A/g", "org.example.B/g", "org.example.Gone/old"])
        #expect(try store.load().items.last.map { "\($0.owner)/\($0.groupID ?? "-")" } == "org.example.B/g")
    }

    /// A group's name goes with the last record of it, when its items went before; a name an item still
    /// refers to stays when its records go.
    @Test func aNameIsForgottenWhenNoItemOrRecordRefersToIt() throws {
        let path = ScheduleStoreTests.temporaryPath()
        let old = t0 - 100 * 86_400
        let store = try ScheduleStore(path: path)
        for (n, key) in [GroupKey(owner: "org.example.Gone", id: "g"), GroupKey(owner: "org.example.Kept", id: "k")]
            .enumerated()
        {
            let member = item(UInt64(n + 1), owner: key.owner, group: key.id)
            try store.replaceGroup(
                ReschedulePlan(
                    group: TimelineGroup(id: key.id, owner: key.owner, entries: [member.entry]),
                    changes: [EntryChange(entryID: member.entryID, kind: .added, before: nil, after: member.fireDate)],
                    upserts: [member], removed: []), source: .api, now: old)
        }
        #expect(try store.removeGroup(GroupKey(owner: "org.example.Gone", id: "g"), now: old))
        // Its records are all that refers to it now.
        #expect(try names(path).groups == ["org.example.Gone/g", "org.example.Kept/k"])
        try store.pruneHistory(now: t0)
        #expect(try store.history(HistoryQuery()).isEmpty)
        #expect(try names(path).apps == ["org.example.Kept"])
        #expect(try names(path).groups == ["org.example.Kept/k"])
        #expect(try store.load().items.map { "\($0.owner)/\($0.groupID ?? "-")" } == ["org.example.Kept/k"])
        // The app comes back: its name is stored again.
        try store.insert(item(3, owner: "org.example.Gone", group: nil), now: t0)
        #expect(try store.history(HistoryQuery(owner: "org.example.Gone")).map(\.itemID) == [3])
    }

    /// A row whose reference names nothing (changed outside chimed) is set aside with the reason, and the
    /// rest loads.
    @Test func anItemWhoseReferenceNamesNothingIsSetAside() throws {
        let path = ScheduleStoreTests.temporaryPath()
        let store = try ScheduleStore(path: path)
        try store.insert(item(1, owner: "org.example.A", group: nil), now: t0)
        try store.insert(item(2, owner: "org.example.A", group: nil), now: t0)
        try store.write { db in try db.execute(sql: "UPDATE item SET appRef = 999 WHERE id = 2") }
        let state = try store.load()
        #expect(state.items.map(\.id) == [1])
        #expect(state.setAsideNow == ["item row 2: appRef 999 names no app"])
    }

    /// The upkeep after a start forgets every name no row refers to (as a row set aside leaves them), and
    /// keeps those in use.
    @Test func theUpkeepForgetsEveryNameNoRowRefersTo() throws {
        let path = ScheduleStoreTests.temporaryPath()
        let store = try ScheduleStore(path: path)
        try store.insert(item(1, owner: "org.example.A", group: "g"), now: t0)
        try store.write { db in
            try db.execute(sql: "INSERT INTO appName (name) VALUES ('org.example.Orphan')")
            try db.execute(
                sql: "INSERT INTO groupName (appRef, name) VALUES (?, 'lost')", arguments: [db.lastInsertedRowID])
            try db.execute(
                sql:
                    "INSERT INTO groupName (appRef, name) SELECT ref, 'unused' FROM appName WHERE name = 'org.example.A'"
            )
        }
        #expect(try names(path).apps == ["org.example.A", "org.example.Orphan"])
        try store.upkeep(now: t0)
        #expect(try names(path).apps == ["org.example.A"])
        #expect(try names(path).groups == ["org.example.A/g"])
    }
}
