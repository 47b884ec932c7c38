import Foundation
import Testing

@testable import ChimeCore

@Suite struct DigestContentTests {
    /// 20:15 and 20:45 on 2026-12-04 in Berlin (CET).
    let evening = Fixture.utc("2026-12-04T19:15:00Z")

    @Test(arguments: [
        (Digest.Kind.missed(groupID: "meds"), 3, "3 reminders missed"),
        (.missed(groupID: nil), 1, "1 reminder missed"),
        (.quietHours, 12, "12 notifications during quiet hours"),
        (.quietHours, 1, "1 notification during quiet hours"),
        (.flood, 490, "490 more notifications"),
        (.flood, 1, "1 more notification"),
    ])
    func theSummaryCountsTheEntries(_ kind: Digest.Kind, _ count: Int, _ expected: String) {
        let entries = (1...count).map { Fixture.entry(UInt64($0), at: evening) }
        #expect(Digest.content(kind: kind, entries: entries, timeZone: Fixture.berlin).summary == expected)
    }

    @Test func theBodyListsLocalTimesAndSummaries() {
        let entries = [
            Fixture.entry(1, at: evening, summary: "Stretch"),
            Fixture.entry(2, at: evening + 1800, summary: "Drink water"),
        ]
        let content = Digest.content(kind: .quietHours, entries: entries, timeZone: Fixture.berlin)
        #expect(content.body == "20:15  Stretch\n20:45  Drink water")
    }

    @Test func theBodyShowsDatesWhenTheEntriesSpanDays() {
        let entries = [
            Fixture.entry(1, at: Fixture.utc("2026-12-04T22:50:00Z"), summary: "A"),  // 23:50
            Fixture.entry(2, at: Fixture.utc("2026-12-04T23:10:00Z"), summary: "B"),  // 00:10 the next day
        ]
        let content = Digest.content(kind: .missed(groupID: nil), entries: entries, timeZone: Fixture.berlin)
        #expect(content.body == "2026-12-04 23:50  A\n2026-12-05 00:10  B")
    }

    @Test func aSummaryWithLineBreaksStaysOnOneLine() {
        let entries = [Fixture.entry(1, at: evening, summary: "Line one\nline two")]
        #expect(
            Digest.content(kind: .flood, entries: entries, timeZone: Fixture.berlin).body == "20:15  Line one line two")
    }

    @Test(
        arguments: [(20, nil), (21, "… and 1 more"), (25, "… and 5 more"), (491, "… and 471 more")] as [(Int, String?)])
    func theBodyListsAtMostTwentyEntries(_ count: Int, _ more: String?) {
        let entries = (1...count).map { Fixture.entry(UInt64($0), at: evening, summary: "n\($0)") }
        let lines = Digest.content(kind: .flood, entries: entries, timeZone: Fixture.berlin).body
            .split(separator: "\n").map(String.init)
        #expect(Array(lines.prefix(20)) == (1...20).map { "20:15  n\($0)" })
        #expect(lines.count == (more == nil ? 20 : 21))
        #expect(lines.dropFirst(20).first == more)
    }

    @Test func theBodyStaysWithinTheLimitWhateverTheSummaries() {
        // Each line is "20:15  " (7 bytes) and a 1000-byte summary; with the line breaks, 15 lines take
        // 15119 bytes and a 16th would pass 16000.
        let long = String(repeating: "x", count: 1000)
        let entries = (1...20).map { Fixture.entry(UInt64($0), at: evening, summary: long) }
        let body = Digest.content(kind: .flood, entries: entries, timeZone: Fixture.berlin).body
        let lines = body.split(separator: "\n")
        #expect(body.utf8.count <= NotificationContent.maximumBodyLength)
        #expect(lines.count == 16)
        #expect(lines.last == "… and 5 more")
    }

    @Test func theAppNameIsTheEntriesOwnOnlyWhenTheyAllShareIt() {
        let same = [
            Fixture.entry(1, at: evening, appName: "calendar"), Fixture.entry(2, at: evening, appName: "calendar"),
        ]
        let mixed = [
            Fixture.entry(1, at: evening, appName: "calendar"), Fixture.entry(2, at: evening, appName: "mail"),
        ]
        let unnamed = [Fixture.entry(1, at: evening, appName: ""), Fixture.entry(2, at: evening, appName: "")]
        #expect(Digest.content(kind: .flood, entries: same, timeZone: Fixture.berlin).appName == "calendar")
        #expect(Digest.content(kind: .flood, entries: mixed, timeZone: Fixture.berlin).appName == "chime")
        #expect(Digest.content(kind: .flood, entries: unnamed, timeZone: Fixture.berlin).appName == "chime")
    }

    @Test func theUrgencyIsNormalWhateverTheEntries() {
        let entries = [Fixture.entry(1, at: evening, urgency: .low), Fixture.entry(2, at: evening, urgency: .critical)]
        #expect(
            Digest.content(kind: .missed(groupID: "g"), entries: entries, timeZone: Fixture.berlin).urgency == .normal)
    }
}
