/// One time zone's rules, as the tz database gives them: a table of transitions between local time
/// types, and past its end the POSIX TZ string of the file's footer. Built from a TZif file's bytes
/// (`init(tzif:identifier:)`), a TZ string, or a fixed offset; it reads no clock and no file.
///
/// Instants are whole seconds since 1970-01-01 UTC; offsets are seconds east of UTC.
public struct ZoneRules: Sendable {
    /// The local time a zone keeps between two transitions.
    public struct LocalTimeType: Hashable, Sendable {
        /// Seconds east of UTC (`3600` for CET).
        public var utcOffset: Int
        /// Whether this is daylight saving time (`tm_isdst`).
        public var isDaylightSaving: Bool
        /// `CET`, `CEST`, `+0530`, `LMT`.
        public var abbreviation: String

        public init(utcOffset: Int, isDaylightSaving: Bool, abbreviation: String) {
            self.utcOffset = utcOffset
            self.isDaylightSaving = isDaylightSaving
            self.abbreviation = abbreviation
        }
    }

    /// A TZif data block's contents.
    struct Block {
        var transitions: [Int]
        var transitionTypes: [UInt8]
        var types: [LocalTimeType]
    }

    /// The parsed tables, shared by every copy of the rules: `WallClock` copies rules out of the store at
    /// each conversion, and a copy then costs one reference count instead of one per array.
    final class Tables: Sendable {
        let identifier: String
        let transitions: [Int]
        let transitionTypes: [UInt8]
        let types: [LocalTimeType]
        /// `types`' UT offsets, read without touching their abbreviations.
        let offsets: [Int]
        /// The rules past the last transition (and everywhere when there are none).
        let footer: PosixTimeZone?
        /// The footer's changes from the year of the last transition (1900 when there is none) through
        /// `footerTableEnd`, in order, with whether each starts daylight time: most instants a program
        /// asks about are past the table of a slim zone file, and a search here is a fraction of the cost
        /// of evaluating the rules.
        let footerChanges: [Int]
        let footerChangeStartsDaylight: [Bool]

        /// The last year whose footer changes are tabulated (two changes a year: some 3 KiB a zone).
        static let footerTableEnd = 2200

        init(
            identifier: String, transitions: [Int], transitionTypes: [UInt8], types: [LocalTimeType],
            footer: PosixTimeZone?
        ) {
            self.identifier = identifier
            self.transitions = transitions
            self.transitionTypes = transitionTypes
            self.types = types
            offsets = types.map(\.utcOffset)
            self.footer = footer
            var changes: [(time: Int, isStart: Bool)] = []
            if let footer, let rules = footer.daylight {
                let first = transitions.last.map { LocalDateTime.civil(fromDays: WallClock.floorDiv($0, 86_400)).year }
                let from = min(first ?? 1900, Self.footerTableEnd)
                changes = footer.changes(rules, years: from...Self.footerTableEnd)
                // In time order, an end before a start at the same instant (daylight time all year).
                changes.sort { ($0.time, $0.isStart ? 1 : 0) < ($1.time, $1.isStart ? 1 : 0) }
            }
            footerChanges = changes.map(\.time)
            footerChangeStartsDaylight = changes.map(\.isStart)
        }

        /// Whether the footer has daylight time at `instant`, from the table of changes; nil outside it.
        func footerIsDaylight(at instant: Int) -> Bool? {
            guard let first = footerChanges.first, let last = footerChanges.last,
                // A change of a neighbouring year can move by days (rule times up to 167 hours, offsets up
                // to a day): the table answers only well inside its years, the rules themselves outside.
                instant >= first + 400 * 3600, instant < last - 400 * 3600
            else { return nil }
            // The last change at or before the instant.
            return footerChangeStartsDaylight[firstFooterChange(atOrAfter: instant + 1) - 1]
        }

        /// The index of the first footer change at or after `instant` (`footerChanges.count` when none is).
        func firstFooterChange(atOrAfter instant: Int) -> Int {
            ZoneRules.firstIndex(in: footerChanges, atOrAfter: instant)
        }
    }

    let tables: Tables

    /// The zone's name (`Europe/Berlin`), or a description for rules not read from a file.
    public var identifier: String { tables.identifier }

    init(block: Block, footer: PosixTimeZone?, source: String) throws {
        tables = Tables(
            identifier: source, transitions: block.transitions, transitionTypes: block.transitionTypes,
            types: block.types, footer: footer)
    }

    /// Reads a TZif file's bytes (RFC 8536, versions 1 to 4). Throws `TZifError` when they are malformed
    /// or over `TZifLimits`; `identifier` names the zone in the rules and in errors.
    public init(tzif bytes: [UInt8], identifier: String) throws {
        self = try TZifParser.parse(bytes, source: identifier)
    }

    /// Rules given by a POSIX TZ string alone, such as `EST5EDT,M3.2.0,M11.1.0`.
    public init(posix text: String) throws {
        let footer = try PosixTimeZone(parsing: text)
        tables = Tables(
            identifier: text, transitions: [], transitionTypes: [], types: [footer.standard], footer: footer)
    }

    /// A zone that keeps one offset for ever (`UTC`, or Foundation's `GMT+0530`).
    public init(fixedOffset: Int, identifier: String) {
        let type = LocalTimeType(utcOffset: fixedOffset, isDaylightSaving: false, abbreviation: identifier)
        tables = Tables(identifier: identifier, transitions: [], transitionTypes: [], types: [type], footer: nil)
    }

    /// Where the local time at an instant comes from: a type of the table, or the footer's rules.
    enum Source {
        case type(Int)
        case footer(PosixTimeZone)
    }

    /// The table's type before its last transition (the first type before the first one, as RFC 8536
    /// says), the footer from then on; the last type for ever when there is no footer.
    func source(at instant: Int) -> Source {
        let transitions = tables.transitions
        guard let first = transitions.first, let last = transitions.last else {
            return tables.footer.map(Source.footer) ?? .type(0)
        }
        if instant < first { return .type(0) }
        if instant >= last {
            return tables.footer.map(Source.footer) ?? .type(Int(tables.transitionTypes[transitions.count - 1]))
        }
        // The last transition at or before the instant.
        let index = firstTransition(atOrAfter: instant + 1) - 1
        return .type(Int(tables.transitionTypes[index]))
    }

    /// The local time type in effect at `instant`: the table's before its last transition (the first
    /// type before the first one, as RFC 8536 says), the footer's from then on.
    public func localTimeType(at instant: Int) -> LocalTimeType {
        switch source(at: instant) {
        case .type(let index):
            return tables.types[index]
        case .footer(let footer):
            guard let isDaylight = tables.footerIsDaylight(at: instant), let rules = footer.daylight else {
                return footer.localTimeType(at: instant)
            }
            return isDaylight ? rules.type : footer.standard
        }
    }

    /// The index of the first transition at or after `instant` (`transitions.count` when none is).
    func firstTransition(atOrAfter instant: Int) -> Int {
        Self.firstIndex(in: tables.transitions, atOrAfter: instant)
    }

    /// The index of the first of the ascending `values` at or after `instant` (`values.count` when none is).
    static func firstIndex(in values: [Int], atOrAfter instant: Int) -> Int {
        var low = 0
        var high = values.count
        while low < high {
            let middle = low + (high - low) / 2
            if values[middle] < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The UTC offset in seconds at `instant`.
    public func utcOffset(at instant: Int) -> Int {
        switch source(at: instant) {
        case .type(let index):
            return tables.offsets[index]
        case .footer(let footer):
            guard let isDaylight = tables.footerIsDaylight(at: instant), let rules = footer.daylight else {
                return footer.utcOffset(at: instant)
            }
            return isDaylight ? rules.type.utcOffset : footer.standard.utcOffset
        }
    }

    /// The instants in `low...high` at which the local time type may change, in order: the table's
    /// transitions and the footer's changes (some of which may keep the offset and change only the
    /// abbreviation or daylight flag).
    public func transitions(from low: Int, through high: Int) -> [Int] {
        guard low <= high else { return [] }
        let transitions = tables.transitions
        var result: [Int] = []
        var index = firstTransition(atOrAfter: low)
        while index < transitions.count, transitions[index] <= high {
            result.append(transitions[index])
            index += 1
        }
        if let footer = tables.footer {
            let last = transitions.last ?? .min
            let from = max(low, last)
            let changes = tables.footerChanges
            if let first = changes.first, let end = changes.last, from >= first + 400 * 3600,
                high < end - 400 * 3600
            {
                // Inside the table of changes: a search instead of the rules of three years.
                var index = tables.firstFooterChange(atOrAfter: from)
                while index < changes.count, changes[index] <= high {
                    if changes[index] > last { result.append(changes[index]) }
                    index += 1
                }
            } else if from <= high {
                result += footer.transitions(from: from, through: high).filter { $0 > last }
            }
        }
        return result
    }
}
