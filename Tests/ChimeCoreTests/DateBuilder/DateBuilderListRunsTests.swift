import Foundation
import Testing

@testable import ChimeCore

private typealias F = DateBuilderFixture

/// A counted list remembers the run it was made from, and the run gives exactly the list's dates: so a list
/// scheduled whole can travel as one rule.
@Suite struct DateBuilderListRunsTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T09:46:40Z

    /// The days at a time, resolved at `now` in Berlin as DateBuilder's values.
    static func at(_ days: [DateBuilder.Day], hour: Int, minute: Int) -> [DateBuilder.ResolvedDate] {
        days.resolvedDates(at: TimeOfDay(hour: hour, minute: minute), now: now, systemTimeZone: F.berlin)
    }

    /// The list's members resolved one by one, and the remembered run's first as many occurrences.
    static func datesOfListAndRun(_ list: [DateBuilder.ResolvedDate]) throws -> (list: [Date], run: [Date]) {
        let run = try #require(DateBuilder.ListRuns.run(of: list), "no run remembered")
        let listed = list.compactMap { $0.date(now: now, systemTimeZone: F.berlin) }
        #expect(listed.count == list.count)
        return (listed, Array(run.dates(now: now, systemTimeZone: F.berlin).prefix(list.count + 1)))
    }

    @Test func eachCountedChainRemembersARunWithTheSameDates() throws {
        let chains: [(String, [DateBuilder.ResolvedDate])] = [
            ("days", Self.at(EveryDay(forDays: 30, starting: .today), hour: 9, minute: 0)),
            ("days moved", Self.at(EveryDay(forDays: 10, starting: .tomorrow).addingDays(3), hour: 2, minute: 30)),
            (
                "first friday",
                Self.at(EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday), hour: 20, minute: 15)
            ),
            (
                "last day less 5",
                Self.at(EveryMonth(forMonths: 14, starting: .thisMonth).lastDay.addingDays(-5), hour: 23, minute: 50)
            ),
            (
                "months moved",
                Self.at(EveryMonth(forMonths: 5, starting: .thisMonth).addingMonths(2).firstDay, hour: 8, minute: 0)
            ),
            ("weekend", Self.at(EveryWeek(forWeeks: 10, starting: .thisWeek).weekendStartDay, hour: 9, minute: 0)),
            (
                "wednesdays",
                Self.at(
                    EveryWeek(forWeeks: 8, starting: .nextWeek).addingWeeks(1).weekday(.wednesday), hour: 7, minute: 5)
            ),
            ("week ends", Self.at(EveryWeek(forWeeks: 6, starting: .thisWeek).lastDay, hour: 18, minute: 0)),
            ("new year", Self.at(EveryYear(forYears: 5, starting: .thisYear).firstMonth.firstDay, hour: 0, minute: 0)),
            (
                "new year's eve",
                Self.at(
                    EveryYear(forYears: 4, starting: .thisYear).addingYears(1).lastMonth.lastDay, hour: 23, minute: 59)
            ),
            ("one time for all", Self.at(EveryDay(forDays: 7, starting: .today), hour: 6, minute: 45)),
        ]
        for (name, list) in chains {
            let (listed, run) = try Self.datesOfListAndRun(list)
            // The run ends where the list does: one more occurrence is not there.
            #expect(run == listed, "\(name)")
        }
    }

    @Test func listsThatNoRunMakesRememberNone() {
        let optimized = Self.at(EveryDay(forDays: 30, starting: .today, distribution: .optimized), hour: 9, minute: 0)
        #expect(DateBuilder.ListRuns.run(of: optimized) == nil)
        let filtered = Array(Self.at(EveryDay(forDays: 30, starting: .today), hour: 9, minute: 0).dropFirst())
        #expect(DateBuilder.ListRuns.run(of: filtered) == nil)
        let byHand = Self.at([Tomorrow()], hour: 9, minute: 0) + Self.at([Today().addingDays(3)], hour: 9, minute: 0)
        #expect(DateBuilder.ListRuns.run(of: byHand) == nil)
        // Each day's own random time: a run has one time of day.
        let random = EveryDay(forDays: 5, starting: .today).resolvedDates(
            at: .randomTime(from: TimeOfDay(hour: 8, minute: 0), to: TimeOfDay(hour: 20, minute: 0)), now: Self.now,
            systemTimeZone: F.berlin)
        #expect(DateBuilder.ListRuns.run(of: random) == nil)
        #expect(DateBuilder.ListRuns.run(of: []) == nil)
    }

    @Test func onlyTheLatestListsAreRememberedWithinTheBudget() {
        var memory = DateBuilder.ListRuns.Memory(budget: 10)
        let runs = (0..<4).map { EveryDay(forDays: 4).at(hour: $0, minute: 0) }
        let lists = (0..<4).map { hour in
            DateBuilder.ListRuns.Key.dates(Self.at((0..<4).map { Today().addingDays($0) }, hour: hour, minute: 0))
        }
        for (list, run) in zip(lists, runs) { memory.record(list, members: 4, as: .dates(run)) }
        // 16 members were recorded; the budget keeps the latest two lists (8).
        #expect(memory.members == 8)
        #expect(lists.map { memory.run(of: $0) } == [nil, nil, .dates(runs[2]), .dates(runs[3])])
        // Recording a list again makes it the latest, without counting it twice.
        memory.record(lists[2], members: 4, as: .dates(runs[2]))
        memory.record(lists[0], members: 4, as: .dates(runs[0]))
        #expect(memory.members == 8)
        #expect(lists.map { memory.run(of: $0) } == [.dates(runs[0]), nil, .dates(runs[2]), nil])
        // A list over the budget is not remembered.
        memory.record(
            .dates(Array(repeating: .exact(Self.now), count: 11)), members: 11, as: .dates(runs[1]))
        #expect(memory.members == 8)
    }
}
