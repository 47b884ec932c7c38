import Foundation

extension RRuleSet {
    /// The set in plain words: `every month on the first Friday at 20:15`, `every weekday at 09:00, 10
    /// times`, `every hour at :00 and :30`. Parts a rule leaves out are taken from DTSTART, as expansion
    /// does (`FREQ=MONTHLY` alone fires on DTSTART's day of the month).
    public var summary: String {
        var parts = rules.map { RRuleWords(rule: $0, dtstart: dtstart).text }
        if parts.isEmpty { parts = ["no repeating rule"] }
        var text = parts.joined(separator: "; and ")
        if !rdates.isEmpty {
            text +=
                rdates.count <= 3
                ? ", and on \(RRuleWords.list(rdates.map(RRuleWords.dateTime)))"
                : ", and on \(rdates.count) more dates"
        }
        if !exdates.isEmpty {
            text +=
                exdates.count <= 3
                ? ", except \(RRuleWords.list(exdates.map(RRuleWords.dateTime)))"
                : ", except on \(exdates.count) dates"
        }
        if let timeZoneIdentifier { text += " (\(timeZoneIdentifier))" }
        return text
    }
}

/// One rule in words.
struct RRuleWords {
    let rule: RRule
    let dtstart: LocalDateTime

    var text: String {
        var text = every
        var dayPart = days
        // A daily or weekly rule that only names weekdays reads best as `every weekday`.
        if rule.interval == 1, rule.frequency == .daily || rule.frequency == .weekly, !rule.byDay.isEmpty,
            rule.byMonthDay.isEmpty, rule.byYearDay.isEmpty, rule.byWeekNo.isEmpty
        {
            let set = Set(rule.byDay.map(\.weekday))
            text =
                set == [.monday, .tuesday, .wednesday, .thursday, .friday]
                ? "every weekday" : "every " + Self.list(set.sorted().map(Self.weekdayName))
            dayPart = ""
        }
        if rule.frequency == .yearly, rule.byMonth.count == 1, rule.byMonthDay.count == 1, rule.byMonthDay[0] > 0,
            rule.byDay.isEmpty, rule.byYearDay.isEmpty, rule.byWeekNo.isEmpty
        {
            // `every year on June 1st`
            text += " on \(Self.monthNames[rule.byMonth[0] - 1]) \(Self.ordinal(rule.byMonthDay[0]))"
            dayPart = ""
        } else if !rule.byMonth.isEmpty {
            text += " in " + Self.list(rule.byMonth.sorted().map { Self.monthNames[$0 - 1] })
        }
        if !rule.byWeekNo.isEmpty {
            text += " in week" + (rule.byWeekNo.count == 1 ? " " : "s ") + Self.list(rule.byWeekNo.map(Self.counted))
        }
        if !rule.byYearDay.isEmpty {
            text +=
                " on the " + Self.list(rule.byYearDay.map(Self.counted)) + " day"
                + (rule.byYearDay.count == 1 ? "" : "s") + " of the year"
        }
        let period = rule.frequency == .yearly ? "year" : rule.frequency == .monthly ? "month" : "period"
        var setPosition = ""
        if rule.bySetPos.count == 1, rule.frequency <= .monthly, rule.byMonthDay.isEmpty, rule.byYearDay.isEmpty,
            rule.byWeekNo.isEmpty, !rule.byDay.isEmpty, rule.byDay.allSatisfy({ $0.ordinal == nil })
        {
            // `on the last weekday of the month`
            let set = Set(rule.byDay.map(\.weekday))
            let named =
                set == [.monday, .tuesday, .wednesday, .thursday, .friday]
                ? "weekday"
                : set == [.saturday, .sunday]
                    ? "weekend day"
                    : "day of " + Self.list(set.sorted().map(Self.weekdayName))
            dayPart = " on the \(Self.counted(rule.bySetPos[0])) \(named)" + (period == "year" ? " of the year" : "")
        } else if !rule.bySetPos.isEmpty {
            setPosition = ", only the " + Self.list(rule.bySetPos.map(Self.counted)) + " of those in each \(period)"
        }
        text += dayPart
        if let time = times { text += " " + time }
        text += setPosition
        if rule.interval > 1 || rule.count != nil {
            text += " from " + dtstart.description.prefix(10)
        }
        if let count = rule.count { text += count == 1 ? ", once" : ", \(count) times" }
        if let until = rule.until {
            switch until {
            case .date(let y, let m, let d):
                text += " until " + LocalDateTime(year: y, month: m, day: d).description.prefix(10)
            case .local(let t): text += " until " + Self.dateTime(t)
            case .utc(let t): text += " until " + Self.dateTime(t) + " UTC"
            }
        }
        return text
    }

    /// `every month`, `every 2 weeks`, `every weekday` (a daily or weekly rule on Monday to Friday).
    private var every: String {
        let unit: String
        switch rule.frequency {
        case .yearly: unit = "year"
        case .monthly: unit = "month"
        case .weekly: unit = "week"
        case .daily: unit = "day"
        case .hourly: unit = "hour"
        case .minutely: unit = "minute"
        case .secondly: unit = "second"
        }
        return rule.interval == 1 ? "every \(unit)" : "every \(rule.interval) \(unit)s"
    }

    /// The day part: `on the first Friday`, `on Monday, Wednesday and Friday`, `on the 1st and 15th`.
    private var days: String {
        let weekdays = rule.byDay
        var monthDays = rule.byMonthDay
        // A weekly rule without BYDAY fires on DTSTART's weekday; a monthly or yearly rule without a day
        // part, on DTSTART's day of the month.
        var plainWeekdays = weekdays.filter { $0.ordinal == nil || !rule.frequency.countsWeekdayOrdinals }
        let ordinalWeekdays = weekdays.filter { $0.ordinal != nil && rule.frequency.countsWeekdayOrdinals }
        if rule.frequency == .weekly, weekdays.isEmpty {
            plainWeekdays = [RRule.WeekdayNum(Weekday(rawValue: dtstart.isoWeekday) ?? .monday)]
        }
        if rule.frequency <= .monthly, weekdays.isEmpty, monthDays.isEmpty, rule.byYearDay.isEmpty,
            rule.byWeekNo.isEmpty
        {
            monthDays = [dtstart.day]
        }
        var text = ""
        if rule.frequency == .yearly, rule.byMonth.isEmpty, !monthDays.isEmpty, rule.byYearDay.isEmpty,
            rule.byWeekNo.isEmpty, weekdays.isEmpty
        {
            text += " on " + Self.monthNames[dtstart.month - 1] + " " + Self.list(monthDays.map(Self.dayOfMonth))
            return text
        }
        if !monthDays.isEmpty {
            text += " on the " + Self.list(monthDays.map(Self.dayOfMonth))
            if monthDays.count == 1, monthDays[0] < 0 || monthDays[0] > 28 {
                text += monthDays[0] < 0 ? "" : " (months without it are skipped)"
            }
        }
        if !ordinalWeekdays.isEmpty {
            let scope =
                rule.frequency == .yearly && rule.byMonth.isEmpty && rule.byWeekNo.isEmpty ? " of the year" : ""
            let named = ordinalWeekdays.map { Self.counted($0.ordinal ?? 1) + " " + Self.weekdayName($0.weekday) }
            text += (monthDays.isEmpty ? " on the " : " when it is the ") + Self.list(named) + scope
        }
        if !plainWeekdays.isEmpty {
            let set = Set(plainWeekdays.map(\.weekday))
            let filters = !monthDays.isEmpty || !ordinalWeekdays.isEmpty
            let named: String
            if set == [.monday, .tuesday, .wednesday, .thursday, .friday] {
                named = filters ? "a weekday" : "weekdays"
            } else if set == [.saturday, .sunday] {
                named = filters ? "a weekend day" : "weekends"
            } else if filters {
                named = "a " + set.sorted().map(Self.weekdayName).joined(separator: " or a ")
            } else {
                named = Self.list(set.sorted().map(Self.weekdayName))
            }
            text += (filters ? " when it is " : " on ") + named
        }
        return text
    }

    /// `at 09:00`, `at 09:00 and 17:30`, `at :00 and :30 past each hour`, `at second 0 of each minute`.
    private var times: String? {
        func values(_ list: [Int], _ fromStart: Int, varies: Bool) -> [Int]? {
            if !list.isEmpty { return Set(list).sorted() }
            return varies ? nil : [fromStart]
        }
        let hours = values(rule.byHour, dtstart.hour, varies: rule.frequency >= .hourly)
        let minutes = values(rule.byMinute, dtstart.minute, varies: rule.frequency >= .minutely)
        let seconds = values(rule.bySecond, dtstart.second, varies: rule.frequency >= .secondly)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        guard let seconds else {
            // Every second of the chosen minutes.
            var text = "every second"
            if let minutes { text += " of minute" + (minutes.count == 1 ? " " : "s ") + Self.list(minutes.map(two)) }
            if let hours { text += " in hour" + (hours.count == 1 ? " " : "s ") + Self.list(hours.map(two)) }
            return rule.frequency == .secondly ? (hours == nil && minutes == nil ? nil : text) : text
        }
        let showSeconds = seconds != [0]
        guard let minutes else {
            let each = rule.frequency == .minutely ? "" : " of each minute"
            var text = "at second" + (seconds.count == 1 ? " " : "s ") + Self.runs(seconds, two) + each
            if let hours { text += " in hour" + (hours.count == 1 ? " " : "s ") + Self.list(hours.map(two)) }
            return text
        }
        guard let hours else {
            let marks = minutes.flatMap { m in seconds.map { s in ":" + two(m) + (showSeconds ? ":" + two(s) : "") } }
            let each = rule.frequency == .hourly ? "" : " past each hour"
            return marks.count <= 12
                ? "at " + Self.list(marks) + each
                : "at \(marks.count) times\(each.isEmpty ? " an hour" : each)"
        }
        let count = hours.count * minutes.count * seconds.count
        guard count <= 12 else {
            return "at minute" + (minutes.count == 1 ? " " : "s ") + Self.runs(minutes, two) + " of hour"
                + (hours.count == 1 ? " " : "s ") + Self.runs(hours, two)
                + (showSeconds ? " (seconds " + Self.runs(seconds, two) + ")" : "")
        }
        let marks = hours.flatMap { h in
            minutes.flatMap { m in seconds.map { s in two(h) + ":" + two(m) + (showSeconds ? ":" + two(s) : "") } }
        }
        return "at " + Self.list(marks)
    }

    static let monthNames = EnglishWords.monthNames

    static func weekdayName(_ day: Weekday) -> String { EnglishWords.weekdayNames[day.rawValue - 1] }

    static func list(_ items: [String]) -> String { EnglishWords.list(items) }

    /// `09 to 17`, `00, 15 and 30`: runs of three or more consecutive values as ranges.
    static func runs(_ values: [Int], _ format: (Int) -> String) -> String {
        var parts: [String] = []
        var index = 0
        while index < values.count {
            var end = index
            while end + 1 < values.count, values[end + 1] == values[end] + 1 { end += 1 }
            if end - index >= 2 {
                parts.append(format(values[index]) + " to " + format(values[end]))
            } else {
                parts += values[index...end].map(format)
            }
            index = end + 1
        }
        return list(parts)
    }

    /// 1 → `first`, 2 → `second`, 21 → `21st`, -1 → `last`, -2 → `second to last`.
    static func counted(_ n: Int) -> String {
        let words = [1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"]
        if n == -1 { return "last" }
        if n < 0 { return counted(-n) + " to last" }
        if let word = words[n] { return word }
        return ordinal(n)
    }

    /// 1 → `1st`, 22 → `22nd`, -1 → `last day`, -3 → `third to last day`.
    static func dayOfMonth(_ n: Int) -> String {
        n < 0 ? counted(n) + " day" : ordinal(n)
    }

    static func ordinal(_ n: Int) -> String { EnglishWords.ordinal(n) }

    /// `2026-12-04 20:15`, with seconds when they are not zero.
    static func dateTime(_ t: LocalDateTime) -> String {
        let text = t.description.replacingOccurrences(of: "T", with: " ")
        return t.second == 0 ? String(text.prefix(16)) : text
    }
}

extension RRule.Frequency {
    /// Whether an ordinal on BYDAY counts within the period (`2FR` in a month or a year); finer
    /// frequencies ignore it, as dateutil does.
    var countsWeekdayOrdinals: Bool { self == .monthly || self == .yearly }
}
