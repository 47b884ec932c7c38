import Foundation
import GRDB

#if canImport(Glibc)
    import Glibc
#endif

/// How much delivery history the store keeps (chime.toml's `[history]`).
public struct HistoryLimits: Hashable, Sendable {
    /// Entries older than this, in seconds, are pruned (`max-age`, 90 days by default).
    public var maximumAge: TimeInterval
    /// Beyond this many entries the oldest are pruned (`max-entries`).
    public var maximumEntries: Int
    /// History is pruned when the store opens and after every this many records.
    public static let pruneInterval: Int64 = 1000

    public init(maximumAge: TimeInterval = 90 * 86_400, maximumEntries: Int = ScheduleStore.historyLimit) {
        self.maximumAge = maximumAge
        self.maximumEntries = maximumEntries
    }
}

/// A damaged database file that the store moved aside, with its -wal and -shm, instead of opening it.
public struct MovedAside: Hashable, Sendable {
    /// Where the file is now (`chime.sqlite.corrupt-YYYYMMDDTHHMMSSZ`).
    public var path: String
    /// What SQLite said about it.
    public var reason: String
}

/// Why a stored row cannot be used.
struct RowProblem: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension Optional {
    /// The value, or a `RowProblem` saying that `column` holds something chimed does not know.
    func orProblem(_ column: String) throws(RowProblem) -> Wrapped {
        guard let self else { throw RowProblem("\(column) holds a value chimed does not know") }
        return self
    }
}

/// Rows found unreadable while reading a table, moved to `set_aside` once the reading is done.
struct SetAside {
    private var found: [(table: String, rowid: Int64, reason: String)] = []
    /// What was set aside, one line each (table, rowid, reason), for the log.
    private(set) var descriptions: [String] = []

    /// Decodes every row of `sql`, whose first column is the rowid of a row of `table`; a row `decode`
    /// throws for is remembered to be set aside, and left out. Database failures are thrown as they are.
    mutating func rows<T>(
        _ db: Database, _ table: String, sql: String, arguments: StatementArguments = [],
        decode: (Row) throws -> T
    ) throws -> [T] {
        let statement = try db.makeStatement(sql: sql)
        statement.arguments = arguments
        return try rows(table, statement, decode: decode)
    }

    /// `rows(_:_:sql:arguments:decode:)` for a statement made already, which `decode` may read directly
    /// (`ItemColumns`).
    mutating func rows<T>(_ table: String, _ statement: Statement, decode: (Row) throws -> T) throws -> [T] {
        var values: [T] = []
        let cursor = try Row.fetchCursor(statement)
        while let row = try cursor.next() {
            do {
                values.append(try decode(row))
            } catch let error as DatabaseError {
                throw error
            } catch {
                guard let rowid = try? row.decode(Int64.self, atIndex: 0) else { throw error }
                found.append((table, rowid, Self.reason(error)))
            }
        }
        return values
    }

    /// Moves the rows found to `set_aside`: their table's name and their content as JSON, kept for
    /// someone to look at; an item's id stays reserved.
    mutating func store(in db: Database, now: Date) throws {
        for (table, rowid, reason) in found {
            // An item's owner and group by name, as well as by reference.
            let select =
                table == "item"
                ? """
                SELECT item.*, a.name AS owner, g.name AS groupID FROM item LEFT JOIN appName a ON a.ref = item.appRef
                    LEFT JOIN groupName g ON g.ref = item.groupRef WHERE item.rowid = ?
                """ : "SELECT * FROM \(table) WHERE rowid = ?"
            guard let row = try Row.fetchOne(db, sql: select, arguments: [rowid]) else { continue }
            if table == "item" { try ScheduleStore.reserve([rowid], in: db) }
            try db.execute(
                sql: "INSERT INTO set_aside (tableName, content, reason, atUsec) VALUES (?, ?, ?, ?)",
                arguments: [table, Self.json(row), reason, Time.usec(now)])
            try db.execute(sql: "DELETE FROM \(table) WHERE rowid = ?", arguments: [rowid])
            descriptions.append("\(table) row \(rowid): \(reason)")
        }
        found = []
    }

    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let context), DecodingError.keyNotFound(_, let context),
            DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return "its JSON cannot be read\(path.isEmpty ? "" : " at \(path)"): \(context.debugDescription)"
        default:
            return "\(error)"
        }
    }

    /// A row as a JSON object of its columns; blobs in base64, and reals JSON cannot hold as text.
    static func json(_ row: Row) -> String {
        var object: [String: ColumnValue] = [:]
        for (column, value) in row {
            switch value.storage {
            case .null: object[column] = .null
            case .int64(let number): object[column] = .integer(number)
            case .double(let number): object[column] = number.isFinite ? .real(number) : .text("\(number)")
            case .string(let text): object[column] = .text(text)
            case .blob(let data): object[column] = .text("base64:" + data.base64EncodedString())
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(object)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    enum ColumnValue: Encodable {
        case null, integer(Int64), real(Double), text(String)

        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .null: try container.encodeNil()
            case .integer(let value): try container.encode(value)
            case .real(let value): try container.encode(value)
            case .text(let value): try container.encode(value)
            }
        }
    }
}

extension ScheduleStore {
    // MARK: - Private files

    /// Makes the state folder 0700 and every file in it 0600, as chimed keeps only its own files there
    /// (the database, its -wal and -shm, the relay's lock, damaged databases moved aside).
    static func makePrivate(directory: String) throws(StoreError) {
        func fix(_ path: String, mode: mode_t) throws(StoreError) {
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & 0o077 != 0 else { return }
            guard chmod(path, mode) == 0 else {
                throw StoreError(
                    "cannot make \(path) private (chmod \(String(mode, radix: 8))): "
                        + "\(String(cString: strerror(errno))); make it yours (chown) or choose another "
                        + "state directory (chimed --state-dir)")
            }
        }
        try fix(directory, mode: 0o700)
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + name
            var info = stat()
            // Only regular files: a symbolic link's target is not chimed's to change.
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            try fix(path, mode: 0o600)
        }
    }

    // MARK: - A damaged database

    /// Whether an error opening the file means that it is not a database or is damaged (and not that it
    /// is locked, unreadable, or on a full disk).
    static func isDamage(_ error: DatabaseError) -> Bool {
        error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    }

    /// Why the file at `path` is not an SQLite database (it has content, but not SQLite's header), or
    /// nil. Checked before SQLite opens it: SQLite would take the -wal beside such a file for its own,
    /// and delete it when the failed connection closes.
    static func notADatabase(_ path: String) -> String? {
        guard let file = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? file.close() }
        guard let start = try? file.read(upToCount: 16), !start.isEmpty else { return nil }
        guard start != Data("SQLite format 3\0".utf8) else { return nil }
        return "it does not start with SQLite's header, so it is not a database"
    }

    /// Renames the database and its -wal and -shm to `PATH.corrupt-YYYYMMDDTHHMMSSZ` (and `-wal`,
    /// `-shm`), never overwriting: the user may want them back. The -wal must go with it, or SQLite
    /// would read it into the new database.
    static func moveAside(_ path: String, because reason: String) throws(StoreError) -> MovedAside {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
        let stem =
            path + ".corrupt-" + String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var target = stem
        var number = 1
        while ["", "-wal", "-shm"].contains(where: { access(target + $0, F_OK) == 0 }) {
            number += 1
            target = "\(stem).\(number)"
        }
        for suffix in ["", "-wal", "-shm"] where access(path + suffix, F_OK) == 0 {
            guard rename(path + suffix, target + suffix) == 0 else {
                throw StoreError(
                    "\(path) is damaged (\(reason)) and cannot be moved aside to "
                        + "\(target + suffix): \(String(cString: strerror(errno))); move it yourself "
                        + "(mv \(path) \(path).broken) to start with an empty schedule, or restore a backup")
            }
        }
        return MovedAside(path: target, reason: reason)
    }

    // MARK: - Giving space back

    /// Converts a database made before incremental auto-vacuum: the mode changes only with a VACUUM,
    /// which rewrites the file (once) and cannot run inside a transaction, so not in a migration.
    ///
    /// A failure (a disk too full for the copy VACUUM makes) leaves the database as it was, working;
    /// the conversion is tried again at the next open.
    static func convertToIncrementalVacuum(_ writer: any DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in
            guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 else { return }
            try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
            do {
                try db.execute(sql: "VACUUM")
            } catch let error as DatabaseError where error.resultCode != .SQLITE_CORRUPT {
                return
            }
        }
    }

    /// Free pages beyond which a deletion gives them back to the file system (1 MiB of 4 KiB pages).
    static let spareFreePages = 256

    /// Gives free pages back to the file system once there are many: after deleting large rows the
    /// file shrinks (at the next checkpoint), instead of only being reused.
    static func giveBackSpace(_ db: Database) throws {
        guard let free = try Int.fetchOne(db.cachedStatement(sql: "PRAGMA freelist_count")), free >= spareFreePages
        else { return }
        try db.execute(sql: "PRAGMA incremental_vacuum")
    }

    // MARK: - History

    /// Drops history older than `limits.maximumAge`, and beyond `limits.maximumEntries` in all, in fair
    /// shares: the owners (apps, and the user) with the most entries give up their oldest first, down to a
    /// share no smaller than `maximumEntries` divided among the owners, while owners with fewer keep all of
    /// theirs. So one app's flood of history costs its own entries only.
    ///
    /// Entries are in the order they were written, which is nearly the order of their times: the age
    /// is found from the oldest on, so a prune reads only what it removes, and needs no index on time.
    ///
    /// The names of apps and groups that only the removed records referred to are forgotten with them.
    static func pruneHistory(_ db: Database, limits: HistoryLimits, now: Date) throws {
        var apps = Set<Int64>()
        var groups = Set<Int64>()
        /// Removes the records `condition` matches, noting which names they referred to. `table` may tell
        /// SQLite not to use an index: for a range of `seq` alone it would rather read all of one.
        func remove(from table: String = "history", where condition: String, _ arguments: StatementArguments)
            throws
        {
            let rows = try Row.fetchCursor(
                db.cachedStatement(sql: "SELECT DISTINCT appRef, groupRef FROM \(table) WHERE \(condition)"),
                arguments: arguments)
            while let row = try rows.next() {
                if let ref = row[0] as Int64? { apps.insert(ref) }
                if let ref = row[1] as Int64? { groups.insert(ref) }
            }
            try db.cachedStatement(sql: "DELETE FROM \(table) WHERE \(condition)").execute(arguments: arguments)
        }
        // Counting each app's records reads them all: when the span of their numbers is within the limit,
        // there cannot be more, and nothing is counted.
        // (Each in a query of its own: together, SQLite reads an index whole for them.)
        let span =
            try Int.fetchOne(
                db.cachedStatement(sql: "SELECT (SELECT MAX(seq) FROM history) - (SELECT MIN(seq) FROM history) + 1"))
            ?? 0
        let counts =
            span <= limits.maximumEntries
            ? []
            : try Row.fetchAll(db, sql: "SELECT appRef, COUNT(*) FROM history GROUP BY appRef").map {
                (app: $0[0] as Int64?, count: $0[1] as Int)
            }
        if let share = fairShare(counts.map(\.count), total: limits.maximumEntries) {
            for (app, count) in counts where count > share {
                // The app's records before its `share` newest go.
                guard
                    let bound = try Int64.fetchOne(
                        db.cachedStatement(
                            sql: "SELECT seq FROM history WHERE appRef IS ? ORDER BY seq LIMIT 1 OFFSET ?"),
                        arguments: [app, count - share])
                else { continue }
                try remove(where: "appRef IS ? AND seq < ?", [app, bound])
            }
        }
        let cutoff = Time.usec(now.addingTimeInterval(-limits.maximumAge))
        let bound = try Int64.fetchOne(
            db.cachedStatement(
                sql: """
                    SELECT COALESCE((SELECT seq FROM history WHERE atUsec >= ? ORDER BY seq LIMIT 1),
                        (SELECT MAX(seq) FROM history) + 1)
                    """), arguments: [cutoff])
        if let bound { try remove(from: "history NOT INDEXED", where: "seq < ?", [bound]) }
        if !apps.isEmpty || !groups.isEmpty { try forgetUnusedNames(apps: apps, groups: groups, in: db) }
        try giveBackSpace(db)
    }

    /// The most entries each owner keeps so that all together keep at most `total`: owners with fewer keep
    /// all of theirs, and the rest share what is left equally. Nil when all fit.
    static func fairShare(_ counts: [Int], total: Int) -> Int? {
        guard counts.reduce(0, +) > total else { return nil }
        var left = max(0, total)
        let sorted = counts.sorted()
        for (index, count) in sorted.enumerated() {
            let share = left / (sorted.count - index)
            if count > share { return share }
            left -= count
        }
        return nil
    }

    /// The upkeep left out of a start, so that it does not delay one: history pruned to `historyLimits`
    /// (as records grow it is pruned every thousand records). chimed runs it once it has told the service
    /// manager it is ready.
    public func upkeep(now: Date) throws {
        let limits = historyLimits
        try write { db in
            try Self.pruneHistory(db, limits: limits, now: now)
            // Names a row stopped referring to otherwise (a row set aside) are found by looking at all.
            try Self.forgetUnusedNames(apps: nil, groups: nil, in: db)
        }
    }

    /// Prunes history to `historyLimits` now (chimed calls it when the limits change).
    public func pruneHistory(now: Date) throws {
        let limits = historyLimits
        try write { db in try Self.pruneHistory(db, limits: limits, now: now) }
    }

    // MARK: - A clean stop

    /// Copies everything in the write-ahead log into the database file and empties the log, so that the
    /// file alone holds all data (a backup of it is complete). chimed calls it when it stops cleanly,
    /// after its last write.
    public func checkpoint() throws {
        do {
            _ = try writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        } catch let error as DatabaseError {
            throw failure(error)
        }
    }
}
