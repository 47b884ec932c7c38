import Foundation

/// A `VTIMEZONE` as its file defines it: observances (STANDARD and DAYLIGHT) that start at an onset
/// (DTSTART, repeated by RRULE or RDATE) and set the UTC offset from then on.
///
/// Chime runs rules on IANA zones, so a definition is used to find one: the zone its TZID names
/// (`Europe/Berlin`, also behind a prefix such as `/mozilla.org/20050126_1/Europe/Berlin`), its
/// `X-LIC-LOCATION`, or else a known zone whose offsets agree with the definition at every onset and
/// between them over the years asked (Outlook's `W. Europe Standard Time` becomes a zone with Berlin's
/// offsets).
public struct ICalendarTimeZone: Hashable, Sendable {
    public var tzid: String
    public var location: String?
    public var observances: [Observance]

    public struct Observance: Hashable, Sendable {
        /// The onsets, local times on the clock before them (`TZOFFSETFROM`).
        public var onsets: RRuleSet
        public var offsetFrom: Int
        public var offsetTo: Int
    }

    /// Reads a VTIMEZONE component.
    public init(_ component: ICalendarComponent) throws(ICalendarError) {
        guard let tzid = component.property("TZID")?.value, !tzid.isEmpty else {
            throw ICalendarError(line: component.line, "a VTIMEZONE has no TZID")
        }
        self.tzid = tzid
        location = component.property("X-LIC-LOCATION")?.value
        observances = []
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
            var rules = sub.properties("RRULE").map { "RRULE:\($0.value)" }
            var rdates: [ICalendarTime] = []
            for property in sub.properties("RDATE") { rdates += try ICalendarTime.values(of: property) }
            rules += rdates.map { "RDATE:\(ICalendarTime.floating($0.local).text)" }
            // Without a rule, the onset itself is the one (RFC 5545 counts DTSTART as the first onset).
            if sub.properties("RRULE").isEmpty { rules.append("RDATE:\(ICalendarTime.floating(onset).text)") }
            let fixed = TimeZone(secondsFromGMT: from) ?? TimeZone(identifier: "UTC")!
            let set: RRuleSet
            do {
                // A UTC UNTIL is read on the clock before the onset.
                set = try RRuleSet.parse(rules.joined(separator: "\n"), dtstart: onset, timeZone: fixed)
            } catch {
                throw ICalendarError(line: sub.line, "\(sub.name) of time zone \(tzid): \(error)")
            }
            observances.append(Observance(onsets: set, offsetFrom: from, offsetTo: to))
        }
        guard !observances.isEmpty else {
            throw ICalendarError(line: component.line, "time zone \(tzid) has no STANDARD or DAYLIGHT part")
        }
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
        var best: (Int, Int)?  // (onset in seconds since 1970, offset)
        let seconds = Int(instant.timeIntervalSince1970.rounded(.down))
        for observance in observances {
            let local = LocalDateTime(
                daysSinceEpoch: Int((Double(seconds + observance.offsetFrom) / 86_400).rounded(.down)),
                secondsIntoDay: ((seconds + observance.offsetFrom) % 86_400 + 86_400) % 86_400)
            // The latest onset at or before `local`: walk the onsets of the last two years before it.
            var iterator = observance.onsets.makeIterator(after: local.adding(days: -800), inclusive: true)
            var latest: LocalDateTime?
            var steps = 0
            while let onset = iterator.next(), onset <= local, steps < 10_000 {
                latest = onset
                steps += 1
            }
            if latest == nil, observance.onsets.dtstart <= local, steps == 0 {
                // Onsets so far apart that none falls in the window: the last before it, found from the start.
                var all = observance.onsets.makeIterator()
                while let onset = all.next(), onset <= local, steps < 100_000 {
                    latest = onset
                    steps += 1
                }
            }
            if let latest {
                let at = latest.secondsSinceEpoch - observance.offsetFrom
                if best == nil || at > best!.0 { best = (at, observance.offsetTo) }
            }
        }
        if let best { return best.1 }
        let earliest = observances.min { $0.onsets.dtstart < $1.onsets.dtstart }
        return earliest?.offsetFrom ?? 0
    }

    /// The IANA zone this definition stands for, checked or found over `years` (instants to compare
    /// offsets at), or nil when no known zone has its offsets.
    public func ianaZone(over range: ClosedRange<Date>) -> TimeZone? {
        for candidate in [tzid, location].compactMap({ $0 }) {
            if let zone = Self.namedZone(candidate), agrees(with: zone, over: range) { return zone }
        }
        // The definition's offsets, computed once; most zones differ at the first sample.
        let samples = sampleInstants(over: range).map { ($0, utcOffset(at: $0)) }
        let words = Set(tzid.lowercased().split(whereSeparator: { !$0.isLetter }).map(String.init))
        var matches: [TimeZone] = []
        for identifier in TimeZone.knownTimeZoneIdentifiers.sorted() where identifier.contains("/") {
            guard !identifier.hasPrefix("Etc/"), let zone = TimeZone(identifier: identifier) else { continue }
            if samples.allSatisfy({ zone.secondsFromGMT(for: $0.0) == $0.1 }) { matches.append(zone) }
        }
        // Any match gives the same times; one whose name shares a word with the TZID reads better.
        return matches.first { zone in
            zone.identifier.lowercased().split(whereSeparator: { !$0.isLetter }).contains { words.contains(String($0)) }
        } ?? matches.first
    }

    /// The zone a TZID names: an IANA name, also as the tail of a path (`/mozilla.org/…/Europe/Berlin`).
    public static func namedZone(_ tzid: String) -> TimeZone? {
        let parts = tzid.split(separator: "/").map(String.init)
        for count in stride(from: min(3, parts.count), through: 1, by: -1) {
            let name = parts.suffix(count).joined(separator: "/")
            if name.contains("/") || name == "UTC" || name == "GMT", let zone = TimeZone(identifier: name) {
                return zone
            }
        }
        return nil
    }

    /// Whether `zone` has this definition's offsets at every sample.
    func agrees(with zone: TimeZone, over range: ClosedRange<Date>) -> Bool {
        sampleInstants(over: range).allSatisfy { zone.secondsFromGMT(for: $0) == utcOffset(at: $0) }
    }

    /// An instant every 10 days over the range (at most 200), and an hour either side of each onset in it.
    func sampleInstants(over range: ClosedRange<Date>) -> [Date] {
        var samples: [Date] = []
        let span = range.upperBound.timeIntervalSince(range.lowerBound)
        let step = max(10 * 86_400, span / 200)
        var t = range.lowerBound
        while t <= range.upperBound {
            samples.append(t)
            t += step
        }
        let start = LocalDateTime(daysSinceEpoch: Int(range.lowerBound.timeIntervalSince1970 / 86_400) - 1)
        let end = LocalDateTime(daysSinceEpoch: Int(range.upperBound.timeIntervalSince1970 / 86_400) + 1)
        for observance in observances {
            var iterator = observance.onsets.makeIterator(after: start, inclusive: true)
            var count = 0
            while let onset = iterator.next(), onset <= end, count < 100 {
                let at = Date(timeIntervalSince1970: Double(onset.secondsSinceEpoch - observance.offsetFrom))
                samples += [at - 3600, at + 3600]
                count += 1
            }
        }
        return samples
    }
}
