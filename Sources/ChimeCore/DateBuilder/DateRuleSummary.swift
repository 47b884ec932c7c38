extension DateRule {
    /// The rule in words, for listings: `every month on the first Friday at 20:15, 12 times`,
    /// `every 2 weeks on Monday and Friday at 09:00 from 2026-12-03`, `every weekday at 09:00`,
    /// `every year on January 27th at 09:00`, `every 90 minutes`.
    public var summary: String {
        var text: String
        switch pattern {
        case .days(let start, let stride, let offsets):
            if stride % 7 == 0 {
                let days = Set(offsets.map { LocalDateTime(daysSinceEpoch: start + $0).isoWeekday }).sorted()
                let named =
                    days == [1, 2, 3, 4, 5]
                    ? (stride == 7 ? "weekday" : "weekdays")
                    : EnglishWords.list(days.map(Self.weekdayName))
                text = stride == 7 ? "every \(named)" : Self.every(stride / 7, "week") + " on " + named
            } else {
                text = Self.every(stride, "day")
                if offsets != [0] { text += " (days \(offsets.map { "+\($0)" }.joined(separator: ", ")))" }
            }
            text += " at \(Self.describe(time))"
        case .months(let start, let stride, let monthOffsets, let days, let dayOffset):
            let described = EnglishWords.list(days.map(Self.describe))
            if stride % 12 == 0 {
                let months = Set(monthOffsets.map { DateBuilderMath.floorMod(start + $0, 12) }).sorted()
                text = Self.every(stride / 12, "year")
                if months.count == 1, dayOffset == 0, case .day(let n) = days.first, days.count == 1 {
                    // `every year on January 27th`
                    text += " on \(Self.monthNames[months[0]]) \(EnglishWords.ordinal(n))"
                } else {
                    text += " in " + EnglishWords.list(months.map { Self.monthNames[$0] }) + " on " + described
                }
            } else {
                text = Self.every(stride, "month") + " on " + described
            }
            if dayOffset != 0 { text += " \(dayOffset > 0 ? "+" : "")\(dayOffset) days" }
            text += " at \(Self.describe(time))"
        case .interval(_, let seconds):
            if seconds % 3600 == 0 {
                text = Self.every(seconds / 3600, "hour")
            } else if seconds % 60 == 0 {
                text = Self.every(seconds / 60, "minute")
            } else {
                text = Self.every(seconds, "second")
            }
        }
        if let from { text += " from \(from.description.prefix(10))" }
        if let count { text += count == 1 ? ", once" : ", \(count) times" }
        if let until { text += " until \(until.description)" }
        if case .named(let zone) = timeZone { text += " (\(zone))" }
        return text
    }

    private static func every(_ n: Int, _ unit: String) -> String { n == 1 ? "every \(unit)" : "every \(n) \(unit)s" }

    private static func weekdayName(_ isoWeekday: Int) -> String { EnglishWords.weekdayNames[(isoWeekday - 1) % 7] }

    private static let monthNames = EnglishWords.monthNames

    private static func describe(_ day: DateBuilder.MonthDaySelector) -> String {
        switch day {
        case .firstDay: return "the first day"
        case .lastDay: return "the last day"
        case .day(let n): return "the \(EnglishWords.ordinal(n))"
        case .weekday(let ordinal, let weekday):
            let names = [1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth", -1: "last"]
            return "the \(names[ordinal.rawValue] ?? "\(ordinal.rawValue)th") \(weekdayName(weekday.rawValue))"
        case .dayFromEnd(let n):
            return n == 1 ? "the last day" : "the \(EnglishWords.ordinal(n)) to last day"
        case .weekdayOfMonth(let n):
            if n == -1 { return "the last weekday" }
            return n > 0 ? "the \(EnglishWords.ordinal(n)) weekday" : "the \(EnglishWords.ordinal(-n)) to last weekday"
        }
    }

    private static func describe(_ time: Time) -> String {
        switch time {
        case .fixed(let time): return time.description
        case .random(let from, let to, _): return "a random time between \(from) and \(to)"
        }
    }
}
