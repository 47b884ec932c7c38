import Foundation

extension WallClock {
    /// The local time type (UTC offset, daylight saving, abbreviation) `zone` keeps at `instant`.
    public static func localTimeType(at instant: Date, in zone: Zone) -> ZoneRules.LocalTimeType {
        Source(zone).localTimeType(at: clampedSeconds(instant))
    }

    /// The instants from `start` through `end` at which `zone`'s local time type may change: every one of
    /// the system's tz database, only the daylight-saving ones for a zone only Foundation knows.
    public static func transitions(in zone: Zone, from start: Date, through end: Date) -> [Date] {
        Source(zone).transitions(from: clampedSeconds(start), through: clampedSeconds(end)).map(date)
    }

    /// Whether `zone`'s local time changes within ten years after `instant` (whether the zone still
    /// observes daylight saving or has a change of offset coming).
    public static func zoneChanges(_ zone: Zone, after instant: Date) -> Bool {
        !transitions(in: zone, from: instant.addingTimeInterval(1), through: instant.addingTimeInterval(3650 * 86_400))
            .isEmpty
    }

    /// A zone's rules as `WallClock` reads them: the system's tz database's rules for the zone's name (or
    /// its fixed offset), or Foundation's zone when the database has no file for the name (a system
    /// without tzdata).
    enum Source {
        case rules(ZoneRules)
        case foundation(TimeZone)

        init(_ zone: Zone) {
            if let file = zone.file {
                self = .rules(ZoneRulesStore.shared.rules(file: file) ?? ZoneRules(fixedOffset: 0, identifier: "UTC"))
            } else if let offset = zone.fixedOffset {
                self = .rules(ZoneRules(fixedOffset: offset, identifier: zone.identifier))
            } else if let rules = ZoneRulesStore.shared.rules(named: zone.identifier) {
                self = .rules(rules)
            } else if let foundation = TimeZone(identifier: zone.identifier) {
                self = .foundation(foundation)
            } else {
                self = .rules(ZoneRules(fixedOffset: 0, identifier: zone.identifier))
            }
        }

        /// The UTC offset in seconds at `seconds` since 1970.
        func offset(at seconds: Int) -> Int {
            switch self {
            case .rules(let rules): return rules.utcOffset(at: seconds)
            case .foundation(let zone): return zone.secondsFromGMT(for: WallClock.date(seconds))
            }
        }

        /// The local time type at `seconds` since 1970.
        func localTimeType(at seconds: Int) -> ZoneRules.LocalTimeType {
            switch self {
            case .rules(let rules):
                return rules.localTimeType(at: seconds)
            case .foundation(let zone):
                let instant = WallClock.date(seconds)
                return ZoneRules.LocalTimeType(
                    utcOffset: zone.secondsFromGMT(for: instant),
                    isDaylightSaving: zone.isDaylightSavingTime(for: instant),
                    abbreviation: zone.abbreviation(for: instant) ?? "")
            }
        }

        /// Whether `transitions(from:through:)` lists every change of offset (Foundation lists only
        /// daylight-saving ones).
        var reportsEveryTransition: Bool {
            if case .rules = self { return true }
            return false
        }

        /// The instants in `low...high` at which the offset may change.
        func transitions(from low: Int, through high: Int) -> [Int] {
            switch self {
            case .rules(let rules):
                return rules.transitions(from: low, through: high)
            case .foundation(let zone):
                var result: [Int] = []
                var cursor = WallClock.date(low - 1)
                for _ in 0..<6 {
                    guard let next = zone.nextDaylightSavingTimeTransition(after: cursor),
                        next.timeIntervalSince1970 <= TimeInterval(high)
                    else { break }
                    result.append(Int(next.timeIntervalSince1970.rounded(.down)))
                    cursor = next
                }
                return result
            }
        }
    }
}
