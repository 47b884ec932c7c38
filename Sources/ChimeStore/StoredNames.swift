import GRDB

/// The app and the group a row of `item` or `history` belongs to, as references into the tables
/// `appName` and `groupName`: each name is stored once instead of on every row and in every index over
/// them (docs/performance.md, "Owners and groups as references"). `group` is nil for an app's items on
/// their own.
struct NameRefs {
    var app: Int64
    var group: Int64?

    /// The references of `owner`'s group `groupID` (nil: its items on their own); the names are stored
    /// when they are not yet. Within the transaction that uses them: a name that no row refers to any
    /// more is forgotten when history is pruned (`ScheduleStore.forgetUnusedNames`).
    static func of(owner: String, groupID: String?, in db: Database) throws -> NameRefs {
        let app = try ref(
            db, select: "SELECT ref FROM appName WHERE name = ?", insert: "INSERT INTO appName (name) VALUES (?)",
            [owner])
        guard let groupID else { return NameRefs(app: app, group: nil) }
        let group = try ref(
            db, select: "SELECT ref FROM groupName WHERE appRef = ? AND name = ?",
            insert: "INSERT INTO groupName (appRef, name) VALUES (?, ?)", [app, groupID])
        return NameRefs(app: app, group: group)
    }

    private static func ref(_ db: Database, select: String, insert: String, _ arguments: StatementArguments)
        throws -> Int64
    {
        if let ref = try Int64.fetchOne(db.cachedStatement(sql: select), arguments: arguments) { return ref }
        try db.cachedStatement(sql: insert).execute(arguments: arguments)
        return db.lastInsertedRowID
    }

    /// SQL for the reference of the app named by one argument.
    static let appSQL = "(SELECT ref FROM appName WHERE name = ?)"
    /// SQL for the reference of the group named by two arguments: its app's name and its id.
    static let groupSQL = """
        (SELECT g.ref FROM groupName g JOIN appName a ON a.ref = g.appRef WHERE a.name = ? AND g.name = ?)
        """
}

/// Every stored name by its reference, read once for a start, which reads every item's row.
struct NameTable {
    private var apps: [Int64: String] = [:]
    private var groups: [Int64: String] = [:]

    init(_ db: Database) throws {
        let appRows = try db.makeStatement(sql: "SELECT ref, name FROM appName")
        let appCursor = try Row.fetchCursor(appRows)
        while let row = try appCursor.next() {
            if let name = row[1] as String? { apps[row[0]] = name }
        }
        let groupRows = try db.makeStatement(sql: "SELECT ref, name FROM groupName")
        let groupCursor = try Row.fetchCursor(groupRows)
        while let row = try groupCursor.next() {
            if let name = row[1] as String? { groups[row[0]] = name }
        }
    }

    func app(_ ref: Int64) throws(RowProblem) -> String {
        guard let name = apps[ref] else { throw RowProblem("appRef \(ref) names no app") }
        return name
    }

    func group(_ ref: Int64) throws(RowProblem) -> String {
        guard let name = groups[ref] else { throw RowProblem("groupRef \(ref) names no group") }
        return name
    }
}

extension ScheduleStore {
    /// Forgets the names among `apps` and `groups` that no row of `item` or `history` refers to any more
    /// (nil: every name is looked at), so that their tables hold only names in use. Each look is one
    /// probe of an index per table.
    static func forgetUnusedNames(apps: Set<Int64>?, groups: Set<Int64>?, in db: Database) throws {
        var apps = apps
        let forgetGroup = try db.cachedStatement(
            sql: """
                DELETE FROM groupName WHERE ref = ?1 AND NOT EXISTS (SELECT 1 FROM item WHERE groupRef = ?1)
                    AND NOT EXISTS (SELECT 1 FROM history WHERE groupRef = ?1)
                RETURNING appRef
                """)
        let groupRefs = try groups.map(Array.init) ?? Int64.fetchAll(db, sql: "SELECT ref FROM groupName")
        for ref in groupRefs {
            // An app whose last group goes may be unused now.
            if let app = try Int64.fetchOne(forgetGroup, arguments: [ref]) { apps?.insert(app) }
        }
        // An item's row is pending, or a finished entry of a group (whose name refers to the app): through
        // the index of pending items, not a read of every row.
        let forgetApp = try db.cachedStatement(
            sql: """
                DELETE FROM appName WHERE ref = ?1
                    AND NOT EXISTS (SELECT 1 FROM item WHERE appRef = ?1 AND state = 'pending')
                    AND NOT EXISTS (SELECT 1 FROM history WHERE appRef = ?1)
                    AND NOT EXISTS (SELECT 1 FROM groupName WHERE appRef = ?1)
                """)
        let appRefs = try apps.map(Array.init) ?? Int64.fetchAll(db, sql: "SELECT ref FROM appName")
        for ref in appRefs { try forgetApp.execute(arguments: [ref]) }
    }
}
