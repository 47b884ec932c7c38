import Foundation

/// The reminders of an iCalendar file as a group's entries (`chime import FILE.ics`): one entry for each
/// alarm (VALARM) of each event and to-do, and one at the due time of a to-do without alarms.
///
/// - An alarm relative to a repeating event becomes an entry with the event's rule (RRULE, RDATE,
///   EXDATE, on the event's wall clock) and an ``OccurrenceOffset``: `TRIGGER:-PT15M` is every
///   occurrence 15 minutes early, `-P1D` the same time a calendar day before. `RELATED=END` counts from
///   the event's end (DTEND, DURATION, or a to-do's DUE).
/// - An alarm of a single event, or one at an absolute time, is a one-off.
/// - An instance moved or changed by a `RECURRENCE-ID` component is left out of its series and imported
///   on its own.
/// - Time zones: the zone a TZID names (an IANA name, also at the end of a path such as
///   `/mozilla.org/…/Europe/Berlin`), or an IANA zone with the offsets of the file's VTIMEZONE (Outlook's
///   Windows names); UTC times stay UTC; floating times and dates follow the system zone, as chime's
///   floating rules do.
/// - `REPEAT` and `DURATION` in an alarm add its repetitions (at most ``maximumRepeats``).
///
/// Left out, each with a note saying why: EMAIL, PROCEDURE and NONE alarms, cancelled events, completed
/// or cancelled to-dos, events without alarms, alarms already past, series that have ended, and anything
/// whose values cannot be read (the rest of the file is still imported).
public struct CalendarImport: Sendable {
    /// One thing left out, and why.
    public struct Note: Hashable, Sendable, CustomStringConvertible {
        public var line: Int
        public var message: String
        public var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    public var entries: [TimelineEntry]
    public var notes: [Note]
    /// `X-WR-CALNAME`, when the file names its calendar.
    public var calendarName: String?

    /// At most this many repetitions of one alarm.
    public static let maximumRepeats = 10
    /// The work one file's time zone definitions may take together, in ``SearchBudget`` steps: 2,000,000;
    /// a calendar program's file with a handful of zones takes well under 100,000.
    public static let zoneWorkSteps = 20 * SearchBudget.stepsPerSearch
    /// The most `VTIMEZONE` definitions of one file that are read and matched (a calendar program writes
    /// one per zone its events use, a handful); events on the others are left out with a note.
    public static let maximumZoneDefinitions = 50
    /// The work one file's repeating alarms may take together to find their first occurrences:
    /// 20,000,000 steps, room for the largest group of ordinary rules (100,000 entries).
    public static let ruleWorkSteps = 200 * SearchBudget.stepsPerSearch

    /// Reads `text`. Only a file that is not iCalendar at all (or exceeds a limit of
    /// ``ICalendarComponent``) throws; everything else that cannot be used becomes a note.
    public static func read(_ text: String, now: Date, systemTimeZone: Zone, appName: String = "Calendar")
        throws(ICalendarError) -> CalendarImport
    {
        let roots = try ICalendarComponent.parse(text)
        var reader = Reader(now: now, system: systemTimeZone, appName: appName)
        reader.read(roots)
        return CalendarImport(entries: reader.entries, notes: reader.notes, calendarName: reader.calendarName)
    }
}

private struct Reader {
    let now: Date
    let system: Zone
    let appName: String
    /// The file's VTIMEZONEs by TZID, read when an event first uses one (a file may carry many unused).
    var definitions: [String: ICalendarComponent] = [:]
    var zones: [String: Zone?] = [:]
    /// The work all the file's time zone definitions may take together: reading their onsets and
    /// comparing them with the known zones.
    var zoneBudget = SearchBudget(steps: CalendarImport.zoneWorkSteps)
    /// TZIDs left unmatched because `zoneBudget` ran out or too many were matched already.
    var overBudget: Set<String> = []
    /// How many definitions were read and matched.
    var matched = 0
    /// The work all the file's repeating alarms may take together to find their first occurrences.
    var ruleBudget = SearchBudget(steps: CalendarImport.ruleWorkSteps)
    var entries: [TimelineEntry] = []
    var notes: [CalendarImport.Note] = []
    var usedIDs: Set<String> = []
    var nextSuffix: [String: Int] = [:]
    var calendarName: String?
    var past = 0
    /// Set once the group is full: the note says so once.
    var full = false

    init(now: Date, system: Zone, appName: String) {
        self.now = now
        self.system = system
        self.appName = appName
    }

    mutating func note(_ line: Int, _ message: String) {
        notes.append(CalendarImport.Note(line: line, message: message))
    }

    mutating func read(_ roots: [ICalendarComponent]) {
        var items: [ICalendarComponent] = []
        for root in roots {
            if calendarName == nil { calendarName = root.property("X-WR-CALNAME")?.text }
            for component in root.components {
                switch component.name {
                case "VTIMEZONE":
                    guard let tzid = component.property("TZID")?.value, !tzid.isEmpty else {
                        note(component.line, "a time zone left out: a VTIMEZONE has no TZID")
                        continue
                    }
                    definitions[tzid] = component
                case "VEVENT", "VTODO":
                    items.append(component)
                default:
                    note(component.line, "\(component.name) left out: only events and to-dos have reminders")
                }
            }
        }
        // Instances a RECURRENCE-ID component replaces are left out of their series.
        var replaced: [String: [ICalendarProperty]] = [:]
        for item in items {
            if let uid = item.property("UID")?.value, let id = item.property("RECURRENCE-ID") {
                replaced[uid, default: []].append(id)
            }
        }
        var masters: Set<String> = []
        for item in items {
            let uid = item.property("UID")?.value
            let isOverride = item.property("RECURRENCE-ID") != nil
            if !isOverride, let uid, !uid.isEmpty {
                guard masters.insert(uid).inserted else {
                    note(item.line, "a second \(item.name) with UID \(uid.prefix(60)) left out: a UID names one event")
                    continue
                }
            }
            read(item, replacedInstances: isOverride ? [] : uid.flatMap { replaced[$0] } ?? [])
        }
        if past > 0 {
            note(0, "\(past) alarm\(past == 1 ? " was" : "s were") already past and left out")
        }
    }

    // MARK: One event or to-do

    mutating func read(_ item: ICalendarComponent, replacedInstances: [ICalendarProperty]) {
        let isTodo = item.name == "VTODO"
        let summary = item.property("SUMMARY")?.text.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let title = summary.isEmpty ? (isTodo ? "To-do" : "Event") : summary
        let what = "\(isTodo ? "to-do" : "event") \"\(title.prefix(60))\""
        let status = item.property("STATUS")?.value.uppercased()
        if status == "CANCELLED" {
            return note(item.line, "\(what) left out: it is cancelled")
        }
        if isTodo, status == "COMPLETED" || item.property("COMPLETED") != nil {
            return note(item.line, "\(what) left out: it is completed")
        }
        let due = item.property("DUE")
        guard let startProperty = item.property("DTSTART") ?? (isTodo ? due : nil) else {
            return note(item.line, "\(what) left out: it has no \(isTodo ? "DTSTART or DUE" : "DTSTART")")
        }
        let start: ICalendarTime
        do {
            start = try ICalendarTime.value(of: startProperty)
        } catch {
            return note(error.line, "\(what) left out: \(error.message)")
        }
        guard let zoneName = zoneName(of: start, line: startProperty.line, what: what) else { return }
        let endOffset: OccurrenceOffset
        do {
            endOffset = try self.endOffset(of: item, start: start, due: isTodo ? due : nil)
        } catch {
            return note(error.line, "\(what) left out: \(error.message)")
        }
        var alarms = item.components("VALARM").map { Alarm.component($0) }
        if alarms.isEmpty {
            guard isTodo else { return note(item.line, "\(what) left out: it has no alarm") }
            guard due != nil || item.property("DURATION") != nil else {
                return note(item.line, "\(what) left out: it has neither an alarm nor a due date")
            }
            alarms = [.due]
        }
        var recurrence: (text: String, written: WrittenRule)?
        let isSeries = !item.properties("RRULE").isEmpty || !item.properties("RDATE").isEmpty
        if isSeries, item.property("RECURRENCE-ID") == nil {
            do {
                recurrence = try rule(of: item, start: start, zoneName: zoneName, replaced: replacedInstances)
            } catch {
                return note(error.line, "\(what) left out: \(error.message)")
            }
        }
        let body = Self.body(item)
        let base = Self.identifier(item, start: start, title: title)
        for (index, alarm) in alarms.enumerated() {
            let number = alarms.count == 1 ? "" : " \(index + 1)"
            let timing: AlarmTiming
            switch alarm {
            case .due:
                timing = .relative([endOffset])
            case .component(let component):
                do {
                    guard
                        let found = try self.timing(
                            of: component, endOffset: endOffset, what: "\(what), alarm\(number)")
                    else { continue }
                    timing = found
                } catch {
                    note(error.line, "\(what), alarm\(number) left out: \(error.message)")
                    continue
                }
            }
            let content = content(of: alarm, title: title, body: body)
            let id = base + (alarm.isDue ? "-due" : "-alarm\(index + 1)")
            switch timing {
            case .absolute(let instants):
                for (k, instant) in instants.enumerated() {
                    addOnce(id: k == 0 ? id : "\(id)-repeat\(k)", at: instant, content: content)
                }
            case .relative(let offsets):
                for (k, offset) in offsets.enumerated() {
                    let entryID = k == 0 ? id : "\(id)-repeat\(k)"
                    if let recurrence {
                        addSeries(
                            id: entryID, rule: recurrence.written, zoneName: zoneName, offset: offset, content: content,
                            what: what, line: item.line)
                    } else {
                        let zone = zoneName.flatMap { Zone(identifier: $0) } ?? system
                        let startInstant = WallClock.instants(for: start.local, in: zone).first ?? now
                        addOnce(id: entryID, at: offset.apply(to: startInstant, in: zone), content: content)
                    }
                }
            }
        }
    }

    enum Alarm {
        case component(ICalendarComponent)
        /// A to-do's due time, for a to-do without alarms.
        case due

        var isDue: Bool {
            if case .due = self { return true }
            return false
        }
    }

    enum AlarmTiming {
        case absolute([Date])
        case relative([OccurrenceOffset])
    }

    /// When an alarm fires: at instants, or at offsets from each occurrence's start; nil (with a note) for
    /// an alarm chime does not show.
    mutating func timing(of alarm: ICalendarComponent, endOffset: OccurrenceOffset, what: String)
        throws(ICalendarError) -> AlarmTiming?
    {
        let action = alarm.property("ACTION")?.value.uppercased() ?? "DISPLAY"
        guard action == "DISPLAY" || action == "AUDIO" else {
            note(alarm.line, "\(what) left out: ACTION:\(action) is not a notification (chime shows DISPLAY and AUDIO)")
            return nil
        }
        guard let trigger = alarm.property("TRIGGER") else {
            throw ICalendarError(line: alarm.line, "the alarm has no TRIGGER")
        }
        var count = 0
        var step = ICalendarDuration()
        if let repeatText = alarm.property("REPEAT")?.value {
            guard let repeats = Int(repeatText.trimmingCharacters(in: .whitespaces)), repeats >= 0,
                let durationText = alarm.property("DURATION")?.value,
                let duration = ICalendarDuration.parse(durationText)
            else {
                throw ICalendarError(
                    line: alarm.line, "REPEAT needs a count of 0 or more and a DURATION such as PT5M")
            }
            if repeats > CalendarImport.maximumRepeats {
                note(alarm.line, "\(what): REPEAT:\(repeats) cut to \(CalendarImport.maximumRepeats)")
            }
            count = min(repeats, CalendarImport.maximumRepeats)
            step = duration
        }
        let isDateTime =
            trigger.parameter("VALUE")?.uppercased() == "DATE-TIME"
            || (!trigger.value.contains("P") && trigger.value.count >= 15)
        if isDateTime {
            let time = try ICalendarTime.value(of: trigger)
            guard let zoneName = zoneName(of: time, line: trigger.line, what: what) else { return nil }
            let zone = zoneName.flatMap { Zone(identifier: $0) } ?? system
            guard let first = WallClock.instants(for: time.local, in: zone).first else { return nil }
            return .absolute(
                (0...count).map { k in
                    OccurrenceOffset(days: step.days * k, seconds: step.seconds * k).apply(to: first, in: zone)
                })
        }
        guard let duration = ICalendarDuration.parse(trigger.value) else {
            throw ICalendarError(
                line: trigger.line, "TRIGGER \"\(trigger.value)\" is neither a duration (-PT15M) nor a date-time")
        }
        var offset = OccurrenceOffset(days: duration.days, seconds: duration.seconds)
        if trigger.parameter("RELATED")?.uppercased() == "END" {
            offset = OccurrenceOffset(days: offset.days + endOffset.days, seconds: offset.seconds + endOffset.seconds)
        }
        let offsets = (0...count).map { k in
            OccurrenceOffset(days: offset.days + step.days * k, seconds: offset.seconds + step.seconds * k)
        }
        if let problem = offsets.lazy.compactMap(\.problem).first {
            throw ICalendarError(line: trigger.line, "TRIGGER: \(problem)")
        }
        return .relative(offsets)
    }

    /// How far the end (DTEND, DURATION, a to-do's DUE) is from the start; a day for an event on a date
    /// without an end, nothing for one at a time.
    mutating func endOffset(of item: ICalendarComponent, start: ICalendarTime, due: ICalendarProperty?)
        throws(ICalendarError) -> OccurrenceOffset
    {
        if let duration = item.property("DURATION") {
            guard let value = ICalendarDuration.parse(duration.value) else {
                throw ICalendarError(
                    line: duration.line, "DURATION \"\(duration.value)\" is not a duration such as PT1H")
            }
            return OccurrenceOffset(days: value.days, seconds: value.seconds)
        }
        guard let endProperty = item.property("DTEND") ?? due else {
            return OccurrenceOffset(days: start.isDate ? 1 : 0)
        }
        let end = try ICalendarTime.value(of: endProperty)
        if start.isDate, end.isDate {
            return OccurrenceOffset(days: end.local.daysSinceEpoch - start.local.daysSinceEpoch)
        }
        // Exact: the instants apart, each on its own clock.
        let startInstant = instant(start)
        let endInstant = instant(end)
        guard let startInstant, let endInstant else { return OccurrenceOffset() }
        let seconds = Int(endInstant.timeIntervalSince(startInstant))
        return OccurrenceOffset(seconds: max(-366 * 86_400, min(366 * 86_400, seconds)))
    }

    /// The series as an RRULE set on the start's wall clock: its RRULEs, RDATEs and EXDATEs, with the
    /// instances replaced elsewhere excluded and the start itself an occurrence (RFC 5545 counts DTSTART
    /// as the first instance even where the rule would not produce it).
    mutating func rule(
        of item: ICalendarComponent, start: ICalendarTime, zoneName: String?, replaced: [ICalendarProperty]
    ) throws(ICalendarError) -> (text: String, written: WrittenRule) {
        var lines = item.properties("RRULE").map { "RRULE:\($0.value)" }
        var rdates: [LocalDateTime] = []
        for property in item.properties("RDATE") {
            for value in try ICalendarTime.values(of: property) {
                guard let local = local(value, onClockOf: zoneName, start: start) else {
                    throw ICalendarError(
                        line: property.line, "RDATE names a time zone that is not known: \(property.value)")
                }
                rdates.append(local)
            }
        }
        var exdates: [LocalDateTime] = []
        for property in item.properties("EXDATE") + replaced {
            if property.name == "RECURRENCE-ID", property.parameter("RANGE")?.uppercased() == "THISANDFUTURE" {
                note(
                    property.line,
                    "RANGE=THISANDFUTURE read as this instance only: the later ones keep the series' times")
            }
            for value in try ICalendarTime.values(of: property) {
                guard let local = local(value, onClockOf: zoneName, start: start) else {
                    throw ICalendarError(
                        line: property.line, "\(property.name) names a time zone that is not known: \(property.value)")
                }
                exdates.append(local)
            }
        }
        func text(_ values: [LocalDateTime]) -> String {
            values.map { ICalendarTime.floating($0).text }.joined(separator: ",")
        }
        if !rdates.isEmpty { lines.append("RDATE:\(text(rdates))") }
        if !exdates.isEmpty { lines.append("EXDATE:\(text(exdates))") }
        // Refused before it is parsed: the size alone says it.
        let size = lines.reduce(0) { $0 + $1.utf8.count + 1 } + 16
        guard size <= WrittenRule.maximumRRuleSetBytes else {
            throw ICalendarError(
                line: item.line,
                "its rule with its dates is about \(size) bytes, more than the \(WrittenRule.maximumRRuleSetBytes) "
                    + "a rule may have (\(rdates.count) extra and \(exdates.count) exception dates)")
        }
        let zone = zoneName.flatMap { Zone(identifier: $0) } ?? system
        var set: RRuleSet
        do {
            set = try RRuleSet.parse(lines.joined(separator: "\n"), dtstart: start.local, timeZone: zone)
        } catch {
            throw ICalendarError(line: item.property("RRULE")?.line ?? item.line, "\(error)")
        }
        if set.nextOccurrence(after: start.local, inclusive: true) != start.local,
            !exdates.contains(start.local)
        {
            // RFC 5545 counts DTSTART as the first instance, also within COUNT: a rule that does not give it
            // keeps one occurrence less of its own.
            var rules = set.rules
            for index in rules.indices { if let count = rules[index].count { rules[index].count = count - 1 } }
            rules.removeAll { $0.count == 0 }
            rdates.append(start.local)
            lines =
                rules.map { "RRULE:\($0.rfcString)" } + ["RDATE:\(text(rdates))"]
                + (exdates.isEmpty ? [] : ["EXDATE:\(text(exdates))"])
            do {
                set = try RRuleSet.parse(lines.joined(separator: "\n"), dtstart: start.local, timeZone: zone)
            } catch {
                throw ICalendarError(line: item.line, "\(error)")
            }
        }
        // Stored as written above, so that the entry's definition (and a re-import) does not change with
        // how the set would print itself.
        let joined = lines.joined(separator: "\n")
        guard joined.utf8.count <= WrittenRule.maximumRRuleSetBytes else {
            throw ICalendarError(
                line: item.line,
                "its rule with its dates is \(joined.utf8.count) bytes, more than the \(WrittenRule.maximumRRuleSetBytes) "
                    + "a rule may have (\(exdates.count) exception dates)")
        }
        return (joined, .rrule(joined, dtstart: start.local))
    }

    mutating func addSeries(
        id: String, rule: WrittenRule, zoneName: String?, offset: OccurrenceOffset, content: NotificationContent,
        what: String, line: Int
    ) {
        let recurrence: Recurrence
        do {
            recurrence = try Recurrence.parse(
                rule, now: now, timeZone: zoneName.map { .named($0) } ?? .floating, systemTimeZone: system
            ).shifted(by: offset)
        } catch {
            return note(line, "\(what) left out: \(error)")
        }
        guard !ruleBudget.isExhausted else {
            return note(
                line,
                "\(what), \(id): left out: the file's repeating alarms need more than the "
                    + "\(CalendarImport.ruleWorkSteps) steps chime gives them to find their times")
        }
        do {
            _ = try recurrence.admissionCheck(after: now, systemTimeZone: system, budget: &ruleBudget)
        } catch  where error.kind == .noOccurrenceAfter {
            return note(line, "\(what), \(id): left out: the series has no alarm after now")
        } catch  where ruleBudget.isExhausted {
            return note(
                line,
                "\(what), \(id): left out: the file's repeating alarms need more than the "
                    + "\(CalendarImport.ruleWorkSteps) steps chime gives them to find their times")
        } catch {
            return note(line, "\(what), \(id): left out: \(error.description)")
        }
        add(
            TimelineEntry(
                id: unique(id), trigger: .rule(rule, timeZone: zoneName), content: .fixed(content),
                offset: offset.isZero ? nil : offset))
    }

    /// The end of the year 9999: chimed keeps no time after it.
    static let lastInstant = Date(timeIntervalSince1970: 253_402_300_799)

    mutating func addOnce(id: String, at instant: Date, content: NotificationContent) {
        guard instant > now else {
            past += 1
            return
        }
        guard instant <= Self.lastInstant else {
            return note(0, "\(id) left out: its time is after the year 9999")
        }
        add(TimelineEntry(id: unique(id), trigger: .at(instant), content: .fixed(content)))
    }

    mutating func add(_ entry: TimelineEntry) {
        guard entries.count < TimelineGroup.maximumEntries else {
            if !full {
                full = true
                note(0, "more than \(TimelineGroup.maximumEntries) alarms: the rest left out (a group holds that many)")
            }
            return
        }
        entries.append(entry)
    }

    mutating func unique(_ id: String) -> String {
        guard usedIDs.contains(id) else {
            usedIDs.insert(id)
            return id
        }
        var n = nextSuffix[id] ?? 2
        while usedIDs.contains("\(id)-\(n)") { n += 1 }
        nextSuffix[id] = n + 1
        usedIDs.insert("\(id)-\(n)")
        return "\(id)-\(n)"
    }

    // MARK: Times and zones

    /// The zone name a time is on: an IANA name, "UTC", or nil for floating times and dates; nil with a
    /// note (the caller returns) when its TZID is not known.
    mutating func zoneName(of time: ICalendarTime, line: Int, what: String) -> String?? {
        switch time {
        case .date, .floating: return .some(nil)
        case .utc: return .some("UTC")
        case .zoned(_, let tzid):
            guard let zone = zone(tzid) else {
                if overBudget.contains(tzid) {
                    note(
                        line,
                        "\(what) left out: its time zone \"\(tzid.prefix(60))\" was not matched: the file's time "
                            + "zones need more than the \(CalendarImport.zoneWorkSteps) steps chime gives them, or "
                            + "define more than \(CalendarImport.maximumZoneDefinitions) zones")
                } else {
                    note(
                        line,
                        "\(what) left out: the time zone \"\(tzid)\" is neither an IANA name nor defined by a "
                            + "VTIMEZONE whose offsets match a known zone")
                }
                return nil
            }
            return .some(zone.identifier)
        }
    }

    mutating func zone(_ tzid: String) -> Zone? {
        if let known = zones[tzid] { return known }
        var zone = ICalendarTimeZone.namedZone(tzid)
        if zone == nil, let component = definitions[tzid], !zoneBudget.isExhausted,
            matched < CalendarImport.maximumZoneDefinitions
        {
            matched += 1
            do {
                let definition = try ICalendarTimeZone(component, budget: &zoneBudget)
                zone = try definition.ianaZone(
                    over: now.addingTimeInterval(-366 * 86_400)...now.addingTimeInterval(2 * 366 * 86_400),
                    budget: &zoneBudget)
            } catch let error as ICalendarError {
                note(error.line, "a time zone left out: \(error.message)")
            } catch {
                note(
                    component.line,
                    "time zone \(tzid.prefix(60)) left out: the file's time zones need more than the "
                        + "\(CalendarImport.zoneWorkSteps) steps chime gives them; events on it are left out")
            }
        }
        if zone == nil, definitions[tzid] != nil,
            zoneBudget.isExhausted || matched >= CalendarImport.maximumZoneDefinitions
        {
            overBudget.insert(tzid)
        }
        zones[tzid] = zone
        return zone
    }

    /// The instant a time names (dates and floating times on the system's clock).
    mutating func instant(_ time: ICalendarTime) -> Date? {
        let zone: Zone
        switch time {
        case .date, .floating: zone = system
        case .utc: zone = Zone.utc
        case .zoned(_, let tzid):
            guard let known = self.zone(tzid) else { return nil }
            zone = known
        }
        return WallClock.instants(for: time.local, in: zone).first
    }

    /// A value of an EXDATE, RDATE or RECURRENCE-ID on the wall clock of the series (a date alone on a
    /// series at a time of day means that day at the start's time).
    mutating func local(_ value: ICalendarTime, onClockOf zoneName: String?, start: ICalendarTime) -> LocalDateTime? {
        let target = zoneName.flatMap { Zone(identifier: $0) } ?? system
        switch value {
        case .date(let day):
            guard !start.isDate else { return day }
            let s = start.local
            return LocalDateTime(
                year: day.year, month: day.month, day: day.day, hour: s.hour, minute: s.minute, second: s.second)
        case .floating(let local):
            return local
        case .utc(let local):
            return WallClock.localDateTime(
                for: Date(timeIntervalSince1970: Double(local.secondsSinceEpoch)), in: target)
        case .zoned(let local, let tzid):
            guard let zone = zone(tzid), let instant = WallClock.instants(for: local, in: zone).first else {
                return nil
            }
            return WallClock.localDateTime(for: instant, in: target)
        }
    }

    // MARK: Text

    func content(of alarm: Alarm, title: String, body: String) -> NotificationContent {
        var text = body
        var sound: String?
        if case .component(let component) = alarm {
            let description = component.property("DESCRIPTION")?.text.trimmingCharacters(in: .whitespacesAndNewlines)
            if let description, !Self.isBoilerplate(description, title: title) {
                text = description + (body.isEmpty ? "" : "\n" + body)
            }
            if component.property("ACTION")?.value.uppercased() == "AUDIO" { sound = "alarm-clock-elapsed" }
        }
        return NotificationContent(
            appName: appName, summary: String(title.prefix(NotificationContent.maximumSummaryLength / 4)),
            body: Self.clip(text, to: NotificationContent.maximumBodyLength / 4), sound: sound)
    }

    /// What programs write into an alarm's DESCRIPTION when the user wrote nothing.
    static func isBoilerplate(_ text: String, title: String) -> Bool {
        let lower = text.lowercased()
        return text.isEmpty || text == title
            || [
                "reminder", "none", "default mozilla description", "this is an event reminder", "alarm notification",
                "event reminder",
            ].contains(lower)
    }

    /// The event's description and location.
    static func body(_ item: ICalendarComponent) -> String {
        var parts: [String] = []
        if let location = item.property("LOCATION")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
            !location.isEmpty
        {
            parts.append(location)
        }
        if let description = item.property("DESCRIPTION")?.text.trimmingCharacters(in: .whitespacesAndNewlines),
            !description.isEmpty, description.lowercased() != "none"
        {
            parts.append(description)
        }
        return parts.joined(separator: "\n")
    }

    static func clip(_ text: String, to bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var result = ""
        for character in text {
            if result.utf8.count + character.utf8.count + 3 > bytes { break }
            result.append(character)
        }
        return result + "…"
    }

    /// A stable entry id for an event: its UID (characters entry ids cannot hold become `-`, and a hash
    /// of the UID is added when that changed it), or, without a UID, a hash of its start and summary; an
    /// instance that replaces one of a series adds its RECURRENCE-ID.
    static func identifier(_ item: ICalendarComponent, start: ICalendarTime, title: String) -> String {
        let raw = item.property("UID")?.value ?? ""
        var id: String
        if raw.isEmpty {
            id = "event-" + hash(start.text + "\n" + title)
        } else {
            let cleaned = String(
                raw.unicodeScalars.map { scalar -> Character in
                    scalar.isASCII
                        && (CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar))
                        ? Character(scalar) : "-"
                })
            id = String(cleaned.prefix(80))
            if id != raw { id += "-" + hash(raw) }
        }
        if let recurrence = item.property("RECURRENCE-ID") {
            id += "-" + recurrence.value.prefix(20).filter { $0.isLetter || $0.isNumber }
        }
        return id
    }

    static func hash(_ text: String) -> String {
        String(EntryDefinition.fingerprint(of: Array(text.utf8)) & 0xffff_ffff, radix: 16)
    }
}
