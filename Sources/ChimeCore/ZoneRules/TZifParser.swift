/// Reads a TZif file (RFC 8536, versions 1 to 4) into `ZoneRules`.
///
/// A version 1 file is read from its 32-bit data block; a version 2 or later file from its 64-bit block
/// and footer (the first block is skipped, as RFC 8536 section 4 lets readers do). Every count is
/// checked against `TZifLimits` and against the bytes that remain before it is used, so a truncated or
/// hostile file is answered with a `TZifError`, never a trap or a large allocation.
enum TZifParser {
    /// The six counts of a header, in file order.
    struct Header {
        var version: UInt8
        var isutcnt: Int
        var isstdcnt: Int
        var leapcnt: Int
        var timecnt: Int
        var typecnt: Int
        var charcnt: Int

        /// The bytes of the data block this header announces, with `timeSize`-byte times.
        func dataBytes(timeSize: Int) -> Int {
            timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
        }
    }

    /// A cursor over the file's bytes that fails instead of reading past the end.
    struct Reader {
        let bytes: [UInt8]
        var position = 0
        let source: String

        func failure(_ what: String) -> TZifError { TZifError("\(source): \(what) (at byte \(position))") }

        mutating func take(_ count: Int, _ what: String) throws -> ArraySlice<UInt8> {
            guard count >= 0, bytes.count - position >= count else {
                throw failure("the file ends inside its \(what); it is truncated or not a TZif file")
            }
            defer { position += count }
            return bytes[position..<position + count]
        }

        mutating func integer(_ size: Int, _ what: String) throws -> Int {
            let slice = try take(size, what)
            var value: UInt64 = 0
            for byte in slice { value = value << 8 | UInt64(byte) }
            // Two's complement of the given width.
            let shift = UInt64(64 - size * 8)
            return Int(Int64(bitPattern: value << shift) >> Int64(shift))
        }
    }

    static func parse(_ bytes: [UInt8], source: String) throws -> ZoneRules {
        guard bytes.count <= TZifLimits.maximumFileBytes else {
            throw TZifError(
                "\(source): \(bytes.count) bytes is more than the \(TZifLimits.maximumFileBytes) a TZif file may have")
        }
        var reader = Reader(bytes: bytes, source: source)
        let first = try header(&reader)
        if first.version == 0 {
            let block = try dataBlock(&reader, first, timeSize: 4)
            return try ZoneRules(block: block, footer: nil, source: source)
        }
        // Version 2 and later: skip the 32-bit block, read the 64-bit one and the footer.
        _ = try reader.take(first.dataBytes(timeSize: 4), "version 1 data block")
        let second = try header(&reader)
        guard second.version == first.version else {
            throw reader.failure("the second header's version differs from the first's")
        }
        let block = try dataBlock(&reader, second, timeSize: 8)
        let footer = try footerString(&reader)
        let rules = try footer.map { try PosixTimeZone(parsing: $0, source: "\(source)'s footer") }
        return try ZoneRules(block: block, footer: rules, source: source)
    }

    static func header(_ reader: inout Reader) throws -> Header {
        guard try reader.take(4, "header").elementsEqual("TZif".utf8) else {
            throw reader.failure("no TZif magic; this is not a compiled time zone file")
        }
        let versionByte = try reader.take(1, "header").first ?? 0
        let version: UInt8
        switch versionByte {
        case 0: version = 0
        case UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4"): version = versionByte - UInt8(ascii: "0")
        default: throw reader.failure("unknown TZif version byte \(versionByte)")
        }
        _ = try reader.take(15, "header")
        var counts: [Int] = []
        for _ in 0..<6 {
            let value = try reader.integer(4, "header")
            guard value >= 0 else { throw reader.failure("a negative count in the header") }
            counts.append(value)
        }
        let header = Header(
            version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2], timecnt: counts[3],
            typecnt: counts[4], charcnt: counts[5])
        try check(header, reader)
        return header
    }

    static func check(_ header: Header, _ reader: Reader) throws {
        func limit(_ value: Int, _ maximum: Int, _ what: String) throws {
            guard value <= maximum else {
                throw reader.failure("\(value) \(what) is more than the \(maximum) a TZif file may have")
            }
        }
        try limit(header.timecnt, TZifLimits.maximumTransitions, "transitions")
        try limit(header.typecnt, TZifLimits.maximumTypes, "local time types")
        try limit(header.charcnt, TZifLimits.maximumAbbreviationBytes, "abbreviation bytes")
        try limit(header.leapcnt, TZifLimits.maximumLeapRecords, "leap-second records")
        guard header.typecnt > 0 else { throw reader.failure("no local time types (typecnt is zero)") }
        guard header.charcnt > 0 else { throw reader.failure("no abbreviations (charcnt is zero)") }
        guard header.isstdcnt == 0 || header.isstdcnt == header.typecnt,
            header.isutcnt == 0 || header.isutcnt == header.typecnt
        else { throw reader.failure("isstdcnt and isutcnt must each be zero or typecnt") }
    }

    /// One data block's transitions and local time types; leap-second records and the
    /// standard/wall and UT/local indicators are read past (they matter only to POSIX TZ strings of
    /// `posixrules`, which no footer uses).
    static func dataBlock(_ reader: inout Reader, _ header: Header, timeSize: Int) throws -> ZoneRules.Block {
        guard reader.bytes.count - reader.position >= header.dataBytes(timeSize: timeSize) else {
            throw reader.failure("the header announces more data than the file holds; it is truncated")
        }
        var times: [Int] = []
        times.reserveCapacity(header.timecnt)
        for _ in 0..<header.timecnt {
            let time = try reader.integer(timeSize, "transition times")
            if let last = times.last, time <= last {
                throw reader.failure("transition times are not in ascending order")
            }
            times.append(time)
        }
        var indices: [UInt8] = []
        indices.reserveCapacity(header.timecnt)
        for index in try reader.take(header.timecnt, "transition types") {
            guard Int(index) < header.typecnt else {
                throw reader.failure("a transition names local time type \(index) of \(header.typecnt)")
            }
            indices.append(index)
        }
        var raw: [(offset: Int, isDaylightSaving: Bool, abbreviationIndex: Int)] = []
        for _ in 0..<header.typecnt {
            let offset = try reader.integer(4, "local time types")
            guard TZifLimits.utcOffsetRange.contains(offset) else {
                throw reader.failure("a UT offset of \(offset) seconds is outside RFC 8536's range")
            }
            let flags = try reader.take(2, "local time types")
            let isdst = flags[flags.startIndex]
            let index = Int(flags[flags.startIndex + 1])
            guard isdst <= 1 else { throw reader.failure("an isdst value of \(isdst) (must be 0 or 1)") }
            guard index < header.charcnt else {
                throw reader.failure("an abbreviation index of \(index) past the \(header.charcnt) bytes")
            }
            raw.append((offset, isdst == 1, index))
        }
        let characters = Array(try reader.take(header.charcnt, "abbreviations"))
        guard characters.last == 0 else { throw reader.failure("the abbreviations do not end with a NUL") }
        let types = raw.map { type in
            let end = characters[type.abbreviationIndex...].firstIndex(of: 0) ?? characters.count
            return ZoneRules.LocalTimeType(
                utcOffset: type.offset, isDaylightSaving: type.isDaylightSaving,
                abbreviation: String(decoding: characters[type.abbreviationIndex..<end], as: UTF8.self))
        }
        _ = try reader.take(header.leapcnt * (timeSize + 4) + header.isstdcnt + header.isutcnt, "leap records")
        return ZoneRules.Block(transitions: times, transitionTypes: indices, types: types)
    }

    /// The footer's TZ string, nil when it is empty (the last type then holds for ever).
    static func footerString(_ reader: inout Reader) throws -> String? {
        guard try reader.take(1, "footer").first == UInt8(ascii: "\n") else {
            throw reader.failure("the footer does not start with a newline")
        }
        let rest = reader.bytes[reader.position...]
        guard let end = rest.firstIndex(of: UInt8(ascii: "\n")) else {
            throw reader.failure("the footer does not end with a newline; the file is truncated")
        }
        guard end - reader.position <= TZifLimits.maximumFooterBytes else {
            throw reader.failure("a footer longer than \(TZifLimits.maximumFooterBytes) bytes")
        }
        let text = reader.bytes[reader.position..<end]
        reader.position = end + 1
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw reader.failure("the footer holds bytes that are not printable ASCII")
        }
        return text.isEmpty ? nil : String(decoding: text, as: UTF8.self)
    }
}
