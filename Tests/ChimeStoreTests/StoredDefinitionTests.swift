import ChimeCore
import Foundation
import GRDB
import Testing

@testable import ChimeStore

/// Items are read at start without decoding their definitions: what a step needs comes from columns,
/// the definition is kept as stored, and a checksum finds rows changed by anything but chimed.
@Suite struct StoredDefinitionTests {
    let utc = Zone(identifier: "UTC")!
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    func item(_ id: UInt64, _ summary: String, at offset: TimeInterval) -> ScheduledItem {
        ScheduledItem(id: id, content: NotificationContent(summary: summary), fireDate: t0 + offset)
    }

    /// The rows of a database as the earlier version read them: plain JSON, decoded whole.
    struct EarlierRow {
        var id: UInt64
        var fireAtUsec: Int64
        var entry: TimelineEntry
        var recurrence: Recurrence?
        var state: EntryState
        var finished: String?
    }

    func earlierRows(_ path: String) throws -> [EarlierRow] {
        let decoder = JSONDecoder()
        return try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(
                db, sql: "SELECT id, fireAtUsec, entry, recurrence, entryState, finishReason FROM item ORDER BY id"
            ).map { row in
                let rule: String? = row[3]
                return EarlierRow(
                    id: UInt64(row[0] as Int64), fireAtUsec: row[1],
                    entry: try decoder.decode(TimelineEntry.self, from: Data((row[2] as String).utf8)),
                    recurrence: try rule.map { try decoder.decode(Recurrence.self, from: Data($0.utf8)) },
                    state: try decoder.decode(EntryState.self, from: Data((row[4] as String).utf8)), finished: row[5])
            }
        }
    }

    /// A database written by the previous version (schema v10, its rows' definitions and states as JSON)
    /// opens, and every item keeps its definition, rule, state and next occurrences.
    @Test func aVersionTenDatabaseIsMigratedWithNothingLost() throws {
        let path = ScheduleStoreTests.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let dump = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Databases/v10.sql"), encoding: .utf8)
        try DatabaseQueue(path: path).inDatabase { try $0.execute(sql: dump) }
        let before = try earlierRows(path)
        // The fixture has what the migration must carry: repeating and one-off items, a pool's place, a
        // count, an end date, a finished entry.
        #expect(before.count == 11)
        #expect(before.contains { !$0.state.poolBag.isEmpty && $0.state.occurrences > 1 })
        #expect(before.contains { $0.finished == "count-reached" })
        #expect(before.contains { $0.entry.endDate != nil } && before.contains { $0.entry.maximumOccurrences != nil })

        let store = try ScheduleStore(path: path)
        let state = try store.load()
        #expect(state.setAside == 0)
        #expect(state.outbox.count == 7)
        let items = state.items.sorted { $0.id < $1.id }
        #expect(items.map(\.id) == before.map(\.id))
        // Items are held without their definitions (`EntryDefinition.released`), read from their rows.
        #expect(items.allSatisfy { !$0.definition.isResident })
        let entries = try store.entries(of: items.map(\.id))
        for (item, old) in zip(items, before) {
            #expect(entries[item.id] == old.entry, "item \(old.id)")
            #expect(item.definition.fingerprint == EntryDefinition(old.entry).fingerprint, "item \(old.id)")
            #expect(item.recurrence == old.recurrence, "item \(old.id)")
            #expect(item.state == old.state, "item \(old.id)")
            #expect(item.finished?.rawValue == old.finished, "item \(old.id)")
            #expect(Time.usec(item.fireDate) == old.fireAtUsec, "item \(old.id)")
            #expect(item.entryID == old.entry.id && item.endDate == old.entry.endDate)
            #expect(item.maximumOccurrences == old.entry.maximumOccurrences)
            #expect(item.definition.contentBytes == old.entry.content.byteSize)
            // No entry of that time wakes the machine; its checksum stays right without the new column.
            #expect(!item.definition.wakes)
            // The same next occurrences as the item the earlier version read.
            let earlier = ScheduledItem(
                id: old.id, entry: old.entry, recurrence: old.recurrence, fireDate: item.fireDate, state: old.state)
            #expect(
                item.occurrencesAfterPending(count: 20, systemTimeZone: utc)
                    == earlier.occurrencesAfterPending(count: 20, systemTimeZone: utc), "item \(old.id)")
        }
        // The migrated rows are read the same way again, and the history still names each item.
        #expect(try ScheduleStore(path: path).load().items == state.items)
        #expect(try store.history(HistoryQuery()).allSatisfy { !$0.summary.isEmpty })
    }

    /// A row whose definition was edited by hand, still valid JSON, no longer matches its checksum: it is
    /// set aside at start instead of delivering something chimed did not store.
    @Test func aDefinitionChangedOutsideChimedIsSetAside() throws {
        let path = ScheduleStoreTests.temporaryPath()
        let store = try ScheduleStore(path: path)
        for id: UInt64 in 1...3 { try store.insert(item(id, "n\(id)", at: 60), now: t0) }
        try store.write { db in
            try db.execute(sql: "UPDATE item SET entry = replace(entry, 'n2', 'edited') WHERE id = 2")
            try db.execute(sql: "UPDATE item SET endUsec = 1 WHERE id = 3")
        }
        let state = try store.load()
        #expect(state.items.map(\.id) == [1])
        #expect(state.setAsideNow.count == 2)
        #expect(state.setAsideNow.allSatisfy { $0.contains("checksum") })
    }

    /// A database of the version before the wake column (v14) opens with every item not waking the
    /// machine, and each row keeps its checksum: nothing is set aside.
    @Test func aVersionFourteenDatabaseMigratesWithNoItemWaking() throws {
        let (path, queue) = try database(migratedTo: "v14: what a snooze brings back")
        // Rows as the v14 chimed wrote them: its columns and checksum, without `wake`.
        try queue.write { db in
            for id: UInt64 in 1...3 { try insertAsJSON(item(id, "n\(id)", at: 60 * Double(id)), db) }
        }
        let state = try ScheduleStore(path: path).load()
        #expect(state.setAside == 0)
        #expect(state.items.count == 3 && state.items.allSatisfy { !$0.definition.wakes })
        let columns = try queue.read { db in try db.columns(in: "item").map(\.name) }
        #expect(columns.contains("wake"))
    }

    /// A new database file with the schema of an earlier version: the migrations up to `version`.
    func database(migratedTo version: String) throws -> (String, DatabaseQueue) {
        let path = ScheduleStoreTests.temporaryPath()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: path)
        try StoreMigrations.migrator.migrate(queue, upTo: version)
        return (path, queue)
    }

    /// Inserts an item's row as chimed wrote it before definitions were binary (schema v11 to v15): the
    /// entry and rule as JSON text, the checksum over that text. `entry` replaces the entry's JSON.
    func insertAsJSON(_ stored: ScheduledItem, _ db: Database, entry: String? = nil) throws {
        let json = DefinitionCoding.encodeJSON(stored.entry)
        let rule = stored.recurrence.map(DefinitionCoding.encodeJSON)
        let end = stored.endDate.map(Time.usec)
        let maximum = stored.maximumOccurrences.map { Int64($0) }
        let bytes = Int64(stored.definition.contentBytes)
        let check = ScheduleStore.definitionCheck(
            entryFingerprint: EntryDefinition.fingerprint(of: Array(json.utf8)),
            recurrence: rule.map { Array($0.utf8) },
            entryID: stored.entryID, end: end, maximum: maximum, bytes: bytes, wakes: false)
        try db.execute(
            sql: """
                INSERT INTO item (entry, recurrence, endUsec, maxOccurrences, contentBytes, definitionCheck, id, owner,
                    entryID, fireAtUsec, summary, state, createdUsec)
                VALUES (?, ?, ?, ?, ?, ?, ?, 'app', ?, ?, ?, 'pending', 0)
                """,
            arguments: [
                entry ?? json, rule, end, maximum, bytes, check, Int64(stored.id), stored.entryID,
                Time.usec(stored.fireDate), stored.content.summary,
            ])
    }

    /// A database of the version before binary definitions (v15, entries and rules as JSON) opens with
    /// every intact row's definitions in the binary encoding and read back as they were, each under a new
    /// checksum; a row edited outside chimed, and one whose JSON does not decode, are set aside.
    @Test func aVersionFifteenDatabaseMovesItsDefinitionsToTheBinaryEncoding() throws {
        let (path, queue) = try database(migratedTo: "v15: items that wake the machine")
        var once = item(1, "once", at: 60)
        once.entry.endDate = t0 + 3_600
        once.entry.maximumOccurrences = 1
        once.entry.category = "c"
        let rule = WrittenRule.rrule("FREQ=DAILY;BYHOUR=9", dtstart: nil)
        let repeating = ScheduledItem(
            id: 2,
            entry: TimelineEntry(
                id: "daily", trigger: .rule(rule, timeZone: "Europe/Berlin"),
                content: .fixed(NotificationContent(summary: "daily"))),
            recurrence: try Recurrence.parse(rule, now: t0, timeZone: .named("Europe/Berlin"), systemTimeZone: utc),
            fireDate: t0 + 120)
        let kept = [once, repeating]
        try queue.write { db in
            for stored in kept { try insertAsJSON(stored, db) }
            try insertAsJSON(item(3, "edited", at: 60), db)
            try db.execute(sql: "UPDATE item SET entry = replace(entry, 'edited', 'changed') WHERE id = 3")
            // Valid JSON under a right checksum, but not an entry.
            let broken = item(4, "broken", at: 60)
            try insertAsJSON(broken, db, entry: #"{"id":"x"}"#)
        }
        try queue.close()
        let store = try ScheduleStore(path: path)
        let state = try store.load()
        #expect(state.items.map(\.id).sorted() == [1, 2])
        #expect(state.setAside == 2 && state.setAsideNow.allSatisfy { $0.contains("checksum") })
        let entries = try store.entries(of: [1, 2])
        for stored in kept {
            let loaded = try #require(state.items.first { $0.id == stored.id })
            #expect(entries[stored.id] == stored.entry)
            #expect(loaded.definition.fingerprint == stored.definition.fingerprint)
            #expect(loaded.recurrence == stored.recurrence)
        }
        let columns = try DatabaseQueue(path: path).read { db in
            try Row.fetchAll(
                db, sql: "SELECT typeof(entry), typeof(recurrence), hex(substr(entry, 1, 1)) FROM item ORDER BY id")
        }
        #expect(columns.map { $0[0] as String } == ["blob", "blob"])
        #expect(columns.map { $0[1] as String } == ["null", "blob"])
        #expect(columns.allSatisfy { $0[2] as String == "01" })
    }

    /// An item that wakes the machine reads back as one, from its column; the row's checksum covers the
    /// column, so a row whose flag was changed outside chimed is set aside.
    @Test func theWakeFlagIsStoredInItsColumnUnderTheChecksum() throws {
        let path = ScheduleStoreTests.temporaryPath()
        let store = try ScheduleStore(path: path)
        var waking = item(1, "wake", at: 60)
        waking.entry.wake = true
        try store.insert(waking, now: t0)
        try store.insert(item(2, "plain", at: 60), now: t0)
        try store.insert(item(3, "flipped", at: 60), now: t0)
        let loaded = try store.load().items.sorted { $0.id < $1.id }
        #expect(loaded.map(\.definition.wakes) == [true, false, false])
        #expect(try store.entries(of: [1])[1]?.wake == true)
        try store.write { db in try db.execute(sql: "UPDATE item SET wake = 1 WHERE id = 3") }
        let state = try store.load()
        #expect(state.items.map(\.id).sorted() == [1, 2])
        #expect(state.setAsideNow.count == 1 && state.setAsideNow.allSatisfy { $0.contains("checksum") })
    }

    /// An item read from the store holds its definition's fingerprint, not the definition, and equals the
    /// item stored; its entry is read from its row.
    @Test func aStoredItemReadsAsTheItemStoredWithoutCarryingItsDefinition() throws {
        let store = try ScheduleStore(path: ScheduleStoreTests.temporaryPath())
        var stored = try ScheduleStoreTests().groupItem(7, entry: "quote")
        stored.state = EntryState(occurrences: 3, lastFired: t0, poolPosition: 2, poolBag: [4, 1])
        try store.insert(stored, now: t0)
        let loaded = try #require(try store.load().items.first)
        #expect(loaded.definition.decodedEntry == nil && loaded.definition.encoded == nil)
        #expect(loaded == stored)
        #expect(try store.entries(of: [7]) == [7: stored.entry] && loaded.recurrence == stored.recurrence)
        // A row that went has no entry; a row edited after start reads as unreadable, not as the edit.
        #expect(try store.entries(of: [8]).isEmpty)
        try store.write { db in
            try db.execute(sql: "UPDATE item SET entry = replace(entry, 'quote', 'edited') WHERE id = 7")
        }
        #expect(
            try store.entries(of: [7])[7]?.content.base.summary
                == EntryDefinition.unreadable(id: "", endDate: nil, maximumOccurrences: nil).content.base.summary)
        #expect(loaded.state == stored.state)
    }

    /// Equal entries encode to equal bytes, whatever order their dictionaries were filled in, so a
    /// reschedule compares definitions without decoding them.
    @Test func equalEntriesEncodeEqually() {
        var a = NotificationContent(summary: "s")
        var b = NotificationContent(summary: "s")
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { a.userInfo[key] = .string(key) }
        for key in keys.reversed() { b.userInfo[key] = .string(key) }
        for key in keys { a.hints[key] = .int(1) }
        for key in keys.shuffled() { b.hints[key] = .int(1) }
        let first = EntryDefinition(TimelineEntry(id: "e", trigger: .at(t0), content: .fixed(a)))
        let second = EntryDefinition(TimelineEntry(id: "e", trigger: .at(t0), content: .fixed(b)))
        #expect(first.encoded == second.encoded)
        #expect(first.compact == second)
    }

    /// A hint NaN or infinite, which JSON cannot hold, is stored and read back rather than refused.
    @Test func numbersJSONCannotHoldAreKept() throws {
        var content = NotificationContent(summary: "s")
        content.hints["x-nan"] = .double(.nan)
        content.hints["x-inf"] = .double(.infinity)
        let definition = EntryDefinition(TimelineEntry(id: "e", trigger: .at(t0), content: .fixed(content)))
        let read = try definition.compact.decode().content.base.hints
        guard case .double(let nan)? = read["x-nan"], case .double(let infinity)? = read["x-inf"] else {
            Issue.record("hints lost: \(read)")
            return
        }
        #expect(nan.isNaN && infinity == .infinity)
    }
}
