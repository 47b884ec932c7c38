import Foundation

/// Conversions between wall-clock time (`LocalDateTime`) and instants (`Date`) in a time zone.
///
/// A local time names zero instants (inside a spring-forward gap), one, or two (inside a fall-back
/// overlap). `resolve(_:in:)` reports which; `instants(for:in:policy:)` applies a `DSTPolicy`.
/// A zone's rules are the system's tz database's (`ZoneRules`, through `ZoneRulesStore`), so chimed agrees
/// with `date` and follows a tzdata upgrade. Only the UTC offset at an instant and the instants of
/// transitions are used, so any offset works (30-minute DST in Australia/Lord_Howe, +05:45 in
/// Asia/Kathmandu, the day Samoa skipped in 2011).
public enum WallClock {
    /// What a wall-clock time means in a zone.
    public enum Resolution: Hashable, Sendable {
        /// Exactly one instant.
        case unique(Date)
        /// The time falls in a gap; `transition` is the instant the clocks jumped, which is when the
        /// wall clock first reads a time at or after the requested one.
        case gap(transition: Date)
        /// The time occurs twice; `first` < `second`.
        case overlap(first: Date, second: Date)
    }

    /// Half-width of the window searched for offsets, in seconds. Offsets lie within ±26 hours and a
    /// single transition shifts by at most a day, so 36 hours on each side covers every candidate.
    static let searchWindow = 36 * 3600

    /// Classifies `local` in `zone`, whose rules come from the system's tz database (`ZoneRulesStore`)
    /// when it has the zone, else from Foundation.
    public static func resolve(_ local: LocalDateTime, in zone: Zone) -> Resolution {
        resolve(local, in: Source(zone))
    }

    /// Classifies `local` under `rules`.
    public static func resolve(_ local: LocalDateTime, in rules: ZoneRules) -> Resolution {
        resolve(local, in: Source.rules(rules))
    }

    static func resolve(_ local: LocalDateTime, in zone: Source) -> Resolution {
        let wall = local.secondsSinceEpoch
        let candidates = candidateOffsets(around: wall, in: zone)
        var valid: [Int] = []
        for offset in candidates {
            let instant = wall - offset
            if zone.offset(at: instant) == offset, !valid.contains(instant) {
                valid.append(instant)
            }
        }
        valid.sort()
        if let first = valid.first, let last = valid.last {
            return first == last ? .unique(date(first)) : .overlap(first: date(first), second: date(last))
        }
        return .gap(transition: date(gapTransition(wall: wall, candidates: candidates, zone: zone)))
    }

    /// The instants `local` names in `zone` under `policy`, earliest first: empty only for a gap with
    /// `.skip`, two only for an overlap with `.both`.
    public static func instants(
        for local: LocalDateTime, in zone: Zone, policy: DSTPolicy = .default
    ) -> [Date] {
        instants(for: resolve(local, in: Source(zone)), policy: policy)
    }

    /// The instants `local` names under `rules` and `policy`, as `instants(for:in:policy:)` does.
    public static func instants(
        for local: LocalDateTime, in rules: ZoneRules, policy: DSTPolicy = .default
    ) -> [Date] {
        instants(for: resolve(local, in: Source.rules(rules)), policy: policy)
    }

    static func instants(for resolution: Resolution, policy: DSTPolicy) -> [Date] {
        switch resolution {
        case .unique(let instant):
            return [instant]
        case .gap(let transition):
            return policy.gap == .endOfGap ? [transition] : []
        case .overlap(let first, let second):
            return policy.overlap == .both ? [first, second] : [first]
        }
    }

    /// The wall-clock time `instant` shows in `zone` (fractions of a second are dropped).
    public static func localDateTime(for instant: Date, in zone: Zone) -> LocalDateTime {
        localDateTime(for: instant, in: Source(zone))
    }

    /// The wall-clock time `instant` shows under `rules` (fractions of a second are dropped).
    public static func localDateTime(for instant: Date, in rules: ZoneRules) -> LocalDateTime {
        localDateTime(for: instant, in: Source.rules(rules))
    }

    static func localDateTime(for instant: Date, in zone: Source) -> LocalDateTime {
        let seconds = clampedSeconds(instant)
        let wall = seconds + zone.offset(at: seconds)
        let days = floorDiv(wall, 86_400)
        return LocalDateTime(daysSinceEpoch: days, secondsIntoDay: wall - days * 86_400)
    }

    /// The UTC offset, in seconds, in effect in `zone` at `instant`.
    public static func utcOffset(at instant: Date, in zone: Zone) -> Int {
        Source(zone).offset(at: clampedSeconds(instant))
    }

    /// Whole seconds since 1970, clamped to ±10^14 so absurd dates cannot trap the conversion.
    static func clampedSeconds(_ instant: Date) -> Int {
        let raw = instant.timeIntervalSince1970
        guard raw.isFinite else { return 0 }
        return Int(max(-1e14, min(1e14, raw)).rounded(.down))
    }

    // MARK: - Internals

    static func date(_ seconds: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }

    static func floorDiv(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }

    /// Every UTC offset in effect in the window around `wall`: the offsets at both ends plus those on
    /// both sides of each transition the zone reports. When the ends agree and no transition is
    /// reported (the common case) this costs two look-ups and a search.
    static func candidateOffsets(around wall: Int, in zone: Source) -> [Int] {
        let low = wall - searchWindow
        let high = wall + searchWindow
        var offsets = [zone.offset(at: low)]
        func add(_ offset: Int) { if !offsets.contains(offset) { offsets.append(offset) } }
        add(zone.offset(at: high))
        for transition in zone.transitions(from: low + 1, through: high) {
            add(zone.offset(at: transition - 1))
            add(zone.offset(at: transition))
        }
        if offsets.count == 1 || zone.reportsEveryTransition { return offsets }
        // Foundation only reports daylight-saving transitions; an offset change between the ends that
        // it did not report (a standard-offset change such as Kathmandu 1986) is found by sampling.
        for sample in stride(from: low, through: high, by: 3 * 3600) {
            add(zone.offset(at: sample))
        }
        return offsets
    }

    /// The transition instant of the gap containing `wall`: the first second at which the wall clock
    /// reads later than `wall`. Found by bisection, so any offset and any gap length work.
    static func gapTransition(wall: Int, candidates: [Int], zone: Source) -> Int {
        guard let largest = candidates.max(), let smallest = candidates.min() else { return wall }
        func isPast(_ t: Int) -> Bool { t + zone.offset(at: t) > wall }
        var low = wall - largest  // wall clock reads before `wall` here
        var high = wall - smallest  // and after it here
        if isPast(low) || !isPast(high) {
            // Not a clean single gap (cannot happen with real zone data); scan the whole window.
            low = wall - searchWindow
            high = wall + searchWindow
        }
        while high - low > 1 {
            let mid = low + (high - low) / 2
            if isPast(mid) { high = mid } else { low = mid }
        }
        return high
    }
}
