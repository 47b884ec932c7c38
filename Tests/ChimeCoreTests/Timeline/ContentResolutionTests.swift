import Foundation
import Testing

@testable import ChimeCore

@Suite struct ContentResolutionTests {
    /// 2026-12-04 20:15 in Berlin, a Friday.
    let date = Fixture.utc("2026-12-04T19:15:00Z")
    let base = NotificationContent(appName: "quotes", summary: "Quote", icon: "book", urgency: .low)

    /// A pool whose item `i` has the body "i", so a resolution names the item it chose.
    func pool(_ enabled: [Bool], order: ContentPool.Order) -> ContentSource {
        let items = enabled.enumerated().map { ContentPool.Item(body: String($0.offset), enabled: $0.element) }
        return .pool(ContentPool(base: base, items: items, order: order))
    }

    func content(_ resolution: ContentResolution) -> NotificationContent? {
        if case .ready(let content) = resolution { return content }
        return nil
    }

    /// Resolves `source` `count` times and returns the chosen items' indices.
    func draws(_ source: ContentSource, _ count: Int, state: inout EntryState, random: inout SplitMix64) -> [Int] {
        (1...count).map { number in
            let resolution = source.resolve(
                occurrence: date, number: number, timeZone: Fixture.berlin, state: &state, random: &random)
            return Int(content(resolution)?.body ?? "") ?? -1
        }
    }

    // MARK: - Fixed, template, command, call back

    @Test func fixedContentIsShownAsIsAndTemplatesAreFilled() {
        var state = EntryState()
        var random = SplitMix64(seed: 1)
        let text = NotificationContent(summary: "Day {n}", body: "{weekday} {time}")
        let fixed = ContentSource.fixed(text).resolve(
            occurrence: date, number: 2, timeZone: Fixture.berlin, state: &state, random: &random)
        #expect(fixed == .ready(text))
        let template = ContentSource.template(text).resolve(
            occurrence: date, number: 2, timeZone: Fixture.berlin, state: &state, random: &random)
        #expect(template == .ready(NotificationContent(summary: "Day 2", body: "Friday 20:15")))
    }

    @Test func commandsAndCallBacksAreLeftToTheDaemon() {
        var state = EntryState()
        var random = SplitMix64(seed: 1)
        let command = CommandSource(arguments: ["fortune", "-s"], base: base)
        let callback = CallbackSource(busName: "org.example.App", fallback: base)
        #expect(
            ContentSource.command(command).resolve(
                occurrence: date, number: 1, timeZone: Fixture.berlin, state: &state, random: &random)
                == .runCommand(command))
        #expect(
            ContentSource.callback(callback).resolve(
                occurrence: date, number: 1, timeZone: Fixture.berlin, state: &state, random: &random)
                == .askApp(callback))
        #expect(state == EntryState())
    }

    // MARK: - Pools

    @Test func aPoolItemReplacesTheBodyAndTheSummaryWhenItHasOne() {
        var state = EntryState()
        var random = SplitMix64(seed: 1)
        let items = [ContentPool.Item(summary: "Seneca", body: "Luck is…"), ContentPool.Item(body: "Carpe diem")]
        let source = ContentSource.pool(ContentPool(base: base, items: items, order: .inOrder))
        let first = source.resolve(
            occurrence: date, number: 1, timeZone: Fixture.berlin, state: &state, random: &random)
        let second = source.resolve(
            occurrence: date, number: 2, timeZone: Fixture.berlin, state: &state, random: &random)
        #expect(
            first
                == .ready(
                    NotificationContent(
                        appName: "quotes", summary: "Seneca", body: "Luck is…", icon: "book", urgency: .low)))
        #expect(
            second
                == .ready(
                    NotificationContent(
                        appName: "quotes", summary: "Quote", body: "Carpe diem", icon: "book", urgency: .low)))
    }

    @Test(arguments: [true, false])
    func poolItemsAreFilledOnlyWhenThePoolSaysSo(_ fills: Bool) {
        var state = EntryState()
        var random = SplitMix64(seed: 1)
        let items = [ContentPool.Item(summary: "{weekday}", body: "Quote {n}")]
        let source = ContentSource.pool(
            ContentPool(base: base, items: items, order: .random, fillsPlaceholders: fills))
        let resolved = content(
            source.resolve(occurrence: date, number: 5, timeZone: Fixture.berlin, state: &state, random: &random))
        #expect(resolved?.summary == (fills ? "Friday" : "{weekday}"))
        #expect(resolved?.body == (fills ? "Quote 5" : "Quote {n}"))
    }

    @Test func randomNeverPicksADisabledItemAndLeavesTheStateAlone() {
        var state = EntryState(occurrences: 4, lastFired: date, poolPosition: 2, poolBag: [3])
        var random = SplitMix64(seed: 42)
        let drawn = draws(pool([true, false, true, false, true], order: .random), 3000, state: &state, random: &random)
        #expect(Set(drawn) == [0, 2, 4])
        // Uniform: each of the three is expected 1000 times.
        for index in [0, 2, 4] { #expect((850...1150).contains(drawn.count(where: { $0 == index })), "item \(index)") }
        #expect(state == EntryState(occurrences: 4, lastFired: date, poolPosition: 2, poolBag: [3]))
    }

    @Test func inOrderWrapsAndSkipsDisabledItems() {
        var state = EntryState()
        var random = SplitMix64(seed: 1)
        let source = pool([true, false, true, false], order: .inOrder)
        #expect(draws(source, 5, state: &state, random: &random) == [0, 2, 0, 2, 0])
        #expect(state.poolPosition == 1)
    }

    @Test func inOrderStartsAtTheStoredPosition() {
        var state = EntryState(poolPosition: 2)
        var random = SplitMix64(seed: 1)
        #expect(
            draws(pool([true, true, true, true], order: .inOrder), 6, state: &state, random: &random)
                == [2, 3, 0, 1, 2, 3])
        #expect(state.poolPosition == 0)
    }

    @Test func inOrderRecoversWhenThePoolShrankBelowItsPosition() {
        var state = EntryState(poolPosition: 9)
        var random = SplitMix64(seed: 1)
        #expect(draws(pool([true, true, true], order: .inOrder), 4, state: &state, random: &random) == [0, 1, 2, 0])
    }

    @Test func resolvingLeavesOccurrencesAndLastFiredToTheScheduler() {
        var state = EntryState(occurrences: 12, lastFired: date)
        var random = SplitMix64(seed: 3)
        _ = draws(pool([true, true, true], order: .inOrder), 5, state: &state, random: &random)
        _ = draws(pool([true, true, true], order: .shuffled), 5, state: &state, random: &random)
        #expect(state.occurrences == 12)
        #expect(state.lastFired == date)
    }

    @Test(arguments: [UInt64(1), 2, 3, 2026])
    func shuffledRoundsShowEveryEnabledItemOncePerRound(_ seed: UInt64) {
        var state = EntryState()
        var random = SplitMix64(seed: seed)
        let enabled = [true, true, false, true, true, false, true]
        let drawn = draws(pool(enabled, order: .shuffled), 5000, state: &state, random: &random)
        var orders = Set<[Int]>()
        for start in stride(from: 0, to: drawn.count, by: 5) {
            let round = Array(drawn[start..<(start + 5)])
            #expect(round.sorted() == [0, 1, 3, 4, 6], "round at draw \(start)")
            orders.insert(round)
        }
        // The same item never shows twice in a row, not even where one round meets the next.
        #expect(zip(drawn, drawn.dropFirst()).allSatisfy { $0 != $1 })
        // 1000 rounds of 5 items: the rounds are shuffled, not one order repeated (120 orders exist).
        #expect(orders.count > 100)
    }

    @Test func shuffledWithOneEnabledItemAlwaysShowsIt() {
        var state = EntryState()
        var random = SplitMix64(seed: 9)
        #expect(
            draws(pool([false, true, false], order: .shuffled), 10, state: &state, random: &random)
                == Array(repeating: 1, count: 10))
    }

    @Test func shuffledDropsIndicesThatNoLongerExist() {
        // The stored bag was drawn from a bigger pool; every index in it is gone now.
        var state = EntryState(poolBag: [7, 9])
        var random = SplitMix64(seed: 5)
        let drawn = draws(pool([true, true, true], order: .shuffled), 3, state: &state, random: &random)
        #expect(drawn.sorted() == [0, 1, 2])
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func anEditedShuffledPoolRecovers(_ seed: UInt64) {
        var state = EntryState()
        var random = SplitMix64(seed: seed)
        _ = draws(pool([true, true, true, true, true, true], order: .shuffled), 8, state: &state, random: &random)
        // Items 4 and 5 are removed and item 1 disabled while a round is under way.
        let edited = pool([true, false, true, true], order: .shuffled)
        let drawn = draws(edited, 600, state: &state, random: &random)
        #expect(Set(drawn) == [0, 2, 3])
        #expect(zip(drawn, drawn.dropFirst()).allSatisfy { $0 != $1 })
        // What was left of the old round comes first (at most 3 draws); from then on, whole rounds.
        let roundsStart = (0...3).first { start in
            stride(from: start, through: drawn.count - 3, by: 3).allSatisfy {
                Array(drawn[$0..<($0 + 3)]).sorted() == [0, 2, 3]
            }
        }
        #expect(roundsStart != nil)
    }

    @Test func aPoolWithNothingEnabledShowsItsBase() {
        var state = EntryState(poolPosition: 1)
        var random = SplitMix64(seed: 1)
        for order in ContentPool.Order.allCases {
            let resolved = pool([false, false], order: order).resolve(
                occurrence: date, number: 1, timeZone: Fixture.berlin, state: &state, random: &random)
            #expect(resolved == .ready(base), "\(order)")
        }
        #expect(state == EntryState(poolPosition: 1))
    }

    /// An entry's state is stored with every step: defaults take no room, and what earlier versions
    /// stored (every key) is still read.
    @Test func entryStateSurvivesItsStoredForm() throws {
        let fired = EntryState(occurrences: 3, lastFired: date, poolPosition: 2, poolBag: [4, 1])
        for state in [EntryState(), fired] {
            #expect(try JSONDecoder().decode(EntryState.self, from: JSONEncoder().encode(state)) == state)
        }
        #expect(String(decoding: try JSONEncoder().encode(EntryState()), as: UTF8.self) == "{}")
        let earlier = Data(#"{"occurrences":1,"poolPosition":0,"poolBag":[]}"#.utf8)
        #expect(try JSONDecoder().decode(EntryState.self, from: earlier) == EntryState(occurrences: 1))
    }
}

@Suite struct CommandOutputTests {
    let base = NotificationContent(appName: "fortune", summary: "Fortune", body: "fallback", icon: "dice")

    @Test func bodyOutputIsTrimmedAndKeepsTheBaseSummary() {
        let command = CommandSource(arguments: ["fortune"], output: .body, base: base)
        #expect(
            command.content(fromOutput: "  \nYou will\n  find it. \n\n")
                == NotificationContent(
                    appName: "fortune", summary: "Fortune", body: "You will\n  find it.", icon: "dice"))
    }

    @Test(arguments: ["", "   ", "\n\n", " \t\r\n "])
    func emptyOutputMeansShowTheBase(_ output: String) {
        for mode in CommandSource.Output.allCases {
            #expect(CommandSource(arguments: ["x"], output: mode, base: base).content(fromOutput: output) == nil)
        }
    }

    @Test(arguments: [
        ("Title\nline 1\nline 2\n", "Title", "line 1\nline 2"),
        ("Only a title\n", "Only a title", ""),
        ("Title  \r\n\r\n  body\r\n", "Title", "body"),
        ("\n\n  Late title\nbody", "Late title", "body"),
    ])
    func summaryAndBodySplitsAtTheFirstLine(_ output: String, _ summary: String, _ body: String) {
        let content = CommandSource(arguments: ["x"], output: .summaryAndBody, base: base).content(fromOutput: output)
        #expect(content?.summary == summary)
        #expect(content?.body == body)
        #expect(content?.appName == "fortune")
        #expect(content?.icon == "dice")
    }

    @Test func aLongBodyIsCutOnACharacterBoundary() throws {
        let command = CommandSource(arguments: ["x"], output: .body, base: base)
        // "a" and 8000 two-byte "é": 16001 bytes; the last "é" would end at byte 16001, so it goes.
        let body = try #require(command.content(fromOutput: "a" + String(repeating: "é", count: 8000))?.body)
        #expect(body == "a" + String(repeating: "é", count: 7999))
        #expect(body.utf8.count == 15999)
        // Exactly at the limit: kept whole.
        let full = String(repeating: "x", count: 16000)
        #expect(command.content(fromOutput: full)?.body == full)
    }

    @Test func aLongSummaryIsCutWithoutSplittingAGraphemeCluster() throws {
        let command = CommandSource(arguments: ["x"], output: .summaryAndBody, base: base)
        // The family emoji is 18 bytes (three 4-byte people joined by two 3-byte joiners): 55 fit in 1000.
        let family = "👨‍👩‍👧"
        let content = try #require(command.content(fromOutput: String(repeating: family, count: 60) + "\nbody"))
        #expect(content.summary == String(repeating: family, count: 55))
        #expect(content.summary.utf8.count == 990)
        #expect(content.body == "body")
        // "€" is 3 bytes: 333 of them make 999 bytes.
        let euros = try #require(command.content(fromOutput: String(repeating: "€", count: 400))?.summary)
        #expect(euros == String(repeating: "€", count: 333))
    }
}
