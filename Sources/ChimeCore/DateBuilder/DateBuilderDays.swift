import Foundation

extension DateBuilder {
    /// A lazily evaluated run of days: what `EveryDay`, `EveryWeek(...).weekday(...)`,
    /// `EveryMonth(...).first(.friday)` and `allDays` produce. Finite when it has a count; never
    /// materialised as a list.
    public struct Days: DateBuilderExpression {
        enum Pattern: Codable, Hashable, Sendable {
            case daily(start: Day, stride: Int)
            case weekly(start: Week, stride: Int, selectors: [WeekDaySelector])
            case monthly(start: Month, stride: Int, monthOffsets: [Int], selectors: [MonthDaySelector])
        }

        var pattern: Pattern
        /// Number of periods (days, weeks, months or years); nil: forever.
        var count: Int?
        var dayOffset: Int = 0
        public var context: Context

        /// Every day of the run shifted by `days` (e.g. `EveryMonth().lastDay.addingDays(-5)`).
        public func addingDays(_ days: Int) -> Days {
            var copy = self
            copy.dayOffset += days
            return copy
        }

        /// Each day at a fixed time.
        public func at(hour: Int, minute: Int, second: Int = 0) -> ResolvedDates {
            at(TimeOfDay(hour: hour, minute: minute, second: second))
        }

        /// Each day at a fixed time.
        public func at(_ time: TimeOfDay) -> ResolvedDates { ResolvedDates(days: self, time: .fixed(time)) }

        /// Each day at its own random time in the range; the times derive from the seed in `time` and
        /// the date, so the same value always yields the same times.
        public func at(_ time: RandomTime) -> ResolvedDates { ResolvedDates(days: self, time: time.spec) }

        /// The days as year/month/day components, lazily, from the first day of the run.
        public func dateComponents(
            now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso
        ) -> LazyMapSequence<DateRule.LocalOccurrences, DateComponents> {
            let rule =
                at(hour: 0, minute: 0).rule(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
                ?? DateRule.never
            return rule.localOccurrences().lazy.map { DateComponents(year: $0.year, month: $0.month, day: $0.day) }
        }

        /// The rule's calendar pattern, resolved against `env`; nil when it cannot resolve.
        func resolvePattern(_ env: DateBuilderEnvironment) -> DateRule.Pattern? {
            guard DateBuilderMath.isSafe(dayOffset) else { return nil }
            switch pattern {
            case .daily(let start, let stride):
                guard let first = start.resolve(env) else { return nil }
                return .days(start: first + dayOffset, stride: stride, offsets: [0])
            case .weekly(let start, let stride, let selectors):
                guard let first = start.resolve(env) else { return nil }
                let offsets = Set(selectors.map { $0.offset(in: env.week) + dayOffset }).sorted()
                return .days(start: first, stride: DateBuilderMath.times(stride, 7), offsets: offsets)
            case .monthly(let start, let stride, let monthOffsets, let selectors):
                guard let first = start.resolve(env) else { return nil }
                return .months(
                    start: first, stride: stride, monthOffsets: Set(monthOffsets).sorted(), days: selectors,
                    dayOffset: dayOffset)
            }
        }
    }
}
