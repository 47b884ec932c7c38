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
    fileprivate static var resolving: (zone: TimeZone, week: WeekStructure) {
        let calendar = self.calendar
        return (calendar.timeZone, WeekStructure(calendar: calendar))
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
    public var allDays: [DateBuilder.Day] { allDays(now: Date(), systemTimeZone: DateBuilder.calendar.timeZone) }

    /// The n-th (`.last`: the last) `weekday` of the month as it is now in `DateBuilder.calendar`, or nil when
    /// the month has none (a fifth Friday).
    public func weekday(_ ordinal: DateBuilder.Ordinal, _ weekday: DateBuilder.Week.GregorianWeekday)
        -> DateBuilder.Day?
    {
        self.weekday(ordinal, weekday, now: Date(), systemTimeZone: DateBuilder.calendar.timeZone)
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
