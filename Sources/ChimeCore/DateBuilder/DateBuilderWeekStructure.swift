import Foundation

extension DateBuilder {
    /// How weeks are laid out: which weekday starts a week and which days form the weekend.
    ///
    /// Stored as plain numbers so a rule's meaning never changes after it is saved. Derived from
    /// Foundation: on Linux, swift-corelibs-foundation gets `firstWeekday` and the weekend from ICU
    /// locale data (checked: en_US Sunday/Sat–Sun, en_GB and de_DE Monday/Sat–Sun, he_IL Sunday/Fri–Sat,
    /// fa_IR Saturday/Fri, en_IN Sunday/Sun), so no table of our own is needed.
    public struct WeekStructure: Codable, Hashable, Sendable {
        /// The first day of a week.
        public var firstWeekday: Weekday
        /// The first day of the weekend.
        public var weekendStart: Weekday
        /// Number of weekend days (1 or 2 in practice).
        public var weekendLength: Int

        public init(firstWeekday: Weekday, weekendStart: Weekday, weekendLength: Int) {
            self.firstWeekday = firstWeekday
            self.weekendStart = weekendStart
            self.weekendLength = max(1, min(7, weekendLength))
        }

        /// ISO 8601: weeks start on Monday, weekend Saturday–Sunday. The default, because ChimeCore
        /// never consults the system locale on its own.
        public static let iso = WeekStructure(firstWeekday: .monday, weekendStart: .saturday, weekendLength: 2)

        /// The structure `locale`'s region uses (Gregorian calendar).
        public init(locale: Locale) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.locale = locale
            self.init(calendar: calendar)
        }

        /// `calendar.firstWeekday`, and the weekend of `calendar.locale`.
        public init(calendar: Calendar) {
            var probe = calendar
            probe.timeZone = TimeZone(secondsFromGMT: 0) ?? probe.timeZone
            let first = WeekStructure.isoWeekday(fromFoundation: calendar.firstWeekday)
            // 2024-01-01 was a Monday: probe noon of each day of that week.
            let monday = Date(timeIntervalSince1970: 1_704_110_400)
            let weekend = (1...7).filter { probe.isDateInWeekend(monday.addingTimeInterval(Double($0 - 1) * 86_400)) }
            guard !weekend.isEmpty, weekend.count < 7 else {
                self.init(firstWeekday: first, weekendStart: .saturday, weekendLength: 2)
                return
            }
            // The weekend starts on a weekend day whose previous day is a working day.
            let start =
                weekend.first { !weekend.contains(($0 + 5) % 7 + 1) } ?? weekend[0]
            var length = 0
            while length < 7, weekend.contains((start - 1 + length) % 7 + 1) { length += 1 }
            self.init(firstWeekday: first, weekendStart: Weekday(rawValue: start) ?? .saturday, weekendLength: length)
        }

        /// Foundation numbers weekdays 1 = Sunday … 7 = Saturday; ISO uses 1 = Monday … 7 = Sunday.
        static func isoWeekday(fromFoundation value: Int) -> Weekday {
            Weekday(rawValue: DateBuilderMath.floorMod(value + 5, 7) + 1) ?? .monday
        }

        /// Days from the first day of a week to `weekday`.
        func distance(from weekStart: Weekday, to weekday: Weekday) -> Int {
            DateBuilderMath.floorMod(weekday.rawValue - weekStart.rawValue, 7)
        }

        /// The first day of the week containing local `day`.
        func weekStart(containing day: Int) -> Int {
            let weekday = LocalDateTime(daysSinceEpoch: day).isoWeekday
            return day - DateBuilderMath.floorMod(weekday - firstWeekday.rawValue, 7)
        }
    }
}
