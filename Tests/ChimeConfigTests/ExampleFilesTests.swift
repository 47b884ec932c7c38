import ChimeCore
import Foundation
import Testing

@testable import ChimeConfig

@Suite struct ExampleFilesTests {
    @Test func everyExampleGroupFileLoads() throws {
        let results = GroupFile.loadDirectory(ConfigFolder.path + "/groups", now: Fixture.now, timeZone: Fixture.berlin)
        #expect(
            results.map { ($0.file as NSString).lastPathComponent } == [
                "daily-quote.toml", "first-friday.toml", "weekend-start.toml",
            ])
        for (file, result) in results {
            #expect(throws: Never.self, "\(file)") { try result.get() }
        }
    }

    @Test func theDailyQuoteExampleIsTheGroupItsCommentsDescribe() throws {
        let group = try GroupFile.load(
            path: ConfigFolder.path + "/groups/daily-quote.toml", now: Fixture.now, timeZone: Fixture.berlin)
        #expect(group.id == "daily-quote")
        #expect(group.owner == "")
        #expect(group.settings.missedPolicy == .deliverLate(window: 3 * 3600))
        #expect(group.settings.enabled)
        try #require(group.entries.count == 1)
        let entry = group.entries[0]
        #expect(entry.id == "morning")
        #expect(entry.trigger == .rule(.phrase("every day at 9:00"), timeZone: nil))
        #expect(entry.category == nil)
        #expect(entry.endDate == nil)
        #expect(entry.maximumOccurrences == nil)
        guard case .pool(let pool) = entry.content else {
            Issue.record("expected a pool, got \(entry.content)")
            return
        }
        #expect(pool.order == .shuffled)
        #expect(pool.fillsPlaceholders)
        #expect(
            pool.base
                == NotificationContent(
                    appName: "Quotes", summary: "Quote for {weekday}", icon: "accessories-dictionary", urgency: .low))
        #expect(
            pool.items == [
                ContentPool.Item(body: "Well begun is half done. — Aristotle"),
                ContentPool.Item(body: "The journey of a thousand miles begins with a single step. — Laozi"),
                ContentPool.Item(
                    body: "It is not that we have a short time to live, but that we waste a lot of it. — Seneca"),
                ContentPool.Item(
                    body: "Waste no more time arguing what a good man should be. Be one. — Marcus Aurelius"),
                ContentPool.Item(body: "Well done is better than well said. — Benjamin Franklin"),
                ContentPool.Item(body: "Lost time is never found again. — Benjamin Franklin"),
                ContentPool.Item(
                    summary: "A {weekday} thought", body: "Hitch your wagon to a star. — Ralph Waldo Emerson"),
                ContentPool.Item(body: "The best way out is always through. — Robert Frost"),
            ])
    }

    /// The first occurrences after 2026-11-22T00:00 in Berlin, as docs/rule-phrases.md lists them.
    @Test(arguments: [
        ("first-friday.toml", "2026-12-04T19:15:00Z"),
        ("weekend-start.toml", "2026-11-28T08:00:00Z"),
        ("daily-quote.toml", "2026-11-22T08:00:00Z"),
    ])
    func theExampleRulesFireWhenTheirCommentsSay(file: String, first: String) throws {
        let group = try GroupFile.load(
            path: ConfigFolder.path + "/groups/" + file, now: Fixture.now, timeZone: Fixture.berlin)
        guard case .rule(let rule, let zone) = group.entries.first?.trigger else {
            Issue.record("\(file): the first entry has no rule")
            return
        }
        #expect(zone == nil)
        let preview = try RulePreview.next(
            rule, after: Fixture.now, now: Fixture.now, timeZone: Fixture.berlin, count: 1)
        #expect(preview == .occurrences([Fixture.instant(first)]))
    }

    @Test func theWeekendExampleFallsBackToItsOwnText() throws {
        let group = try GroupFile.load(
            path: ConfigFolder.path + "/groups/weekend-start.toml", now: Fixture.now, timeZone: Fixture.berlin)
        #expect(
            group.entries.first?.content
                == .command(
                    CommandSource(
                        arguments: ["fortune", "-s"], timeout: 5, output: .body,
                        base: NotificationContent(
                            appName: "Weekend", summary: "The weekend starts", body: "Enjoy it.", icon: "weather-clear",
                            urgency: .low))))
        #expect(group.settings.missedPolicy == .skip)
    }
}

@Suite struct GroupDirectoryTests {
    /// A fresh directory for one test, removed by `remove()`.
    struct TemporaryDirectory {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("chime-groups-\(UUID())").path

        init(files: [String: String]) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, text) in files {
                try text.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
            }
        }

        func remove() { try? FileManager.default.removeItem(atPath: path) }
    }

    @Test func oneBrokenFileDoesNotHideTheOthers() throws {
        let directory = try TemporaryDirectory(files: [
            "tea.toml": "[[entry]]\nid = \"t\"\nevery = \"every day at 16:00\"\nsummary = \"Tea\"\n",
            "broken.toml":
                "[[entry]]\nid = \"b\"\nevery = \"every day at 16:00\"\nsummary = \"B\"\nurgency = \"loud\"\n",
            "notes.txt": "not a group",
            ".#tea.toml": "an editor's lock file",
        ])
        defer { directory.remove() }
        let results = GroupFile.loadDirectory(directory.path, now: Fixture.now, timeZone: Fixture.berlin)
        try #require(results.count == 2)
        #expect(results[0].file == directory.path + "/broken.toml")
        #expect(
            throws: ConfigError(
                file: directory.path + "/broken.toml", line: 5,
                reason: "urgency = \"loud\" is not an urgency; use \"low\", \"normal\" or \"critical\"")
        ) { try results[0].result.get() }
        #expect(results[1].file == directory.path + "/tea.toml")
        let tea = try results[1].result.get()
        #expect(tea.id == "tea")
        #expect(tea.entries.map(\.id) == ["t"])
    }

    @Test func aMissingDirectoryHasNoGroups() {
        #expect(
            GroupFile.loadDirectory("/nonexistent/chime/groups", now: Fixture.now, timeZone: Fixture.berlin).isEmpty)
    }

    @Test func aMissingFileIsAnErrorWithoutALine() {
        #expect {
            try GroupFile.load(path: "/nonexistent/g.toml", now: Fixture.now, timeZone: Fixture.berlin)
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.file == "/nonexistent/g.toml" && error.line == nil && error.reason.hasPrefix("cannot read it")
        }
    }
}

@Suite struct DocumentationExamplesTests {
    /// The TOML blocks of docs/groups.md: those with `[[entry]]` are group files, the one with `[flood]`
    /// is a chime.toml.
    static func tomlBlocks() throws -> [String] {
        let text = try String(contentsOfFile: ConfigFolder.path + "/../docs/groups.md", encoding: .utf8)
        return text.components(separatedBy: "```toml\n").dropFirst().compactMap {
            $0.components(separatedBy: "```").first
        }
    }

    @Test func theGroupFilesInTheDocumentationParse() throws {
        let groups = try Self.tomlBlocks().filter { $0.contains("[[entry]]") }
        #expect(groups.count == 2)
        for text in groups {
            #expect(throws: Never.self, "\(text)") { try Fixture.group(text) }
        }
    }

    @Test func theSettingsExampleInTheDocumentationIsReadAsItSays() throws {
        let text = try #require(try Self.tomlBlocks().first { $0.contains("[flood]") })
        let settings = try DaemonSettings.parse(text, file: "chime.toml")
        #expect(settings.missedPolicy == .coalesce)
        #expect(
            settings.quietHours == QuietHours(start: TimeOfDay(hour: 22, minute: 0), end: TimeOfDay(hour: 7, minute: 0))
        )
        #expect(settings.flood == FloodControl(rate: 2, burst: 5))
    }

    @Test(arguments: [
        WrittenRule.rrule("FREQ=WEEKLY;BYDAY=MO;BYHOUR=9;BYMINUTE=0", dtstart: nil),
        .onCalendar("Mon..Fri *-*-* 09:15"),
        .phrase("every month on the first friday at 20:15"),
    ])
    func theRulesTheKeyTableShowsParse(rule: WrittenRule) {
        #expect(throws: Never.self) {
            try Recurrence.parse(rule, now: Fixture.now, timeZone: .floating, systemTimeZone: Fixture.berlin)
        }
    }
}
