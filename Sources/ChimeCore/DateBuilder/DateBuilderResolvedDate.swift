import Foundation

extension DateBuilder {
    /// One resolved moment: a day at a time of day, or an exact instant (`ExactlyAt`), optionally
    /// shifted with `addingMinutes` … `addingYears`.
    public struct ResolvedDate: DateBuilderExpression {
        enum Base: Codable, Hashable, Sendable {
            case dayTime(Day, DateRule.Time)
            case instant(Date)
            /// The `now` passed when resolving ("in 10 minutes").
            case now
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

        /// The `now` passed when resolving; `ResolvedDate.now.addingMinutes(10)` is "in 10 minutes".
        public static var now: ResolvedDate { ResolvedDate(base: .now) }

        public func addingSeconds(_ seconds: Int) -> ResolvedDate { adjusted(.seconds(seconds)) }
        public func addingMinutes(_ minutes: Int) -> ResolvedDate {
            adjusted(.seconds(DateBuilderMath.times(minutes, 60)))
        }
        public func addingHours(_ hours: Int) -> ResolvedDate { adjusted(.seconds(DateBuilderMath.times(hours, 3600))) }
        public func addingDays(_ days: Int) -> ResolvedDate { adjusted(.days(days)) }
        public func addingWeeks(_ weeks: Int) -> ResolvedDate { adjusted(.days(DateBuilderMath.times(weeks, 7))) }
        public func addingMonths(_ months: Int) -> ResolvedDate { adjusted(.months(months)) }
        public func addingYears(_ years: Int) -> ResolvedDate { adjusted(.months(DateBuilderMath.times(years, 12))) }

        private func adjusted(_ adjustment: Adjustment) -> ResolvedDate {
            var copy = self
            copy.adjustments.append(adjustment)
            return copy
        }

        /// The instant, resolved against `now`; nil when the day does not exist, the time is invalid, or
        /// the time falls in a DST gap under a `.skip` policy.
        public func date(now: Date, systemTimeZone: TimeZone = .current) -> Date? {
            rule(now: now, systemTimeZone: systemTimeZone)?.firstOccurrence(systemTimeZone: systemTimeZone)
        }

        /// Year … second of the instant in the expression's zone.
        public func dateComponents(now: Date, systemTimeZone: TimeZone = .current) -> DateComponents? {
            guard let date = date(now: now, systemTimeZone: systemTimeZone),
                let zone = context.timeZone.resolve(systemTimeZone: systemTimeZone)
            else { return nil }
            return DateBuilder.components(of: date, in: zone)
        }

        /// The schedulable rule (one occurrence). A day-and-time stays a wall-clock rule (a floating
        /// "tomorrow at 20:15" fires at 20:15 in whatever zone the user is in by then); an instant
        /// stays absolute.
        public func rule(now: Date, systemTimeZone: TimeZone = .current) -> DateRule? {
            guard let env = DateBuilderEnvironment(context: context, now: now, systemTimeZone: systemTimeZone),
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

        enum Moment {
            case local(LocalDateTime)
            case instant(Date)
        }

        func resolveMoment(_ env: DateBuilderEnvironment) -> Moment? {
            var moment: Moment
            switch base {
            case .dayTime(let day, let time):
                guard let day = day.resolve(env), let seconds = time.secondsIntoDay(onDay: day) else { return nil }
                moment = .local(LocalDateTime(daysSinceEpoch: day, secondsIntoDay: seconds))
            case .instant(let date):
                moment = .instant(date)
            case .now:
                moment = .instant(env.now)
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

        private func instant(of moment: Moment, _ env: DateBuilderEnvironment) -> Date? {
            switch moment {
            case .instant(let date): return date
            case .local(let local): return WallClock.instants(for: local, in: env.zone, policy: context.dstPolicy).first
            }
        }

        private func local(of moment: Moment, _ env: DateBuilderEnvironment) -> LocalDateTime {
            switch moment {
            case .instant(let date): return WallClock.localDateTime(for: date, in: env.zone)
            case .local(let local): return local
            }
        }
    }

    /// Year, month, day, hour, minute, second of `date` in `zone`.
    static func components(of date: Date, in zone: TimeZone) -> DateComponents {
        let local = WallClock.localDateTime(for: date, in: zone)
        return DateComponents(
            year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute,
            second: local.second)
    }
}

/// An exact instant, for arithmetic such as `ExactlyAt(account.createdAt).addingDays(15)`.
public func ExactlyAt(_ date: Date) -> DateBuilder.ResolvedDate { DateBuilder.ResolvedDate(base: .instant(date)) }
