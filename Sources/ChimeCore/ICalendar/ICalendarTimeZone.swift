import Foundation

/// A `VTIMEZONE` as its file defines it: observances (STANDARD and DAYLIGHT) that start at an onset
/// (DTSTART, repeated yearly by RRULE, or by RDATE) and set the UTC offset from then on.
///
/// Chime runs rules on IANA zones, so a definition is used to find one: the zone its TZID names
/// (`Europe/Berlin`, also behind a prefix such as `/mozilla.org/20050126_1/Europe/Berlin`), its
/// `X-LIC-LOCATION`, or else a known zone whose offsets agree with the definition at every onset and
/// between them over the years asked (Outlook's `W. Europe Standard Time` becomes a zone with Berlin's
/// offsets).
///
/// The onsets are computed once, up to the year ``lastYear``: at most ``maximumTransitions`` of them, and
/// an observance's RRULE must repeat yearly (as every calendar program writes it), so that a definition
/// costs a bounded amount of work however it is written.
public struct ICalendarTimeZone: Hashable, Sendable {
    public var tzid: String
    public var location: String?
    /// Every onset (seconds since 1970, UTC) with the offset it sets, in time order.
    public private(set) var transitions: [Transition]
    /// The offset before the first onset.
    public private(set) var initialOffset: Int

    public struct Transition: Hashable, Sendable {
        public var at: Int
        public var offset: Int
    }

    public static let maximumTransitions = 10_000
    public static let lastYear = 2300

    /// Reads a VTIMEZONE component, within one search's budget.
    public init(_ component: ICalendarComponent) throws(ICalendarError) {
        var budget = SearchBudget()
        try self.init(component, budget: &budget)
    }

    /// Reads a VTIMEZONE component, the expansion of its onsets taken from `budget`; a definition that
    /// needs more is refused like a malformed one.
    public init(_ component: ICalendarComponent, budget: inout SearchBudget) throws(ICalendarError) {
        guard let tzid = component.property("TZID")?.value, !tzid.isEmpty else {
            throw ICalendarError(line: component.line, "a VTIMEZONE has no TZID")
        }
        self.tzid = tzid
        location = component.property("X-LIC-LOCATION")?.value
        transitions = []
        var earliest: (LocalDateTime, Int)?
        let end = LocalDateTime(year: Self.lastYear, month: 12, day: 31, hour: 23, minute: 59, second: 59)
        for sub in component.components where sub.name == "STANDARD" || sub.name == "DAYLIGHT" {
            guard let start = sub.property("DTSTART"),
                let from = sub.property("TZOFFSETFROM").flatMap({ Self.offset($0.value) }),
                let to = sub.property("TZOFFSETTO").flatMap({ Self.offset($0.value) })
            else {
                throw ICalendarError(
                    line: sub.line,
                    "\(sub.name) of time zone \(tzid) needs DTSTART, TZOFFSETFROM and TZOFFSETTO (+hhmm)")
            }
            let onset = try ICalendarTime.value(of: start).local
            if earliest == nil || onset < earliest!.0 { earliest = (onset, from) }
            var lines = sub.properties("RRULE").map { "RRULE:\($0.value)" }
            var rdates: [ICalendarTime] = []
            for property in sub.properties("RDATE") { rdates += try ICalendarTime.values(of: property) }
            lines += rdates.map { "RDATE:\(ICalendarTime.floating($0.local).text)" }
            // Without a rule, the onset itself is the one (RFC 5545 counts DTSTART as the first onset).
            if sub.properties("RRULE").isEmpty { lines.append("RDATE:\(ICalendarTime.floating(onset).text)") }
            let fixed = Zone(secondsFromGMT: from)
            let set: RRuleSet
            do {
                // A UTC UNTIL is read on the clock before the onset.
                set = try RRuleSet.parse(lines.joined(separator: "\n"), dtstart: onset, timeZone: fixed)
            } catch {
                throw ICalendarError(line: sub.line, "\(sub.name) of time zone \(tzid): \(error)")
            }
            guard set.rules.allSatisfy({ $0.frequency == .yearly }) else {
                throw ICalendarError(
                    line: sub.line, "\(sub.name) of time zone \(tzid): its RRULE must repeat yearly (FREQ=YEARLY)")
            }
            var iterator = set.makeIterator(budget: budget)
            defer { budget = iterator.budget }
            while let local = iterator.next(), local <= end {
                guard transitions.count < Self.maximumTransitions else {
                    throw ICalendarError(
                        line: sub.line,
                        "time zone \(tzid) changes its offset more than \(Self.maximumTransitions) times before "
                            + "\(Self.lastYear)")
                }
                transitions.append(Transition(at: local.secondsSinceEpoch - from, offset: to))
            }
            if iterator.exhausted {
                throw ICalendarError(
                    line: sub.line,
                    "time zone \(tzid): its onsets take more than the \(budget.limit) steps chime gives the file's "
                        + "time zones")
            }
        }
        guard let earliest else {
            throw ICalendarError(line: component.line, "time zone \(tzid) has no STANDARD or DAYLIGHT part")
        }
        initialOffset = earliest.1
        transitions.sort { $0.at < $1.at }
    }

    /// `+0100`, `-0500`, `+053000`.
    static func offset(_ text: String) -> Int? {
        let bytes = Array(text.trimmingCharacters(in: .whitespaces).utf8)
        guard bytes.count == 5 || bytes.count == 7, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"),
            bytes.dropFirst().allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else { return nil }
        let digits = bytes.dropFirst().map { Int($0 - 0x30) }
        let hours = digits[0] * 10 + digits[1]
        let minutes = digits[2] * 10 + digits[3]
        let seconds = digits.count == 6 ? digits[4] * 10 + digits[5] : 0
        guard hours < 24, minutes < 60, seconds < 60 else { return nil }
        return (bytes[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60 + seconds)
    }

    /// The UTC offset the definition gives at `instant`: that of the latest onset at or before it, or
    /// the earliest observance's offset before all onsets.
    public func utcOffset(at instant: Date) -> Int {
        let raw = instant.timeIntervalSince1970
        let seconds = raw.isFinite ? Int(max(-1e15, min(1e15, raw)).rounded(.down)) : 0
        // The first transition after `seconds`; the one before it is in force.
        var low = 0
        var high = transitions.count
        while low < high {
            let middle = (low + high) / 2
            if transitions[middle].at <= seconds { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? initialOffset : transitions[low - 1].offset
    }

    /// The IANA zone this definition stands for, checked or found over `years` (instants to compare
    /// offsets at), or nil when no known zone has its offsets.
    public func ianaZone(over range: ClosedRange<Date>) -> Zone? {
        var budget = SearchBudget()
        return try? ianaZone(over: range, budget: &budget)
    }

    /// The same, each comparison of a zone's offset with the definition's taken from `budget`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the budget ran out before the search ended.
    public func ianaZone(over range: ClosedRange<Date>, budget: inout SearchBudget) throws(SearchBudgetExhausted)
        -> Zone?
    {
        // The definition's offsets, computed once; most zones differ at the first sample.
        let samples = sampleInstants(over: range).map { ($0, utcOffset(at: $0)) }
        try budget.spend(samples.count)
        func agrees(_ zone: Zone, _ budget: inout SearchBudget) throws(SearchBudgetExhausted) -> Bool {
            for (instant, offset) in samples {
                try budget.spend(SearchBudget.wallClockCost)
                if WallClock.utcOffset(at: instant, in: zone) != offset { return false }
            }
            return true
        }
        for candidate in [tzid, location].compactMap({ $0 }) {
            if let zone = Self.namedZone(candidate), try agrees(zone, &budget) { return zone }
        }
        let words = Set(tzid.lowercased().split(whereSeparator: { !$0.isLetter }).map(String.init))
        var matches: [Zone] = []
        for zone in Self.knownZones where try agrees(zone, &budget) { matches.append(zone) }
        // Any match gives the same times; one whose name shares a word with the TZID reads better.
        return matches.first { zone in
            zone.identifier.lowercased().split(whereSeparator: { !$0.isLetter }).contains { words.contains(String($0)) }
        } ?? matches.first
    }

    /// The zones a definition is compared with: every region of the system's tz database but `Etc/…`, by
    /// name, made once (Foundation's list where the database has no files).
    static let knownZones: [Zone] = {
        let names = ZoneRulesStore.shared.directory.zoneNames()
        return names.isEmpty ? TimeZone.knownTimeZoneIdentifiers.sorted() : names
    }().compactMap {
        $0.contains("/") && !$0.hasPrefix("Etc/") ? Zone(identifier: $0) : nil
    }

    /// The zone a TZID names: an IANA name, also as the tail of a path (`/mozilla.org/…/Europe/Berlin`).
    public static func namedZone(_ tzid: String) -> Zone? {
        let parts = tzid.split(separator: "/").map(String.init)
        for count in stride(from: min(3, parts.count), through: 1, by: -1) {
            let name = parts.suffix(count).joined(separator: "/")
            if name.contains("/") || name == "UTC" || name == "GMT", let zone = Zone(identifier: name) {
                return zone
            }
        }
        return nil
    }

    /// An instant every 10 days over the range (at most 200), and an hour either side of each onset in it
    /// (at most 200 onsets).
    func sampleInstants(over range: ClosedRange<Date>) -> [Date] {
        var samples: [Date] = []
        let span = range.upperBound.timeIntervalSince(range.lowerBound)
        let step = max(10 * 86_400, span / 200)
        var t = range.lowerBound
        while t <= range.upperBound {
            samples.append(t)
            t += step
        }
        let from = Int(range.lowerBound.timeIntervalSince1970)
        let to = Int(range.upperBound.timeIntervalSince1970)
        for transition in transitions.lazy.filter({ $0.at >= from && $0.at <= to }).prefix(200) {
            let at = Date(timeIntervalSince1970: Double(transition.at))
            samples += [at - 3600, at + 3600]
        }
        return samples
    }
}
