import Foundation

extension RRuleSet {
    /// Parses what python-dateutil's `rrulestr` accepts: either one rule (`FREQ=…` or `RRULE:FREQ=…`,
    /// which needs `dtstart`) or whitespace-separated content lines
    /// `DTSTART[;TZID=Zone]:…`, `RRULE:…` (or a bare `FREQ=…`), `RDATE:…` and `EXDATE[;TZID=Zone]:…`,
    /// with comma-separated values in RDATE/EXDATE. Everything is case-insensitive.
    ///
    /// Dates are `YYYYMMDD` (midnight), `YYYYMMDDTHHMMSS` (floating) or `YYYYMMDDTHHMMSSZ` (UTC).
    /// Time zones follow dateutil's rules for mixing them:
    /// - With a floating DTSTART, dateutil rejects a UTC UNTIL ("RRULE UNTIL values must be specified in
    ///   UTC when DTSTART is timezone-aware") and cannot compare UTC EXDATE/RDATE values. Chime rejects
    ///   them too unless `timeZone` is given, in which case each UTC value is converted to the wall-clock
    ///   time it has in `timeZone` (the zone the reminder will fire in) and stored as floating.
    /// - With `DTSTART:…Z` or `DTSTART;TZID=Zone:…` the set expands on that zone's wall clock, as dateutil
    ///   does; UNTIL must then be UTC, and EXDATE/RDATE must carry a zone (`Z`, or `TZID=` on EXDATE).
    ///   Zoned values are converted to the set's wall clock (exact for UTC; for other zones exact except
    ///   for times inside a DST transition).
    ///
    /// A DTSTART line wins over the `dtstart` argument. An RRULE line with no DTSTART anywhere is an error
    /// (dateutil would use the current time, which ChimeCore never reads).
    ///
    /// - Throws: ``RuleSyntaxError`` (grammar "RRULE") with the offending token and its offset in `text`.
    public static func parse(_ text: String, dtstart: LocalDateTime? = nil, timeZone: Zone? = nil)
        throws(RuleSyntaxError) -> RRuleSet
    {
        try RRuleSetParser(text: text, dtstart: dtstart, timeZone: timeZone).parse()
    }

    /// Builds a set without validation; the parser validates with offsets of its own.
    init(
        unchecked dtstart: LocalDateTime, rules: [RRule], rdates: [LocalDateTime], exdates: [LocalDateTime],
        zone: String?
    ) {
        self.dtstart = dtstart
        self.rules = rules
        self.rdates = rdates
        self.exdates = exdates
        self.timeZoneIdentifier = zone
    }
}

/// The state of one `RRuleSet.parse` call.
private struct RRuleSetParser {
    let scanner: RRuleScanner
    let dtstartArgument: LocalDateTime?
    let timeZone: Zone?

    init(text: String, dtstart: LocalDateTime?, timeZone: Zone?) {
        scanner = RRuleScanner(text)
        dtstartArgument = dtstart
        self.timeZone = timeZone
    }

    /// A date value as written, with where it was written.
    struct DateValue {
        var value: RRule.Until
        var zone: Zone?
        var offset: Int
        var end: Int
    }

    struct RuleLine {
        var parsed: RRuleParsedRule
        var offset: Int
    }

    func parse() throws(RuleSyntaxError) -> RRuleSet {
        let chars = scanner.chars
        var lines: [(Int, Int)] = []
        var i = 0
        while i < chars.count {
            if chars[i].isWhitespace {
                i += 1
                continue
            }
            let start = i
            while i < chars.count && !chars[i].isWhitespace { i += 1 }
            lines.append((start, i))
        }
        guard !lines.isEmpty else {
            throw scanner.error(at: 0, to: 0, expected: "a rule such as FREQ=DAILY or RRULE:FREQ=DAILY")
        }
        var ruleLines: [RuleLine] = []
        var rdateValues: [DateValue] = []
        var exdateValues: [DateValue] = []
        var start: DateValue?
        var startZoneName: String?

        if lines.count == 1,
            !chars.contains(":") || scanner.upper(lines[0].0, min(lines[0].1, lines[0].0 + 6)) == "RRULE:"
        {
            let (s, e) = lines[0]
            let body = chars[s..<e].firstIndex(of: ":").map { $0 + 1 } ?? s
            if body > s, chars[body..<e].contains(":") {
                throw scanner.error(at: s, to: e, expected: "a single RRULE: prefix")
            }
            ruleLines.append(RuleLine(parsed: try scanner.parseRule(from: body, to: e), offset: s))
        } else {
            for (s, e) in lines {
                guard let colon = chars[s..<e].firstIndex(of: ":") else {
                    ruleLines.append(RuleLine(parsed: try scanner.parseRule(from: s, to: e), offset: s))
                    continue
                }
                let params = scanner.split(s, colon, on: ";")
                let (nameStart, nameEnd) = params[0]
                let name = scanner.upper(nameStart, nameEnd)
                let extra = Array(params.dropFirst())
                switch name {
                case "RRULE":
                    if let (ps, pe) = extra.first {
                        throw scanner.error(at: ps, to: pe, expected: "no parameters on RRULE (write RRULE:FREQ=…)")
                    }
                    ruleLines.append(RuleLine(parsed: try scanner.parseRule(from: colon + 1, to: e), offset: s))
                case "RDATE":
                    for (ps, pe) in extra where scanner.upper(ps, pe) != "VALUE=DATE-TIME" {
                        throw scanner.error(
                            at: ps, to: pe, expected: "no RDATE parameter other than VALUE=DATE-TIME (as dateutil)")
                    }
                    rdateValues += try dateValues(colon + 1, e, zone: nil)
                case "EXDATE", "DTSTART":
                    let (zone, zoneName) = try dateParameters(extra)
                    let values = try dateValues(colon + 1, e, zone: zone)
                    if name == "EXDATE" {
                        exdateValues += values
                    } else {
                        guard values.count == 1, let only = values.first else {
                            throw scanner.error(at: colon + 1, to: e, expected: "exactly one DTSTART value")
                        }
                        if start != nil {
                            throw scanner.error(at: nameStart, to: nameEnd, expected: "only one DTSTART line")
                        }
                        start = only
                        startZoneName = zoneName
                    }
                case "EXRULE":
                    throw scanner.error(
                        at: nameStart, to: nameEnd,
                        expected: "DTSTART, RRULE, RDATE or EXDATE (EXRULE is deprecated by RFC 5545 and not supported)"
                    )
                default:
                    throw scanner.error(at: nameStart, to: nameEnd, expected: "DTSTART, RRULE, RDATE or EXDATE")
                }
            }
        }
        guard !ruleLines.isEmpty || !rdateValues.isEmpty else {
            throw scanner.error(at: chars.count, to: chars.count, expected: "an RRULE or RDATE line")
        }

        // The set's wall clock: floating, UTC (DTSTART…Z) or the DTSTART's TZID.
        var setZone: Zone?
        var setZoneName: String?
        let dtstart: LocalDateTime
        if let start {
            if case .utc(let t) = start.value, start.zone == nil {
                setZone = .utc
                setZoneName = "UTC"
                dtstart = t
            } else if let zone = start.zone {
                if case .utc = start.value {
                    throw scanner.error(
                        at: start.offset, to: start.end,
                        expected: "a local time without Z after TZID (dateutil: multiple time zones)")
                }
                setZone = zone
                setZoneName = startZoneName
                dtstart = start.value.localValue ?? LocalDateTime(year: 1970, month: 1, day: 1)
            } else {
                dtstart = start.value.localValue ?? LocalDateTime(year: 1970, month: 1, day: 1)
            }
        } else if let dtstartArgument {
            dtstart = dtstartArgument
        } else {
            throw scanner.error(
                at: 0, to: 0,
                expected: "a DTSTART line (or a dtstart argument): the start fills in what the rule leaves out")
        }
        guard (1...RRuleExpander.maxYear).contains(dtstart.year), LocalDateTime(iso: dtstart.description) != nil else {
            throw scanner.error(at: start?.offset ?? 0, to: start?.end ?? 0, expected: "a DTSTART in years 1 to 9999")
        }

        var rules: [RRule] = []
        for line in ruleLines {
            var rule = line.parsed.rule
            if case .utc(let t) = rule.until, setZone == nil {
                guard let timeZone else {
                    let part = line.parsed.parts["UNTIL"]
                    throw scanner.error(
                        at: part?.offset ?? line.offset, to: (part?.offset ?? line.offset) + (part?.text.count ?? 0),
                        expected:
                            "a floating UNTIL (YYYYMMDDTHHMMSS without Z) because DTSTART is floating "
                            + "(dateutil rejects mixing them); or pass a time zone to convert it"
                    )
                }
                rule.until = .local(RRuleSet.wallClock(ofUTC: t, in: timeZone))
            }
            rules.append(rule)
        }
        func wall(_ v: DateValue, what: String) throws(RuleSyntaxError) -> LocalDateTime {
            let zone: Zone?
            switch v.value {
            case .utc: zone = .utc
            default: zone = v.zone
            }
            let local = v.value.utcValue
            if let setZone {
                guard let zone else {
                    throw scanner.error(
                        at: v.offset, to: v.end,
                        expected:
                            "a \(what) with a time zone (…Z\(what == "EXDATE" ? " or EXDATE;TZID=" : "")) "
                            + "because DTSTART has one"
                    )
                }
                if zone.identifier == setZone.identifier { return local }
                return RRuleSet.wallClock(ofUTC: RRuleSet.utc(ofWallClock: local, in: zone), in: setZone)
            }
            guard let zone else { return local }
            guard let timeZone else {
                throw scanner.error(
                    at: v.offset, to: v.end,
                    expected:
                        "a floating \(what) (no Z or TZID) because DTSTART is floating; "
                        + "or pass a time zone to convert it"
                )
            }
            return RRuleSet.wallClock(ofUTC: RRuleSet.utc(ofWallClock: local, in: zone), in: timeZone)
        }
        var rdates: [LocalDateTime] = []
        for v in rdateValues { rdates.append(try wall(v, what: "RDATE")) }
        var exdates: [LocalDateTime] = []
        for v in exdateValues { exdates.append(try wall(v, what: "EXDATE")) }

        let set = RRuleSet(unchecked: dtstart, rules: rules, rdates: rdates, exdates: exdates, zone: setZoneName)
        for (rule, line) in zip(rules, ruleLines) {
            if case .failure(let problem) = set.compile(rule) {
                let part = line.parsed.parts[problem.part]
                let offset = part?.offset ?? line.offset
                throw scanner.error(at: offset, to: offset + (part?.text.count ?? 0), expected: problem.expected)
            }
        }
        return set
    }

    /// DTSTART/EXDATE parameters: `TZID=Zone` and at most one `VALUE=DATE-TIME`/`VALUE=DATE`.
    func dateParameters(_ params: [(Int, Int)]) throws(RuleSyntaxError) -> (Zone?, String?) {
        var zone: Zone?
        var zoneName: String?
        var sawValue = false
        for (ps, pe) in params {
            let upper = scanner.upper(ps, pe)
            if upper.hasPrefix("TZID=") {
                let name = scanner.text(ps + 5, pe)
                guard let z = Zone(identifier: name) else {
                    throw scanner.error(
                        at: ps + 5, to: pe, expected: "a known time zone identifier such as Europe/Paris")
                }
                zone = z
                zoneName = name
            } else if upper == "VALUE=DATE-TIME" || upper == "VALUE=DATE" {
                if sawValue { throw scanner.error(at: ps, to: pe, expected: "at most one VALUE parameter") }
                sawValue = true
            } else {
                throw scanner.error(at: ps, to: pe, expected: "TZID=Zone, VALUE=DATE-TIME or VALUE=DATE")
            }
        }
        return (zone, zoneName)
    }

    func dateValues(_ from: Int, _ to: Int, zone: Zone?) throws(RuleSyntaxError) -> [DateValue] {
        var values: [DateValue] = []
        for (s, e) in scanner.split(from, to, on: ",") {
            guard let value = scanner.parseDateValue(s, e) else {
                throw scanner.error(
                    at: s, to: e,
                    expected:
                        "a date YYYYMMDD, a local time YYYYMMDDTHHMMSS or a UTC time YYYYMMDDTHHMMSSZ (comma-separated)"
                )
            }
            if zone != nil, case .utc = value {
                throw scanner.error(
                    at: s, to: e, expected: "a local time without Z after TZID (dateutil: multiple time zones)")
            }
            values.append(DateValue(value: value, zone: zone, offset: s, end: e))
        }
        return values
    }
}

extension RRule.Until {
    /// The time as written, whatever its form (for `.utc`, the UTC wall-clock reading).
    var utcValue: LocalDateTime {
        switch self {
        case .date(let y, let m, let d): return LocalDateTime(year: y, month: m, day: d)
        case .local(let t), .utc(let t): return t
        }
    }
}
