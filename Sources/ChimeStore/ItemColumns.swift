import GRDB
internal import GRDBSQLite

/// The columns of the row a statement is on, read with SQLite's own column functions: a start reads every
/// item's row, and GRDB's `Row` asked SQLite for each column's type again for each value and wrapped the
/// definition's bytes in a `Data` (docs/performance.md). A value of a type the column never holds is a
/// `RowProblem`, so that the row is set aside, as GRDB's decoding did.
///
/// The owner and group are references (`NameRefs`) read by `names`; rows of a group are stored together,
/// so a reference equal to the previous row's is that row's string, and a million items share a few hundred
/// names instead of each holding copies of its own. Without `names` (a listing, which joins the names),
/// the two columns hold the names themselves.
struct ItemColumns {
    private let statement: SQLiteStatement
    private let names: NameTable?
    private var ownerRef: Int64?
    private var owner = ""
    private var groupRef: Int64?
    private var group = ""

    init(_ statement: Statement, names: NameTable?) {
        self.statement = statement.sqliteStatement
        self.names = names
    }

    func isNull(_ index: Int32) -> Bool { sqlite3_column_type(statement, index) == SQLITE_NULL }

    func int(_ index: Int32, _ column: String) throws(RowProblem) -> Int64 {
        guard sqlite3_column_type(statement, index) == SQLITE_INTEGER else {
            throw RowProblem("\(column) is \(kind(index)), not an integer")
        }
        return sqlite3_column_int64(statement, index)
    }

    func optionalInt(_ index: Int32, _ column: String) throws(RowProblem) -> Int64? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return sqlite3_column_int64(statement, index)
        default: throw RowProblem("\(column) is \(kind(index)), not an integer")
        }
    }

    /// The bytes of a text column, valid until the statement moves on.
    func bytes(_ index: Int32, _ column: String) throws(RowProblem) -> UnsafeRawBufferPointer {
        guard sqlite3_column_type(statement, index) == SQLITE_TEXT else {
            throw RowProblem("\(column) is \(kind(index)), not text")
        }
        return textBytes(index)
    }

    /// The bytes of a definition column: a blob (or text, as definitions were before they were binary),
    /// valid until the statement moves on.
    func definition(_ index: Int32, _ column: String) throws(RowProblem) -> UnsafeRawBufferPointer {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_BLOB: return blobBytes(index)
        case SQLITE_TEXT: return textBytes(index)
        default: throw RowProblem("\(column) is \(kind(index)), not a definition")
        }
    }

    /// The bytes of a definition column that may be NULL, copied.
    func optionalDefinition(_ index: Int32, _ column: String) throws(RowProblem) -> [UInt8]? {
        guard !isNull(index) else { return nil }
        return Array(try definition(index, column))
    }

    private func blobBytes(_ index: Int32) -> UnsafeRawBufferPointer {
        // The blob first, then its length, as SQLite's documentation says to.
        guard let start = sqlite3_column_blob(statement, index) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(statement, index)))
    }

    /// The bytes of a column that holds text.
    private func textBytes(_ index: Int32) -> UnsafeRawBufferPointer {
        // The text first, then its length, as SQLite's documentation says to.
        guard let start = sqlite3_column_text(statement, index) else {
            return UnsafeRawBufferPointer(start: nil, count: 0)
        }
        return UnsafeRawBufferPointer(start: start, count: Int(sqlite3_column_bytes(statement, index)))
    }

    func text(_ index: Int32, _ column: String) throws(RowProblem) -> String {
        String(decoding: try bytes(index, column), as: UTF8.self)
    }

    func optionalText(_ index: Int32, _ column: String) throws(RowProblem) -> String? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_NULL: return nil
        case SQLITE_TEXT: return String(decoding: textBytes(index), as: UTF8.self)
        default: throw RowProblem("\(column) is \(kind(index)), not text")
        }
    }

    /// The owner's name, the previous row's string when the reference is the same.
    mutating func owner(_ index: Int32) throws(RowProblem) -> String {
        guard let names else { return try text(index, "owner") }
        return try Self.name(of: int(index, "appRef"), last: &ownerRef, name: &owner, names.app)
    }

    /// The group's id (nil for an item on its own), the previous row's string when the reference is the
    /// same.
    mutating func group(_ index: Int32) throws(RowProblem) -> String? {
        guard !isNull(index) else { return nil }
        guard let names else { return try text(index, "groupID") }
        return try Self.name(of: int(index, "groupRef"), last: &groupRef, name: &group, names.group)
    }

    /// The name `ref` refers to: `name` again when `ref` is the `last` one read, else looked up.
    private static func name(
        of ref: Int64, last: inout Int64?, name: inout String, _ lookUp: (Int64) throws(RowProblem) -> String
    ) throws(RowProblem) -> String {
        if ref != last {
            name = try lookUp(ref)
            last = ref
        }
        return name
    }

    private func kind(_ index: Int32) -> String {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: "an integer"
        case SQLITE_FLOAT: "a real number"
        case SQLITE_TEXT: "text"
        case SQLITE_BLOB: "a blob"
        default: "NULL"
        }
    }
}
