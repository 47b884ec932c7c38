import Foundation
import Testing

@testable import ChimeCore

@Suite struct TimeInputTests {
    @Test(arguments: [
        ("90s", 90.0), ("10m", 600), ("1h30m", 5400), ("2d", 172_800), ("1w", 604_800), ("1h1m1s", 3661), ("10M", 600),
    ])
    func durations(text: String, seconds: TimeInterval) throws {
        #expect(try TimeInput.parseDuration(text) == seconds)
    }

    @Test(arguments: [(90.0, "1m30s"), (86_400, "1d"), (300, "5m"), (3661, "1h1m1s"), (90_000, "1d1h")])
    func durationsAreWrittenAsTheyAreRead(seconds: TimeInterval, text: String) throws {
        #expect(TimeInput.formatDuration(seconds) == text)
        #expect(try TimeInput.parseDuration(text) == seconds)
    }

    @Test(arguments: [
        ("banana", 0), ("10", 2), ("", 0), ("1x", 1), ("m", 0), ("1m1m", 3), ("0s", 0), ("-5m", 0), ("1h30", 4),
    ])
    func badDurationsSayWhere(text: String, offset: Int) {
        #expect {
            try TimeInput.parseDuration(text)
        } throws: { error in
            (error as? TimeInputError)?.offset == offset
        }
    }

    let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T10:00:00+01:00
    let now = Date(timeIntervalSince1970: 1_795_338_000)

    @Test func isoLocalTimeIsReadInTheGivenZone() throws {
        let date = try TimeInput.parseTime("2026-12-01T09:00:00", now: now, timeZone: berlin)
        #expect(date == Date(timeIntervalSince1970: 1_796_112_000))  // 2026-12-01T08:00:00Z
        let noSeconds = try TimeInput.parseTime("2026-12-01T09:00", now: now, timeZone: berlin)
        #expect(noSeconds == date)
    }

    @Test func clockTimeMeansTheNextTimeTheClockShowsIt() throws {
        // 11:30 is later today; 09:00 has passed, so it is tomorrow.
        #expect(try TimeInput.parseTime("11:30", now: now, timeZone: berlin) == now + 5400)
        #expect(try TimeInput.parseTime("09:00", now: now, timeZone: berlin) == now + 23 * 3600)
        #expect(try TimeInput.parseTime("10:00:01", now: now, timeZone: berlin) == now + 1)
    }

    @Test(arguments: ["25:00", "9", "09:60", "2026-13-01T00:00:00", "2026-02-30T09:00:00", "tomorrow", "9:00:00:00"])
    func badTimesAreRefused(text: String) {
        #expect(throws: TimeInputError.self) { try TimeInput.parseTime(text, now: now, timeZone: berlin) }
    }
}

@Suite struct NotificationContentTests {
    /// Stored content keeps every field, and a field left at its default takes no room.
    @Test func contentSurvivesItsStoredFormAndDefaultsAreLeftOut() throws {
        var full = NotificationContent(
            appName: "pills", summary: "Take it", subtitle: "morning", body: "with water", icon: "pill",
            sound: "bell", urgency: .critical, expireTimeout: 0,
            actions: [NotificationAction(key: "done", label: "Done")],
            category: "dose", userInfo: ["n": "1"], hints: ["x-k": .int(3)])
        full.desktopEntry = "org.example.Pills"
        let minimal = NotificationContent(summary: "Hi")
        for content in [full, minimal] {
            let data = try JSONEncoder().encode(content)
            #expect(try JSONDecoder().decode(NotificationContent.self, from: data) == content)
        }
        let keys = try JSONSerialization.jsonObject(with: JSONEncoder().encode(minimal)) as? [String: Any]
        #expect(keys.map { Array($0.keys) } == ["summary"])
        let allKeys = try JSONSerialization.jsonObject(with: JSONEncoder().encode(full)) as? [String: Any]
        #expect(allKeys?.count == 13)
    }

    @Test func validContentPasses() throws {
        try NotificationContent(summary: "x", actions: [NotificationAction(key: "a", label: "A")]).validate()
    }

    @Test(arguments: [
        (NotificationContent(summary: ""), "summary is empty"),
        (NotificationContent(summary: String(repeating: "x", count: 1001)), "summary is longer"),
        (NotificationContent(summary: "x", body: String(repeating: "x", count: 16_001)), "body is longer"),
        (NotificationContent(summary: "x", expireTimeout: -2), "is negative"),
        (NotificationContent(summary: "x", actions: [NotificationAction(key: "", label: "A")]), "empty key"),
        (
            NotificationContent(
                summary: "x",
                actions: [NotificationAction(key: "a", label: "A"), NotificationAction(key: "a", label: "B")]),
            "appears twice"
        ),
        (
            NotificationContent(summary: "x", actions: (0..<17).map { NotificationAction(key: "k\($0)", label: "L") }),
            "17 actions"
        ),
    ])
    func invalidContentSaysWhatToChange(content: NotificationContent, message: String) {
        #expect {
            try content.validate()
        } throws: { error in
            (error as? ContentError)?.message.contains(message) == true
        }
    }
}
