import Foundation

extension DateBuilder {
    /// DateBuilder's resolved date, fixed when it is made: an exact instant, or a wall-clock date and time
    /// (year … second) read in the components' `timeZone` when they carry one, else in the zone of the call
    /// that resolves it (ChimeKit schedules it as the instant it names then). ChimeKit's `Day.at(…)` makes the
    /// second kind from the day as it is when called, as DateBuilder does; `Moment` is the form that stays a
    /// word until resolved.
    public enum ResolvedDate: Codable, Hashable, Sendable {
        case exact(Date)
        case components(DateComponents)

        /// The same date as a `Moment`, which resolves it.
        public var moment: Moment {
            switch self {
            case .exact(let date):
                return .exact(date)
            case .components(let components):
                var moment = Moment.components(components)
                if let zone = components.timeZone { moment.context.timeZone = .named(zone.identifier) }
                return moment
            }
        }

        /// The instant: the exact one, or the components' wall-clock time in their zone (else
        /// `systemTimeZone`); nil when the components name no year or a date or time that does not exist.
        public func date(now: Date, systemTimeZone: Zone = .current, defaultWeek: WeekStructure = .iso) -> Date? {
            moment.date(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
        }
    }
}

extension DateBuilder.Day {
    /// This day at `timeOfDay`, resolved against `now`: DateBuilder's `.components` value (year … second), in
    /// the day's own zone when it names one (`.in(timeZone:)`). A day that does not exist (February 30) gives
    /// components without a date, which do not resolve.
    public func resolvedDate(
        at timeOfDay: TimeOfDay, now: Date, systemTimeZone: Zone,
        defaultWeek: DateBuilder.WeekStructure = .iso
    ) -> DateBuilder.ResolvedDate {
        resolvedDate(at: .fixed(timeOfDay), now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
    }

    /// This day at a time drawn from `time` for this day (the same draw a run of days makes for it), resolved
    /// against `now`.
    public func resolvedDate(
        at time: DateBuilder.RandomTime, now: Date, systemTimeZone: Zone,
        defaultWeek: DateBuilder.WeekStructure = .iso
    ) -> DateBuilder.ResolvedDate {
        resolvedDate(at: time.spec, now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
    }

    private func resolvedDate(
        at time: DateRule.Time, now: Date, systemTimeZone: Zone, defaultWeek: DateBuilder.WeekStructure
    ) -> DateBuilder.ResolvedDate {
        var components = DateComponents()
        if let env = environment(now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek),
            let day = resolve(env)
        {
            let local = LocalDateTime(daysSinceEpoch: day, secondsIntoDay: time.secondsIntoDay(onDay: day) ?? 0)
            components = DateComponents(
                year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute,
                second: local.second)
        }
        if case .fixed(let fixed) = time {
            // As given, even when out of range (DateBuilder keeps what it was told; such a date does not resolve).
            components.hour = fixed.hour
            components.minute = fixed.minute
            components.second = fixed.second
        }
        if case .named(let identifier) = context.timeZone { components.timeZone = TimeZone(identifier: identifier) }
        return .components(components)
    }
}
