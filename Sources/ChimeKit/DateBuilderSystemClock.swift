import ChimeCore
import Foundation
import Synchronization

// The argument-less forms of DateBuilder, which read the system clock and `DateBuilder.calendar`. They live
// in ChimeKit because ChimeCore never reads the clock.

extension DateBuilder {
    /// A calendar set with `DateBuilder.calendar = …`; nil follows `Calendar.current`.
    private static let assignedCalendar = Mutex<Calendar?>(nil)

    /// The calendar of `withCalendar(_:_:)`, for the task (or thread) running its closure.
    @TaskLocal private static var scopedCalendar: Calendar?

    /// The calendar the argument-less forms (`date()`, `dateComponents()`, `dates()`, `allDays`, …) resolve
    /// with: its time zone is the one floating expressions are read in, and its `firstWeekday` and locale lay
    /// out the weeks of expressions that name no calendar or locale of their own (`.in(calendar:)`).
    /// `Calendar.current` (which follows the system's zone and locale) until set; setting `.current` goes
    /// back to following it.
    public static var calendar: Calendar {
        get { scopedCalendar ?? assignedCalendar.withLock { $0 } ?? Calendar.current }
        set {
            let follows = newValue == Calendar.current
            assignedCalendar.withLock { $0 = follows ? nil : newValue }
        }
    }

    /// Runs `perform` with `DateBuilder.calendar` reading `calendar`. The change is seen by `perform` and
    /// what it calls on the same task or thread, not by other threads.
    public static func withCalendar<T>(_ calendar: Calendar, _ perform: () -> T) -> T {
        $scopedCalendar.withValue(calendar) { perform() }
    }

    /// Runs `perform` with `DateBuilder.calendar` in `timeZone`.
    public static func withTimeZone<T>(_ timeZone: TimeZone, _ perform: () -> T) -> T {
        var current = calendar
        current.timeZone = timeZone
        return withCalendar(current, perform)
    }

    /// Runs `perform` with `DateBuilder.calendar` in `locale` (its weeks start and its weekends fall where
    /// the locale's region has them).
    public static func withLocale<T>(_ locale: Locale, _ perform: () -> T) -> T {
        var current = calendar
        current.locale = locale
        return withCalendar(current, perform)
    }

    /// The zone and week layout of `DateBuilder.calendar`, read once per call.
    static var resolving: (zone: Zone, week: WeekStructure) {
        let calendar = self.calendar
        return (Zone(resolving: calendar.timeZone), WeekStructure(calendar: calendar))
    }
}

extension TimeOfDay {
    /// The time of day of `date` in `calendar`'s zone.
    public init(date: Date, calendar: Calendar = DateBuilder.calendar) {
        let components = calendar.dateComponents([.hour, .minute, .second], from: date)
        self.init(hour: components.hour ?? 0, minute: components.minute ?? 0, second: components.second ?? 0)
    }
}

extension DateBuilder.ResolvedDate {
    /// The instant in `DateBuilder.calendar`: the exact one, or the components' wall-clock time in their zone
    /// (else the calendar's); `Date.distantPast` when the components do not make a date (February 30, no
    /// year). `date(now:systemTimeZone:defaultWeek:)` says nil instead.
    public func date() -> Date {
        let (zone, week) = DateBuilder.resolving
        return date(now: Date(), systemTimeZone: zone, defaultWeek: week) ?? .distantPast
    }

    /// The components as made; for an exact date, its era, year, month, weekday, day, hour, minute and second
    /// in `DateBuilder.calendar`, as DateBuilder gives them.
    public func dateComponents() -> DateComponents {
        switch self {
        case .exact(let date):
            return DateBuilder.calendar.dateComponents(
                [.era, .year, .month, .weekday, .day, .hour, .minute, .second], from: date)
        case .components(let components):
            return components
        }
    }

    /// `date()` moved by every field of `dateComponents` that is set, the largest unit first as Foundation
    /// adds them (days and months on the wall clock of `DateBuilder.calendar`'s zone): an exact date. Nil
    /// when a field cannot be added (era, quarter, weekday, weekdayOrdinal, yearForWeekOfYear) or the result
    /// does not exist.
    public func adding(dateComponents: DateComponents) -> DateBuilder.ResolvedDate? {
        let (zone, week) = DateBuilder.resolving
        let now = Date()
        guard let start = date(now: now, systemTimeZone: zone, defaultWeek: week),
            let moved = DateBuilder.Moment.exact(start).adding(dateComponents: dateComponents)?
                .date(now: now, systemTimeZone: zone, defaultWeek: week)
        else { return nil }
        return .exact(moved)
    }

    /// `adding(dateComponents:)` with one field; `.exact(.distantPast)` when the result does not exist, where
    /// DateBuilder asserted.
    private func adding(_ components: DateComponents) -> DateBuilder.ResolvedDate {
        adding(dateComponents: components) ?? .exact(.distantPast)
    }

    public func addingSeconds(_ seconds: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(second: seconds)) }
    public func addingMinutes(_ minutes: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(minute: minutes)) }
    public func addingHours(_ hours: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(hour: hours)) }
    public func addingDays(_ days: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(day: days)) }
    public func addingWeeks(_ weeks: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(weekOfYear: weeks)) }
    public func addingMonths(_ months: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(month: months)) }
    public func addingYears(_ years: Int) -> DateBuilder.ResolvedDate { adding(DateComponents(year: years)) }
}

extension DateBuilder.Moment {
    /// The instant, now, in `DateBuilder.calendar`; `Date.distantPast` when it does not exist (February 30, a
    /// time a `.skip` DST policy skips). `date(now:systemTimeZone:defaultWeek:)` says nil instead.
    public func date() -> Date {
        let (zone, week) = DateBuilder.resolving
        return date(now: Date(), systemTimeZone: zone, defaultWeek: week) ?? .distantPast
    }

    /// Year, month, day, hour, minute and second of `date()` in the expression's zone; empty when the date
    /// does not exist.
    public func dateComponents() -> DateComponents {
        let (zone, week) = DateBuilder.resolving
        return dateComponents(now: Date(), systemTimeZone: zone, defaultWeek: week) ?? DateComponents()
    }
}

extension DateBuilder.Day {
    /// This day as it is now in `DateBuilder.calendar`, at `timeOfDay`: DateBuilder's `.components` value
    /// (in the day's own zone when it names one). `Day.at(_:)` returning a `Moment` (a value resolved when it
    /// is scheduled) is there too, for `let later: DateBuilder.Moment = Tomorrow().at(hour: 9, minute: 0)`.
    public func at(_ timeOfDay: @autoclosure () -> TimeOfDay) -> DateBuilder.ResolvedDate {
        let (zone, week) = DateBuilder.resolving
        return resolvedDate(at: timeOfDay(), now: Date(), systemTimeZone: zone, defaultWeek: week)
    }

    public func at(hour: Int, minute: Int, second: Int = 0) -> DateBuilder.ResolvedDate {
        at(TimeOfDay(hour: hour, minute: minute, second: second))
    }

    /// This day as it is now, at a time drawn from `time` for it: `Tomorrow().at(.randomTime(from:to:))`.
    public func at(_ time: DateBuilder.RandomTime) -> DateBuilder.ResolvedDate {
        let (zone, week) = DateBuilder.resolving
        return resolvedDate(at: time, now: Date(), systemTimeZone: zone, defaultWeek: week)
    }
}

extension Sequence where Element == DateBuilder.Day {
    /// Each day as it is now in `DateBuilder.calendar`, at `timeOfDay` (evaluated once per day, so
    /// `.randomTime(from:to:)` differs from day to day).
    public func at(_ timeOfDay: @autoclosure () -> TimeOfDay) -> [DateBuilder.ResolvedDate] {
        let (zone, week) = DateBuilder.resolving
        return resolvedDates(at: timeOfDay(), now: Date(), systemTimeZone: zone, defaultWeek: week)
    }

    public func at(hour: Int, minute: Int, second: Int = 0) -> [DateBuilder.ResolvedDate] {
        at(TimeOfDay(hour: hour, minute: minute, second: second))
    }
}

/// An exact instant: `ExactlyAt(account.createdAt).addingDays(15)`.
public func ExactlyAt(_ date: Date) -> DateBuilder.ResolvedDate { .exact(date) }

/// The day `date` falls on, at `timeOfDay`.
public func DayOf(_ date: Date, at timeOfDay: TimeOfDay) -> DateBuilder.ResolvedDate { DayOf(date).at(timeOfDay) }

/// Today at `timeOfDay`.
public func Today(at timeOfDay: TimeOfDay) -> DateBuilder.ResolvedDate { Today().at(timeOfDay) }

/// Tomorrow at `timeOfDay`.
public func Tomorrow(at timeOfDay: TimeOfDay) -> DateBuilder.ResolvedDate { AfterToday(days: 1, at: timeOfDay) }

/// `days` days after today, at `timeOfDay`.
public func AfterToday(days: Int, at timeOfDay: TimeOfDay) -> DateBuilder.ResolvedDate {
    Today().addingDays(days).at(timeOfDay)
}

/// `days` days after the day `date` falls on, at `timeOfDay`.
public func After(dayOf date: Date, days: Int, at timeOfDay: TimeOfDay) -> DateBuilder.ResolvedDate {
    AddingDays(days, to: .dayOf(date)).at(timeOfDay)
}

/// `forDays` consecutive days from `starting`, each at `timeOfDay`.
public func EveryDay(
    starting day: DateBuilder.Day, forDays days: Int, at timeOfDay: @autoclosure () -> TimeOfDay
) -> [DateBuilder.ResolvedDate] {
    EveryDay(forDays: days, starting: day).at(timeOfDay())
}

extension DateBuilder.ResolvedDates {
    /// `dates(now:)` from now, in `DateBuilder.calendar`, lazily.
    public func dates() -> DateRule.Occurrences {
        let (zone, week) = DateBuilder.resolving
        return dates(now: Date(), systemTimeZone: zone, defaultWeek: week)
    }

    /// `dateComponents(now:)` from now, in `DateBuilder.calendar`, lazily.
    public func dateComponents() -> LazyMapSequence<DateRule.Occurrences, DateComponents> {
        let (zone, week) = DateBuilder.resolving
        return dateComponents(now: Date(), systemTimeZone: zone, defaultWeek: week)
    }
}

extension DateBuilder.Day {
    /// Year, month and day, now, in `DateBuilder.calendar`; empty when the day does not exist (February 30).
    public func dateComponents() -> DateComponents {
        let (zone, week) = DateBuilder.resolving
        return dateComponents(now: Date(), systemTimeZone: zone, defaultWeek: week) ?? DateComponents()
    }
}

extension DateBuilder.Month {
    /// Every day of the month, from the 1st, as the month is now in `DateBuilder.calendar`.
    public var allDays: [DateBuilder.Day] { allDays(now: Date(), systemTimeZone: DateBuilder.resolving.zone) }

    /// The n-th (`.last`: the last) `weekday` of the month as it is now in `DateBuilder.calendar`, or nil when
    /// the month has none (a fifth Friday).
    public func weekday(_ ordinal: DateBuilder.Ordinal, _ weekday: DateBuilder.Week.GregorianWeekday)
        -> DateBuilder.Day?
    {
        self.weekday(ordinal, weekday, now: Date(), systemTimeZone: DateBuilder.resolving.zone)
    }
}

extension Sequence where Element == DateBuilder.Month {
    /// The n-th `weekday` of each month that has one.
    public func weekday(_ ordinal: DateBuilder.Ordinal, _ weekday: DateBuilder.Week.GregorianWeekday)
        -> [DateBuilder.Day]
    {
        compactMap { $0.weekday(ordinal, weekday) }
    }
}

extension Sequence where Element == DateBuilder.ResolvedDate {
    /// Each `date()`.
    public func dates() -> [Date] { map { $0.date() } }

    /// Each `dateComponents()`.
    public func dateComponents() -> [DateComponents] { map { $0.dateComponents() } }
}

extension Sequence where Element == DateBuilder.Day {
    /// Each day's `dateComponents()`.
    public func dateComponents() -> [DateComponents] { map { $0.dateComponents() } }
}

extension Zone {
    /// The zone ChimeKit computes in for a Foundation zone: the same name, read from the system's tz
    /// database. The process's own zone (`TimeZone.current`) is the system's zone as it is now
    /// (`Zone.current`), which also knows a zone that Foundation's copy of the database does not.
    init(resolving zone: TimeZone) {
        self = zone == TimeZone.current ? .current : Zone(zone)
    }
}
