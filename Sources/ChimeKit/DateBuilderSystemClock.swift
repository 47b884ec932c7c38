import ChimeCore
import Foundation

// The argument-less forms of DateBuilder, which read the system clock and zone. They live in ChimeKit
// because ChimeCore never reads the clock.

extension DateBuilder.ResolvedDate {
    /// `date(now:)` at the current time in the current zone.
    public func date() -> Date? { date(now: Date(), systemTimeZone: .current) }
    /// `dateComponents(now:)` at the current time in the current zone.
    public func dateComponents() -> DateComponents? { dateComponents(now: Date(), systemTimeZone: .current) }
}

extension DateBuilder.ResolvedDates {
    /// `dates(now:)` at the current time in the current zone.
    public func dates() -> DateRule.Occurrences { dates(now: Date(), systemTimeZone: .current) }
    /// `dateComponents(now:)` at the current time in the current zone.
    public func dateComponents() -> LazyMapSequence<DateRule.Occurrences, DateComponents> {
        dateComponents(now: Date(), systemTimeZone: .current)
    }
}

extension DateBuilder.Day {
    /// `dateComponents(now:)` at the current time in the current zone.
    public func dateComponents() -> DateComponents? { dateComponents(now: Date(), systemTimeZone: .current) }
}
