import Foundation

/// What a rule was understood as: in plain words, and as the equivalent RFC 5545 set when RRULE can say
/// it. `chime next` and `chime send` print it, so a user sees what a phrase, an RRULE or an OnCalendar
/// event means before it fires.
public struct RuleExplanation: Hashable, Sendable {
    /// The rule in plain words: `every month on the first Friday at 20:15 (Europe/Berlin)`.
    public var words: String
    /// The same occurrences as an RFC 5545 set (DTSTART on the first occurrence), or nil when RRULE
    /// cannot say it (`noRRule` says why).
    public var rrule: RRuleSet?
    /// Why there is no RRULE form.
    public var noRRule: String?
    /// Where the RRULE form and the rule can differ (a daylight-saving gap, for an OnCalendar event).
    public var note: String?
    /// The periods the rule skips, when it skips some: `fires in 7 of every 12 months: never in February,
    /// April, June, September or November`.
    public var skips: String?

    public init(words: String, rrule: RRuleSet?, noRRule: String? = nil, note: String? = nil) {
        self.words = words
        self.rrule = rrule
        self.noRRule = noRRule
        self.note = note
        self.skips = rrule?.skippedPeriods
    }

    /// The RRULE form as text (`DTSTART…` and `RRULE:…` lines), or nil.
    public var rruleText: String? { rrule?.rfcString }
}

/// An RRULE equivalent, or why there is none.
public enum RRuleEquivalent: Hashable, Sendable {
    case rrule(RRuleSet)
    case none(String)

    var set: RRuleSet? {
        if case .rrule(let set) = self { return set }
        return nil
    }

    var reason: String? {
        if case .none(let reason) = self { return reason }
        return nil
    }
}

extension Recurrence {
    /// The rule explained: in words, and as RRULE. `after` is where a preview starts (an OnCalendar
    /// event's RRULE form starts at its first elapse after it).
    public func explanation(after: Date, systemTimeZone: Zone) -> RuleExplanation {
        switch self {
        case .rrule(let set, let zone):
            var words = set.summary
            if case .named(let name) = zone, set.timeZoneIdentifier == nil { words += " (\(name))" }
            return RuleExplanation(words: words, rrule: set)
        case .dateRule(let rule):
            let equivalent = rule.rruleEquivalent(systemTimeZone: systemTimeZone)
            var note: String?
            if equivalent.set != nil, rule.dstPolicy != .default {
                note =
                    "the rule's daylight-saving policy differs from RRULE's default (a time in a gap fires at "
                    + "the gap's end, one in an overlap once)"
            }
            return RuleExplanation(words: rule.summary, rrule: equivalent.set, noRRule: equivalent.reason, note: note)
        case .onCalendar(let spec):
            let equivalent = spec.rruleEquivalent(after: after, systemTimeZone: systemTimeZone)
            guard let set = equivalent.set else {
                return RuleExplanation(
                    words: "the systemd calendar event \(spec.description)", rrule: nil, noRRule: equivalent.reason)
            }
            // The years read better than the UNTIL that stands for them.
            var plain = set
            plain.timeZoneIdentifier = nil
            for index in plain.rules.indices { plain.rules[index].until = nil }
            var words = plain.summary
            if let years = spec.yearWords { words += " \(years)" }
            if let zone = set.timeZoneIdentifier { words += " (\(zone))" }
            var note: String?
            let zone = spec.timeZoneIdentifier.flatMap { Zone(identifier: $0) } ?? systemTimeZone
            if WallClock.zoneChanges(zone, after: after) {
                note =
                    "a time in a daylight-saving gap is skipped that day by systemd, where the RRULE fires at the "
                    + "gap's end"
            }
            return RuleExplanation(words: words, rrule: set, note: note)
        case .shifted(let base, let offset):
            // The moved times are no RRULE's: the base rule's RRULE form stands beside the offset's words.
            var explanation = base.explanation(after: after, systemTimeZone: systemTimeZone)
            explanation.words = "\(offset.words) \(explanation.words)"
            if explanation.rrule != nil {
                explanation.note = [explanation.note, "the RRULE is the rule's; each time fires \(offset.words) it"]
                    .compactMap { $0 }.joined(separator: "; ")
            }
            return explanation
        }
    }
}

// MARK: - DateBuilder rules (phrases) as RRULE

extension DateRule {
    /// The most occurrences walked to find the last one of a rule with a count.
    static let explainedOccurrenceLimit = 100_000

    /// The same rule as an RFC 5545 set whose occurrences are the rule's, or why RRULE cannot say it.
    /// DTSTART is the rule's first occurrence; a count of periods becomes the UNTIL of its last
    /// occurrence (RRULE's COUNT counts occurrences, not periods).
    public func rruleEquivalent(systemTimeZone: Zone) -> RRuleEquivalent {
        guard isWellFormed, let zone = timeZone.resolve(systemTimeZone: systemTimeZone) else {
            return .none("the rule is not well formed")
        }
        let zoneName: String? = {
            if case .named(let name) = timeZone { return name }
            return nil
        }()
        if case .interval(let start, let seconds) = pattern {
            return intervalEquivalent(start: start, seconds: seconds, zone: zone)
        }
        guard case .fixed(let time) = time else { return .none("a random time of day has no RRULE form") }
        var rules: [RRule]
        switch pattern {
        case .days(let start, let stride, let offsets):
            let offsets = Array(Set(offsets)).sorted()
            if stride % 7 == 0, offsets.allSatisfy({ (0..<7).contains($0) }) {
                let weekdays = offsets.compactMap {
                    Weekday(rawValue: LocalDateTime(daysSinceEpoch: start + $0).isoWeekday)
                }
                let weekStart = Weekday(rawValue: LocalDateTime(daysSinceEpoch: start).isoWeekday)
                rules = [
                    RRule(
                        frequency: .weekly, interval: stride / 7, byDay: weekdays.map { RRule.WeekdayNum($0) },
                        weekStart: stride > 7 && weekStart != .monday ? weekStart : nil)
                ]
            } else if offsets == [0] {
                rules = [RRule(frequency: .daily, interval: stride)]
            } else {
                return .none("days picked at offsets inside a period of \(stride) days have no RRULE form")
            }
        case .months(let start, let stride, let monthOffsets, let days, let dayOffset):
            guard dayOffset == 0 else { return .none("a day counted from another day has no RRULE form") }
            let monthOffsets = Array(Set(monthOffsets)).sorted()
            var base: RRule
            if stride % 12 == 0 {
                let firstYear = DateBuilderMath.floorDiv(start, 12)
                if stride > 12,
                    monthOffsets.contains(where: { DateBuilderMath.floorDiv(start + $0, 12) != firstYear })
                {
                    return .none("months of a period of \(stride / 12) years that spans two calendar years")
                }
                let months = Set(monthOffsets.map { DateBuilderMath.floorMod(start + $0, 12) + 1 }).sorted()
                base = RRule(frequency: .yearly, interval: stride / 12, byMonth: months)
            } else if monthOffsets == [0] {
                base = RRule(frequency: .monthly, interval: stride)
            } else {
                return .none("months picked inside a period of \(stride) months have no RRULE form")
            }
            var monthDays: [Int] = []
            var weekdays: [RRule.WeekdayNum] = []
            var setPositions: [Int] = []
            for day in days {
                switch day {
                case .firstDay: monthDays.append(1)
                case .lastDay: monthDays.append(-1)
                case .day(let n): monthDays.append(n)
                case .weekday(let ordinal, let weekday):
                    weekdays.append(RRule.WeekdayNum(weekday, ordinal: ordinal.rawValue))
                case .dayFromEnd(let n): monthDays.append(-n)
                case .weekdayOfMonth(let n): setPositions.append(n)
                }
            }
            rules = []
            // In one RRULE, BYMONTHDAY and BYDAY both have to match; days of either kind are two rules.
            if !monthDays.isEmpty {
                var rule = base
                rule.byMonthDay = Array(Set(monthDays)).sorted()
                rules.append(rule)
            }
            if !weekdays.isEmpty {
                var rule = base
                rule.byDay = weekdays
                rules.append(rule)
            }
            if !setPositions.isEmpty {
                var rule = base
                rule.byDay = [.monday, .tuesday, .wednesday, .thursday, .friday].map { RRule.WeekdayNum($0) }
                rule.bySetPos = Array(Set(setPositions)).sorted()
                rules.append(rule)
            }
        case .interval:
            return .none("unreachable")
        }
        for index in rules.indices {
            rules[index].byHour = [time.hour]
            rules[index].byMinute = [time.minute]
            rules[index].bySecond = [time.second]
        }
        var occurrences = localOccurrences().makeIterator()
        guard let first = occurrences.next() else { return .none("the rule never fires") }
        if count != nil || until != nil {
            let bound: LocalDateTime
            if count != nil {
                var last = first
                var walked = 1
                while let next = occurrences.next() {
                    last = next
                    walked += 1
                    if walked > Self.explainedOccurrenceLimit {
                        return .none("more than \(Self.explainedOccurrenceLimit) occurrences to find the last one")
                    }
                }
                bound = last
            } else {
                bound = until ?? first
            }
            let value: RRule.Until =
                zoneName != nil ? .utc(RRuleSet.utc(ofWallClock: bound, in: zone)) : .local(bound)
            for index in rules.indices { rules[index].until = value }
        }
        do {
            return .rrule(try RRuleSet(dtstart: first, rules: rules, timeZoneIdentifier: zoneName))
        } catch {
            return .none("\(error)")
        }
    }

    /// Every `seconds` from `start`: an RRULE in UTC, whose wall clock has no daylight saving.
    private func intervalEquivalent(start: Date, seconds: Int, zone: Zone) -> RRuleEquivalent {
        let utc = Zone.utc
        let dtstart = WallClock.localDateTime(for: start, in: utc)
        var rule: RRule
        if seconds % 3600 == 0 {
            rule = RRule(frequency: .hourly, interval: seconds / 3600)
        } else if seconds % 60 == 0 {
            rule = RRule(frequency: .minutely, interval: seconds / 60)
        } else {
            rule = RRule(frequency: .secondly, interval: seconds)
        }
        rule.count = count
        if let until, let bound = WallClock.instants(for: until, in: zone).last {
            let periods = (bound.timeIntervalSince(start) / Double(seconds)).rounded(.down)
            guard periods >= 0 else { return .none("the rule never fires") }
            guard periods < 1e12 else { return .none("the rule ends too far away") }
            let last = start.addingTimeInterval(periods * Double(seconds))
            rule.until = .utc(WallClock.localDateTime(for: last, in: utc))
        }
        do {
            return .rrule(try RRuleSet(dtstart: dtstart, rules: [rule], timeZoneIdentifier: "UTC"))
        } catch {
            return .none("\(error)")
        }
    }
}

// MARK: - systemd calendar events as RRULE

extension CalendarSpec {
    /// The same event as an RFC 5545 set starting at its first elapse after `after`, or why RRULE cannot
    /// say it. The frequency is the finest field the event leaves open (`*:*:00` is MINUTELY), and every
    /// field it names is a BYxxx list.
    public func rruleEquivalent(after: Date, systemTimeZone: Zone) -> RRuleEquivalent {
        if daylightFlag >= 0 { return .none("a local zone abbreviation (standard or daylight time) has no RRULE form") }
        guard let first = nextElapse(after: after, defaultTimeZone: systemTimeZone) else {
            return .none("the event never elapses")
        }
        let zoneName = timeZoneIdentifier
        let zone = zoneName.flatMap { Zone(identifier: $0) } ?? systemTimeZone
        func values(_ chain: [OnCalendarComponent]?, _ range: ClosedRange<Int>) -> [Int]? {
            guard let chain else { return nil }
            var result = Set<Int>()
            for c in chain {
                if c.repetition == 0 {
                    result.insert(c.start)
                } else {
                    var v = c.start
                    let stop = c.stop < 0 ? range.upperBound : min(c.stop, range.upperBound)
                    while v <= stop {
                        result.insert(v)
                        v += c.repetition
                    }
                }
            }
            let list = result.filter { range.contains($0) }.sorted()
            // A list of every value is `*`: `*:*:*` is every second, not sixty BYSECOND values.
            return list.count == range.count ? nil : list
        }
        var seconds: [Int]?
        if let micro = microsecond {
            var whole = Set<Int>()
            for c in micro {
                guard c.start % 1_000_000 == 0, c.repetition % 1_000_000 == 0, c.stop < 0 || c.stop % 1_000_000 == 0
                else { return .none("fractions of a second have no RRULE form") }
                whole.formUnion(
                    values(
                        [
                            OnCalendarComponent(
                                start: c.start / 1_000_000, stop: c.stop < 0 ? -1 : c.stop / 1_000_000,
                                repetition: c.repetition / 1_000_000)
                        ], 0...59) ?? Array(0...59))
            }
            seconds = whole.count == 60 ? nil : whole.sorted()
        }
        let minutes = values(minute, 0...59)
        let hours = values(hour, 0...23)
        let months = values(month, 1...12)
        var days: [Int]?
        if let day {
            if endOfMonth {
                guard day.allSatisfy({ $0.repetition == 0 }) else {
                    return .none("a repeated count back from the month's end has no RRULE form")
                }
                days = Set(day.map { -$0.start }).sorted()
            } else {
                days = values(day, 1...31)
            }
        }
        let frequency: RRule.Frequency
        if seconds == nil {
            frequency = .secondly
        } else if minutes == nil {
            frequency = .minutely
        } else if hours == nil {
            frequency = .hourly
        } else if days == nil {
            frequency = .daily
        } else if months == nil {
            frequency = .monthly
        } else {
            frequency = .yearly
        }
        var rule = RRule(
            frequency: frequency, bySecond: seconds ?? [], byMinute: minutes ?? [], byHour: hours ?? [],
            byDay: (weekdays ?? []).sorted().map { RRule.WeekdayNum($0) }, byMonthDay: days ?? [],
            byMonth: months ?? [])
        if let year {
            guard year.count == 1, let only = year.first, only.repetition <= 1 else {
                return .none("a list of years has no RRULE form")
            }
            let lastYear = only.repetition == 0 ? only.start : (only.stop < 0 ? 9999 : only.stop)
            if lastYear < 9999 {
                let bound = LocalDateTime(year: lastYear, month: 12, day: 31, hour: 23, minute: 59, second: 59)
                rule.until = zoneName != nil ? .utc(RRuleSet.utc(ofWallClock: bound, in: zone)) : .local(bound)
            }
        }
        let dtstart = WallClock.localDateTime(for: first, in: zone)
        do {
            return .rrule(try RRuleSet(dtstart: dtstart, rules: [rule], timeZoneIdentifier: zoneName))
        } catch {
            return .none("\(error)")
        }
    }

    /// "in 2027" or "in 2027 to 2030" for an event limited to years; nil otherwise.
    var yearWords: String? {
        guard let year, year.count == 1, let only = year.first else { return nil }
        if only.repetition == 0 { return "in \(only.start)" }
        if only.repetition == 1 { return only.stop < 0 ? "from \(only.start) on" : "in \(only.start) to \(only.stop)" }
        return nil
    }
}
