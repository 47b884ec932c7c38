/// The words phrases understand, mapped to values.
enum PhraseVocabulary {
    static let weekdays: [String: Weekday] = {
        var table: [String: Weekday] = [:]
        let names: [(Weekday, [String])] = [
            (.monday, ["monday", "mon"]), (.tuesday, ["tuesday", "tue", "tues"]),
            (.wednesday, ["wednesday", "wed"]), (.thursday, ["thursday", "thu", "thur", "thurs"]),
            (.friday, ["friday", "fri"]), (.saturday, ["saturday", "sat"]), (.sunday, ["sunday", "sun"]),
        ]
        for (day, words) in names {
            for word in words { table[word] = day }
            table[words[0] + "s"] = day  // "every mondays" reads badly but is understood
        }
        return table
    }()

    /// Monday to Friday.
    static let workdays: Set<String> = ["weekday", "weekdays", "workday", "workdays"]

    static let months: [String: Int] = {
        let names = [
            "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
            "november", "december",
        ]
        var table: [String: Int] = [:]
        for (index, name) in names.enumerated() {
            table[name] = index + 1
            table[String(name.prefix(3))] = index + 1
        }
        table["sept"] = 9
        return table
    }()

    static let ordinals: [String: DateBuilder.Ordinal] = [
        "first": .first, "1st": .first, "second": .second, "2nd": .second, "third": .third, "3rd": .third,
        "fourth": .fourth, "4th": .fourth, "fifth": .fifth, "5th": .fifth, "last": .last,
    ]

    /// Calendar units and their base: days (1 per day, 7 per week) or months (1 per month, 12 per year).
    enum CalendarUnit: Sendable {
        case day, week, month, year
    }

    static let calendarUnits: [String: CalendarUnit] = [
        "day": .day, "days": .day, "week": .week, "weeks": .week, "month": .month, "months": .month,
        "year": .year, "years": .year, "wk": .week, "wks": .week, "mo": .month, "mos": .month, "yr": .year,
        "yrs": .year,
    ]

    /// Clock units in seconds.
    static let clockUnits: [String: Int] = [
        "second": 1, "seconds": 1, "sec": 1, "secs": 1, "minute": 60, "minutes": 60, "min": 60, "mins": 60,
        "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600,
    ]

    /// A day of the month written "15th", "1st", "22nd", "3rd" (or a plain number after "day").
    static func dayOfMonth(_ word: String) -> Int? {
        for suffix in ["st", "nd", "rd", "th"] where word.hasSuffix(suffix) {
            guard let n = Int(word.dropLast(2)), (1...31).contains(n) else { return nil }
            return n
        }
        return nil
    }

    /// A positive count: digits, or "other" (every other day = every 2 days).
    static func count(_ word: String) -> Int? {
        if word == "other" { return 2 }
        guard word.allSatisfy(\.isASCII), let n = Int(word), n > 0 else { return nil }
        return n
    }

    /// The grammar's own words (docs/rule-phrases.md), besides the tables above.
    static let keywords: [String] = [
        "a", "am", "an", "and", "annually", "at", "between", "daily", "each", "end", "every", "everyday",
        "for", "from", "hourly", "in", "midnight", "monthly", "next", "noon", "of", "on", "other", "pm",
        "random", "start", "starting", "the", "this", "time", "today", "tomorrow", "tonight", "until",
        "weekend", "weekends", "weekly", "yearly", "morning", "afternoon", "evening", "night", "twice", "once",
        "times", "half", "quarter", "except", "to", "through", "fortnightly", "biweekly", "penultimate",
    ]

    /// Words other apps use for a schedule, with the chime spelling that means it. Did-you-mean offers
    /// these instead of a near word whose meaning differs ("biweekly" is not "weekly").
    static let otherSpellings: [String: String] = [
        "bimonthly": "every 2 months", "biweekly": "every 2 weeks", "fortnightly": "every 2 weeks",
        "semimonthly": "every month on the 1st and 15th", "semiweekly": "every monday and thursday",
        "triweekly": "every 3 weeks", "quarterly": "every 3 months", "semiannually": "every 6 months",
        "biannually": "every 6 months", "biennially": "every 2 years", "nightly": "every night",
        "weeknights": "every weekday evening", "fortnight": "every 2 weeks", "thrice": "3 times a day at 8, 14 and 20",
        "workweek": "every weekday",
    ]

    /// Every word a phrase may contain, for "did you mean" (the words, not their meanings).
    static let allWords: [String] = Array(
        Set(keywords).union(weekdays.keys).union(months.keys).union(ordinals.keys).union(workdays)
            .union(calendarUnits.keys).union(clockUnits.keys)
    ).sorted()
}
