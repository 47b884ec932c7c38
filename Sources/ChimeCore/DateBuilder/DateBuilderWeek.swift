import Foundation

extension DateBuilder {
    /// One week, laid out by the expression's `WeekStructure` (first weekday, weekend).
    public struct Week: DateBuilderExpression {
        indirect enum Source: Codable, Hashable, Sendable {
            case thisWeek
            case weekOf(Date)
            case weekOfDay(Day)
        }

        var source: Source
        var offset: Int
        public var context: Context

        init(_ source: Source, offset: Int = 0, context: Context = Context()) {
            self.source = source
            self.offset = offset
            self.context = context
        }

        /// The week containing today.
        public static var thisWeek: Week { Week(.thisWeek) }
        /// The week after this one.
        public static var nextWeek: Week { Week(.thisWeek, offset: 1) }
        /// The week containing `date`.
        public static func weekOf(_ date: Date) -> Week { Week(.weekOf(date)) }
        /// The week containing `day`.
        public static func weekOf(_ day: Day) -> Week { Week(.weekOfDay(day), context: day.context) }

        /// The week `weeks` later.
        public func addingWeeks(_ weeks: Int) -> Week {
            var copy = self
            copy.offset += weeks
            return copy
        }

        /// The first day of the week (Monday in ISO/de_DE/en_GB, Sunday in en_US/he_IL).
        public var firstDay: Day { pick(.firstDay) }
        /// The seventh day of the week.
        public var lastDay: Day { pick(.lastDay) }
        /// The given weekday of this week.
        public func weekday(_ weekday: GregorianWeekday) -> Day { pick(.weekday(weekday.isoWeekday)) }
        /// The first day of the first weekend that starts after the week's first midnight (Friday for
        /// he_IL, Saturday for de_DE and en_US; for en_IN, whose single-day weekend is the week's first
        /// day, the next week's Sunday), matching Foundation's `nextWeekend(startingAfter:)`.
        public var weekendStartDay: Day { pick(.weekendStartDay) }
        /// The last day of that weekend; for en_US (Sunday-first weeks, Saturday–Sunday weekend) this is
        /// the Sunday that starts the next week, as in Foundation's `nextWeekend(startingAfter:)`.
        public var weekendEndDay: Day { pick(.weekendEndDay) }
        /// The seven days of the week, from its first day.
        public var allDays: [Day] { (0..<7).map { pick(.index($0)) } }

        /// A weekday as Foundation's Gregorian calendar numbers it: 1 is Sunday … 7 is Saturday. Numbers
        /// outside 1…7 count on around the week (8 is Sunday again, 0 is Saturday).
        public struct GregorianWeekday: ExpressibleByIntegerLiteral, Codable, Hashable, Sendable {
            public var rawValue: Int

            public static let sunday: GregorianWeekday = 1
            public static let monday: GregorianWeekday = 2
            public static let tuesday: GregorianWeekday = 3
            public static let wednesday: GregorianWeekday = 4
            public static let thursday: GregorianWeekday = 5
            public static let friday: GregorianWeekday = 6
            public static let saturday: GregorianWeekday = 7

            public typealias IntegerLiteralType = Int

            public init(rawValue: Int) { self.rawValue = rawValue }

            public init(integerLiteral value: Int) { self.rawValue = value }

            /// The same day of the ISO week.
            public init(_ weekday: Weekday) { self.rawValue = weekday.rawValue % 7 + 1 }

            /// The same day as ISO numbers it (1 is Monday … 7 is Sunday).
            public var isoWeekday: Weekday {
                Weekday(rawValue: DateBuilderMath.floorMod(rawValue - 2, 7) + 1) ?? .monday
            }
        }

        func pick(_ selector: WeekDaySelector) -> Day { Day(.inWeek(self, selector), context: context) }

        /// The local day number of the week's first day.
        func resolve(_ env: DateBuilderEnvironment) -> Int? {
            guard DateBuilderMath.isSafe(offset) else { return nil }
            let anchor: Int?
            switch source {
            case .thisWeek: anchor = env.today
            case .weekOf(let date): anchor = env.day(of: date)
            case .weekOfDay(let day): anchor = day.resolve(env)
            }
            guard let anchor else { return nil }
            let start = env.week.weekStart(containing: anchor) + offset * 7
            return DateBuilderMath.isSafeDay(start) ? start : nil
        }
    }
}

/// The week containing today.
public func ThisWeek() -> DateBuilder.Week { .thisWeek }

/// The week after this one.
public func NextWeek() -> DateBuilder.Week { .nextWeek }

/// The week containing `date`.
public func WeekOf(_ date: Date) -> DateBuilder.Week { .weekOf(date) }

/// The week containing `day`.
public func WeekOf(_ day: DateBuilder.Day) -> DateBuilder.Week { .weekOf(day) }

/// `week` shifted by `weeks`.
public func AddingWeeks(_ weeks: Int, to week: DateBuilder.Week) -> DateBuilder.Week { week.addingWeeks(weeks) }
