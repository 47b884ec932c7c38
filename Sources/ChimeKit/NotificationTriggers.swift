import ChimeCore
import Foundation

/// When a notification fires, in any form ChimeKit accepts: a DateBuilder expression
/// (`Tomorrow().at(hour: 20, minute: 15)`, `EveryMonth().first(.friday).at(hour: 20, minute: 15)`,
/// `DateBuilder.Interval(everySeconds: 7200)`), a `CalendarNotificationTrigger` matching date components, or a
/// `TimeIntervalNotificationTrigger`.
///
/// Every trigger is also NiceNotifications' `NotificationsScheduling`, so `.schedule(...)` is one set of
/// overloads for both.
public protocol NotificationTrigger: NotificationsScheduling, Sendable {
    /// The trigger as chimed takes it, with relative words ("today", "this month") fixed against `now`.
    func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger
}

/// A trigger ready to travel to chimed: a moment or a rule, and how it ends.
public struct ResolvedTrigger: Hashable, Sendable {
    public var trigger: EntryTrigger
    /// No occurrence after this instant.
    public var endDate: Date?
    /// Fire at most this many times.
    public var count: Int?

    public init(_ trigger: EntryTrigger, endDate: Date? = nil, count: Int? = nil) {
        self.trigger = trigger
        self.endDate = endDate
        self.count = count
    }

    /// The trigger as the `Schedule` call's record.
    public var wire: TriggerWire {
        switch trigger {
        case .at(let date): TriggerWire(at: date, until: endDate, count: count)
        case .rule(let rule, let zone): TriggerWire(rule: rule, timeZone: zone, until: endDate, count: count)
        }
    }

    /// The occurrences after `now` up to `end`, at most `limit` of them, computed here as chimed would.
    func occurrences(after now: Date, until end: Date, limit: Int, timeZone: TimeZone) throws(ChimeError) -> [Date] {
        let last = min(end, endDate ?? end)
        switch trigger {
        case .at(let date):
            return date > now && date <= last ? [date] : []
        case .rule(let rule, let zone):
            let system = Zone(resolving: timeZone)
            let recurrence: Recurrence
            do {
                recurrence = try Recurrence.parse(
                    rule, now: now, timeZone: zone.map { .named($0) } ?? .floating, systemTimeZone: system)
            } catch {
                throw ChimeError(.rejected, error.description)
            }
            var dates: [Date] = []
            var cursor = now
            while dates.count < min(limit, count ?? limit),
                let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: system),
                next <= last
            {
                dates.append(next)
                cursor = next
            }
            return dates
        }
    }
}

extension DateBuilder.ResolvedDate: NotificationTrigger {
    /// One date: `Tomorrow().at(hour: 20, minute: 15)`, `Today().at(hour: 9, minute: 0)`, `ExactlyAt(date)`.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        try moment.resolve(now: now, timeZone: timeZone)
    }
}

extension DateBuilder.Moment: NotificationTrigger {
    /// One moment, resolved when scheduled: `let later: DateBuilder.Moment = Tomorrow().at(hour: 20, minute: 15)`.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        guard
            let date = date(now: now, systemTimeZone: Zone(resolving: timeZone), defaultWeek: DateBuilder.resolvingWeek)
        else {
            throw ChimeError(.rejected, "the date does not exist (check the day, hour and minute)")
        }
        return ResolvedTrigger(.at(date))
    }
}

extension NotificationTrigger {
    /// The trigger's next occurrences (at most 64, as many as iOS keeps pending for an app) as one-off
    /// members, resolved now in `DateBuilder.calendar`'s zone; empty when it does not resolve.
    public static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet {
        { trigger in
            let now = Date()
            let zone = DateBuilder.calendar.timeZone
            guard let resolved = try? trigger.resolve(now: now, timeZone: zone),
                let dates = try? resolved.occurrences(
                    after: now, until: Recurrence.latestOccurrence, limit: 64, timeZone: zone)
            else { return .empty }
            return LocalNotifications.NotificationTriggerSet(
                triggers: dates.map { LocalNotifications.Trigger($0, line: trigger, timeZone: zone) })
        }
    }
}

extension Array: NotificationTrigger where Element == DateBuilder.ResolvedDate {
    /// A list of dates as one item: the counted run it was made from when DateBuilder remembers one
    /// (`DateBuilder.ListRuns`: `EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(…)` is
    /// one rule, "…, 12 times"), otherwise its dates still ahead as one set, so that "Stop Repeat" ends them
    /// all. A timeline schedules a list longer than one set in several parts, and an empty one not at all;
    /// here those are refused.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        let parts = try resolvedParts(now: now, timeZone: timeZone)
        guard parts.count == 1, let only = parts.first else {
            throw ChimeError(
                .rejected,
                parts.isEmpty
                    ? "none of the list's dates is ahead" : "a list of \(count) dates is scheduled in a timeline")
        }
        return only
    }

    /// The counted run the list was made from (`DateBuilder.ListRuns`), when it is remembered and, resolved at
    /// `now`, still gives exactly the list's dates: a list made last month from "this month" is its dates.
    func rememberedRun(now: Date, timeZone: TimeZone) -> DateBuilder.ResolvedDates? {
        guard let run = DateBuilder.ListRuns.run(of: self) else { return nil }
        let (zone, week) = (Zone(resolving: timeZone), DateBuilder.resolvingWeek)
        let listed = compactMap { $0.date(now: now, systemTimeZone: zone, defaultWeek: week) }
        let ran = run.dates(now: now, systemTimeZone: zone, defaultWeek: week).prefix(count + 1)
        return listed.count == count && ran.elementsEqual(listed) ? run : nil
    }

    /// The most dates one set carries: its RDATE line stays within `TriggerWire.maximumRRuleBytes`.
    static var datesPerSet: Int { (TriggerWire.maximumRRuleBytes - 64) / 17 }

    /// The list as the items it is scheduled as: its run, or its future dates in sets of `datesPerSet`.
    func resolvedParts(now: Date, timeZone: TimeZone) throws(ChimeError) -> [ResolvedTrigger] {
        if let run = rememberedRun(now: now, timeZone: timeZone) {
            return [try run.resolve(now: now, timeZone: timeZone)]
        }
        let (zone, week) = (Zone(resolving: timeZone), DateBuilder.resolvingWeek)
        let dates = Set(compactMap { $0.date(now: now, systemTimeZone: zone, defaultWeek: week) }.filter { $0 > now })
            .sorted()
        if dates.count == 1 { return [ResolvedTrigger(.at(dates[0]))] }
        let utc = Zone.utc
        return try stride(from: 0, to: dates.count, by: Self.datesPerSet).map { (start: Int) throws(ChimeError) in
            let slice = dates[start..<Swift.min(start + Self.datesPerSet, dates.count)]
            let times = slice.map { WallClock.localDateTime(for: $0, in: utc) }
            do throws(RuleSyntaxError) {
                let set = try RRuleSet(dtstart: times[0], rules: [], rdates: times, timeZoneIdentifier: "UTC")
                return ResolvedTrigger(.rule(.rrule(set.rfcString, dtstart: nil), timeZone: nil))
            } catch {
                throw ChimeError(.rejected, "the list's dates do not make a set: \(error.description)")
            }
        }
    }
}

extension DateBuilder.ResolvedDates: NotificationTrigger {
    /// A run of days at a time of day: `EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 0)`.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        guard
            let rule = rule(now: now, systemTimeZone: Zone(resolving: timeZone), defaultWeek: DateBuilder.resolvingWeek)
        else {
            throw ChimeError(.rejected, "the rule does not resolve (check its days, time and count)")
        }
        return ResolvedTrigger(.rule(.dateRule(rule), timeZone: nil))
    }
}

extension DateBuilder {
    /// Weeks of expressions that name no calendar or locale are laid out as `DateBuilder.calendar` lays them.
    static var resolvingWeek: WeekStructure { WeekStructure(calendar: calendar) }
}

extension DateBuilder.Interval: NotificationTrigger {
    /// Every so many seconds from now: `DateBuilder.Interval(everySeconds: 7200)`.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        guard let rule = rule(now: now, systemTimeZone: Zone(resolving: timeZone)) else {
            throw ChimeError(.rejected, "the interval must be at least one second")
        }
        return ResolvedTrigger(.rule(.dateRule(rule), timeZone: nil))
    }
}

/// Fires when the clock matches date components, like `UNCalendarNotificationTrigger`: the components
/// given must match and the ones below the smallest given start at their lowest value. `second = 0` fires
/// every minute; `weekday = 2, hour = 11, minute = 30` every Monday at 11:30 (weekday 1 is Sunday, as in
/// Foundation's Gregorian calendar); `hour = 9` every day at 09:00:00. Without `repeats` it fires once, at
/// the next match. The components' `timeZone`, when set, pins the clock; otherwise it is the system's.
public struct CalendarNotificationTrigger: NotificationTrigger, Hashable {
    public var dateComponents: DateComponents
    public var repeats: Bool

    public init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.dateComponents = dateComponents
        self.repeats = repeats
    }

    /// The systemd calendar event the components match (`Mon *-*-* 11:30:00`).
    public func calendarEvent() throws(ChimeError) -> String {
        let c = dateComponents
        let unsupported: [(String, Int?)] = [
            ("era", c.era), ("quarter", c.quarter), ("weekOfMonth", c.weekOfMonth), ("weekOfYear", c.weekOfYear),
            ("weekdayOrdinal", c.weekdayOrdinal), ("yearForWeekOfYear", c.yearForWeekOfYear),
        ]
        if let (name, _) = unsupported.first(where: { $0.1 != nil }) {
            throw ChimeError(
                .rejected,
                "a calendar trigger cannot match \(name); use year, month, day, weekday, hour, minute and second, "
                    + "or a DateBuilder expression such as EveryMonth().first(.friday)")
        }
        if let nanosecond = c.nanosecond, nanosecond != 0 {
            throw ChimeError(.rejected, "a calendar trigger matches whole seconds; leave nanosecond unset")
        }
        let ranges: [(String, Int?, ClosedRange<Int>)] = [
            ("year", c.year, 1970...9999), ("month", c.month, 1...12), ("day", c.day, 1...31),
            ("weekday", c.weekday, 1...7), ("hour", c.hour, 0...23), ("minute", c.minute, 0...59),
            ("second", c.second, 0...59),
        ]
        for (name, value, range) in ranges {
            if let value, !range.contains(value) {
                throw ChimeError(.rejected, "the calendar trigger's \(name) \(value) is out of range \(range)")
            }
        }
        // Units from the largest to the smallest; a day is named by day or by weekday.
        let units = [c.year, c.month, c.day ?? c.weekday, c.hour, c.minute, c.second]
        guard let smallest = units.lastIndex(where: { $0 != nil }) else {
            throw ChimeError(.rejected, "a calendar trigger needs at least one component (e.g. hour and minute)")
        }
        func field(_ value: Int?, _ index: Int, lowest: Int, width: Int) -> String {
            if let value { return String(repeating: "0", count: max(0, width - String(value).count)) + String(value) }
            return index > smallest
                ? String(repeating: "0", count: max(0, width - String(lowest).count)) + "\(lowest)" : "*"
        }
        let day = c.day == nil && c.weekday != nil ? "*" : field(c.day, 2, lowest: 1, width: 2)
        let date = "\(field(c.year, 0, lowest: 1970, width: 4))-\(field(c.month, 1, lowest: 1, width: 2))-\(day)"
        let time =
            "\(field(c.hour, 3, lowest: 0, width: 2)):\(field(c.minute, 4, lowest: 0, width: 2)):"
            + field(c.second, 5, lowest: 0, width: 2)
        let weekday = c.weekday.map { ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"][$0 - 1] + " " } ?? ""
        let zone = c.timeZone.map { " \($0.identifier)" } ?? ""
        return weekday + date + " " + time + zone
    }

    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        ResolvedTrigger(.rule(.onCalendar(try calendarEvent()), timeZone: nil), count: repeats ? nil : 1)
    }
}

/// Fires `timeInterval` seconds from now, like `UNTimeIntervalNotificationTrigger`; with `repeats`, again every
/// `timeInterval` seconds (a whole number of seconds, at least one).
public struct TimeIntervalNotificationTrigger: NotificationTrigger, Hashable {
    public var timeInterval: TimeInterval
    public var repeats: Bool

    public init(timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        self.repeats = repeats
    }

    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        guard timeInterval.isFinite, timeInterval > 0, timeInterval <= 100 * 366 * 86_400 else {
            throw ChimeError(.rejected, "the time interval must be more than 0 seconds and at most 100 years")
        }
        guard repeats else { return ResolvedTrigger(.at(now.addingTimeInterval(timeInterval))) }
        guard timeInterval >= 1, timeInterval.rounded() == timeInterval else {
            throw ChimeError(.rejected, "a repeating time interval must be a whole number of seconds, at least 1")
        }
        return try DateBuilder.Interval(everySeconds: Int(timeInterval)).resolve(now: now, timeZone: timeZone)
    }
}
