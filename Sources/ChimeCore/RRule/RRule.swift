/// One RFC 5545 recurrence rule (the value of an `RRULE` property), as written, without a start.
///
/// The rule alone does not say when anything happens: RFC 5545 (and python-dateutil, whose results
/// Chime reproduces exactly) fill every missing `BYxxx` part from the start (`DTSTART`), so expanding
/// needs an ``RRuleSet``, which pairs rules with a start, extra dates (`RDATE`) and excluded dates
/// (`EXDATE`).
///
/// Lists keep the order and repetitions they were written with, so that
/// `RRule.parse(rule.rfcString) == rule` for every parsed rule; expansion treats them as sets.
public struct RRule: Codable, Hashable, Sendable, CustomStringConvertible {
    /// How often the rule's period repeats (`FREQ`). Declared from the coarsest to the finest, the order
    /// python-dateutil numbers them in, because the expansion compares frequencies by that order.
    public enum Frequency: String, Codable, Hashable, Sendable, CaseIterable, Comparable {
        case yearly = "YEARLY"
        case monthly = "MONTHLY"
        case weekly = "WEEKLY"
        case daily = "DAILY"
        case hourly = "HOURLY"
        case minutely = "MINUTELY"
        case secondly = "SECONDLY"

        /// 0 for YEARLY … 6 for SECONDLY, as dateutil numbers them.
        var rank: Int {
            switch self {
            case .yearly: return 0
            case .monthly: return 1
            case .weekly: return 2
            case .daily: return 3
            case .hourly: return 4
            case .minutely: return 5
            case .secondly: return 6
            }
        }

        /// Coarser frequencies sort first (YEARLY < MONTHLY < … < SECONDLY).
        public static func < (a: Frequency, b: Frequency) -> Bool { a.rank < b.rank }
    }

    /// One `BYDAY` entry: a weekday, optionally with an ordinal (`2FR` = second Friday, `-1SU` = last Sunday).
    ///
    /// Following dateutil, the ordinal only means something with MONTHLY and YEARLY rules; with finer
    /// frequencies it is accepted and ignored (`FREQ=WEEKLY;BYDAY=2FR` is every Friday).
    public struct WeekdayNum: Codable, Hashable, Sendable, CustomStringConvertible {
        /// Which occurrence of the weekday inside the month or year; negative counts from the end. Never 0.
        public var ordinal: Int?
        /// The weekday.
        public var weekday: Weekday

        /// Creates an entry; `ordinal` nil means "every such weekday".
        public init(_ weekday: Weekday, ordinal: Int? = nil) {
            self.weekday = weekday
            self.ordinal = ordinal
        }

        /// `MO`, `2FR`, `-1SU`.
        public var description: String {
            let code = RRule.weekdayCode(weekday)
            guard let ordinal else { return code }
            return "\(ordinal)\(code)"
        }
    }

    /// The `UNTIL` bound, which is inclusive. The three RFC 5545 forms are kept apart so the rule
    /// serialises back to what was written.
    public enum Until: Codable, Hashable, Sendable, CustomStringConvertible {
        /// `UNTIL=20261231`: a date, which dateutil reads as midnight at the start of that day (so an
        /// occurrence at 09:00 on that day is already past the bound).
        case date(year: Int, month: Int, day: Int)
        /// `UNTIL=20261231T235959`: a floating wall-clock time.
        case local(LocalDateTime)
        /// `UNTIL=20261231T235959Z`: an instant in UTC. Comparing it with floating occurrences needs a
        /// time zone; see ``RRuleSet/parse(_:dtstart:timeZone:)``.
        case utc(LocalDateTime)

        /// The bound as a wall-clock time, for the floating forms; nil for `.utc`.
        public var localValue: LocalDateTime? {
            switch self {
            case .date(let y, let m, let d): return LocalDateTime(year: y, month: m, day: d)
            case .local(let t): return t
            case .utc: return nil
            }
        }

        /// The RFC 5545 text: `20261231`, `20261231T235959` or `20261231T235959Z`.
        public var description: String {
            switch self {
            case .date(let y, let m, let d): return RRule.basicDate(y, m, d)
            case .local(let t): return RRule.basicDateTime(t)
            case .utc(let t): return RRule.basicDateTime(t) + "Z"
            }
        }
    }

    /// `FREQ`.
    public var frequency: Frequency
    /// `INTERVAL`, at least 1.
    public var interval: Int
    /// `COUNT`: how many occurrences the rule yields at most (counted from the start, before EXDATE).
    public var count: Int?
    /// `UNTIL`: the last instant an occurrence may have (inclusive).
    public var until: Until?
    /// `BYSECOND`, values 0…59.
    public var bySecond: [Int]
    /// `BYMINUTE`, values 0…59.
    public var byMinute: [Int]
    /// `BYHOUR`, values 0…23.
    public var byHour: [Int]
    /// `BYDAY`.
    public var byDay: [WeekdayNum]
    /// `BYMONTHDAY`, values ±1…31 (negative counts from the end of the month).
    public var byMonthDay: [Int]
    /// `BYYEARDAY`, values ±1…366.
    public var byYearDay: [Int]
    /// `BYWEEKNO`, values ±1…53 (ISO-style weeks that start on `weekStart`).
    public var byWeekNo: [Int]
    /// `BYMONTH`, values 1…12.
    public var byMonth: [Int]
    /// `BYSETPOS`, values ±1…366: which of each period's candidates to keep.
    public var bySetPos: [Int]
    /// `WKST`; nil means Monday, as in RFC 5545 and dateutil.
    public var weekStart: Weekday?

    /// Builds a rule from its parts; the caller is responsible for the ranges ``parse(_:)`` enforces
    /// (``RRuleSet/init(dtstart:rules:rdates:exdates:timeZoneIdentifier:)`` checks them again).
    public init(
        frequency: Frequency, interval: Int = 1, count: Int? = nil, until: Until? = nil, bySecond: [Int] = [],
        byMinute: [Int] = [], byHour: [Int] = [], byDay: [WeekdayNum] = [], byMonthDay: [Int] = [],
        byYearDay: [Int] = [], byWeekNo: [Int] = [], byMonth: [Int] = [], bySetPos: [Int] = [],
        weekStart: Weekday? = nil
    ) {
        self.frequency = frequency
        self.interval = interval
        self.count = count
        self.until = until
        self.bySecond = bySecond
        self.byMinute = byMinute
        self.byHour = byHour
        self.byDay = byDay
        self.byMonthDay = byMonthDay
        self.byYearDay = byYearDay
        self.byWeekNo = byWeekNo
        self.byMonth = byMonth
        self.bySetPos = bySetPos
        self.weekStart = weekStart
    }

    /// Same as ``rfcString``.
    public var description: String { rfcString }

    static func weekdayCode(_ day: Weekday) -> String {
        switch day {
        case .monday: return "MO"
        case .tuesday: return "TU"
        case .wednesday: return "WE"
        case .thursday: return "TH"
        case .friday: return "FR"
        case .saturday: return "SA"
        case .sunday: return "SU"
        }
    }

    static func basicDate(_ y: Int, _ m: Int, _ d: Int) -> String {
        func pad(_ v: Int, _ width: Int) -> String {
            var s = String(v)
            while s.count < width { s = "0" + s }
            return s
        }
        return pad(y, 4) + pad(m, 2) + pad(d, 2)
    }

    static func basicDateTime(_ t: LocalDateTime) -> String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return basicDate(t.year, t.month, t.day) + "T" + two(t.hour) + two(t.minute) + two(t.second)
    }
}
