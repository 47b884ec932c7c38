// swift-format-ignore-file
import ChimeKit
import Foundation
import Testing

// App code written against DateBuilder's API as an iOS app uses it (not a seed's): a trial's reminders, made
// as DateBuilder's resolved dates and read back by their two cases, with only its import changed.

enum TrialReminders {
    static func plan(accountCreated: Date) -> [DateBuilder.ResolvedDate] {
        [
            ExactlyAt(accountCreated).addingDays(7),
            ExactlyAt(accountCreated).addingDays(13).addingHours(12),
            Tomorrow().at(hour: 9, minute: 30),
        ]
    }

    static func describe(_ date: DateBuilder.ResolvedDate) -> String {
        switch date {
        case .exact(let instant):
            return "at \(Int(instant.timeIntervalSince1970))"
        case .components(let components):
            return "on \(components.year ?? 0)-\(components.month ?? 0)-\(components.day ?? 0)"
                + " at \(components.hour ?? 0):\(components.minute ?? 0)"
        }
    }
}

@Suite struct DateBuilderAppTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// 2026-03-20T10:00:00Z, nine days before Berlin's clocks go forward.
    static let created = Date(timeIntervalSince1970: 1_774_000_800)

    /// What `make` made, and an instant of the day it was made on (in `zone`): made again when a day began
    /// while it ran, so that a test that knows "today" from the clock agrees with the code under test.
    static func madeOnOneDay<T>(in zone: TimeZone, _ make: () -> T) -> (value: T, at: Date) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        while true {
            let before = Date()
            let value = make()
            if calendar.isDate(before, inSameDayAs: Date()) { return (value, before) }
        }
    }

    @Test func aDayAtATimeIsTheDayAsItIsWhenMadeInDateBuildersCalendar() {
        DateBuilder.withTimeZone(Self.berlin) {
            let (made, at) = Self.madeOnOneDay(in: Self.berlin) { Tomorrow().at(hour: 9, minute: 30) }
            // Foundation's calendar says which day tomorrow is.
            let calendar = DateBuilder.calendar
            var expected = calendar.dateComponents(
                [.year, .month, .day], from: calendar.date(byAdding: .day, value: 1, to: at)!)
            expected.hour = 9
            expected.minute = 30
            expected.second = 0
            #expect(made == .components(expected))
            #expect(made.date() == calendar.date(from: expected))
            #expect(TrialReminders.describe(made) == "on \(expected.year!)-\(expected.month!)-\(expected.day!) at 9:30")
        }
    }

    @Test func exactDatesMoveOnTheWallClockOfDateBuildersCalendar() {
        DateBuilder.withTimeZone(Self.berlin) {
            let calendar = DateBuilder.calendar
            let plan = TrialReminders.plan(accountCreated: Self.created)
            // Across the change to summer time, a day is a wall-clock day, as Foundation adds it.
            #expect(plan[0] == .exact(calendar.date(byAdding: .day, value: 7, to: Self.created)!))
            let thirteenAndAHalf = calendar.date(
                byAdding: .hour, value: 12, to: calendar.date(byAdding: .day, value: 13, to: Self.created)!)!
            #expect(plan[1] == .exact(thirteenAndAHalf))
            #expect(thirteenAndAHalf.timeIntervalSince(Self.created) == (13 * 24 + 12 - 1) * 3600)
            #expect(TrialReminders.describe(plan[0]) == "at \(Int(Self.created.timeIntervalSince1970) + 7 * 86_400)")
            #expect(ExactlyAt(Self.created) == .exact(Self.created))
            #expect(ExactlyAt(Self.created).dateComponents().hour == 11)
        }
    }

    @Test func aDayInAZoneOfItsOwnCarriesTheZone() {
        let tokyo = TimeZone(identifier: "Asia/Tokyo")!
        DateBuilder.withTimeZone(Self.berlin) {
            let (made, at) = Self.madeOnOneDay(in: tokyo) { Today().in(timeZone: tokyo).at(hour: 9, minute: 0) }
            guard case .components(let components) = made else {
                Issue.record("a day at a time is not components")
                return
            }
            #expect(components.timeZone == tokyo)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = tokyo
            let today = calendar.dateComponents([.year, .month, .day], from: at)
            #expect([components.year, components.month, components.day] == [today.year, today.month, today.day])
            #expect(DateBuilder.ResolvedDate.components(components).date() == calendar.date(from: components))
        }
    }

    /// A counted list travels as its run only while the run, resolved when scheduled, gives the list's dates.
    @Test func aListIsScheduledAsItsRunOnlyWhileTheRunGivesItsDates() throws {
        let (dates, onTheDay, dayAfter) = DateBuilder.withTimeZone(Self.berlin) {
            let list = EveryDay(forDays: 3, starting: .today).at(hour: 12, minute: 0)
            let dates = list.dates()
            // A minute before the first date, "today" is still the list's first day; a day later the run would
            // start a day later.
            return (
                dates, Result { try list.resolve(now: dates[0].addingTimeInterval(-60), timeZone: Self.berlin) },
                Result { try list.resolve(now: dates[1].addingTimeInterval(-60), timeZone: Self.berlin) }
            )
        }
        guard case .rule(.dateRule(let rule), _) = try onTheDay.get().trigger else {
            Issue.record("not scheduled as the run: \(try onTheDay.get().trigger)")
            return
        }
        #expect(rule.count == 3)
        // The list is then its two dates still ahead.
        guard case .rule(.rrule(let set, _), _) = try dayAfter.get().trigger else {
            Issue.record("not scheduled as its dates: \(try dayAfter.get().trigger)")
            return
        }
        Self.expectSet(set, holds: dates[1...], not: dates[0])
    }

    /// A set of dates (RDATEs, in UTC) holds `dates` and not `left`.
    static func expectSet(_ set: String, holds dates: ArraySlice<Date>, not left: Date) {
        let utc = DateFormatter()
        utc.timeZone = TimeZone(identifier: "UTC")
        utc.dateFormat = "yyyyMMdd'T'HHmmss"
        for date in dates { #expect(set.contains(utc.string(from: date)), "\(set)") }
        #expect(!set.contains(utc.string(from: left)), "\(set)")
    }

    /// A timeline's line made from a list checks its run each time the timeline is scheduled, not once.
    @Test func aTimelineLineOfAListIsItsRunOnlyWhileTheRunGivesItsDates() async throws {
        let (timeline, dates) = DateBuilder.withTimeZone(Self.berlin) { () -> (NotificationsTimeline, [Date]) in
            let list = EveryDay(forDays: 3, starting: .today).at(hour: 12, minute: 0)
            return (NotificationsTimeline { list.schedule(title: "Water the plants") }, list.dates())
        }
        func trigger(at now: Date) async throws -> EntryTrigger? {
            try await timeline.materialize(now: now, timeZone: Self.berlin, horizon: 7 * 86_400, limit: 64)
                .entries.first?.trigger
        }
        guard case .rule(.dateRule(let rule), _)? = try await trigger(at: dates[0].addingTimeInterval(-60)) else {
            Issue.record("not scheduled as the run on its first day")
            return
        }
        #expect(rule.count == 3)
        guard case .rule(.rrule(let set, _), _)? = try await trigger(at: dates[1].addingTimeInterval(-60)) else {
            Issue.record("scheduled as the run a day later")
            return
        }
        Self.expectSet(set, holds: dates[1...], not: dates[0])
    }
}

/// A time drawn at random, as DateBuilder draws it: once for a day, once per day for a list.
enum RandomMornings {
    static let from = TimeOfDay(hour: 8, minute: 0)
    static let to = TimeOfDay(hour: 9, minute: 0)

    static func tomorrow() -> DateComponents? {
        switch Tomorrow().at(.randomTime(from: from, to: to)) {
        case .exact: return nil
        case .components(let components): return components
        }
    }

    static func nextDays(_ count: Int) -> [Date] {
        let list = EveryDay(forDays: count, starting: .tomorrow).at(.randomTime(from: from, to: to))
        return list.isEmpty ? [] : [list[0].date()] + list.dropFirst().dates()
    }
}

@Suite struct SpacedRemindersTests {
    /// An app's own spacing, captured from its settings (a closure of the app's own, as DateBuilder takes it).
    @Test func anAppsOwnDistributionSpacesTheDays() {
        var gap = 1
        gap += 2
        let spacing = DelayDistribution { number, _ in number * gap }
        let days = DateBuilder.withTimeZone(DateBuilderAppTests.berlin) {
            EveryDay(forDays: 3, starting: .today, distribution: spacing).at(hour: 12, minute: 0).dates()
        }
        #expect(days.count == 3)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = DateBuilderAppTests.berlin
        let gaps = zip(days, days.dropFirst()).map { calendar.dateComponents([.day, .hour], from: $0, to: $1) }
        #expect(gaps.allSatisfy { $0.day == 3 && $0.hour == 0 }, "\(days)")
    }
}

@Suite struct RandomMorningsTests {
    @Test func randomTimesAreDrawnWithinTheRangeOnTheDaysAsked() throws {
        let calendar = DateBuilder.calendar
        let components = try #require(RandomMornings.tomorrow())
        #expect(components.hour == 8)
        let (days, at) = DateBuilderAppTests.madeOnOneDay(in: calendar.timeZone) { RandomMornings.nextDays(5) }
        #expect(days.count == 5)
        let firstDay = calendar.date(byAdding: .day, value: 1, to: calendar.startOfDay(for: at))!
        for (index, date) in days.enumerated() {
            #expect(calendar.component(.hour, from: date) == 8, "\(date)")
            #expect(calendar.isDate(date, inSameDayAs: calendar.date(byAdding: .day, value: index, to: firstDay)!))
        }
    }
}
