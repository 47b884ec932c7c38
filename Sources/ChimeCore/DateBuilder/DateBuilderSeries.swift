import Foundation

extension DateBuilder {
    /// A run of weeks: `count` of them (nil: forever), `stride` weeks apart, from `start`.
    public struct Weeks: DateBuilderExpression {
        var start: Week
        var stride: Int
        var count: Int?
        public var context: Context

        /// The week `weeks` later, for every week of the run.
        public func addingWeeks(_ weeks: Int) -> Weeks {
            var copy = self
            copy.start = start.addingWeeks(weeks)
            return copy
        }

        /// The first day of each week.
        public var firstDay: Days { pick([.firstDay]) }
        /// The last day of each week.
        public var lastDay: Days { pick([.lastDay]) }
        /// The given weekday of each week.
        public func weekday(_ weekday: Week.GregorianWeekday) -> Days { pick([.weekday(weekday.isoWeekday)]) }
        /// Several weekdays of each week, e.g. `[.monday, .wednesday]`.
        public func weekdays(_ weekdays: [Week.GregorianWeekday]) -> Days {
            pick(weekdays.map { .weekday($0.isoWeekday) })
        }
        /// The weekend start day of each week (see `Week.weekendStartDay`).
        public var weekendStartDay: Days { pick([.weekendStartDay]) }
        /// The weekend end day of each week (see `Week.weekendEndDay`).
        public var weekendEndDay: Days { pick([.weekendEndDay]) }
        /// All seven days of each week.
        public var allDays: Days { pick((0..<7).map { .index($0) }) }

        func pick(_ selectors: [WeekDaySelector]) -> Days {
            Days(pattern: .weekly(start: start, stride: stride, selectors: selectors), count: count, context: context)
        }
    }

    /// A run of months: `count` periods (nil: forever), `stride` months apart; each period contributes
    /// the months at `monthOffsets` from its start (one month, or twelve for `Years.allMonths`).
    public struct Months: DateBuilderExpression {
        var start: Month
        var stride: Int
        var monthOffsets: [Int]
        var count: Int?
        public var context: Context

        /// Every month of the run shifted by `months`.
        public func addingMonths(_ months: Int) -> Months {
            var copy = self
            copy.start = start.addingMonths(months)
            return copy
        }

        /// The 1st of each month.
        public var firstDay: Days { pick([.firstDay]) }
        /// The last day of each month.
        public var lastDay: Days { pick([.lastDay]) }
        /// The first `weekday` of each month.
        public func first(_ weekday: Week.GregorianWeekday) -> Days { pick([.weekday(.first, weekday.isoWeekday)]) }
        /// The last `weekday` of each month.
        public func last(_ weekday: Week.GregorianWeekday) -> Days { pick([.weekday(.last, weekday.isoWeekday)]) }
        /// The n-th (or last) `weekday` of each month; months without one are skipped.
        public func weekday(_ ordinal: Ordinal, _ weekday: Week.GregorianWeekday) -> Days {
            pick([.weekday(ordinal, weekday.isoWeekday)])
        }
        /// Day `n` of each month; months without it are skipped.
        public func day(_ n: Int) -> Days { pick([.day(n)]) }
        /// Several days of each month.
        public func days(_ selectors: [MonthDaySelector]) -> Days { pick(selectors) }
        /// Every day of each month.
        public var allDays: Days { pick((1...31).map { .day($0) }) }

        func pick(_ selectors: [MonthDaySelector]) -> Days {
            Days(
                pattern: .monthly(start: start, stride: stride, monthOffsets: monthOffsets, selectors: selectors),
                count: count, context: context)
        }
    }

    /// A run of years: `count` of them (nil: forever), `stride` years apart.
    public struct Years: DateBuilderExpression {
        var start: Year
        var stride: Int
        var count: Int?
        public var context: Context

        /// Every year of the run shifted by `years`.
        public func addingYears(_ years: Int) -> Years {
            var copy = self
            copy.start = start.addingYears(years)
            return copy
        }

        /// January of each year.
        public var firstMonth: Months { months([0]) }
        /// December of each year.
        public var lastMonth: Months { months([11]) }
        /// Month `n` (1…12) of each year.
        public func month(_ n: Int) -> Months { months([n - 1]) }
        /// All twelve months of each year.
        public var allMonths: Months { months(Array(0..<12)) }

        func months(_ offsets: [Int]) -> Months {
            Months(
                start: start.firstMonth, stride: DateBuilderMath.times(stride, 12), monthOffsets: offsets, count: count,
                context: context)
        }
    }
}

/// Every day for `forDays` days (nil: forever) from `starting`, `stride` days apart.
public func EveryDay(
    forDays days: Int? = nil, starting day: DateBuilder.Day = .today, stride: Int = 1
) -> DateBuilder.Days {
    DateBuilder.Days(pattern: .daily(start: day, stride: stride), count: days, context: day.context)
}

/// Every week for `forWeeks` weeks (nil: forever) from `starting`, `stride` weeks apart.
public func EveryWeek(
    forWeeks weeks: Int? = nil, starting week: DateBuilder.Week = .thisWeek, stride: Int = 1
) -> DateBuilder.Weeks {
    DateBuilder.Weeks(start: week, stride: stride, count: weeks, context: week.context)
}

/// Every month for `forMonths` months (nil: forever) from `starting`, `stride` months apart.
public func EveryMonth(
    forMonths months: Int? = nil, starting month: DateBuilder.Month = .thisMonth, stride: Int = 1
) -> DateBuilder.Months {
    DateBuilder.Months(start: month, stride: stride, monthOffsets: [0], count: months, context: month.context)
}

/// Every year for `forYears` years (nil: forever) from `starting`, `stride` years apart.
public func EveryYear(
    forYears years: Int? = nil, starting year: DateBuilder.Year = .thisYear, stride: Int = 1
) -> DateBuilder.Years {
    DateBuilder.Years(start: year, stride: stride, count: years, context: year.context)
}
