import Foundation

/// Upcoming notifications as an iCalendar file a calendar program opens (`chime export --ics`): one event
/// for each pending item, with an alarm at the time the notification fires.
///
/// - A repeating entry whose rule RRULE can say (every RRULE; most phrases and OnCalendar events) is one
///   repeating event on the rule's wall clock (`DTSTART;TZID=…` and a VTIMEZONE, floating for a rule
///   that follows the system zone), and its offset is the alarm's `TRIGGER` (`-PT15M`).
/// - Other repeating entries, and entries with an end (`until`) or a count, are events at the listed
///   occurrences (`RDATE`s in UTC), each with its alarm at the start.
/// - A one-off is an event at its time, in UTC.
///
/// `chime import` reads the file back to the same notifications.
public enum CalendarExport {
    /// One pending item: the entry it runs and its next fire times (used where no rule is written).
    public struct Item: Sendable {
        public var uid: String
        public var entry: TimelineEntry
        public var next: [Date]

        public init(uid: String, entry: TimelineEntry, next: [Date]) {
            self.uid = uid
            self.entry = entry
            self.next = next
        }
    }

    /// The whole file. `horizon` is how far ahead the time zone definitions reach.
    public static func document(
        _ items: [Item], name: String?, now: Date, systemTimeZone: Zone, horizon: Date
    ) -> String {
        var calendar = ICalendarComponent(name: "VCALENDAR")
        calendar.properties = [
            ICalendarProperty("VERSION", "2.0"), ICalendarProperty("PRODID", "-//Chime//chime export//EN"),
            ICalendarProperty("CALSCALE", "GREGORIAN"),
        ]
        if let name { calendar.properties.append(ICalendarProperty("X-WR-CALNAME", text: name)) }
        var zoneStarts: [String: Date] = [:]
        var events: [ICalendarComponent] = []
        for item in items {
            for part in parts(of: item) {
                guard let (event, zone) = event(part, now: now, systemTimeZone: systemTimeZone) else { continue }
                events.append(event)
                if let (name, start) = zone { zoneStarts[name] = min(zoneStarts[name] ?? start, start) }
            }
        }
        // A repeating event has no end, and a program that reads the zone from the file (not by its name)
        // needs its changes as far as it will draw: 30 years ahead.
        let zoneEnd = max(horizon, now.addingTimeInterval(30 * 366 * 86_400))
        for (name, start) in zoneStarts.sorted(by: { $0.key < $1.key }) {
            guard let zone = Zone(identifier: name) else { continue }
            let from = max(start.addingTimeInterval(-86_400), now.addingTimeInterval(-10 * 366 * 86_400))
            calendar.components.append(timeZoneComponent(zone, from: from, to: max(zoneEnd, from)))
        }
        calendar.components += events
        return calendar.serialized
    }

    /// The most occurrences one event lists, so that `chime import` takes each event's dates as one rule.
    static let maximumDatesPerEvent = 900

    /// An item exported as its occurrences, in events of at most ``maximumDatesPerEvent`` each (`UID`s
    /// `…-part2`, …); any other item as it is.
    static func parts(of item: Item) -> [Item] {
        guard case .rule = item.entry.trigger, item.next.count > maximumDatesPerEvent else { return [item] }
        return stride(from: 0, to: item.next.count, by: maximumDatesPerEvent).map { start in
            var part = item
            part.next = Array(item.next[start..<min(item.next.count, start + maximumDatesPerEvent)])
            if start > 0 {
                let number = start / maximumDatesPerEvent + 1
                part.uid = item.uid.split(separator: "@", maxSplits: 1).enumerated().map {
                    $0.offset == 0 ? "\($0.element)-part\(number)" : String($0.element)
                }.joined(separator: "@")
            }
            return part
        }
    }

    /// The event of one item, and the zone (with the event's start) its times name, if any.
    static func event(_ item: Item, now: Date, systemTimeZone: Zone)
        -> (ICalendarComponent, (String, Date)?)?
    {
        let entry = item.entry
        let content = entry.content.base
        var event = ICalendarComponent(name: "VEVENT")
        event.properties = [
            ICalendarProperty("UID", item.uid),
            ICalendarProperty("DTSTAMP", ICalendarTime.utc(WallClock.localDateTime(for: now, in: utc)).text),
            ICalendarProperty("SUMMARY", text: content.summary),
        ]
        let body = [content.subtitle, content.markup ? BodyMarkup.plain(content.body) : content.body]
            .compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
        if !body.isEmpty { event.properties.append(ICalendarProperty("DESCRIPTION", text: body)) }
        var trigger = OccurrenceOffset()
        var zone: (String, Date)?
        if case .rule(let written, let zoneName) = entry.trigger, entry.endDate == nil, entry.maximumOccurrences == nil,
            let (lines, start, name) = ruleLines(written, zoneName: zoneName, now: now, systemTimeZone: systemTimeZone)
        {
            event.properties += lines
            trigger = entry.offset ?? OccurrenceOffset()
            zone = name.map { ($0, start) }
        } else {
            let times: [Date]
            if case .at(let date) = entry.trigger { times = [date] } else { times = item.next }
            guard let first = times.first else { return nil }
            event.properties.append(ICalendarProperty("DTSTART", utcText(first)))
            if times.count > 1 {
                event.properties.append(
                    ICalendarProperty("RDATE", times.dropFirst().map(utcText).joined(separator: ",")))
            }
        }
        var alarm = ICalendarComponent(name: "VALARM")
        alarm.properties = [
            ICalendarProperty("ACTION", "DISPLAY"), ICalendarProperty("DESCRIPTION", text: content.summary),
            ICalendarProperty("TRIGGER", ICalendarDuration(days: trigger.days, seconds: trigger.seconds).description),
        ]
        event.components.append(alarm)
        return (event, zone)
    }

    static let utc = Zone.utc

    static func utcText(_ date: Date) -> String { ICalendarTime.utc(WallClock.localDateTime(for: date, in: utc)).text }

    /// DTSTART, RRULE, RDATE and EXDATE of the rule's RRULE form, with the zone they name and the
    /// start as an instant; nil when RRULE cannot say the rule.
    static func ruleLines(_ written: WrittenRule, zoneName: String?, now: Date, systemTimeZone: Zone)
        -> ([ICalendarProperty], Date, String?)?
    {
        guard
            let recurrence = try? Recurrence.parse(
                written, now: now, timeZone: zoneName.map { .named($0) } ?? .floating, systemTimeZone: systemTimeZone),
            var set = recurrence.explanation(after: now, systemTimeZone: systemTimeZone).rrule
        else { return nil }
        // A floating set run on a named zone is written on that zone's clock; its UNTIL then has to be UTC.
        if set.timeZoneIdentifier == nil, let zoneName, let zone = Zone(identifier: zoneName) {
            set.timeZoneIdentifier = zoneName
            for index in set.rules.indices {
                switch set.rules[index].until {
                case .local(let local)?: set.rules[index].until = .utc(RRuleSet.utc(ofWallClock: local, in: zone))
                case .date(let y, let m, let d)?:
                    set.rules[index].until = .utc(
                        RRuleSet.utc(ofWallClock: LocalDateTime(year: y, month: m, day: d), in: zone))
                default: break
                }
            }
        }
        var lines: [ICalendarProperty] = []
        for line in set.rfcString.split(separator: "\n") {
            guard let property = try? ICalendarProperty.parse(String(line), line: 0) else { return nil }
            lines.append(property)
        }
        let zone = set.zone ?? systemTimeZone
        let start = WallClock.instants(for: set.dtstart, in: zone).first ?? now
        let name = set.timeZoneIdentifier.flatMap { $0 == "UTC" ? nil : $0 }
        return (lines, start, name)
    }

    /// A VTIMEZONE for `zone` from `from` to `to`: its offset at `from`, then one observance for each
    /// change of offset or of daylight saving (at most 400), as the system's tz database has them.
    static func timeZoneComponent(_ zone: Zone, from: Date, to: Date) -> ICalendarComponent {
        var component = ICalendarComponent(name: "VTIMEZONE")
        component.properties = [ICalendarProperty("TZID", zone.identifier)]
        func observance(at instant: Date, _ type: ZoneRules.LocalTimeType, from before: Int) -> ICalendarComponent {
            var part = ICalendarComponent(name: type.isDaylightSaving ? "DAYLIGHT" : "STANDARD")
            // The onset on the clock before it.
            let wall = Int(instant.timeIntervalSince1970.rounded(.down)) + before
            let days = Int((Double(wall) / 86_400).rounded(.down))
            let onset = LocalDateTime(daysSinceEpoch: days, secondsIntoDay: wall - days * 86_400)
            part.properties = [
                ICalendarProperty("DTSTART", ICalendarTime.floating(onset).text),
                ICalendarProperty("TZOFFSETFROM", offsetText(before)),
                ICalendarProperty("TZOFFSETTO", offsetText(type.utcOffset)),
            ]
            if !type.abbreviation.isEmpty { part.properties.append(ICalendarProperty("TZNAME", type.abbreviation)) }
            return part
        }
        var current = WallClock.localTimeType(at: from, in: zone)
        component.components.append(observance(at: from, current, from: current.utcOffset))
        for next in WallClock.transitions(in: zone, from: from.addingTimeInterval(1), through: to) {
            guard component.components.count < 400 else { break }
            let type = WallClock.localTimeType(at: next, in: zone)
            // A change of abbreviation alone is no observance of its own.
            guard type.utcOffset != current.utcOffset || type.isDaylightSaving != current.isDaylightSaving else {
                continue
            }
            component.components.append(observance(at: next, type, from: current.utcOffset))
            current = type
        }
        return component
    }

    /// `+0100`, `-0430`, `+053000`.
    static func offsetText(_ seconds: Int) -> String {
        let s = abs(seconds)
        let text = (seconds < 0 ? "-" : "+") + String(format: "%02d%02d", s / 3600, s % 3600 / 60)
        return s % 60 == 0 ? text : text + String(format: "%02d", s % 60)
    }
}
