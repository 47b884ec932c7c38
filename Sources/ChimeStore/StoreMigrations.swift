import ChimeCore
import Foundation
import GRDB

/// The schema, as a sequence of migrations from the first version: a database written by any earlier
/// chimed opens and keeps everything it held.
enum StoreMigrations {
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
        migrator.registerMigration("v3: groups, entries, outbox, popups") { db in
            try db.alter(table: "item") { t in
                t.add(column: "owner", .text).notNull().defaults(to: "")
                t.add(column: "groupID", .text)
                t.add(column: "entryID", .text)
                t.add(column: "entry", .text)
                t.add(column: "entryState", .text)
                t.add(column: "finishReason", .text)
            }
            // Items of earlier versions stood on their own with fixed content.
            let rows = try Row.fetchAll(db, sql: "SELECT id, fireAtUsec, content, recurrence FROM item")
            for row in rows {
                let id = UInt64(row["id"] as Int64)
                let content = try Coding.decode(NotificationContent.self, row["content"])
                let fireDate = Time.date(row["fireAtUsec"])
                // The written rule was not kept; an item on its own never needs it (only group entries are
                // compared by their written triggers).
                let item = ScheduledItem(id: id, content: content, fireDate: fireDate)
                try db.execute(
                    sql: "UPDATE item SET entryID = ?, entry = ?, entryState = ? WHERE id = ?",
                    arguments: [
                        item.entry.id, try Coding.encode(item.entry), try Coding.encode(EntryState()), Int64(id),
                    ])
            }
            try db.execute(
                sql: "UPDATE item SET state = 'finished', finishReason = 'last-occurrence' WHERE state = 'delivered'")
            try db.create(index: "item_group", on: "item", columns: ["owner", "groupID"])
            try db.create(table: "timelineGroup") { t in
                t.column("owner", .text).notNull()
                t.column("id", .text).notNull()
                t.column("settings", .text).notNull()
                t.column("source", .text).notNull()
                t.column("createdUsec", .integer).notNull()
                t.column("updatedUsec", .integer).notNull()
                t.primaryKey(["owner", "id"])
            }
            try db.create(table: "outbox") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("kind", .text).notNull()
                t.column("itemID", .integer).notNull()
                t.column("owner", .text)
                t.column("groupID", .text)
                t.column("occurrenceUsec", .integer).notNull()
                t.column("number", .integer).notNull()
                t.column("late", .boolean).notNull()
                t.column("content", .text)
                t.column("source", .text)
                t.column("endUsec", .integer)
                t.column("createdUsec", .integer).notNull()
            }
            try db.create(table: "popup") { t in
                t.column("notificationID", .integer).primaryKey()
                t.column("itemID", .integer).notNull()
                t.column("untilUsec", .integer).notNull()
            }
            try db.alter(table: "history") { t in
                t.add(column: "owner", .text)
                t.add(column: "groupID", .text)
                t.add(column: "entryID", .text)
                t.add(column: "summary", .text)
            }
            try db.execute(
                sql: """
                    UPDATE history SET owner = '', summary = (SELECT json_extract(content, '$.summary') FROM item
                        WHERE item.id = history.itemID)
                    """)
            try db.create(index: "history_group", on: "history", columns: ["owner", "groupID", "seq"])
            try db.create(index: "history_item", on: "history", columns: ["itemID", "seq"])
        }
        migrator.registerMigration("v4: actions, categories, shown notifications") { db in
            try db.alter(table: "item") { t in
                t.add(column: "snoozeOf", .integer)
                t.add(column: "replacesID", .integer)
            }
            try db.alter(table: "outbox") { t in
                t.add(column: "category", .text)
                t.add(column: "replacesID", .integer)
            }
            try db.create(table: "shown") { t in
                t.column("notificationID", .integer).primaryKey()
                t.column("itemID", .integer).notNull()
                t.column("owner", .text).notNull()
                t.column("groupID", .text)
                t.column("entryID", .text)
                t.column("category", .text)
                t.column("content", .text)
                t.column("occurrenceUsec", .integer).notNull()
                t.column("untilUsec", .integer)
                t.column("shownUsec", .integer).notNull()
            }
            try db.execute(
                sql: """
                    INSERT INTO shown (notificationID, itemID, owner, occurrenceUsec, untilUsec, shownUsec)
                    SELECT notificationID, itemID, '', untilUsec, untilUsec, untilUsec FROM popup
                    """)
            try db.drop(table: "popup")
            try db.create(table: "category") { t in
                t.column("owner", .text).notNull()
                t.column("id", .text).notNull()
                t.column("definition", .text).notNull()
                t.primaryKey(["owner", "id"])
            }
            try db.create(table: "pendingAction") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("owner", .text).notNull()
                t.column("itemID", .integer).notNull()
                t.column("groupID", .text)
                t.column("entryID", .text)
                t.column("key", .text).notNull()
                t.column("userInfo", .text).notNull()
                t.column("atUsec", .integer).notNull()
            }
            try db.create(index: "pendingAction_owner", on: "pendingAction", columns: ["owner", "seq"])
            try db.create(table: "appConsent") { t in
                t.column("app", .text).primaryKey()
                t.column("consent", .text).notNull()
                t.column("updatedUsec", .integer).notNull()
            }
            try db.create(table: "groupAuthorization") { t in
                t.column("owner", .text).notNull()
                t.column("groupID", .text).notNull()
                t.column("status", .text).notNull()
                t.column("updatedUsec", .integer).notNull()
                t.primaryKey(["owner", "groupID"])
            }
        }
        migrator.registerMigration("v5: notifications being sent") { db in
            // Set just before Notify is called; the row goes when the server's answer is stored. A row still
            // marked at start was being sent when chimed stopped: the server may or may not have it.
            try db.alter(table: "outbox") { t in t.add(column: "sendingUsec", .integer) }
        }
        migrator.registerMigration("v6: ids received for notifications being sent") { db in
            // Written by the notification relay when the server answers Notify, even after chimed stopped, so
            // that a row whose answer came after chimed stopped is known to be shown, and under which id.
            try db.alter(table: "outbox") { t in t.add(column: "receivedID", .integer) }
        }
        migrator.registerMigration("v7: an item's summary instead of a copy of its content") { db in
            // The content is part of the entry; the copy was read only for the summary of history records,
            // and encoding it again cost a third of storing an item.
            try db.alter(table: "item") { t in t.add(column: "summary", .text) }
            try db.execute(sql: "UPDATE item SET summary = json_extract(content, '$.summary')")
            try db.alter(table: "item") { t in t.drop(column: "content") }
        }
        migrator.registerMigration("v8: rows of items that are over deleted; rows set aside") { db in
            // Items that are over leave their rows (history keeps what happened to them); the largest id
            // ever used is kept here, so that no id is given twice.
            try db.create(table: "meta") { t in
                t.column("key", .text).primaryKey()
                t.column("value", .integer).notNull()
            }
            try db.execute(
                sql: "INSERT INTO meta (key, value) VALUES ('largestItemID', COALESCE((SELECT MAX(id) FROM item), 0))")
            // A group's finished entries stay while they are in the group: a reschedule must know they are done.
            try db.execute(
                sql: """
                    DELETE FROM item WHERE state NOT IN ('pending', 'finished')
                        OR (state = 'finished' AND groupID IS NULL)
                    """)
            // Rows chimed cannot read, moved out of the way with their table's name and content (JSON).
            try db.create(table: "set_aside") { t in
                t.autoIncrementedPrimaryKey("seq")
                t.column("tableName", .text).notNull()
                t.column("content", .text).notNull()
                t.column("reason", .text).notNull()
                t.column("atUsec", .integer).notNull()
            }
            try db.execute(
                sql: """
                    DELETE FROM pendingAction WHERE seq IN (SELECT seq FROM (SELECT seq,
                        ROW_NUMBER() OVER (PARTITION BY owner ORDER BY seq DESC) AS newer FROM pendingAction)
                        WHERE newer > ?)
                    """, arguments: [ScheduleStore.keptActionsLimit])
        }
        migrator.registerMigration("v9: who turned a group off") { db in
            // 1 when the group's own app turned it off (it may turn it on again); a denial stored before is
            // the user's.
            try db.alter(table: "groupAuthorization") { t in
                t.add(column: "byApp", .integer).notNull().defaults(to: 0)
            }
        }
        migrator.registerMigration("v10: outbox rows prepared before they come due") { db in
            // 1 for a row stored before its occurrence came due, so that the occurrence can be sent the
            // moment it does; it becomes an ordinary row (0) when the step that made it due is stored.
            try db.alter(table: "outbox") { t in t.add(column: "prepared", .integer).notNull().defaults(to: 0) }
        }
        migrator.registerMigration("v11: what a start needs in columns, definitions in canonical JSON") { db in
            // A start reads these columns and copies the definitions as they are, without decoding them;
            // `definitionCheck` lets it find a row changed by anything but chimed.
            try db.alter(table: "item") { t in
                t.add(column: "endUsec", .integer)
                t.add(column: "maxOccurrences", .integer)
                t.add(column: "contentBytes", .integer).notNull().defaults(to: 0)
                t.add(column: "occurrences", .integer).notNull().defaults(to: 0)
                t.add(column: "lastFiredUsec", .integer)
                t.add(column: "definitionCheck", .integer)
            }
            let rows = try Row.fetchCursor(db, sql: "SELECT id, entry, recurrence, entryState FROM item")
            while let row = try rows.next() {
                let id: Int64 = row[0]
                // A row that does not decode keeps no checksum, and is set aside at the next start.
                guard let text: String = row[1], let entry = try? Coding.decode(TimelineEntry.self, text),
                    let state = try? Coding.decode(EntryState.self, row[3] ?? "{}")
                else { continue }
                let rule: String? = row[2]
                var recurrence: [UInt8]?
                if let rule {
                    guard let decoded = try? Coding.decode(Recurrence.self, rule) else { continue }
                    recurrence = DefinitionCoding.encode(decoded)
                }
                let definition = EntryDefinition(entry)
                let item = ScheduledItem(
                    id: UInt64(id), owner: "", groupID: nil, definition: definition,
                    storedRecurrence: recurrence.map(StoredRecurrence.init(encoded:)), fireDate: Date(), state: state,
                    finished: nil, snoozeOf: nil, replacesID: nil)
                try db.execute(
                    sql: """
                        UPDATE item SET entry = ?, recurrence = ?, entryState = ?, endUsec = ?, maxOccurrences = ?,
                            contentBytes = ?, occurrences = ?, lastFiredUsec = ?, definitionCheck = ?
                        WHERE id = ?
                        """,
                    arguments: ScheduleStore.definitionValues(item, encoded: definition.encoded ?? []) + [id])
            }
        }
        migrator.registerMigration("v12: escalations") { db in
            // The escalation step of an occurrence whose entry shows it again until acknowledged (JSON).
            try db.alter(table: "outbox") { t in t.add(column: "escalation", .text) }
        }
        migrator.registerMigration("v13: listings by owner") { db in
            // An app's pending items soonest first, and its history newest first, found without reading
            // anyone else's rows (`pendingPage`, `history`).
            try db.create(index: "item_owner_pending", on: "item", columns: ["owner", "state", "fireAtUsec"])
            try db.create(index: "history_owner", on: "history", columns: ["owner", "seq"])
        }
        migrator.registerMigration("v14: what a snooze brings back") { db in
            // The item a snooze or a re-notification brings back, on its rows and popups: the popup's
            // actions act on that item after the snooze itself is over.
            try db.alter(table: "outbox") { t in t.add(column: "snoozeOf", .integer) }
            try db.alter(table: "shown") { t in t.add(column: "snoozeOf", .integer) }
        }
        migrator.registerMigration("v15: items that wake the machine") { db in
            // 1 for an item whose entry asks to wake the machine: a start, which reads every row's columns
            // anyway (so no index), knows them and arms the wake alarm without decoding any definition.
            // Earlier entries never woke it. The row checksum (`definitionCheck`) counts the column only
            // when it is 1, so earlier rows keep theirs.
            try db.alter(table: "item") { t in t.add(column: "wake", .integer).notNull().defaults(to: 0) }
        }
        migrator.registerMigration("v16: definitions in the binary encoding") { db in
            try binaryDefinitions(db)
        }
        migrator.registerMigration("v17: owners and groups as references") { db in
            try nameReferences(db)
        }
        return migrator
    }

    /// Items' and history records' owners and groups as references into `appName` and `groupName`
    /// (`NameRefs`) instead of names on every row and in every index over them. A record without an owner
    /// or a group keeps NULL there.
    static func nameReferences(_ db: Database) throws {
        try db.create(table: "appName") { t in
            t.column("ref", .integer).primaryKey()
            t.column("name", .text).notNull().unique()
        }
        try db.create(table: "groupName") { t in
            t.column("ref", .integer).primaryKey()
            t.column("appRef", .integer).notNull()
            t.column("name", .text).notNull()
            t.uniqueKey(["appRef", "name"])
        }
        try db.execute(
            sql: """
                INSERT INTO appName (name)
                    SELECT owner FROM item UNION SELECT owner FROM history WHERE owner IS NOT NULL;
                INSERT INTO groupName (appRef, name)
                    SELECT a.ref, n.groupID
                    FROM (SELECT owner, groupID FROM item UNION SELECT owner, groupID FROM history) n
                    JOIN appName a ON a.name = n.owner WHERE n.groupID IS NOT NULL;
                """)
        for table in ["item", "history"] {
            try db.alter(table: table) { t in
                t.add(column: "appRef", .integer)
                t.add(column: "groupRef", .integer)
            }
            try db.execute(
                sql: """
                    UPDATE \(table) SET appRef = (SELECT ref FROM appName WHERE name = \(table).owner),
                        groupRef = (SELECT g.ref FROM groupName g JOIN appName a ON a.ref = g.appRef
                            WHERE a.name = \(table).owner AND g.name = \(table).groupID)
                    """)
        }
        for index in ["item_pending", "item_group", "item_owner_pending", "history_group", "history_owner"] {
            try db.drop(index: index)
        }
        for table in ["item", "history"] {
            try db.alter(table: table) { t in
                t.drop(column: "owner")
                t.drop(column: "groupID")
            }
        }
        // As the indexes before: a group's items and records, the pending items soonest first (everyone's,
        // and an app's), an app's records newest first. The pending ones are partial indexes: only pending
        // items, without the state on every entry.
        try db.create(index: "item_group", on: "item", columns: ["groupRef"])
        try db.create(
            index: "item_pending", on: "item", columns: ["fireAtUsec"], condition: Column("state") == "pending")
        try db.create(
            index: "item_app_pending", on: "item", columns: ["appRef", "fireAtUsec"],
            condition: Column("state") == "pending")
        try db.create(index: "history_group", on: "history", columns: ["groupRef", "seq"])
        try db.create(index: "history_app", on: "history", columns: ["appRef", "seq"])
    }

    /// Entries and rules from JSON to `BinaryDefinition`, each row's checksum computed anew over the new
    /// bytes. A row whose checksum does not match its JSON is left as it is, and one whose JSON does not
    /// decode loses its checksum: the next start sets both aside, as it does any row it cannot use. A row
    /// already binary (written by an earlier migration of the same run) is left as it is.
    static func binaryDefinitions(_ db: Database) throws {
        let rows = try Row.fetchCursor(
            db,
            sql: """
                SELECT id, entry, recurrence, entryID, endUsec, maxOccurrences, contentBytes, wake, definitionCheck
                FROM item
                """)
        while let row = try rows.next() {
            let id: Int64 = row[0]
            let entry = ScheduleStore.bytes(row[1])
            let rule = ScheduleStore.optionalBytes(row[2])
            guard DefinitionCoding.isJSON(entry) || rule.map(DefinitionCoding.isJSON) == true else { continue }
            let entryID: String = row[3]
            let end: Int64? = row[4]
            let maximum: Int64? = row[5]
            let bytes: Int64 = row[6]
            let wakes = (row[7] as Int64) != 0
            func check(_ entry: [UInt8], _ rule: [UInt8]?) -> Int64 {
                ScheduleStore.definitionCheck(
                    entryFingerprint: EntryDefinition.fingerprint(of: entry), recurrence: rule, entryID: entryID,
                    end: end, maximum: maximum, bytes: bytes, wakes: wakes)
            }
            guard row[8] as Int64? == check(entry, rule) else { continue }
            let newEntry: [UInt8]
            let newRule: [UInt8]?
            do {
                newEntry = DefinitionCoding.encode(try DefinitionCoding.decodeJSON(TimelineEntry.self, entry))
                newRule = try rule.map { DefinitionCoding.encode(try DefinitionCoding.decodeJSON(Recurrence.self, $0)) }
            } catch {
                try db.execute(sql: "UPDATE item SET definitionCheck = NULL WHERE id = ?", arguments: [id])
                continue
            }
            try db.execute(
                sql: "UPDATE item SET entry = ?, recurrence = ?, definitionCheck = ? WHERE id = ?",
                arguments: [Data(newEntry), newRule.map { Data($0) }, check(newEntry, newRule), id])
        }
    }
}
