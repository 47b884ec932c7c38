import Foundation

/// A declarative way to describe reminder dates ("first friday of every month at 20:15"), after
/// NiceNotifications' DateBuilder, as plain `Codable` values.
///
/// Expressions never read the clock. Relative anchors (`Today()`, `.thisMonth`, …) stay symbolic in the
/// value and are resolved against a `now` the caller passes to `date(now:)`, `dates(now:)`,
/// `dateComponents(now:)` or `rule(now:)`. Resolving yields a `DateRule`: absolute, `Codable`, and
/// lazily evaluated by `nextOccurrence(after:systemTimeZone:)`.
///
/// Calendar arithmetic is proleptic Gregorian. A calendar or locale set with `.in(calendar:)` /
/// `.in(locale:)` contributes the week structure (first weekday and weekend); without one, weeks are laid
/// out as the resolving call says (`defaultWeek:`; ChimeKit's argument-less forms use `DateBuilder.calendar`).
/// The time zone is set separately with `.in(timeZone:)` (default: floating).
public enum DateBuilder {
    /// Safety limits on counts, strides and offsets: rules beyond them are rejected instead of risking
    /// integer overflow on values decoded from untrusted JSON.
    static let maxMagnitude = 1_000_000
    /// Years outside this range do not resolve.
    static let yearRange = 1...9999
}

extension DateBuilder {
    /// Settings an expression is evaluated with. Every expression carries one; derived expressions
    /// inherit it, so `.in(...)` may be written anywhere in a chain and applies to the whole chain.
    public struct Context: Codable, Hashable, Sendable {
        /// Default `.floating`.
        public var timeZone: RuleTimeZone
        /// Default `endOfGap` / `first`.
        public var dstPolicy: DSTPolicy
        /// Default nil: the week structure of the resolving call (`defaultWeek:`, ISO 8601 unless given).
        public var week: WeekStructure?

        public init(
            timeZone: RuleTimeZone = .floating, dstPolicy: DSTPolicy = .default, week: WeekStructure? = nil
        ) {
            self.timeZone = timeZone
            self.dstPolicy = dstPolicy
            self.week = week
        }
    }

    /// An ordinal for "the third friday of the month": 1…5 count from the start, -1 (`.last`) … -5 from the
    /// end; other values pick no day. Encoded as its number.
    public struct Ordinal: Codable, Hashable, Sendable, CaseIterable {
        public var rawValue: Int

        public static let first = Ordinal(rawValue: 1)
        public static let second = Ordinal(rawValue: 2)
        public static let third = Ordinal(rawValue: 3)
        public static let fourth = Ordinal(rawValue: 4)
        public static let fifth = Ordinal(rawValue: 5)
        /// The last one in the month.
        public static let last = Ordinal(rawValue: -1)

        public static let allCases: [Ordinal] = [.first, .second, .third, .fourth, .fifth, .last]

        public init(rawValue: Int) { self.rawValue = rawValue }

        public init(from decoder: any Decoder) throws {
            rawValue = try decoder.singleValueContainer().decode(Int.self)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }
}

/// A DateBuilder expression: a `Codable` value that can be re-targeted to another zone, locale or
/// DST policy.
public protocol DateBuilderExpression: Codable, Hashable, Sendable {
    /// The settings the expression is evaluated with.
    var context: DateBuilder.Context { get set }
}

extension DateBuilderExpression {
    /// Evaluates in a fixed zone (the rule then ignores the system zone), read from the system's tz
    /// database by its name.
    public func `in`(timeZone: TimeZone) -> Self {
        var copy = self
        copy.context.timeZone = .named(timeZone.identifier)
        return copy
    }

    /// Evaluates in a fixed zone (the rule then ignores the system zone).
    @_disfavoredOverload
    public func `in`(timeZone: Zone) -> Self {
        var copy = self
        copy.context.timeZone = .named(timeZone.identifier)
        return copy
    }

    /// Evaluates in `timeZone`; `.floating` follows the system zone at evaluation time.
    public func `in`(timeZone: RuleTimeZone) -> Self {
        var copy = self
        copy.context.timeZone = timeZone
        return copy
    }

    /// Takes the week structure (first weekday, weekend) from `locale`'s region.
    public func `in`(locale: Locale) -> Self {
        var copy = self
        copy.context.week = DateBuilder.WeekStructure(locale: locale)
        return copy
    }

    /// Takes the week structure from `calendar` (its `firstWeekday`, and the weekend of its locale).
    /// The calendar's time zone is deliberately NOT taken: every `Calendar` carries one, and silently
    /// pinning the zone would break floating rules; use `.in(timeZone:)`.
    public func `in`(calendar: Calendar) -> Self {
        var copy = self
        copy.context.week = DateBuilder.WeekStructure(calendar: calendar)
        return copy
    }

    /// Uses an explicit week structure.
    public func `in`(week: DateBuilder.WeekStructure) -> Self {
        var copy = self
        copy.context.week = week
        return copy
    }

    /// Sets what happens at DST gaps and overlaps.
    public func dstPolicy(_ policy: DSTPolicy) -> Self {
        var copy = self
        copy.context.dstPolicy = policy
        return copy
    }
}

extension DateBuilderExpression {
    /// What the expression resolves in at `now`; nil when its zone is unknown.
    func environment(
        now: Date, systemTimeZone: Zone, defaultWeek: DateBuilder.WeekStructure
    ) -> DateBuilderEnvironment? {
        DateBuilderEnvironment(context: context, now: now, systemTimeZone: systemTimeZone, defaultWeek: defaultWeek)
    }
}

/// Everything an expression needs to resolve: the caller's `now`, the zone to read it in, and the
/// week structure.
struct DateBuilderEnvironment {
    let now: Date
    let zone: Zone
    let week: DateBuilder.WeekStructure
    /// Today's local day number in `zone`.
    let today: Int

    init?(
        context: DateBuilder.Context, now: Date, systemTimeZone: Zone, defaultWeek: DateBuilder.WeekStructure
    ) {
        guard let zone = context.timeZone.resolve(systemTimeZone: systemTimeZone) else { return nil }
        self.now = now
        self.zone = zone
        self.week = context.week ?? defaultWeek
        self.today = WallClock.localDateTime(for: now, in: zone).daysSinceEpoch
    }

    /// The local day `date` falls on.
    func day(of date: Date) -> Int { WallClock.localDateTime(for: date, in: zone).daysSinceEpoch }
}

/// Integer helpers shared by the DateBuilder files (prefixed to stay clear of other ChimeCore parts).
enum DateBuilderMath {
    static func floorDiv(_ a: Int, _ b: Int) -> Int { WallClock.floorDiv(a, b) }

    static func floorMod(_ a: Int, _ b: Int) -> Int { a - floorDiv(a, b) * b }

    /// `a * b`, saturating instead of trapping (the result is then rejected as out of range).
    static func times(_ a: Int, _ b: Int) -> Int {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? ((a < 0) != (b < 0) ? Int.min : Int.max) : product
    }

    static func gcd(_ a: Int, _ b: Int) -> Int {
        var (x, y) = (abs(a), abs(b))
        while y != 0 { (x, y) = (y, x % y) }
        return x
    }

    /// Month index (`year * 12 + month - 1`) of a local day.
    static func monthIndex(ofDay day: Int) -> Int {
        let civil = LocalDateTime.civil(fromDays: day)
        return civil.year * 12 + civil.month - 1
    }

    /// First day (days since epoch) of a month index; nil outside the supported years.
    static func firstDay(ofMonth index: Int) -> Int? {
        let year = floorDiv(index, 12)
        guard DateBuilder.yearRange.contains(year) else { return nil }
        return LocalDateTime.days(fromCivil: year, floorMod(index, 12) + 1, 1)
    }

    static func daysIn(month index: Int) -> Int {
        LocalDateTime.daysInMonth(year: floorDiv(index, 12), month: floorMod(index, 12) + 1)
    }

    static func isSafe(_ value: Int) -> Bool { (-DateBuilder.maxMagnitude...DateBuilder.maxMagnitude).contains(value) }

    /// Local days are accepted between years 1 and 9999.
    static func isSafeDay(_ day: Int) -> Bool {
        (-719_162...2_932_896).contains(day)
    }
}
