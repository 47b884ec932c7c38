import Foundation

extension DateBuilder {
    /// One moment that stays a word until it is resolved: a day at a time of day ("tomorrow at 20:15" is
    /// tomorrow as seen when the value is resolved), an exact instant, or `now`, optionally shifted with
    /// `addingMinutes` … `addingYears`. This is what a phrase reads as and what ChimeCore's `Day.at(…)`
    /// makes; DateBuilder's own `ResolvedDate` is the value fixed when it is made (ChimeKit's `Day.at(…)`).
    public struct Moment: DateBuilderExpression {
        enum Base: Codable, Hashable, Sendable {
            case dayTime(Day, DateRule.Time)
            case instant(Date)
            /// The `now` passed when resolving ("in 10 minutes").
            case now
            /// A wall-clock date and time in the expression's zone; fields left out start at their lowest
            /// (month and day 1, time 00:00:00), a missing year does not resolve.
            case components(DateComponents)
        }

        /// Shifts applied in order. Seconds are absolute time; days and months are wall-clock
        /// arithmetic in the expression's zone (the time of day is kept; the 31st plus one month is
        /// the last day of the next month, as Foundation does).
        enum Adjustment: Codable, Hashable, Sendable {
            case seconds(Int)
            case days(Int)
            case months(Int)
        }

        var base: Base
        var adjustments: [Adjustment] = []
        public var context: Context

        init(day: Day, time: DateRule.Time) {
            self.base = .dayTime(day, time)
            self.context = day.context
        }

        init(base: Base, context: Context = Context()) {
            self.base = base
            self.context = context
        }

        /// The `now` passed when resolving; `Moment.now.addingMinutes(10)` is "in 10 minutes".
        public static var now: Moment { Moment(base: .now) }

        /// An exact instant.
        public static func exact(_ date: Date) -> Moment { Moment(base: .instant(date)) }

        /// A wall-clock date and time (year … second) in the expression's zone. A missing year, an impossible date or time does not resolve.
        public static func components(_ components: DateComponents) -> Moment {
            Moment(base: .components(components))
        }

        /// Shifted by every field of `dateComponents` that is set, the largest unit first, as Foundation's
        /// `Calendar.date(byAdding:to:)`: years and months, then weeks and days, then hours, minutes and
        /// seconds. Nil when a field cannot be added here (era, quarter, weekday, weekdayOrdinal,
        /// yearForWeekOfYear).
        public func adding(dateComponents: DateComponents) -> Moment? {
            let c = dateComponents
            guard c.era == nil, c.quarter == nil, c.weekday == nil, c.weekdayOrdinal == nil,
                c.yearForWeekOfYear == nil
            else { return nil }
            var result = self
            let months = DateBuilderMath.times(c.year ?? 0, 12).addingReportingOverflow(c.month ?? 0)
            let weeks = DateBuilderMath.times((c.weekOfYear ?? 0) &+ (c.weekOfMonth ?? 0), 7)
            let days = weeks.addingReportingOverflow(c.day ?? 0)
            let seconds = [
                DateBuilderMath.times(c.hour ?? 0, 3600), DateBuilderMath.times(c.minute ?? 0, 60), c.second ?? 0,
            ].reduce(0, &+)
            guard !months.overflow, !days.overflow else { return nil }
            if months.partialValue != 0 { result = result.adjusted(.months(months.partialValue)) }
            if days.partialValue != 0 { result = result.adjusted(.days(days.partialValue)) }
            if seconds != 0 { result = result.adjusted(.seconds(seconds)) }
            return result
        }

        public func addingSeconds(_ seconds: Int) -> Moment { adjusted(.seconds(seconds)) }
        public func addingMinutes(_ minutes: Int) -> Moment {
            adjusted(.seconds(DateBuilderMath.times(minutes, 60)))
        }
        public func addingHours(_ hours: Int) -> Moment { adjusted(.seconds(DateBuilderMath.times(hours, 3600))) }
        public func addingDays(_ days: Int) -> Moment { adjusted(.days(days)) }
        public func addingWeeks(_ weeks: Int) -> Moment { adjusted(.days(DateBuilderMath.times(weeks, 7))) }
        public func addingMonths(_ months: Int) -> Moment { adjusted(.months(months)) }
        public func addingYears(_ years: Int) -> Moment { adjusted(.months(DateBuilderMath.times(years, 12))) }

        private func adjusted(_ adjustment: Adjustment) -> Moment {
            var copy = self
            copy.adjustments.append(adjustment)
            return copy
        }

        /// The instant, resolved against `now`; nil when the day does not exist, the time is invalid, or
        /// the time falls in a DST gap under a `.skip` policy. Weeks are laid out by `defaultWeek` unless
        /// the expression names a calendar or locale.
        public func date(now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso) -> Date? {
            rule(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)?
                .firstOccurrence(systemTimeZone: systemTimeZone)
        }

        /// Year … second of the instant in the expression's zone.
        public func dateComponents(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> DateComponents? {
            guard let date = date(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek),
                let zone = context.timeZone.resolve(systemTimeZone: systemTimeZone)
            else { return nil }
            return DateBuilder.components(of: date, in: zone)
        }

        /// The schedulable rule (one occurrence). A day-and-time stays a wall-clock rule (a floating
        /// "tomorrow at 20:15" fires at 20:15 in whatever zone the user is in by then); an instant
        /// stays absolute.
        public func rule(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> DateRule? {
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek),
                let moment = resolveMoment(env)
            else { return nil }
            switch moment {
            case .local(let local):
                return DateRule(
                    pattern: .days(start: local.daysSinceEpoch, stride: 1, offsets: [0]),
                    time: .fixed(TimeOfDay(hour: local.hour, minute: local.minute, second: local.second)), count: 1,
                    timeZone: context.timeZone, dstPolicy: context.dstPolicy)
            case .instant(let instant):
                return DateRule(
                    pattern: .interval(start: instant, seconds: 1), count: 1, timeZone: context.timeZone,
                    dstPolicy: context.dstPolicy)
            }
        }

        enum Point {
            case local(LocalDateTime)
            case instant(Date)
        }

        func resolveMoment(_ env: DateBuilderEnvironment) -> Point? {
            var moment: Point
            switch base {
            case .dayTime(let day, let time):
                guard let day = day.resolve(env), let seconds = time.secondsIntoDay(onDay: day) else { return nil }
                moment = .local(LocalDateTime(daysSinceEpoch: day, secondsIntoDay: seconds))
            case .instant(let date):
                moment = .instant(date)
            case .now:
                moment = .instant(env.now)
            case .components(let components):
                guard let local = Self.local(components) else { return nil }
                moment = .local(local)
            }
            for adjustment in adjustments {
                switch adjustment {
                case .seconds(let seconds):
                    guard DateBuilderMath.isSafe(seconds / 3600), let instant = instant(of: moment, env) else {
                        return nil
                    }
                    moment = .instant(instant.addingTimeInterval(TimeInterval(seconds)))
                case .days(let days):
                    guard DateBuilderMath.isSafe(days) else { return nil }
                    let local = local(of: moment, env).adding(days: days)
                    guard DateBuilderMath.isSafeDay(local.daysSinceEpoch) else { return nil }
                    moment = .local(local)
                case .months(let months):
                    guard DateBuilderMath.isSafe(months) else { return nil }
                    var local = local(of: moment, env)
                    let index = local.year * 12 + local.month - 1 + months
                    guard DateBuilder.yearRange.contains(DateBuilderMath.floorDiv(index, 12)) else { return nil }
                    local.year = DateBuilderMath.floorDiv(index, 12)
                    local.month = DateBuilderMath.floorMod(index, 12) + 1
                    local.day = min(local.day, LocalDateTime.daysInMonth(year: local.year, month: local.month))
                    moment = .local(local)
                }
            }
            return moment
        }

        /// The wall-clock date and time `components` name, or nil when it does not exist.
        private static func local(_ c: DateComponents) -> LocalDateTime? {
            guard let year = c.year, DateBuilder.yearRange.contains(year) else { return nil }
            let month = c.month ?? 1
            guard (1...12).contains(month) else { return nil }
            let day = c.day ?? 1
            guard (1...LocalDateTime.daysInMonth(year: year, month: month)).contains(day),
                let seconds = TimeOfDay(hour: c.hour ?? 0, minute: c.minute ?? 0, second: c.second ?? 0).secondsIntoDay
            else { return nil }
            return LocalDateTime(
                daysSinceEpoch: LocalDateTime.days(fromCivil: year, month, day), secondsIntoDay: seconds)
        }

        private func instant(of moment: Point, _ env: DateBuilderEnvironment) -> Date? {
            switch moment {
            case .instant(let date): return date
            case .local(let local): return WallClock.instants(for: local, in: env.zone, policy: context.dstPolicy).first
            }
        }

        private func local(of moment: Point, _ env: DateBuilderEnvironment) -> LocalDateTime {
            switch moment {
            case .instant(let date): return WallClock.localDateTime(for: date, in: env.zone)
            case .local(let local): return local
            }
        }
    }

    /// Year, month, day, hour, minute, second of `date` in `zone`.
    static func components(of date: Date, in zone: Zone) -> DateComponents {
        let local = WallClock.localDateTime(for: date, in: zone)
        return DateComponents(
            year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute,
            second: local.second)
    }
}

/// An exact instant, for arithmetic such as `ExactlyAt(account.createdAt).addingDays(15)`. (ChimeKit's
/// `ExactlyAt` makes DateBuilder's `ResolvedDate.exact`.)
@_disfavoredOverload
public func ExactlyAt(_ date: Date) -> DateBuilder.Moment { DateBuilder.Moment(base: .instant(date)) }
