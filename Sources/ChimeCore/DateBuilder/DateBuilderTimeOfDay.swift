/// A wall-clock time of day.
public struct TimeOfDay: Codable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var hour: Int
    public var minute: Int
    public var second: Int

    public init(hour: Int, minute: Int, second: Int = 0) {
        self.hour = hour
        self.minute = minute
        self.second = second
    }

    /// Same as the initializer; reads well inside `.at(.time(hour: 10, minute: 30))`.
    public static func time(hour: Int, minute: Int, second: Int = 0) -> TimeOfDay {
        TimeOfDay(hour: hour, minute: minute, second: second)
    }

    /// A time drawn uniformly, to the second, from `[lower, upper)`, now, once (DateBuilder's form); `lower`
    /// itself when `upper` is not after it or a bound is not a valid time. `Day.at(.randomTime(from:to:))`
    /// takes `DateBuilder.RandomTime` instead, whose time is drawn again, reproducibly, for each occurrence.
    @_disfavoredOverload
    public static func randomTime(from lower: TimeOfDay, to upper: TimeOfDay) -> TimeOfDay {
        guard let low = lower.secondsIntoDay, let high = upper.secondsIntoDay, high > low else { return lower }
        let seconds = Int.random(in: low..<high)
        return TimeOfDay(hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60)
    }

    /// Seconds since midnight, or nil when a field is out of range (hour 0…23, minute and second 0…59).
    public var secondsIntoDay: Int? {
        guard (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second) else { return nil }
        return hour * 3600 + minute * 60 + second
    }

    /// `HH:MM` or `HH:MM:SS`.
    public var description: String {
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return second == 0 ? "\(two(hour)):\(two(minute))" : "\(two(hour)):\(two(minute)):\(two(second))"
    }

    public static func < (a: TimeOfDay, b: TimeOfDay) -> Bool {
        (a.hour, a.minute, a.second) < (b.hour, b.minute, b.second)
    }
}

extension DateBuilder {
    /// A time drawn uniformly (to the second) from `[from, to)`, a different one per occurrence.
    ///
    /// The draw is a pure function of `seed` and the occurrence's date, so a stored rule always yields
    /// the same times (the daemon can restart without reshuffling) and the seed travels in the
    /// `Codable` value.
    public struct RandomTime: Codable, Hashable, Sendable {
        public var from: TimeOfDay
        public var to: TimeOfDay
        public var seed: UInt64

        public init(from: TimeOfDay, to: TimeOfDay, seed: UInt64) {
            self.from = from
            self.to = to
            self.seed = seed
        }

        /// A random time with an explicit seed, for reproducible rules.
        public static func randomTime(from: TimeOfDay, to: TimeOfDay, seed: UInt64) -> RandomTime {
            RandomTime(from: from, to: to, seed: seed)
        }

        /// A random time with a fresh seed from the system generator (not the clock). Once created,
        /// the value is deterministic.
        public static func randomTime(from: TimeOfDay, to: TimeOfDay) -> RandomTime {
            var generator = SystemRandomNumberGenerator()
            return RandomTime(from: from, to: to, seed: generator.next())
        }

        var spec: DateRule.Time { .random(from: from, to: to, seed: seed) }
    }
}

extension DateRule {
    /// When in the day an occurrence fires.
    public enum Time: Codable, Hashable, Sendable {
        case fixed(TimeOfDay)
        /// Uniform in `[from, to)`; `to` not after `from` means exactly `from`.
        case random(from: TimeOfDay, to: TimeOfDay, seed: UInt64)

        /// Seconds into local `day`; nil when a bound is not a valid time.
        func secondsIntoDay(onDay day: Int) -> Int? {
            switch self {
            case .fixed(let time):
                return time.secondsIntoDay
            case .random(let from, let to, let seed):
                guard let low = from.secondsIntoDay, let high = to.secondsIntoDay else { return nil }
                guard high > low else { return low }
                let draw = DateRule.Time.mix(seed &+ UInt64(bitPattern: Int64(day)) &* 0x9E37_79B9_7F4A_7C15)
                return low + Int(draw % UInt64(high - low))
            }
        }

        var isValid: Bool { secondsIntoDay(onDay: 0) != nil }

        /// SplitMix64's finaliser: a well-mixed 64-bit hash of the input.
        static func mix(_ value: UInt64) -> UInt64 {
            var z = value &+ 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}
