import ChimeCore
import Foundation
import GRDB
import Testing

@testable import ChimeStore

/// What keeps the store small, private and readable: rows of items that are over deleted, history
/// pruned, space given back, private files, a complete file after a checkpoint, unreadable rows set aside.
extension ScheduleStoreTests {
    func itemRows(_ store: ScheduleStore) throws -> [Int64] {
        try store.read { try Int64.fetchAll($0, sql: "SELECT id FROM item ORDER BY id") }
    }

    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test func rowsOfCancelledFinishedAndRemovedItemsAreDeletedAndTheirHistoryStays() throws {
        let store = try ScheduleStore()
        try store.insert(item(1, "cancelled", at: 10), now: t0)
        var once = item(2, "finished", at: 0)
        try store.insert(once, now: t0)
        let key = GroupKey(owner: "org.example.App", id: "g")
        let a = try groupItem(3, entry: "a")
        var b = try groupItem(4, entry: "b")
        try store.replaceGroup(
            ReschedulePlan(
                group: TimelineGroup(id: "g", owner: key.owner, entries: [a.entry, b.entry]),
                changes: [
                    EntryChange(entryID: "a", kind: .added, before: nil, after: a.fireDate),
                    EntryChange(entryID: "b", kind: .added, before: nil, after: b.fireDate),
                ], upserts: [a, b], removed: []), source: .api, now: t0)
        #expect(try store.cancel(1, now: t0 + 1))
        once.finished = .lastOccurrence
        b.finished = .lastOccurrence
        _ = try store.commit(StepRecord(finished: [once, b]), now: t0 + 2)
        try store.replaceGroup(
            ReschedulePlan(
                group: TimelineGroup(id: "g", owner: key.owner, entries: [b.entry]),
                changes: [EntryChange(entryID: "a", kind: .removed, before: a.fireDate, after: nil)], upserts: [],
                removed: [3]), source: .api, now: t0 + 3)
        // A group's finished entry stays while it is in the group: a reschedule must know it is done.
        #expect(try itemRows(store) == [4])
        #expect(try store.load().items == [b])
        #expect(try store.removeGroup(key, now: t0 + 4))
        #expect(try itemRows(store).isEmpty)
        #expect(try store.history(HistoryQuery(itemID: 1)).map(\.event) == [.cancelled, .scheduled])
        #expect(try store.history(HistoryQuery(itemID: 1)).first?.summary == "cancelled")
        #expect(try store.history(HistoryQuery(itemID: 2)).map(\.event) == [.finished, .scheduled])
        #expect(try store.history(HistoryQuery(itemID: 3)).map(\.event) == [.removed, .scheduled])
        let last = try store.history(HistoryQuery(itemID: 4))
        #expect(last.map(\.event) == [.removed, .finished, .scheduled])
        #expect(last.first?.group == key)
        #expect(last.first?.entryID == "b")
    }

    /// A single item's row goes when it finishes, usually before its last occurrence is delivered: the
    /// records after that still name its app and summary.
    @Test func aRecordAfterTheRowWentNamesTheItemsOwnerAndSummary() throws {
        let store = try ScheduleStore()
        var once = item(1, "tea", at: 0)
        once.owner = "org.example.App"
        try store.insert(once, now: t0)
        once.finished = .lastOccurrence
        let rows = try store.commit(
            StepRecord(
                finished: [once],
                outbox: [
                    OutboxRecord(
                        itemID: 1, owner: once.owner, group: nil, occurrence: t0, number: 1, late: false,
                        content: once.content)
                ]), now: t0)
        #expect(try itemRows(store).isEmpty)
        try store.delivered(rows, notificationID: 7, digest: nil, shown: nil, now: t0 + 1)
        let history = try store.history(HistoryQuery(owner: "org.example.App"))
        #expect(history.map(\.event) == [.delivered, .finished, .scheduled])
        #expect(history.first?.summary == "tea")
    }

    @Test func idsOfDeletedRowsAreNeverGivenAgainAfterARestart() throws {
        let path = Self.temporaryPath()
        do {
            let store = try ScheduleStore(path: path)
            try store.insert(item(7, "a", at: 10), now: t0)
            try store.insert(item(9, "b", at: 10), now: t0)
            #expect(try store.cancel(9, now: t0))
            #expect(try store.cancel(7, now: t0))
            #expect(try itemRows(store).isEmpty)
        }
        #expect(try ScheduleStore(path: path).load().largestItemID == 9)
    }

    @Test func historyIsPrunedByCountAsItGrows() throws {
        let store = try ScheduleStore(historyLimits: HistoryLimits(maximumEntries: 100))
        for n in 1...999 { try store.recordAction(itemID: 1, key: "k\(n)", outcome: "ok", now: t0) }
        // Pruned every thousand records, not at each.
        #expect(try store.history(HistoryQuery(limit: 2000)).count == 999)
        try store.recordAction(itemID: 1, key: "k1000", outcome: "ok", now: t0)
        let kept = try store.history(HistoryQuery(limit: 2000))
        #expect(kept.count == 100)
        #expect(kept.first?.detail == "k1000: ok")
        #expect(kept.last?.detail == "k901: ok")
    }

    /// A group stored whole writes a record an entry, and history is pruned after them all: its records
    /// passed two multiples of the prune interval, and history ends within its limit, the group's newest
    /// kept (pruned at each multiple instead, the 500 after the last stayed beyond it).
    @Test func aLargeGroupsRecordsLeaveHistoryWithinItsLimit() throws {
        let store = try ScheduleStore(historyLimits: HistoryLimits(maximumEntries: 100))
        let owner = "org.example.App"
        let entries = (0..<2_500).map { n in
            TimelineEntry(
                id: "e\(n)", trigger: .at(t0 + Double(n + 1) * 60),
                content: .fixed(NotificationContent(summary: "entry \(n)")))
        }
        let items = entries.enumerated().map { n, entry in
            ScheduledItem(
                id: UInt64(n + 1), owner: owner, groupID: "big", entry: entry, recurrence: nil,
                fireDate: t0 + Double(n + 1) * 60)
        }
        try store.replaceGroup(
            ReschedulePlan(
                group: TimelineGroup(id: "big", owner: owner, entries: entries),
                changes: entries.map { EntryChange(entryID: $0.id, kind: .added, before: nil, after: nil) },
                upserts: items, removed: []), source: .api, now: t0)
        let kept = try store.history(HistoryQuery(limit: 2000))
        #expect(kept.count == 100)
        #expect(kept.map(\.itemID) == Array((2_401...2_500).reversed()))
    }

    /// History beyond its count is pruned in fair shares: an app that floods it loses its own oldest
    /// entries, while another app's few entries all stay.
    @Test func oneAppsFloodOfHistoryPrunesOnlyItsOwnEntries() throws {
        let store = try ScheduleStore(historyLimits: HistoryLimits(maximumEntries: 100))
        var quiet = item(1, "quiet", at: 10)
        quiet.owner = "org.example.Quiet"
        var loud = item(2, "loud", at: 10)
        loud.owner = "org.example.Loud"
        try store.insert(quiet, now: t0)
        try store.insert(loud, now: t0)
        for n in 1...30 { try store.recordAction(itemID: 1, key: "q\(n)", outcome: "ok", now: t0) }
        for n in 1...1968 { try store.recordAction(itemID: 2, key: "l\(n)", outcome: "ok", now: t0) }
        // 2,000 records: pruned at the thousandth and the two thousandth.
        let quietKept = try store.history(HistoryQuery(limit: 2000, owner: "org.example.Quiet"))
        #expect(quietKept.count == 31)
        let loudKept = try store.history(HistoryQuery(limit: 2000, owner: "org.example.Loud"))
        // The quiet app keeps its 31; the loud one the 69 left of 100.
        #expect(loudKept.count == 69)
        #expect(loudKept.first?.detail == "l1968: ok")
        #expect(ScheduleStore.fairShare([31, 1969], total: 100) == 69)
        #expect(ScheduleStore.fairShare([10, 20], total: 100) == nil)
        #expect(ScheduleStore.fairShare([60, 60, 5], total: 100) == 47)
    }

    @Test func historyIsPrunedByAgeAsItGrows() throws {
        let store = try ScheduleStore(historyLimits: HistoryLimits(maximumAge: 86_400))
        for n in 1...500 { try store.recordAction(itemID: 1, key: "old\(n)", outcome: "ok", now: t0 - 2 * 86_400) }
        for n in 1...499 { try store.recordAction(itemID: 1, key: "new\(n)", outcome: "ok", now: t0 - 3600) }
        #expect(try store.history(HistoryQuery(limit: 2000)).count == 999)
        try store.recordAction(itemID: 1, key: "now", outcome: "ok", now: t0)
        let kept = try store.history(HistoryQuery(limit: 2000))
        #expect(kept.count == 500)
        #expect(kept.allSatisfy { $0.date >= t0 - 86_400 })
    }

    /// Not at open, which would delay a start: by the upkeep chimed runs once it is ready.
    @Test func historyOlderThanItsMaximumAgeIsPrunedByTheUpkeepAfterStart() throws {
        let path = Self.temporaryPath()
        let now = Date()
        do {
            let store = try ScheduleStore(path: path)
            try store.recordAction(itemID: 1, key: "old", outcome: "ok", now: now - 100 * 86_400)
            try store.recordAction(itemID: 1, key: "recent", outcome: "ok", now: now - 86_400)
        }
        let reopened = try ScheduleStore(path: path)
        #expect(try reopened.history(HistoryQuery()).count == 2)
        try reopened.upkeep(now: now)
        #expect(try reopened.history(HistoryQuery()).map(\.detail) == ["recent: ok"])
        let shorter = try ScheduleStore(path: path, historyLimits: HistoryLimits(maximumAge: 3600))
        try shorter.upkeep(now: now)
        #expect(try shorter.history(HistoryQuery()).isEmpty)
    }

    /// Items of 60 KB each: 200 of them make a 12 MB file, which shrinks once they are cancelled.
    @Test func aNewDatabaseGivesSpaceBackAfterDeletions() throws {
        let path = Self.temporaryPath()
        let store = try ScheduleStore(path: path)
        #expect(try store.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 2)  // INCREMENTAL
        let body = String(repeating: "x", count: 60_000)
        for id: UInt64 in 1...200 {
            try store.insert(
                ScheduledItem(id: id, content: NotificationContent(summary: "big \(id)", body: body), fireDate: t0),
                now: t0)
        }
        try store.checkpoint()
        #expect(fileSize(path) > 10_000_000)
        for id: UInt64 in 1...200 { #expect(try store.cancel(id, now: t0)) }
        try store.checkpoint()
        #expect(fileSize(path) < 2_000_000)
    }

    @Test func anOlderDatabaseIsConvertedToIncrementalAutoVacuum() throws {
        let path = Self.temporaryPath()
        do {
            let store = try ScheduleStore(path: path)
            try store.insert(item(1, "kept", at: 60), now: t0)
        }
        // As every database before this version was made.
        let old = try DatabaseQueue(path: path)
        try old.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA auto_vacuum = NONE; VACUUM") }
        #expect(try old.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 0)
        try old.close()
        let store = try ScheduleStore(path: path)
        #expect(try store.read { try Int.fetchOne($0, sql: "PRAGMA auto_vacuum") } == 2)
        #expect(try store.load().items == [item(1, "kept", at: 60)])
    }

    @Test func theStateFolderAndEveryFileInItArePrivateWhateverTheUmask() throws {
        let path = Self.temporaryPath()
        let directory = (path as NSString).deletingLastPathComponent
        let umaskBefore = umask(0o022)
        defer { umask(umaskBefore) }
        // A folder and a relay lock left by an older chimed, readable by everyone.
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        #expect(
            FileManager.default.createFile(
                atPath: path + ".relay-lock", contents: nil, attributes: [.posixPermissions: 0o644]))
        let store = try ScheduleStore(path: path)
        try store.insert(item(1, "private", at: 60), now: t0)
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int
        }
        #expect(mode(directory) == 0o700)
        for file in [path, path + "-wal", path + "-shm", path + ".relay-lock"] {
            #expect(mode(file) == 0o600, "\(file)")
        }
    }

    @Test func aCheckpointLeavesEverythingInTheDatabaseFileAlone() throws {
        let path = Self.temporaryPath()
        let store = try ScheduleStore(path: path)
        try store.insert(item(1, "kept", at: 60), now: t0)
        try store.checkpoint()
        #expect(fileSize(path + "-wal") == 0)
        // A backup that copies only the database file.
        let copy = Self.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (copy as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        #expect(try ScheduleStore(path: copy).load().items == [item(1, "kept", at: 60)])
    }

    @Test func storedRowsThatCannotBeReadAreSetAsideAndTheRestLoads() throws {
        let path = Self.temporaryPath()
        do {
            let store = try ScheduleStore(path: path)
            for id: UInt64 in 1...3 { try store.insert(item(id, "n\(id)", at: 60), now: t0) }
            _ = try store.commit(
                StepRecord(outbox: [
                    OutboxRecord(
                        itemID: 1, group: nil, occurrence: t0, number: 1, late: false,
                        content: item(1, "n1", at: 0).content)
                ]), now: t0)
            try store.write { db in
                try db.execute(sql: "UPDATE item SET fireAtUsec = 9223372036854775807 WHERE id = 2")
                try db.execute(sql: "UPDATE item SET entry = '{broken' WHERE id = 3")
                try db.execute(sql: "UPDATE outbox SET occurrenceUsec = -1")
                try db.execute(sql: "INSERT INTO appConsent (app, consent, updatedUsec) VALUES ('x', 'maybe', 0)")
            }
            let state = try store.load()
            #expect(state.items.map(\.id) == [1])
            #expect(state.outbox.isEmpty && state.consents.isEmpty)
            #expect(state.setAside == 4)
            #expect(state.setAsideNow.count == 4)
            #expect(state.largestItemID == 3)
            let kept = try store.read {
                try Row.fetchAll($0, sql: "SELECT tableName, content, reason FROM set_aside ORDER BY seq")
            }
            #expect(kept.map { $0["tableName"] as String }.sorted() == ["appConsent", "item", "item", "outbox"])
            let contents = kept.map { $0["content"] as String }
            #expect(contents.contains { $0.contains("\"fireAtUsec\":9223372036854775807") })
            #expect(contents.contains { $0.contains("\"entry\":\"{broken\"") })
        }
        // Kept across a restart, and set aside only once.
        let again = try ScheduleStore(path: path).load()
        #expect(again.items.map(\.id) == [1])
        #expect(again.setAside == 4)
        #expect(again.setAsideNow.isEmpty)
    }

    @Test func timesBeyondWhatTheStoreHoldsSaturateInsteadOfTrapping() throws {
        #expect(Time.usec(Date(timeIntervalSince1970: 1e300)) == .max)
        #expect(Time.usec(Date(timeIntervalSince1970: -1e300)) == .min)
        #expect(Time.usec(Date(timeIntervalSince1970: .nan)) == 0)
        let store = try ScheduleStore()
        try store.insert(item(1, "a", at: 0), now: t0)
        #expect(try store.history(HistoryQuery(itemID: .max, since: Date(timeIntervalSince1970: 1e17))).isEmpty)
    }

    @Test func atMostAThousandActionsAreKeptForOneAppAndTheOldestGo() throws {
        let store = try ScheduleStore()
        for n: UInt64 in 1...1005 {
            _ = try store.queue(
                PendingAction(owner: "app", itemID: n, group: nil, entryID: nil, key: "k", userInfo: [:], date: t0))
        }
        _ = try store.queue(
            PendingAction(owner: "other", itemID: 1, group: nil, entryID: nil, key: "k", userInfo: [:], date: t0))
        let kept = try store.takeActions(owner: "app", now: t0).actions
        #expect(kept.count == ScheduleStore.keptActionsLimit)
        #expect(kept.first?.itemID == 6)
        #expect(kept.last?.itemID == 1005)
        #expect(try store.takeActions(owner: "other", now: t0).actions.count == 1)
    }
}
