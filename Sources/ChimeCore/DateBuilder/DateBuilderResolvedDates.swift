import Foundation

extension DateBuilder {
    /// A run of days at a time of day: the recurring form of `Moment`.
    public struct ResolvedDates: DateBuilderExpression {
        var days: Days
        var time: DateRule.Time
        /// Last day (inclusive) an occurrence may fall on.
        var lastDay: Day?
        /// First day (inclusive) an occurrence may fall on.
        var firstDay: Day?
        public var context: Context

        init(days: Days, time: DateRule.Time) {
            self.days = days
            self.time = time
            self.context = days.context
        }

        /// Stops after `day` (inclusive), e.g. "every day at 9:00 until 2026-12-31".
        public func until(_ day: Day) -> ResolvedDates {
            var copy = self
            copy.lastDay = day
            return copy
        }

        /// Drops occurrences before `day` (inclusive bound), e.g. "every monday starting 2026-12-03":
        /// the run starts with the week containing that day, but nothing fires before it.
        public func starting(_ day: Day) -> ResolvedDates {
            var copy = self
            copy.firstDay = day
            return copy
        }

        /// The occurrences from the first day of the run (including ones before `now`, as DateBuilder
        /// does), lazily; unbounded runs never end, so take a `prefix`.
        public func dates(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> DateRule.Occurrences {
            (rule(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek) ?? .never)
                .occurrences(systemTimeZone: systemTimeZone)
        }

        /// `dates(now:)` as components in the expression's zone.
        public func dateComponents(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> LazyMapSequence<DateRule.Occurrences, DateComponents> {
            let zone = context.timeZone.resolve(systemTimeZone: systemTimeZone) ?? systemTimeZone
            return dates(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek).lazy.map {
                DateBuilder.components(of: $0, in: zone)
            }
        }

        /// The schedulable rule; nil when the expression cannot resolve (an invalid exact date or time).
        /// Weeks are laid out by `defaultWeek` unless the expression names a calendar or locale.
        public func rule(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> DateRule? {
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek),
                let pattern = days.resolvePattern(env), time.isValid
            else { return nil }
            if let count = days.count, count < 0 { return nil }
            var until: LocalDateTime?
            if let lastDay {
                guard let day = lastDay.resolve(env) else { return nil }
                until = LocalDateTime(daysSinceEpoch: day, secondsIntoDay: 86_399)
            }
            var from: LocalDateTime?
            if let firstDay {
                guard let day = firstDay.resolve(env) else { return nil }
                from = LocalDateTime(daysSinceEpoch: day)
            }
            return DateRule(
                pattern: pattern, time: time, count: days.count, until: until, from: from,
                timeZone: context.timeZone, dstPolicy: context.dstPolicy)
        }
    }

    /// Absolute instants every `seconds`, the first one `seconds` after `now` ("every 2 hours").
    public struct Interval: DateBuilderExpression {
        public var seconds: Int
        /// Number of occurrences; nil: unbounded.
        public var count: Int?
        var lastDay: Day?
        public var context: Context

        public init(everySeconds seconds: Int, count: Int? = nil) {
            self.seconds = seconds
            self.count = count
            self.context = Context()
        }

        /// Stops after `day` (inclusive, in the expression's zone).
        public func until(_ day: Day) -> Interval {
            var copy = self
            copy.lastDay = day
            return copy
        }

        /// The occurrences, lazily.
        public func dates(now: Date, systemTimeZone: Zone = .current) -> DateRule.Occurrences {
            (rule(now: now, systemTimeZone: systemTimeZone) ?? .never).occurrences(systemTimeZone: systemTimeZone)
        }

        /// The schedulable rule.
        public func rule(now: Date, systemTimeZone: Zone = .current) -> DateRule? {
            guard let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: .iso),
                seconds > 0, DateBuilderMath.isSafe(seconds / 3600)
            else { return nil }
            var until: LocalDateTime?
            if let lastDay {
                guard let day = lastDay.resolve(env) else { return nil }
                until = LocalDateTime(daysSinceEpoch: day, secondsIntoDay: 86_399)
            }
            let rule = DateRule(
                pattern: .interval(start: now.addingTimeInterval(TimeInterval(seconds)), seconds: seconds),
                count: count, until: until, timeZone: context.timeZone, dstPolicy: context.dstPolicy)
            return rule.isWellFormed ? rule : nil
        }
    }

    /// Anything a phrase can describe: a single moment, a run of days at a time, or an interval.
    public enum Schedule: Codable, Hashable, Sendable {
        case once(Moment)
        case repeating(ResolvedDates)
        case interval(Interval)

        /// The schedulable rule, with relative words resolved against `now`.
        public func rule(now: Date, systemTimeZone: Zone = .current) -> DateRule? {
            switch self {
            case .once(let value): return value.rule(now: now, systemTimeZone: systemTimeZone)
            case .repeating(let value): return value.rule(now: now, systemTimeZone: systemTimeZone)
            case .interval(let value): return value.rule(now: now, systemTimeZone: systemTimeZone)
            }
        }

        /// The same schedule evaluated in another zone.
        public func `in`(timeZone: RuleTimeZone) -> Schedule {
            switch self {
            case .once(let value): return .once(value.in(timeZone: timeZone))
            case .repeating(let value): return .repeating(value.in(timeZone: timeZone))
            case .interval(let value): return .interval(value.in(timeZone: timeZone))
            }
        }
    }
}
