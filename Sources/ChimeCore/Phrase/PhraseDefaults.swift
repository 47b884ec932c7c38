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

    public init(
        morning: TimeOfDay = TimeOfDay(hour: 9, minute: 0), afternoon: TimeOfDay = TimeOfDay(hour: 14, minute: 0),
        evening: TimeOfDay = TimeOfDay(hour: 18, minute: 0), night: TimeOfDay = TimeOfDay(hour: 21, minute: 0),
        time: TimeOfDay = TimeOfDay(hour: 9, minute: 0)
    ) {
        self.morning = morning
        self.afternoon = afternoon
        self.evening = evening
        self.night = night
        self.time = time
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
