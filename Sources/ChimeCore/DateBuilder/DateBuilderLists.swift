import Foundation

// DateBuilder's list forms: a counted `Every…` run is an array of days, weeks, months or years, and each
// step of a chain maps over it. They are plain values, resolved later like the single forms; the runs that
// repeat forever or by a stride (`EveryDay().at(…)`) are the lazy `Days`, `Weeks`, `Months` and `Years`.

/// How the members of a counted run are spaced: the n-th of `totalCount` members (from 0) lies
/// `delayForNumber(n, totalCount)` units (days, weeks, months or years) after the start. Its closure is the
/// app's own, as in DateBuilder (not `@Sendable`): a distribution is used where it is made, by the `Every…`
/// call that takes it.
public struct DelayDistribution {
    public init(delayForNumber: @escaping (_ number: Int, _ totalCount: Int) -> Int) {
        self.init(delayForNumber: delayForNumber, isUnitSpaced: false)
    }

    init(delayForNumber: @escaping (_ number: Int, _ totalCount: Int) -> Int, isUnitSpaced: Bool) {
        self.delayForNumber = delayForNumber
        self.isUnitSpaced = isUnitSpaced
    }

    public let delayForNumber: (_ number: Int, _ totalCount: Int) -> Int
    /// True for `.normal` only: its lists are what a counted run gives (see `DateBuilder.ListRuns`).
    let isUnitSpaced: Bool

    /// One unit apart: 0, 1, 2, 3, …
    public static var normal: DelayDistribution {
        DelayDistribution(delayForNumber: { number, _ in number }, isUnitSpaced: true)
    }

    /// One unit apart for the first half, then further and further apart (the gap grows with the square of
    /// the distance past the half), so a long run reaches further with the same number of members.
    public static var optimized: DelayDistribution {
        DelayDistribution { number, totalCount in
            let half = totalCount / 2
            guard number > half else { return number }
            let shift = number - half
            return number + shift * shift
        }
    }

    /// `count` members, the n-th being `addDelay(start, delayForNumber(n, count))`; none when `count` is
    /// not positive.
    public func generate<Unit>(count: Int, start: Unit, addDelay: (Unit, Int) -> Unit) -> [Unit] {
        guard count > 0 else { return [] }
        return (0..<count).map { addDelay(start, delayForNumber($0, count)) }
    }
}

/// `forDays` days from `starting`, spaced by `distribution`.
public func EveryDay(
    forDays nextDays: Int, starting startDay: DateBuilder.Day, distribution: DelayDistribution = .normal
) -> [DateBuilder.Day] {
    DateBuilder.ListRuns.days(
        distribution.generate(count: nextDays, start: startDay) { $0.addingDays($1) },
        from: distribution.isUnitSpaced ? EveryDay(forDays: nextDays, starting: startDay) : nil)
}

/// `forDays` consecutive days from `starting`, each at `timeOfDay`, resolved when the values are.
@_disfavoredOverload
public func EveryDay(
    starting day: DateBuilder.Day, forDays days: Int, at timeOfDay: @autoclosure () -> TimeOfDay
) -> [DateBuilder.Moment] {
    EveryDay(forDays: days, starting: day).at(timeOfDay())
}

/// `forWeeks` weeks from `starting`, spaced by `distribution`.
public func EveryWeek(
    forWeeks nextWeeks: Int, starting startWeek: DateBuilder.Week, distribution: DelayDistribution = .normal
) -> [DateBuilder.Week] {
    DateBuilder.ListRuns.weeks(
        distribution.generate(count: nextWeeks, start: startWeek) { $0.addingWeeks($1) },
        from: distribution.isUnitSpaced ? EveryWeek(forWeeks: nextWeeks, starting: startWeek) : nil)
}

/// `forMonths` months from `starting`, spaced by `distribution`.
public func EveryMonth(
    forMonths nextMonths: Int, starting startMonth: DateBuilder.Month, distribution: DelayDistribution = .normal
) -> [DateBuilder.Month] {
    DateBuilder.ListRuns.months(
        distribution.generate(count: nextMonths, start: startMonth) { $0.addingMonths($1) },
        from: distribution.isUnitSpaced ? EveryMonth(forMonths: nextMonths, starting: startMonth) : nil)
}

/// `forYears` years from `starting`, spaced by `distribution`.
public func EveryYear(
    forYears nextYears: Int, starting startYear: DateBuilder.Year, distribution: DelayDistribution = .normal
) -> [DateBuilder.Year] {
    DateBuilder.ListRuns.years(
        distribution.generate(count: nextYears, start: startYear) { $0.addingYears($1) },
        from: distribution.isUnitSpaced ? EveryYear(forYears: nextYears, starting: startYear) : nil)
}

/// The day `date` falls on, at `timeOfDay`.
@_disfavoredOverload
public func DayOf(_ date: Date, at timeOfDay: TimeOfDay) -> DateBuilder.Moment { DayOf(date).at(timeOfDay) }

/// Today at `timeOfDay`.
@_disfavoredOverload
public func Today(at timeOfDay: TimeOfDay) -> DateBuilder.Moment { Today().at(timeOfDay) }

/// Tomorrow at `timeOfDay`.
@_disfavoredOverload
public func Tomorrow(at timeOfDay: TimeOfDay) -> DateBuilder.Moment { AfterToday(days: 1, at: timeOfDay) }

/// `days` days after today, at `timeOfDay`.
@_disfavoredOverload
public func AfterToday(days: Int, at timeOfDay: TimeOfDay) -> DateBuilder.Moment {
    Today().addingDays(days).at(timeOfDay)
}

/// `days` days after the day `date` falls on, at `timeOfDay`.
@_disfavoredOverload
public func After(dayOf date: Date, days: Int, at timeOfDay: TimeOfDay) -> DateBuilder.Moment {
    AddingDays(days, to: .dayOf(date)).at(timeOfDay)
}

extension Sequence where Element == DateBuilder.Day {
    /// Each day shifted by `days`.
    public func addingDays(_ days: Int) -> [DateBuilder.Day] {
        let list = Array(self)
        return DateBuilder.ListRuns.days(
            list.map { $0.addingDays(days) }, from: DateBuilder.ListRuns.days(of: list)?.addingDays(days))
    }

    /// Each day at `timeOfDay`, evaluated once per day (so `.randomTime(from:to:)` differs from day to day),
    /// resolved when the values are.
    @_disfavoredOverload
    public func at(_ timeOfDay: @autoclosure () -> TimeOfDay) -> [DateBuilder.Moment] {
        map { $0.at(timeOfDay()) }
    }

    /// Each day at a fixed time of day, resolved when the values are.
    @_disfavoredOverload
    public func at(hour: Int, minute: Int, second: Int = 0) -> [DateBuilder.Moment] {
        at(TimeOfDay(hour: hour, minute: minute, second: second))
    }

    /// Each day at `timeOfDay` (evaluated once per day), resolved against `now`: DateBuilder's values, fixed
    /// when made. A counted list made whole is remembered with its run (`DateBuilder.ListRuns`) when every day
    /// got the same time.
    public func resolvedDates(
        at timeOfDay: @autoclosure () -> TimeOfDay, now: Date, systemTimeZone: Zone,
        defaultWeek: DateBuilder.WeekStructure = .iso
    ) -> [DateBuilder.ResolvedDate] {
        let list = Array(self)
        let times = list.map { _ in timeOfDay() }
        let dates = zip(list, times).map {
            $0.resolvedDate(at: $1, now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
        }
        // A run has one time of day: the list is its run's only when every day got the same one.
        let run = Set(times).count == 1 ? DateBuilder.ListRuns.days(of: list)?.at(times[0]) : nil
        return DateBuilder.ListRuns.dates(dates, from: run)
    }
}

extension Sequence where Element == DateBuilder.Week {
    /// Each week shifted by `weeks`.
    public func addingWeeks(_ weeks: Int) -> [DateBuilder.Week] {
        let list = Array(self)
        return DateBuilder.ListRuns.weeks(
            list.map { $0.addingWeeks(weeks) }, from: DateBuilder.ListRuns.weeks(of: list)?.addingWeeks(weeks))
    }
    /// The first day of each week.
    public var firstDay: [DateBuilder.Day] { days(\.firstDay, \.firstDay) }
    /// The last day of each week.
    public var lastDay: [DateBuilder.Day] { days(\.lastDay, \.lastDay) }
    /// The given weekday of each week.
    public func weekday(_ weekday: DateBuilder.Week.GregorianWeekday) -> [DateBuilder.Day] {
        days({ $0.weekday(weekday) }, { $0.weekday(weekday) })
    }
    /// The weekend start day of each week (see `Week.weekendStartDay`).
    public var weekendStartDay: [DateBuilder.Day] { days(\.weekendStartDay, \.weekendStartDay) }
    /// The weekend end day of each week (see `Week.weekendEndDay`).
    public var weekendEndDay: [DateBuilder.Day] { days(\.weekendEndDay, \.weekendEndDay) }

    /// A day of each week, and the same day of each week of the list's run.
    func days(
        _ day: (DateBuilder.Week) -> DateBuilder.Day, _ runDays: (DateBuilder.Weeks) -> DateBuilder.Days
    ) -> [DateBuilder.Day] {
        let list = Array(self)
        return DateBuilder.ListRuns.days(list.map(day), from: DateBuilder.ListRuns.weeks(of: list).map(runDays))
    }
}

extension Sequence where Element == DateBuilder.Month {
    /// Each month shifted by `months`.
    public func addingMonths(_ months: Int) -> [DateBuilder.Month] {
        let list = Array(self)
        return DateBuilder.ListRuns.months(
            list.map { $0.addingMonths(months) }, from: DateBuilder.ListRuns.months(of: list)?.addingMonths(months))
    }
    /// The 1st of each month.
    public var firstDay: [DateBuilder.Day] { days(\.firstDay, \.firstDay) }
    /// The last day of each month.
    public var lastDay: [DateBuilder.Day] { days(\.lastDay, \.lastDay) }
    /// The first `weekday` of each month.
    public func first(_ weekday: DateBuilder.Week.GregorianWeekday) -> [DateBuilder.Day] {
        days({ $0.first(weekday) }, { $0.first(weekday) })
    }

    /// A day of each month, and the same day of each month of the list's run.
    func days(
        _ day: (DateBuilder.Month) -> DateBuilder.Day, _ runDays: (DateBuilder.Months) -> DateBuilder.Days
    ) -> [DateBuilder.Day] {
        let list = Array(self)
        return DateBuilder.ListRuns.days(list.map(day), from: DateBuilder.ListRuns.months(of: list).map(runDays))
    }
}

extension Sequence where Element == DateBuilder.Year {
    /// Each year shifted by `years`.
    public func addingYears(_ years: Int) -> [DateBuilder.Year] {
        let list = Array(self)
        return DateBuilder.ListRuns.years(
            list.map { $0.addingYears(years) }, from: DateBuilder.ListRuns.years(of: list)?.addingYears(years))
    }
    /// January of each year.
    public var firstMonth: [DateBuilder.Month] { months(\.firstMonth, \.firstMonth) }
    /// December of each year.
    public var lastMonth: [DateBuilder.Month] { months(\.lastMonth, \.lastMonth) }

    /// A month of each year, and the same month of each year of the list's run.
    func months(
        _ month: (DateBuilder.Year) -> DateBuilder.Month, _ runMonths: (DateBuilder.Years) -> DateBuilder.Months
    ) -> [DateBuilder.Month] {
        let list = Array(self)
        return DateBuilder.ListRuns.months(
            list.map(month), from: DateBuilder.ListRuns.years(of: list).map(runMonths))
    }
}
