import DBusKit
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ChimeKit

#if canImport(Glibc)
    import Glibc
#endif

/// Groups and timelines end to end: group files, reschedules, missed triggers, quiet hours, flood
/// control, end dates, clock jumps, time-zone changes and suspend, with chimed as a process on a
/// private bus and python-dbusmock as the notification server.
@Suite(.serialized) struct GroupTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized

    /// Local ISO 8601 without an offset, as a user types `--until`.
    static func local(_ date: Date, zone: TimeZone = .current) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        formatter.timeZone = zone
        return formatter.string(from: date)
    }

    /// A time as the CLI prints it (ISO 8601 with an offset).
    static func date(_ text: String?) -> Date? {
        text.flatMap { try? Date($0, strategy: .iso8601) }
    }

    /// The history once `holds` is true of it, or after ten seconds: chimed writes it after the notifications
    /// go out, so a test that saw a Notify may ask before the last record is in.
    static func history(
        _ client: ChimeClient, limit: Int, until holds: ([HistoryRecord]) -> Bool
    ) async throws -> [HistoryRecord] {
        var history = try await client.history(limit: limit)
        let deadline = Date().addingTimeInterval(10)
        while !holds(history), Date() < deadline { history = try await client.history(limit: limit) }
        return history
    }

    static func wallClock(_ date: Date, in zone: String) -> DateComponents {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone)!
        return calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
    }

    @Test func theExampleGroupsShowUpInGroupsAndPending() async throws {
        var groups: [String: String] = [:]
        for name in ["daily-quote.toml", "first-friday.toml", "weekend-start.toml"] {
            groups[name] = try String(
                contentsOf: Self.repository.appendingPathComponent("config/groups/\(name)"), encoding: .utf8)
        }
        try await Session.run(groups: groups) { s in
            let listed = try await s.chimeJSON(["groups"])
            #expect(listed.compactMap { $0["id"] as? String } == ["daily-quote", "first-friday", "weekend-start"])
            #expect(listed.allSatisfy { $0["source"] as? String == "config" && ($0["pending"] as? Int ?? 0) >= 1 })
            let pending = try await s.chimeJSON(["pending", "--next", "3"])
            #expect(
                Set(pending.compactMap { $0["group"] as? String }) == ["daily-quote", "first-friday", "weekend-start"])
            let friday = try #require(pending.first { $0["group"] as? String == "first-friday" })
            #expect(friday["summary"] as? String == "Game night")
            #expect((friday["next"] as? [String])?.count == 3)
            // Each listed occurrence is a first Friday at 20:15 on the link's zone (Berlin).
            for text in friday["next"] as? [String] ?? [] {
                let c = Self.wallClock(try #require(Self.date(text)), in: "Europe/Berlin")
                #expect(c.weekday == 6 && c.day! <= 7 && c.hour == 20 && c.minute == 15)
            }
        }
    }

    /// Phrases as people type them mean the same to `chime next`, to `chime send --every` and in a group
    /// file: the same next occurrences.
    @Test func typedPhrasesMeanTheSameInNextSendAndAGroupFile() async throws {
        let phrases = [
            "every day at 9am and 5pm", "weekdays at 7:15", "every hour from 9am to 5pm",
            "biweekly on thursday at 15:00", "every monday at 9", "the first monday of every month",
        ]
        var file = ""
        for (index, phrase) in phrases.enumerated() {
            file += "[[entry]]\nid = \"p\(index)\"\nevery = \"\(phrase)\"\nsummary = \"file \(index)\"\n\n"
        }
        try await Session.run(groups: ["typed.toml": file]) { s in
            for (index, phrase) in phrases.enumerated() {
                let sent = try await s.chime(["send", "--every", phrase, "--tz", "Europe/Berlin", "sent \(index)"])
                #expect(sent.status == 0, "\(phrase): \(sent.stderr)")
            }
            let pending = try await s.chimeJSON(["pending", "--next", "4"])
            for (index, phrase) in phrases.enumerated() {
                let next = try await s.chime([
                    "next", "--every", phrase, "--tz", "Europe/Berlin", "--count", "4", "--json",
                ])
                #expect(next.status == 0, "\(phrase): \(next.stderr)")
                let preview = try JSONSerialization.jsonObject(with: Data(next.stdout.utf8)) as? [String: Any]
                let expected = (preview?["occurrences"] as? [String] ?? []).compactMap(Self.date)
                #expect(expected.count == 4, "\(phrase)")
                for summary in ["sent \(index)", "file \(index)"] {
                    let item = pending.first { $0["summary"] as? String == summary }
                    let listed = (item?["next"] as? [String] ?? []).compactMap(Self.date)
                    #expect(listed == expected, "\(phrase) as \(summary)")
                }
            }
        }
    }

    @Test func groupFilesAreReloadedWhenTheyChangeAndABrokenOneKeepsTheOldVersion() async throws {
        try await Session.run { s in
            let calls = s.server!.notifyCalls
            try s.writeGroup("ticks.toml", "[[entry]]\nid = \"tick\"\nevery = \"every 2 seconds\"\nsummary = \"A\"\n")
            try await calls.wait("the new file's entry fired", timeout: .seconds(10)) {
                $0.contains { $0.summary == "A" }
            }
            // A broken version: reported with file and line, and the old one keeps running.
            try s.writeGroup("ticks.toml", "[[entry]]\nid = \"tick\"\nevery = \"every 2 seconds\"\nsummary = A\n")
            try await s.chimed!.waitForStderr(containing: "ticks.toml:4:")
            try await s.chimed!.waitForStderr(containing: "group ticks keeps running as it was")
            let before = calls.elements.count
            try await calls.wait("the old version still fires", timeout: .seconds(10)) { $0.count >= before + 1 }
            #expect(calls.elements.last?.summary == "A")
            // Fixed: the new text replaces the old.
            try s.writeGroup("ticks.toml", "[[entry]]\nid = \"tick\"\nevery = \"every 2 seconds\"\nsummary = \"B\"\n")
            try await calls.wait("the fixed file's entry fired", timeout: .seconds(10)) {
                $0.contains { $0.summary == "B" }
            }
            // Deleted: the group goes.
            try FileManager.default.removeItem(
                atPath: (s.groupsDirectory as NSString).appendingPathComponent("ticks.toml"))
            try await s.chimed!.waitForStderr(containing: "the file of group ticks is gone")
            #expect(try await s.chimeJSON(["groups"]).isEmpty)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
        }
    }

    /// `chime group disable` on a group file's group is the user's switch: an edit of the file changes the
    /// entries, not the switch; `chime group enable` turns the group on again.
    @Test func theUsersOffForAGroupFileStaysOffWhenTheFileChanges() async throws {
        try await Session.run { s in
            try s.writeGroup(
                "plants.toml", "[[entry]]\nid = \"water\"\nevery = \"every day at 9:00\"\nsummary = \"A\"\n")
            try await s.chimed!.waitForStderr(containing: "rescheduled group plants: 1 added")
            #expect(try await s.chime(["group", "disable", "plants"]).status == 0)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            try s.writeGroup(
                "plants.toml", "[[entry]]\nid = \"water\"\nevery = \"every day at 9:00\"\nsummary = \"B\"\n")
            try await s.chimed!.waitForStderr(containing: "rescheduled group plants: 0 added, 1 changed")
            #expect(try await s.chimeJSON(["groups"]).first?["enabled"] as? Bool == false)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            #expect(try await s.chime(["group", "enable", "plants"]).status == 0)
            #expect(try await s.chimeJSON(["pending"]).map { $0["summary"] as? String } == ["B"])
        }
    }

    @Test func rescheduleFromTheCommandLineWithADryRunFirst() async throws {
        try await Session.run { s in
            let file = s.bus.directory.appendingPathComponent("standup.toml").path
            try """
            missed = "skip"
            [[entry]]
            id = "morning"
            every = "every day at 9:00"
            summary = "Stand-up"
            [[entry]]
            id = "evening"
            every = "every day at 17:30"
            summary = "Wrap up"
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let dry = try await s.chimeJSON(["reschedule", "--file", file, "--dry-run"])
            #expect(dry.compactMap { $0["change"] as? String } == ["added", "added"])
            #expect(try await s.chimeJSON(["groups"]).isEmpty)
            let applied = try await s.chimeJSON(["reschedule", "--file", file])
            #expect(applied.compactMap { $0["entry"] as? String } == ["morning", "evening"])
            let groups = try await s.chimeJSON(["groups"])
            #expect(groups.first?["id"] as? String == "standup")
            #expect(groups.first?["missed"] as? String == "skip")
            #expect(groups.first?["pending"] as? Int == 2)
            // Again, unchanged but for one entry's time.
            try String(contentsOfFile: file, encoding: .utf8).replacingOccurrences(of: "17:30", with: "18:00")
                .write(toFile: file, atomically: true, encoding: .utf8)
            let again = try await s.chimeJSON(["reschedule", "--file", file])
            #expect(again.compactMap { $0["change"] as? String } == ["unchanged", "changed"])
            let removed = try await s.chime(["remove", "standup"])
            #expect(removed.status == 0)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            let missing = try await s.chime(["remove", "standup"])
            #expect(missing.status == 3)
            #expect(missing.stderr.contains("no group standup"))
            let broken = try await s.chime(["reschedule", "--file", s.configFile + ".missing"])
            #expect(broken.status == 2)
        }
    }

    /// 10,000 occurrences in one timeline: accepted in one Reschedule and delivered in order.
    @Test func aTenThousandOccurrenceTimelineIsDeliveredInOrder() async throws {
        // A burst as large as the timeline: flood control never coalesces, however slowly this machine
        // delivers, so every occurrence must arrive on its own and in order.
        try await Session.run(settings: "[flood]\nrate = 1000\nburst = 10000\n") { s in
            let client = try await s.client()
            let start = Date().addingTimeInterval(3)
            // 100 instants 100 ms apart, 100 entries each.
            let entries = (0..<10_000).map { i in
                TimelineEntry(
                    id: "e\(i)", trigger: .at(start.addingTimeInterval(Double(i / 100) * 0.1)),
                    content: .fixed(ChimeCore.NotificationContent(summary: String(format: "e%05d", i))))
            }
            let changes = try await client.reschedule(TimelineGroup(id: "big", entries: entries))
            #expect(changes.count == 10_000)
            #expect(changes.allSatisfy { $0.kind == .added })
            let calls = s.server!.notifyCalls
            // About 13 s on an idle 2-core machine; the bound leaves room for a busy one.
            try await calls.wait(forCount: 10_000, timeout: .seconds(150))
            let summaries = calls.elements.map { $0.summary ?? "" }
            #expect(summaries == (0..<10_000).map { String(format: "e%05d", $0) })
            #expect(calls.elements.first!.received >= start)
            #expect(try await client.pending().isEmpty)
        }
    }

    /// chimed killed with SIGKILL in the middle of a burst of Schedule calls from four clients: after a
    /// restart every acknowledged item is there.
    @Test func everyAcknowledgedItemSurvivesSIGKILLDuringABurst() async throws {
        try await Session.run { s in
            let acknowledged = Acknowledged()
            let far = Date().addingTimeInterval(86_400)
            let chimed = s.chimed!
            try await withThrowingTaskGroup(of: Void.self) { group in
                for worker in 0..<4 {
                    let client = try await s.client()
                    group.addTask {
                        for n in 0..<10_000 {
                            do {
                                let id = try await client.schedule(
                                    ChimeCore.NotificationContent(summary: "w\(worker) n\(n)"), at: far)
                                let count = acknowledged.add(id)
                                if count == 200 { chimed.kill(SIGKILL) }
                            } catch {
                                return
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(await chimed.waitForExit() == 128 + SIGKILL)
            s.chimed = try await s.startChimed()
            let pending = try await s.client().pending().map(\.id)
            let acked = acknowledged.ids
            #expect(acked.count >= 200)
            #expect(Set(acked).isSubset(of: Set(pending)), "lost: \(Set(acked).subtracting(pending).sorted())")
            #expect(Set(pending).count == pending.count)
        }
    }

    @Test func aClockJumpReArmsTheTimerAtOnce() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let inAnHour = Date().addingTimeInterval(3600)
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "in an hour"), at: inAnHour)
            let inTwoHours = Date().addingTimeInterval(7200)
            let late = try await client.schedule(ChimeCore.NotificationContent(summary: "in two hours"), at: inTwoHours)
            // The clock is set 1 h - 2 s ahead: the first item is due 2 s later, not in an hour.
            let jumped = Date()
            try s.setClock(offset: 3600 - 2)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            let delay = calls.elements[0].received.timeIntervalSince(jumped)
            #expect(calls.elements[0].summary == "in an hour")
            #expect(delay > 1.5 && delay < 3, "delivered \(delay) s after the jump")
            // Set 10 minutes past the second: it is delivered at once, late, as deliver-late allows.
            try s.setClock(offset: 7200 + 600)
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            #expect(calls.elements[1].summary == "in two hours")
            // chimed announces a delivery after storing it: then its history has it.
            try await s.delivered.wait("chimed delivered the second item") { $0.contains { $0.item == late } }
            let history = try await client.history(item: late)
            #expect(history.first?.event == "delivered")
            #expect(history.first?.detail?.hasSuffix(", late") == true)
        }
    }

    @Test func occurrencesMissedWhileChimedWasNotRunningAreCoalescedIntoOneDigest() async throws {
        // A daily time half an hour from now on the link's zone, so each missed one is far from the restart.
        let at = Self.wallClock(Date().addingTimeInterval(1800), in: "Europe/Berlin")
        let group = """
            missed = "coalesce"
            [[entry]]
            id = "water"
            every = "every day at \(at.hour!):\(String(format: "%02d", at.minute!))"
            summary = "Water the plants"
            """
        try await Session.run(groups: ["garden.toml": group]) { s in
            #expect(try await s.chimeJSON(["pending"]).count == 1)
            await s.chimed!.stop()
            // Three days pass while chimed is not running.
            try s.setClock(offset: 3 * 86_400, tellChimed: false)
            s.chimed = try await s.startChimed()
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            #expect(calls.elements[0].summary == "3 reminders missed in garden")
            #expect(calls.elements[0].body?.contains("Water the plants ×3") == true)
            let history = try await s.chimeJSON(["history", "--group", "garden"])
            let missed = try #require(history.first { $0["event"] as? String == "missed" })
            #expect((missed["detail"] as? String)?.hasPrefix("3 coalesced") == true)
            // The rhythm goes on: the next one is tomorrow (on the moved clock) at the same time.
            let next = try #require(Self.date(try await s.chimeJSON(["pending"]).first?["at"] as? String))
            #expect(Self.wallClock(next, in: "Europe/Berlin").hour == at.hour)
        }
    }

    @Test func quietHoursHoldNotificationsAndDeliverOneDigestWhenTheyEnd() async throws {
        try await Session.run(settings: "[quiet-hours]\nstart = \"22:00\"\nend = \"07:00\"\n", startChimed: false) {
            s in
            // chimed's clock reads 06:59:56 in Berlin: quiet hours end four seconds later.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "Europe/Berlin")!
            let target = calendar.nextDate(
                after: Date(), matching: DateComponents(hour: 6, minute: 59, second: 56), matchingPolicy: .nextTime)!
            let offset = target.timeIntervalSinceNow
            try s.setClock(offset: offset, tellChimed: false)
            s.chimed = try await s.startChimed()
            let client = try await s.client()
            let chimedNow = Date().addingTimeInterval(offset)
            for (i, name) in ["one", "two", "three"].enumerated() {
                _ = try await client.schedule(
                    ChimeCore.NotificationContent(summary: name),
                    at: chimedNow.addingTimeInterval(0.5 + 0.2 * Double(i)))
            }
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "urgent", urgency: .critical),
                at: chimedNow.addingTimeInterval(1.2))
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2, timeout: .seconds(15))
            #expect(calls.elements.map(\.summary) == ["urgent", "3 notifications during quiet hours"])
            let digest = calls.elements[1]
            #expect(digest.body?.contains("one") == true && digest.body?.contains("three") == true)
            // The digest came when quiet hours ended, not before.
            #expect(digest.received.addingTimeInterval(offset) >= target.addingTimeInterval(4))
            let history = try await Self.history(client, limit: 10) {
                $0.filter { $0.event == "suppressed" }.count >= 3
            }
            #expect(history.filter { $0.event == "suppressed" }.count == 3)
        }
    }

    @Test func aBurstBeyondTheRateIsCoalescedIntoASummaryAndNothingIsLost() async throws {
        try await Session.run(settings: "[flood]\nrate = 1\nburst = 5\n") { s in
            let client = try await s.client()
            let at = Date().addingTimeInterval(1)
            for n in 0..<20 { _ = try await client.schedule(ChimeCore.NotificationContent(summary: "n\(n)"), at: at) }
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 5, timeout: .seconds(10))
            #expect(calls.elements.prefix(4).map(\.summary) == ["n0", "n1", "n2", "n3"])
            #expect(calls.elements[4].summary?.contains("16") == true)
            let history = try await Self.history(client, limit: 100) {
                $0.filter { $0.event == "suppressed" }.count >= 16
            }
            #expect(history.filter { $0.event == "delivered" }.count == 4)
            #expect(history.filter { $0.event == "suppressed" }.count == 16)
        }
    }

    @Test func anEndDateStopsTheRepeatsAndClosesTheLastPopup() async throws {
        try await Session.run { s in
            // At least six seconds ahead (whole seconds, as --until reads them): two periods fit even when
            // `chime send` starts a second or two late on a busy machine (its rule starts when it runs).
            let until = Date().addingTimeInterval(7).addingTimeInterval(
                -Date().timeIntervalSince1970.truncatingRemainder(dividingBy: 1))
            let sent = try await s.chime(["send", "--every", "every 2 seconds", "--until", Self.local(until), "Tick"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let server = s.server!
            try await server.closeCalls.wait(forCount: 1, timeout: .seconds(15))
            let ticks = server.notifyCalls.elements
            #expect(ticks.count >= 2)
            #expect(ticks.allSatisfy { $0.received <= until.addingTimeInterval(0.2) })
            // dbusmock numbers its notifications 1, 2, 3… and never closes them itself: at the end date
            // every popup of the item is still shown, and each is closed.
            try await server.closeCalls.wait(forCount: ticks.count, timeout: .seconds(5))
            #expect(Set(server.closeCalls.elements) == Set((1...ticks.count).map(UInt32.init)))
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
            let history = try await s.chimeJSON(["history"])
            #expect(history.contains { $0["event"] as? String == "finished" && $0["detail"] as? String == "ended" })
            #expect(history.contains { $0["event"] as? String == "closed" && $0["detail"] as? String == "end date" })
        }
    }

    @Test func aPopupClosedByTheServerIsRecordedWithItsReason() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let id = try await client.schedule(ChimeCore.NotificationContent(summary: "Read me"))
            try await s.awaitDelivered(notification: 1)
            // The user dismisses it: the server says so with reason 2.
            _ = try await s.observer.call(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.freedesktop.DBus.Mock", member: "EmitSignal",
                [
                    .string("org.freedesktop.Notifications"), .string("NotificationClosed"), .string("uu"),
                    .array(element: .variant, [.variant(.uint32(1)), .variant(.uint32(2))]),
                ])
            try await s.chimed!.waitForStderr(containing: "closed by the server")
            let history = try await client.history(item: id)
            #expect(history.map(\.event) == ["closed", "delivered", "finished", "scheduled"])
            #expect(history.first?.detail == "dismissed by the user")
        }
    }

    @Test func aFloatingRuleFollowsATimeZoneChangeAndAPinnedOneStays() async throws {
        try await Session.run { s in
            #expect(try await s.chime(["send", "--every", "every day at 12:00", "Lunch"]).status == 0)
            #expect(
                try await s.chime(["send", "--every", "every day at 12:00", "--tz", "Europe/Berlin", "Call"]).status
                    == 0)
            func fireDates() async throws -> [String: Date] {
                var dates: [String: Date] = [:]
                for item in try await s.chimeJSON(["pending"]) {
                    dates[item["summary"] as? String ?? ""] = Self.date(item["at"] as? String)
                }
                return dates
            }
            for date in try await fireDates().values {
                #expect(Self.wallClock(date, in: "Europe/Berlin").hour == 12)
            }
            try s.link(zone: "Asia/Tokyo")
            try await s.chimed!.waitForStderr(containing: "the time zone is now Asia/Tokyo")
            let after = try await fireDates()
            #expect(Self.wallClock(try #require(after["Lunch"]), in: "Asia/Tokyo").hour == 12)
            #expect(Self.wallClock(try #require(after["Call"]), in: "Europe/Berlin").hour == 12)
        }
    }

    /// `in ZONE` in the phrase pins it whatever the system zone and --tz say.
    @Test func aPhrasesOwnZoneWinsOverTzAndTheSystemZone() async throws {
        try await Session.run { s in
            let phrase = "every weekday at 9:00 in America/New_York"
            #expect(try await s.chime(["send", "--every", phrase, "Stand-up"]).status == 0)
            #expect(try await s.chime(["send", "--every", phrase, "--tz", "Asia/Kolkata", "Call"]).status == 0)
            func expectNineInNewYork() async throws {
                let pending = try await s.chimeJSON(["pending"])
                #expect(pending.count == 2)
                for item in pending {
                    let wall = Self.wallClock(try #require(Self.date(item["at"] as? String)), in: "America/New_York")
                    #expect(wall.hour == 9 && wall.minute == 0, "\(item)")
                    #expect((2...6).contains(wall.weekday ?? 0), "\(item)")
                }
            }
            try await expectNineInNewYork()
            try s.link(zone: "Asia/Tokyo")
            try await s.chimed!.waitForStderr(containing: "the time zone is now Asia/Tokyo")
            try await expectNineInNewYork()
        }
    }

    @Test func resumingFromSuspendDeliversWhatCameDueWhileAsleep() async throws {
        try await Session.run(startChimed: false) { s in
            try await s.startLogindMock()
            s.chimed = try await s.startChimed()
            let client = try await s.client()
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "after the nap"), at: Date().addingTimeInterval(1800))
            // The machine sleeps for half an hour: the clock moves on without a clock-set event.
            try s.setClock(offset: 1801, tellChimed: false)
            try await s.prepareForSleep(false)
            try await s.server!.notifyCalls.wait(forCount: 1, timeout: .seconds(10))
            #expect((try await s.server!.notifyCalls.element(0)).summary == "after the nap")
            #expect(s.chimed!.stderr.contains("resumed from suspend"))
        }
    }

    @Test func contentIsMadeWhenItFiresByAPoolACommandAndTheOwningApp() async throws {
        let at = Date().addingTimeInterval(2)
        // A command comes only from a group file.
        let commandFile = """
            [[entry]]
            id = "command"
            at = "\(Self.local(at.addingTimeInterval(0.1), zone: TimeZone(identifier: "Europe/Berlin")!))"
            summary = "Fallback"
            [entry.command]
            run = ["echo", "from a command"]
            """
        try await Session.run(groups: ["command.toml": commandFile]) { s in
            // The app: serves io.chime.ContentProvider1 under a name of its own, and asks chimed to call it.
            let app = try await s.contentProvider("org.example.Quotes") { call in
                let entry = try call.arguments[1].decode(String.self)
                let number = try call.arguments[3].decode(UInt32.self)
                return .dictionary(
                    key: .string, value: .variant,
                    [
                        DBusDictEntry(.string("summary"), .variant(.string("From the app"))),
                        DBusDictEntry(.string("body"), .variant(.string("\(entry) #\(number)"))),
                    ])
            }
            defer { app.close() }
            // An app that asks to be called back and is gone when its entry fires.
            let gone = try await s.app("org.example.Gone")
            let base = ChimeCore.NotificationContent(summary: "Fallback")
            try await ChimeClient(connection: app).reschedule(
                TimelineGroup(
                    id: "sources",
                    entries: [
                        TimelineEntry(
                            id: "pool", trigger: .at(at),
                            content: .pool(
                                ContentPool(
                                    base: ChimeCore.NotificationContent(summary: "Quote"),
                                    items: [.init(body: "first"), .init(body: "second")], order: .inOrder))),
                        TimelineEntry(
                            id: "app", trigger: .at(at.addingTimeInterval(0.2)),
                            content: .callback(CallbackSource(busName: "org.example.Quotes", fallback: base))),
                        TimelineEntry(
                            id: "template", trigger: .rule(.phrase("every 2 seconds"), timeZone: nil),
                            content: .template(ChimeCore.NotificationContent(summary: "Number {n}"))),
                    ]))
            try await gone.reschedule(
                TimelineGroup(
                    id: "gone",
                    entries: [
                        TimelineEntry(
                            id: "gone", trigger: .at(at.addingTimeInterval(0.3)),
                            content: .callback(CallbackSource(busName: "org.example.Gone", fallback: base)))
                    ]))
            gone.close()
            let calls = s.server!.notifyCalls
            try await calls.wait("the four one-offs and two templates arrived", timeout: .seconds(15)) {
                $0.count >= 6
            }
            let shown = calls.elements.map { "\($0.summary ?? "")|\($0.body ?? "")" }
            #expect(shown.contains("Quote|first"))
            #expect(shown.contains("Fallback|from a command"))
            #expect(shown.contains("From the app|app #1"))
            #expect(shown.contains("Fallback|"))
            #expect(shown.contains("Number 1|") && shown.contains("Number 2|"))
        }
    }
}

/// Item ids acknowledged by chimed, from several tasks.
final class Acknowledged: Sendable {
    private let storage = Mutex<[UInt64]>([])

    /// Adds `id`; returns how many there are now.
    func add(_ id: UInt64) -> Int {
        storage.withLock {
            $0.append(id)
            return $0.count
        }
    }

    var ids: [UInt64] { storage.withLock { $0 } }
}
