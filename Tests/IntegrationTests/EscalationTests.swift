import ChimeCore
import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// Escalation until acknowledged, end to end on a private bus: chimed shows an occurrence again while
/// nobody reacts, replacing its popup one urgency higher each time, at most N times; an action or a
/// dismissal stops it, an expiry does not; it goes on across a restart; history records each step.
@Suite(.serialized) struct EscalationTests {
    /// The urgency hint of a Notify call (a byte).
    static func urgency(_ call: MockNotificationServer.Call) -> UInt8? {
        if case .byte(let value)? = call.hints["urgency"] { return value }
        return nil
    }

    /// A group file whose entry `pill` fires every day at 08:00, with more `keys`.
    static func pill(_ keys: String) -> String {
        "[[entry]]\nid = \"pill\"\nevery = \"every day at 08:00\"\nsummary = \"Take your pill\"\n" + keys
    }

    /// Sets chimed's clock a second past the next occurrence of `group`'s first entry; returns it.
    static func moveToFirstOccurrence(_ s: Session, of group: String) async throws -> Date {
        let pending = try await s.chimeJSON(["pending", "--group", group, "--next", "1"])
        let fire = try #require(GroupTests.date((pending.first?["next"] as? [String])?.first))
        try s.setClock(offset: fire.timeIntervalSinceNow + 1)
        return fire
    }

    /// The pending items' summaries.
    static func pending(_ s: Session) async throws -> [String] {
        try await s.chimeJSON(["pending"]).compactMap { $0["summary"] as? String }
    }

    @Test func showsAgainWithRisingUrgencyAtMostTheGivenTimesAndHistoryRecordsEachStep() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "--escalate-every", "1m", "--escalate-times", "2", "-u", "low", "-p", "Take your pill", "8 am",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let item = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            try await s.awaitDelivered(notification: 1)
            #expect(Self.urgency(calls.elements[0]) == 0)
            // The next showing waits as an item of its own, a minute away, and says what it is.
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification") { $0.count == 1 }
            let waiting = try #require(try await s.chimeJSON(["pending"]).first)
            #expect(waiting["summary"] as? String == "Take your pill")
            #expect(waiting["escalation"] as? String == "shows item \(item) again (1 of 2) unless acknowledged")

            try s.setClock(offset: 61)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            let second = calls.elements[1]
            #expect(second.summary == "Take your pill" && second.body == "8 am")
            #expect(second.replacesID == 1)
            #expect(Self.urgency(second) == 1)

            try await InteractionTests.awaitListing(s, ["pending"], "the second re-notification") { $0.count == 1 }
            try s.setClock(offset: 122)
            try await calls.wait(forCount: 3, timeout: .seconds(10))
            #expect(calls.elements[2].replacesID == 1)
            #expect(Self.urgency(calls.elements[2]) == 2)
            // That was the last: nothing more waits.
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(item)"], "the last step") {
                $0.contains { ($0["detail"] as? String)?.contains("(2 of 2)") == true }
            }
            #expect(try await Self.pending(s).isEmpty)
            let steps = try await s.chimeJSON(["history", "--item", "\(item)"])
                .filter { $0["event"] as? String == "escalated" }.compactMap { $0["detail"] as? String }
            #expect(
                steps.sorted() == [
                    "shown again (1 of 2) as notification 1, urgency normal",
                    "shown again (2 of 2) as notification 1, urgency critical; the last",
                ])
        }
    }

    @Test func anExpiryDoesNotStopItARestartKeepsItAndAnActionStopsIt() async throws {
        try await Session.run { s in
            let sent = try await s.chime([
                "send", "--escalate-every", "1m", "-A", "taken=Taken", "-p", "Take your pill",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let item = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            try await s.awaitDelivered(notification: 1)
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification") { $0.count == 1 }

            // The popup times out unseen: no reaction, the escalation goes on.
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(1)])
            try await s.chimed!.waitForStderr(containing: "notification 1 closed by the server: expired")
            #expect(try await Self.pending(s) == ["Take your pill"])

            // chimed stops and starts again: the next showing is stored, and comes.
            await s.chimed!.stop()
            s.chimed = try await s.startChimed()
            try s.setClock(offset: 61)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            let second = calls.elements[1]
            #expect(second.replacesID == 1)
            #expect(second.actions == calls.elements[0].actions)
            #expect(Self.urgency(second) == 2)
            try await s.awaitDelivered(notification: 1)

            // The user takes the pill: the third showing waiting for it goes.
            try await InteractionTests.awaitListing(s, ["pending"], "the next re-notification") { $0.count == 1 }
            try await s.choose("taken", on: 1)
            try await s.chimed!.waitForStderr(containing: "escalation stopped: action taken chosen")
            #expect(try await Self.pending(s).isEmpty)
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(item)"], "why it stopped") {
                $0.contains {
                    $0["event"] as? String == "escalated" && $0["detail"] as? String == "stopped: action taken chosen"
                }
            }
        }
    }

    @Test func aGroupEntryEscalatesUntilItsPopupIsDismissed() async throws {
        let group = Self.pill("escalate-every = \"10m\"\nescalate-times = 5\n")
        try await Session.run(groups: ["health.toml": group]) { s in
            let calls = s.server!.notifyCalls
            _ = try await Self.moveToFirstOccurrence(s, of: "health")
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            try await s.awaitDelivered(notification: 1)
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification") { $0.count == 2 }
            let entry = try #require(try await s.chimeJSON(["pending", "--group", "health"]).first)
            #expect(entry["escalation"] as? String == "again every 10m, at most 5 times, until acknowledged")

            // Dismissed by the user: no more showings.
            try await s.serverEmits("NotificationClosed", "uu", [.uint32(1), .uint32(2)])
            try await s.chimed!.waitForStderr(containing: "escalation stopped: dismissed by the user")
            #expect(try await s.chimeJSON(["pending"]).count == 1)
        }
    }

    /// A reschedule that drops the entry ends its escalation: the waiting re-notification goes.
    @Test func droppingTheEntryEndsItsEscalation() async throws {
        try await Session.run(groups: ["health.toml": Self.pill("escalate-every = \"10m\"\n")]) { s in
            _ = try await Self.moveToFirstOccurrence(s, of: "health")
            try await s.delivered.wait(forCount: 1)
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification") { $0.count == 2 }
            try s.writeGroup(
                "health.toml", "[[entry]]\nid = \"tea\"\nevery = \"every day at 16:00\"\nsummary = \"Tea\"\n")
            try await s.chimed!.waitForStderr(containing: "escalation stopped: its entry was removed from the group")
            try await InteractionTests.awaitListing(s, ["pending"], "the new entry only") {
                $0.compactMap { $0["summary"] as? String } == ["Tea"]
            }
        }
    }

    /// An action on a re-notification acts on the entry it escalates: Stop Repeat stops the daily entry.
    /// Removing a group ends the escalation of its entries.
    @Test func aReNotificationActsForItsEntryAndGoesWithItsGroup() async throws {
        let group = Self.pill("actions = [\"stop-repeat=Stop\"]\nescalate-every = \"10m\"\n")
        try await Session.run(groups: [
            "health.toml": group, "other.toml": group.replacingOccurrences(of: "pill", with: "tea"),
        ]) { s in
            let calls = s.server!.notifyCalls
            let fire = try await Self.moveToFirstOccurrence(s, of: "health")
            try await s.delivered.wait(forCount: 2)
            try await InteractionTests.awaitListing(s, ["pending"], "both re-notifications") { $0.count == 4 }

            // The re-notifications are shown, each replacing its popup; Stop is chosen on the pill's.
            try s.setClock(offset: fire.timeIntervalSinceNow + 601)
            try await s.delivered.wait(forCount: 4)
            let again = try #require(calls.elements.last { $0.summary == "Take your pill" })
            let popup = try #require(again.replacesID)
            try await s.choose("stop-repeat", on: popup)
            try await s.chimed!.waitForStderr(containing: "stop-repeat: stopped its repeats")
            // The daily pill entry is stopped (not the re-notification), and its next showing goes.
            try await InteractionTests.awaitListing(s, ["pending"], "the tea's entry and re-notification only") {
                $0.compactMap { $0["summary"] as? String } == ["Take your tea", "Take your tea"]
            }

            // Removing the other group ends its escalation: its re-notification goes too.
            try FileManager.default.removeItem(
                atPath: (s.groupsDirectory as NSString).appendingPathComponent("other.toml"))
            try await s.chimed!.waitForStderr(containing: "escalation stopped: its group was removed")
            try await InteractionTests.awaitListing(s, ["pending"], "nothing left") { $0.isEmpty }
        }
    }

    /// A re-notification held by quiet hours, answered meanwhile: it goes out when they end, and is taken
    /// back at once; nothing more follows.
    @Test func aReNotificationAnsweredWhileHeldIsTakenBack() async throws {
        try await Session.run(settings: "[quiet-hours]\nstart = \"22:00\"\nend = \"07:00\"\n", startChimed: false) {
            s in
            // chimed's clock reads 21:59:30 in Berlin: the showing a minute later falls in quiet hours.
            let target = Self.berlinCalendar.nextDate(
                after: Date(), matching: DateComponents(hour: 21, minute: 59, second: 30), matchingPolicy: .nextTime)!
            let offset = target.timeIntervalSinceNow
            try s.setClock(offset: offset, tellChimed: false)
            s.chimed = try await s.startChimed()
            let sent = try await s.chime([
                "send", "--escalate-every", "1m", "-u", "low", "-A", "taken=Taken", "-p", "Take your pill",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let item = try #require(UInt64(sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            let calls = s.server!.notifyCalls
            try await s.awaitDelivered(notification: 1)
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification") { $0.count == 1 }

            // It comes due in quiet hours and is held; then the pill is taken.
            try s.setClock(offset: offset + 61)
            try await InteractionTests.awaitListing(s, ["pending"], "the re-notification due") { $0.isEmpty }
            try await s.choose("taken", on: 1)
            try await s.chimed!.waitForStderr(containing: "is taken back when shown")

            // Quiet hours end: it goes out, and is closed at once; no further showing waits.
            let morning = Self.berlinCalendar.nextDate(
                after: target, matching: DateComponents(hour: 7, minute: 0, second: 1), matchingPolicy: .nextTime)!
            try s.setClock(offset: morning.timeIntervalSinceNow)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            #expect(calls.elements[1].replacesID == 1)
            try await s.chimed!.waitForStderr(containing: "closing a re-notification answered while it waited")
            try await s.server!.closeCalls.wait(forCount: 1, timeout: .seconds(10))
            #expect(s.server!.closeCalls.elements == [1])
            #expect(try await Self.pending(s).isEmpty)
            let history = try await s.chimeJSON(["history", "--item", "\(item)"])
            #expect(
                history.contains {
                    $0["event"] as? String == "action" && ($0["detail"] as? String)?.hasPrefix("taken") == true
                })
        }
    }

    static var berlinCalendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
        return calendar
    }

    @Test func aChimeKitEntryEscalates() async throws {
        try await Session.run { s in
            try await ChimeKitTests.withKit(s) {
                let group = try await LocalNotifications.schedule(groupIdentifier: nil) {
                    EveryDay(forDays: 30, starting: .today).at(hour: 8, minute: 0)
                        .schedule(title: "Pill", body: "With water")
                        .escalate(every: 15 * 60, times: 4)
                }
                let pending = try await LocalNotifications.client().pending(next: 1, group: group.groupIdentifier)
                #expect(pending.map(\.escalation) == ["again every 15m, at most 4 times, until acknowledged"])
            }
        }
    }

    @Test func badEscalationsAreRefusedWithTheKeyNamed() async throws {
        try await Session.run { s in
            let short = try await s.chime(["send", "--escalate-every", "30s", "x"])
            #expect(short.status != 0)
            #expect(short.stderr.contains("--escalate-every: escalation interval must be from 1 minute to 1 day"))
            let many = try await s.chime(["send", "--escalate-every", "5m", "--escalate-times", "11", "x"])
            #expect(many.stderr.contains("--escalate-times: escalation times must be from 1 to 10"))
            let alone = try await s.chime(["send", "--escalate-times", "2", "x"])
            #expect(alone.stderr.contains("--escalate-times goes with --escalate-every"))

            let client = try await s.client()
            await #expect {
                _ = try await client.schedule(
                    ChimeCore.NotificationContent(summary: "x"),
                    trigger: TriggerWire(escalation: Escalation(every: 10, times: 3)))
            } throws: { error in
                "\(error)".contains("escalation interval must be from 1 minute to 1 day")
                    && "\(error)".contains("escalate-every")
            }
            #expect(try await Self.pending(s).isEmpty)
            #expect(s.server!.notifyCalls.elements.isEmpty)
        }
    }
}
