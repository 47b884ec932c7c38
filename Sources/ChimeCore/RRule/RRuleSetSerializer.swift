extension RRuleSet {
    /// The set as `rrulestr` text, one content line per `\n`: `DTSTART`, then each `RRULE`, then `RDATE`
    /// and `EXDATE` when present. A floating set writes floating times, a UTC set appends `Z`, a zoned set
    /// writes `DTSTART;TZID=…` and `EXDATE;TZID=…`, and its RDATEs in UTC (dateutil accepts no TZID on
    /// RDATE). `RRuleSet.parse(set.rfcString) == set` for every parsed floating or UTC set.
    public var rfcString: String {
        let zoneName = timeZoneIdentifier
        let isUTC = zoneName == "UTC"
        var lines: [String] = []
        let start = RRule.basicDateTime(dtstart)
        if let zoneName, !isUTC {
            lines.append("DTSTART;TZID=\(zoneName):\(start)")
        } else {
            lines.append("DTSTART:\(start)" + (isUTC ? "Z" : ""))
        }
        for rule in rules { lines.append("RRULE:" + rule.rfcString) }
        if !rdates.isEmpty {
            let values = rdates.map { t -> String in
                if isUTC { return RRule.basicDateTime(t) + "Z" }
                if let zone { return RRule.basicDateTime(RRuleSet.utc(ofWallClock: t, in: zone)) + "Z" }
                return RRule.basicDateTime(t)
            }
            lines.append("RDATE:" + values.joined(separator: ","))
        }
        if !exdates.isEmpty {
            let values = exdates.map { RRule.basicDateTime($0) + (isUTC ? "Z" : "") }.joined(separator: ",")
            if let zoneName, !isUTC {
                lines.append("EXDATE;TZID=\(zoneName):\(values)")
            } else {
                lines.append("EXDATE:" + values)
            }
        }
        return lines.joined(separator: "\n")
    }
}
