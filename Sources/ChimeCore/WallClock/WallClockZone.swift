import Foundation

extension WallClock {
    /// The local time type (UTC offset, daylight saving, abbreviation) `zone` keeps at `instant`.
    public static func localTimeType(at instant: Date, in zone: TimeZone) -> ZoneRules.LocalTimeType {
        Zone(zone).localTimeType(at: clampedSeconds(instant))
    }

    /// The instants from `start` through `end` at which `zone`'s local time type may change: every one of
    /// the system's tz database, only the daylight-saving ones for a zone only Foundation knows.
    public static func transitions(in zone: TimeZone, from start: Date, through end: Date) -> [Date] {
        Zone(zone).transitions(from: clampedSeconds(start), through: clampedSeconds(end)).map(date)
    }

    /// Whether `zone`'s local time changes within ten years after `instant` (whether the zone still
    /// observes daylight saving or has a change of offset coming).
    public static func zoneChanges(_ zone: TimeZone, after instant: Date) -> Bool {
        !transitions(in: zone, from: instant.addingTimeInterval(1), through: instant.addingTimeInterval(3650 * 86_400))
            .isEmpty
    }

    /// A zone as `WallClock` reads it: the system's tz database's rules for the zone's name, or
    /// Foundation's when the database has no file for it (Foundation's fixed-offset `GMT+0530`, or a
    /// system without tzdata).
    enum Zone {
        case rules(ZoneRules)
        case foundation(TimeZone)

        init(_ zone: TimeZone) {
            let name = zone.identifier
            // Foundation's fixed offsets (`GMT+0530`, what an imported VTIMEZONE may become) have no file;
            // asking the directory for each would cost a look-up on disk per new offset.
            if name.utf8.count > 5, name.hasPrefix("GMT+") || name.hasPrefix("GMT-") {
                self = .foundation(zone)
            } else if let rules = ZoneRulesStore.shared.rules(named: name) {
                self = .rules(rules)
            } else {
                self = .foundation(zone)
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
