extension DateBuilder {
    /// Picks one day of a week.
    public enum WeekDaySelector: Codable, Hashable, Sendable {
        case firstDay
        case lastDay
        case weekday(Weekday)
        case weekendStartDay
        case weekendEndDay
        /// The n-th day of the week, 0-based (used by `allDays`).
        case index(Int)

        /// Days from the first day of the week; may reach into the next week for the weekend days when
        /// the weekend straddles the week boundary (en_US: Saturday–Sunday with Sunday-first weeks),
        /// as Foundation's `nextWeekend(startingAfter:)` does.
        func offset(in week: WeekStructure) -> Int {
            switch self {
            case .firstDay: return 0
            case .lastDay: return 6
            case .weekday(let weekday): return week.distance(from: week.firstWeekday, to: weekday)
            case .weekendStartDay: return weekendStart(in: week)
            case .weekendEndDay: return weekendStart(in: week) + week.weekendLength - 1
            case .index(let n): return max(0, min(6, n))
            }
        }

        /// The first weekend to START strictly after the week's first midnight, as Foundation's
        /// `nextWeekend(startingAfter:)` finds it: when the weekend starts on the week's first day
        /// (en_IN: Sunday-first weeks, Sunday weekend) that is the following week's first day.
        private func weekendStart(in week: WeekStructure) -> Int {
            let distance = week.distance(from: week.firstWeekday, to: week.weekendStart)
            return distance == 0 ? 7 : distance
        }
    }

    /// Picks at most one day of a month.
    public enum MonthDaySelector: Codable, Hashable, Sendable {
        case firstDay
        case lastDay
        /// Day of month 1…31; months without that day are skipped.
        case day(Int)
        /// The n-th (or last) given weekday; months without a fifth one are skipped.
        case weekday(Ordinal, Weekday)
        /// The n-th day counted back from the month's end, 1…31 (1: the last day, 2: the one before).
        case dayFromEnd(Int)
        /// The n-th Monday-to-Friday day of the month, 1…23, or counted back from its end, -1…-23
        /// (RRULE's `BYDAY=MO,TU,WE,TH,FR;BYSETPOS=n`).
        case weekdayOfMonth(Int)

        /// The local day number this selects in the month `monthIndex` (`year * 12 + month - 1`).
        func day(inMonth monthIndex: Int) -> Int? {
            guard let first = DateBuilderMath.firstDay(ofMonth: monthIndex) else { return nil }
            let length = DateBuilderMath.daysIn(month: monthIndex)
            switch self {
            case .firstDay:
                return first
            case .lastDay:
                return first + length - 1
            case .day(let n):
                return (1...length).contains(n) ? first + n - 1 : nil
            case .weekday(let ordinal, let weekday):
                guard Self.isValid(ordinal) else { return nil }
                if ordinal.rawValue < 0 {
                    let last = first + length - 1
                    let lastWeekday = LocalDateTime(daysSinceEpoch: last).isoWeekday
                    let day =
                        last - DateBuilderMath.floorMod(lastWeekday - weekday.rawValue, 7) + (ordinal.rawValue + 1) * 7
                    return day >= first ? day : nil
                }
                let firstWeekday = LocalDateTime(daysSinceEpoch: first).isoWeekday
                let day =
                    first + DateBuilderMath.floorMod(weekday.rawValue - firstWeekday, 7)
                    + (ordinal.rawValue - 1) * 7
                return day < first + length ? day : nil
            case .dayFromEnd(let n):
                return (1...length).contains(n) ? first + length - n : nil
            case .weekdayOfMonth(let n):
                let days = (0..<length).map { first + $0 }.filter { LocalDateTime(daysSinceEpoch: $0).isoWeekday <= 5 }
                let index = n > 0 ? n - 1 : days.count + n
                return days.indices.contains(index) ? days[index] : nil
            }
        }

        /// Whether the selector can be satisfied by some month at all (`day(32)` cannot).
        var isSatisfiable: Bool {
            switch self {
            case .day(let n), .dayFromEnd(let n): return (1...31).contains(n)
            case .weekdayOfMonth(let n): return n != 0 && (-23...23).contains(n)
            case .weekday(let ordinal, _): return Self.isValid(ordinal)
            default: return true
            }
        }

        /// A month has at most five of each weekday, counted from either end.
        static func isValid(_ ordinal: Ordinal) -> Bool { (1...5).contains(abs(ordinal.rawValue)) }
    }
}
