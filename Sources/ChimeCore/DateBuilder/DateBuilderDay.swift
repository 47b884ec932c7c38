import Foundation

extension DateBuilder {
    /// One calendar day, possibly relative to `now` ("today"), to a date, or picked from a week or month.
    public struct Day: DateBuilderExpression {
        indirect enum Source: Codable, Hashable, Sendable {
            case today
            case dayOf(Date)
            case exact(year: Int, month: Int, day: Int)
            case inWeek(Week, WeekDaySelector)
            case inMonth(Month, MonthDaySelector)
            /// The first day on or after today that is this month and day (February 29: the next leap year's).
            case nextDate(month: Int, day: Int)
            /// The first day on or after today that falls on one of these weekdays.
            case nextWeekday([Weekday])
        }

        var source: Source
        var offset: Int
        public var context: Context

        init(_ source: Source, offset: Int = 0, context: Context = Context()) {
            self.source = source
            self.offset = offset
            self.context = context
        }

        /// The local day number `day` as a calendar date.
        init(localDay day: Int, context: Context) {
            let local = LocalDateTime(daysSinceEpoch: day)
            self.init(.exact(year: local.year, month: local.month, day: local.day), context: context)
        }

        /// Today, as seen in the expression's zone at the `now` passed when resolving.
        public static var today: Day { Day(.today) }
        /// The day after today.
        public static var tomorrow: Day { Day(.today, offset: 1) }
        /// The local day `date` falls on.
        public static func dayOf(_ date: Date) -> Day { Day(.dayOf(date)) }
        /// A calendar date.
        public static func exactDay(year: Int, month: Int, day: Int) -> Day {
            Day(.exact(year: year, month: month, day: day))
        }

        /// The first day on or after today that is `month` and `day` ("until november 28").
        public static func nextDate(month: Int, day: Int) -> Day { Day(.nextDate(month: month, day: day)) }

        /// The first day on or after today that falls on one of `weekdays` ("every other friday", read from
        /// its first occurrence).
        public static func nextWeekday(_ weekdays: [Weekday]) -> Day { Day(.nextWeekday(weekdays)) }

        /// The day `days` later (earlier when negative).
        public func addingDays(_ days: Int) -> Day {
            var copy = self
            copy.offset += days
            return copy
        }

        /// This day at a fixed time of day, resolved when the value is. (ChimeKit's `at` makes DateBuilder's
        /// `ResolvedDate`, fixed when it is made.)
        @_disfavoredOverload
        public func at(hour: Int, minute: Int, second: Int = 0) -> Moment {
            at(TimeOfDay(hour: hour, minute: minute, second: second))
        }

        /// This day at a fixed time of day, resolved when the value is.
        @_disfavoredOverload
        public func at(_ timeOfDay: @autoclosure () -> TimeOfDay) -> Moment {
            Moment(day: self, time: .fixed(timeOfDay()))
        }

        /// This day at a random time in a range, reproducible from the seed the value carries, resolved when the
        /// value is.
        @_disfavoredOverload
        public func at(_ time: RandomTime) -> Moment { Moment(day: self, time: time.spec) }

        /// Year, month and day (no time), resolved against `now`; nil when the day does not exist
        /// (`ExactDay(year: 2021, month: 2, day: 30)`, a fifth friday a month lacks). Weeks are laid out
        /// by `defaultWeek` unless the expression names a calendar or locale.
        public func dateComponents(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> DateComponents? {
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek),
                let day = resolve(env)
            else { return nil }
            let local = LocalDateTime(daysSinceEpoch: day)
            return DateComponents(year: local.year, month: local.month, day: local.day)
        }

        /// The local day number, or nil when it does not exist.
        func resolve(_ env: DateBuilderEnvironment) -> Int? {
            guard DateBuilderMath.isSafe(offset), let base = resolveBase(env) else { return nil }
            let day = base + offset
            return DateBuilderMath.isSafeDay(day) ? day : nil
        }

        private func resolveBase(_ env: DateBuilderEnvironment) -> Int? {
            switch source {
            case .today:
                return env.today
            case .dayOf(let date):
                return env.day(of: date)
            case .exact(let year, let month, let day):
                guard DateBuilder.yearRange.contains(year), (1...12).contains(month),
                    (1...LocalDateTime.daysInMonth(year: year, month: month)).contains(day)
                else { return nil }
                return LocalDateTime.days(fromCivil: year, month, day)
            case .inWeek(let week, let selector):
                return week.resolve(env).map { $0 + selector.offset(in: env.week) }
            case .inMonth(let month, let selector):
                return month.resolve(env).flatMap { selector.day(inMonth: $0) }
            case .nextDate(let month, let day):
                let today = LocalDateTime(daysSinceEpoch: env.today)
                for year in today.year..<(today.year + 9) where DateBuilder.yearRange.contains(year) {
                    guard day <= LocalDateTime.daysInMonth(year: year, month: month) else { continue }
                    let candidate = LocalDateTime.days(fromCivil: year, month, day)
                    if candidate >= env.today { return candidate }
                }
                return nil
            case .nextWeekday(let weekdays):
                let today = LocalDateTime(daysSinceEpoch: env.today).isoWeekday
                return weekdays.map { env.today + DateBuilderMath.floorMod($0.rawValue - today, 7) }.min()
            }
        }
    }
}

/// Today, resolved against the `now` passed when resolving.
public func Today() -> DateBuilder.Day { .today }

/// Tomorrow, relative to the `now` passed when resolving.
public func Tomorrow() -> DateBuilder.Day { .tomorrow }

/// The day `date` falls on (in the expression's zone).
public func DayOf(_ date: Date) -> DateBuilder.Day { .dayOf(date) }

/// A calendar date; resolves to nothing when it does not exist (February 30).
public func ExactDay(year: Int, month: Int, day: Int) -> DateBuilder.Day {
    .exactDay(year: year, month: month, day: day)
}

/// `day` shifted by `days`.
public func AddingDays(_ days: Int, to day: DateBuilder.Day) -> DateBuilder.Day { day.addingDays(days) }
