/// The times a phrase means when it names a part of the day (`every morning`, `every friday evening`) or
/// no time at all (`every weekday`). `chime.toml`'s `[phrases]` section sets them for chimed and the
/// `chime` command; the values here are the documented defaults (docs/rule-phrases.md).
public struct PhraseDefaults: Codable, Hashable, Sendable {
    /// `morning`: 09:00.
    public var morning: TimeOfDay
    /// `afternoon`: 14:00.
    public var afternoon: TimeOfDay
    /// `evening`: 18:00.
    public var evening: TimeOfDay
    /// `night`: 21:00.
    public var night: TimeOfDay
    /// A repeating phrase that names no time of day: 09:00.
    public var time: TimeOfDay
    /// What `biweekly` means: every 2 weeks (the default), or twice a week (`biweekly on monday and
    /// thursday`, which must then name two days).
    public var biweekly: Biweekly = .everyTwoWeeks

    /// Where `every other week` (and `every 2 weeks`, `biweekly`, `every other friday`) starts counting:
    /// the week containing today (the default), or the week of the first of its days from today on.
    public var everyOtherWeek: WeekAnchor = .thisWeek

    /// The two anchors of a rule that repeats every few weeks.
    public enum WeekAnchor: String, Codable, Hashable, Sendable {
        /// The week containing today: `every other friday` read on a Sunday next fires in 12 days.
        case thisWeek = "this-week"
        /// The week of the first named day from today on: read on a Sunday, in 5 days (Todoist's reading).
        case firstOccurrence = "first-occurrence"
    }

    /// The two readings of `biweekly`.
    public enum Biweekly: String, Codable, Hashable, Sendable {
        /// Every 2 weeks (Todoist, Microsoft To Do).
        case everyTwoWeeks = "every-2-weeks"
        /// Twice a week, on the two days the phrase names.
        case twiceAWeek = "twice-a-week"
    }

    public init(
        morning: TimeOfDay = TimeOfDay(hour: 9, minute: 0), afternoon: TimeOfDay = TimeOfDay(hour: 14, minute: 0),
        evening: TimeOfDay = TimeOfDay(hour: 18, minute: 0), night: TimeOfDay = TimeOfDay(hour: 21, minute: 0),
        time: TimeOfDay = TimeOfDay(hour: 9, minute: 0), biweekly: Biweekly = .everyTwoWeeks,
        everyOtherWeek: WeekAnchor = .thisWeek
    ) {
        self.biweekly = biweekly
        self.everyOtherWeek = everyOtherWeek
        self.morning = morning
        self.afternoon = afternoon
        self.evening = evening
        self.night = night
        self.time = time
    }

    private enum CodingKeys: String, CodingKey {
        case morning, afternoon, evening, night, time, biweekly, everyOtherWeek
    }

    /// Reads the values written before `biweekly` and `everyOtherWeek` existed as their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            morning: try container.decode(TimeOfDay.self, forKey: .morning),
            afternoon: try container.decode(TimeOfDay.self, forKey: .afternoon),
            evening: try container.decode(TimeOfDay.self, forKey: .evening),
            night: try container.decode(TimeOfDay.self, forKey: .night),
            time: try container.decode(TimeOfDay.self, forKey: .time),
            biweekly: try container.decodeIfPresent(Biweekly.self, forKey: .biweekly) ?? .everyTwoWeeks,
            everyOtherWeek: try container.decodeIfPresent(WeekAnchor.self, forKey: .everyOtherWeek) ?? .thisWeek)
    }

    /// The documented defaults.
    public static let standard = PhraseDefaults()

    /// The time a part of the day names (`morning`, `afternoon`, `evening`, `night`); nil for any other word.
    public func time(named word: String) -> TimeOfDay? {
        switch word {
        case "morning": morning
        case "afternoon": afternoon
        case "evening": evening
        case "night": night
        default: nil
        }
    }
}
