extension RRule {
    /// The RFC 5545 text of the rule without the `RRULE:` prefix, e.g. `FREQ=MONTHLY;COUNT=3;BYDAY=-1FR`.
    ///
    /// Parts come in a fixed order (FREQ, INTERVAL, WKST, COUNT, UNTIL, then the BYxxx parts in dateutil's
    /// order); list values keep the order they were given in, so `RRule.parse(r.rfcString) == r`.
    /// INTERVAL=1 is left out, which loses nothing because 1 is the default.
    public var rfcString: String {
        var parts = ["FREQ=" + frequency.rawValue]
        if interval != 1 { parts.append("INTERVAL=\(interval)") }
        if let weekStart { parts.append("WKST=" + RRule.weekdayCode(weekStart)) }
        if let count { parts.append("COUNT=\(count)") }
        if let until { parts.append("UNTIL=\(until)") }
        func add(_ name: String, _ values: [Int]) {
            if !values.isEmpty { parts.append(name + "=" + values.map(String.init).joined(separator: ",")) }
        }
        add("BYSETPOS", bySetPos)
        add("BYMONTH", byMonth)
        add("BYMONTHDAY", byMonthDay)
        add("BYYEARDAY", byYearDay)
        add("BYWEEKNO", byWeekNo)
        if !byDay.isEmpty { parts.append("BYDAY=" + byDay.map(\.description).joined(separator: ",")) }
        add("BYHOUR", byHour)
        add("BYMINUTE", byMinute)
        add("BYSECOND", bySecond)
        return parts.joined(separator: ";")
    }
}
