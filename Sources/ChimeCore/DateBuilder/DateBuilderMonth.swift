import Foundation

extension DateBuilder {
    /// One calendar month.
    public struct Month: DateBuilderExpression {
        indirect enum Source: Codable, Hashable, Sendable {
            case thisMonth
            case monthOf(Date)
            case monthOfDay(Day)
            case exact(year: Int, month: Int)
            /// Month 1…12 of a year.
            case inYear(Year, Int)
        }

        var source: Source
        var offset: Int
        public var context: Context

        init(_ source: Source, offset: Int = 0, context: Context = Context()) {
            self.source = source
            self.offset = offset
            self.context = context
        }

        /// The month containing today.
        public static var thisMonth: Month { Month(.thisMonth) }
        /// The month after this one.
        public static var nextMonth: Month { Month(.thisMonth, offset: 1) }
        /// The month containing `date`.
        public static func monthOf(_ date: Date) -> Month { Month(.monthOf(date)) }
        /// The month containing `day`.
        public static func monthOf(_ day: Day) -> Month { Month(.monthOfDay(day), context: day.context) }
        /// A calendar month; does not resolve when `month` is outside 1…12.
        public static func exactMonth(year: Int, month: Int) -> Month { Month(.exact(year: year, month: month)) }

        /// The month `months` later.
        public func addingMonths(_ months: Int) -> Month {
            var copy = self
            copy.offset += months
            return copy
        }

        /// The 1st.
        public var firstDay: Day { pick(.firstDay) }
        /// The 28th…31st, whichever ends the month.
        public var lastDay: Day { pick(.lastDay) }
        /// The first `weekday` of the month.
        public func first(_ weekday: Week.GregorianWeekday) -> Day { pick(.weekday(.first, weekday.isoWeekday)) }
        /// The last `weekday` of the month.
        public func last(_ weekday: Week.GregorianWeekday) -> Day { pick(.weekday(.last, weekday.isoWeekday)) }
        /// Day `n` of the month; does not resolve in months without it.
        public func day(_ n: Int) -> Day { pick(.day(n)) }

        /// The n-th (or, counted from the end, last) `weekday` of the month as it is at `now`, or nil when
        /// that month has none (a fifth Friday); DateBuilder's `weekday(_:_:)`, with the clock passed in.
        public func weekday(
            _ ordinal: Ordinal, _ weekday: Week.GregorianWeekday, now: Date, systemTimeZone: Zone
        ) -> Day? {
            let day = pick(.weekday(ordinal, weekday.isoWeekday))
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: .iso),
                let resolved = day.resolve(env)
            else { return nil }
            return Day(localDay: resolved, context: context)
        }

        /// Every day of the month as it is at `now`, from the 1st; DateBuilder's `allDays`, with the clock
        /// passed in. Empty when the month does not resolve.
        public func allDays(now: Date, systemTimeZone: Zone) -> [Day] {
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: .iso),
                let index = resolve(env),
                let first = DateBuilderMath.firstDay(ofMonth: index)
            else { return [] }
            return (0..<DateBuilderMath.daysIn(month: index)).map { Day(localDay: first + $0, context: context) }
        }

        func pick(_ selector: MonthDaySelector) -> Day { Day(.inMonth(self, selector), context: context) }

        /// The month index `year * 12 + month - 1`.
        func resolve(_ env: DateBuilderEnvironment) -> Int? {
            guard DateBuilderMath.isSafe(offset) else { return nil }
            let base: Int?
            switch source {
            case .thisMonth:
                base = DateBuilderMath.monthIndex(ofDay: env.today)
            case .monthOf(let date):
                base = DateBuilderMath.monthIndex(ofDay: env.day(of: date))
            case .monthOfDay(let day):
                base = day.resolve(env).map(DateBuilderMath.monthIndex(ofDay:))
            case .exact(let year, let month):
                base = DateBuilder.yearRange.contains(year) && (1...12).contains(month) ? year * 12 + month - 1 : nil
            case .inYear(let year, let month):
                base = (1...12).contains(month) ? year.resolve(env).map { $0 * 12 + month - 1 } : nil
            }
            guard let base else { return nil }
            let index = base + offset
            return DateBuilder.yearRange.contains(DateBuilderMath.floorDiv(index, 12)) ? index : nil
        }
    }
}

/// The month containing today.
public func ThisMonth() -> DateBuilder.Month { .thisMonth }

/// The month after this one.
public func NextMonth() -> DateBuilder.Month { .nextMonth }

/// The month containing `date`.
public func MonthOf(_ date: Date) -> DateBuilder.Month { .monthOf(date) }

/// The month containing `day`.
public func MonthOf(_ day: DateBuilder.Day) -> DateBuilder.Month { .monthOf(day) }

/// A calendar month.
public func ExactMonth(year: Int, month: Int) -> DateBuilder.Month { .exactMonth(year: year, month: month) }

/// `month` shifted by `months`.
public func AddingMonths(_ months: Int, to month: DateBuilder.Month) -> DateBuilder.Month {
    month.addingMonths(months)
}
