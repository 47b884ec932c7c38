import Foundation

extension DateBuilder {
    /// One calendar year.
    public struct Year: DateBuilderExpression {
        indirect enum Source: Codable, Hashable, Sendable {
            case thisYear
            case yearOf(Date)
            case yearOfDay(Day)
            case yearOfMonth(Month)
            case exact(Int)
        }

        var source: Source
        var offset: Int
        public var context: Context

        init(_ source: Source, offset: Int = 0, context: Context = Context()) {
            self.source = source
            self.offset = offset
            self.context = context
        }

        /// The year containing today.
        public static var thisYear: Year { Year(.thisYear) }
        /// The year after this one.
        public static var nextYear: Year { Year(.thisYear, offset: 1) }
        /// The year containing `date`.
        public static func yearOf(_ date: Date) -> Year { Year(.yearOf(date)) }
        /// The year containing `day`.
        public static func yearOf(_ day: Day) -> Year { Year(.yearOfDay(day), context: day.context) }
        /// The year containing `month`.
        public static func yearOf(_ month: Month) -> Year { Year(.yearOfMonth(month), context: month.context) }
        /// A calendar year.
        public static func exactYear(_ year: Int) -> Year { Year(.exact(year)) }

        /// The year `years` later.
        public func addingYears(_ years: Int) -> Year {
            var copy = self
            copy.offset += years
            return copy
        }

        /// January.
        public var firstMonth: Month { month(1) }
        /// December.
        public var lastMonth: Month { month(12) }
        /// Month `n` (1…12) of this year.
        public func month(_ n: Int) -> Month { Month(.inYear(self, n), context: context) }
        /// The twelve months, from January.
        public var allMonths: [Month] { (1...12).map { month($0) } }

        func resolve(_ env: DateBuilderEnvironment) -> Int? {
            guard DateBuilderMath.isSafe(offset) else { return nil }
            let base: Int?
            switch source {
            case .thisYear: base = LocalDateTime(daysSinceEpoch: env.today).year
            case .yearOf(let date): base = LocalDateTime(daysSinceEpoch: env.day(of: date)).year
            case .yearOfDay(let day): base = day.resolve(env).map { LocalDateTime(daysSinceEpoch: $0).year }
            case .yearOfMonth(let month): base = month.resolve(env).map { DateBuilderMath.floorDiv($0, 12) }
            case .exact(let year): base = year
            }
            guard let base, DateBuilder.yearRange.contains(base + offset) else { return nil }
            return base + offset
        }
    }
}

/// The year containing today.
public func ThisYear() -> DateBuilder.Year { .thisYear }

/// The year after this one.
public func NextYear() -> DateBuilder.Year { .nextYear }

/// The year containing `date`.
public func YearOf(_ date: Date) -> DateBuilder.Year { .yearOf(date) }

/// The year containing `day`.
public func YearOf(_ day: DateBuilder.Day) -> DateBuilder.Year { .yearOf(day) }

/// The year containing `month`.
public func YearOf(_ month: DateBuilder.Month) -> DateBuilder.Year { .yearOf(month) }

/// A calendar year.
public func ExactYear(year: Int) -> DateBuilder.Year { .exactYear(year) }

/// `year` shifted by `years`.
public func AddingYears(_ years: Int, to year: DateBuilder.Year) -> DateBuilder.Year { year.addingYears(years) }
