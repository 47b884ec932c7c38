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

    /// The zone's name (`Europe/Berlin`), or a description for rules not read from a file.
    public let identifier: String
    let transitions: [Int]
    let transitionTypes: [UInt8]
    let types: [LocalTimeType]
    /// The rules past the last transition (and everywhere when there are none).
    let footer: PosixTimeZone?

    init(block: Block, footer: PosixTimeZone?, source: String) throws {
        identifier = source
        transitions = block.transitions
        transitionTypes = block.transitionTypes
        types = block.types
        self.footer = footer
    }

    /// Reads a TZif file's bytes (RFC 8536, versions 1 to 4). Throws `TZifError` when they are malformed
    /// or over `TZifLimits`; `identifier` names the zone in the rules and in errors.
    public init(tzif bytes: [UInt8], identifier: String) throws {
        self = try TZifParser.parse(bytes, source: identifier)
    }

    /// Rules given by a POSIX TZ string alone, such as `EST5EDT,M3.2.0,M11.1.0`.
    public init(posix text: String) throws {
        identifier = text
        transitions = []
        transitionTypes = []
        footer = try PosixTimeZone(parsing: text)
        types = [footer!.standard]
    }

    /// A zone that keeps one offset for ever (`UTC`, or Foundation's `GMT+0530`).
    public init(fixedOffset: Int, identifier: String) {
        self.identifier = identifier
        transitions = []
        transitionTypes = []
        types = [LocalTimeType(utcOffset: fixedOffset, isDaylightSaving: false, abbreviation: identifier)]
        footer = nil
    }

    /// The local time type in effect at `instant`: the table's before its last transition (the first
    /// type before the first one, as RFC 8536 says), the footer's from then on.
    public func localTimeType(at instant: Int) -> LocalTimeType {
        guard let first = transitions.first, let last = transitions.last else {
            return footer?.localTimeType(at: instant) ?? types[0]
        }
        if instant < first { return types[0] }
        if instant >= last {
            return footer?.localTimeType(at: instant) ?? types[Int(transitionTypes[transitionTypes.count - 1])]
        }
        // The last transition at or before the instant.
        let index = firstTransition(atOrAfter: instant + 1) - 1
        return types[Int(transitionTypes[index])]
    }

    /// The index of the first transition at or after `instant` (`transitions.count` when none is).
    func firstTransition(atOrAfter instant: Int) -> Int {
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = low + (high - low) / 2
            if transitions[middle] < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The UTC offset in seconds at `instant`.
    public func utcOffset(at instant: Int) -> Int { localTimeType(at: instant).utcOffset }

    /// The instants in `low...high` at which the local time type may change, in order: the table's
    /// transitions and the footer's changes (some of which may keep the offset and change only the
    /// abbreviation or daylight flag).
    public func transitions(from low: Int, through high: Int) -> [Int] {
        guard low <= high else { return [] }
        var result: [Int] = []
        var index = firstTransition(atOrAfter: low)
        while index < transitions.count, transitions[index] <= high {
            result.append(transitions[index])
            index += 1
        }
        if let footer {
            let from = max(low, transitions.last ?? low)
            result += footer.transitions(from: from, through: high).filter { $0 > (transitions.last ?? .min) }
        }
        return result
    }
}
