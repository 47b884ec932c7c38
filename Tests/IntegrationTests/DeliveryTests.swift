import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// chimed end to end: a private bus, python-dbusmock as the notification server, chimed as a process,
/// scheduling through the CLI and through ChimeKit.
@Suite(.serialized) struct DeliveryTests {
    /// The lateness allowed between the deadline and the server receiving Notify.
    static let allowedLateness: TimeInterval = 0.050

    @Test func cliSendInTwoSecondsReachesTheServerOnTime() async throws {
        try await Session.run { s in
            let before = Date()
            let result = try await s.chime(["send", "--in", "2s", "Hello", "World"])
            let after = Date()
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            let call = calls.elements[0]
            #expect(call.summary == "Hello")
            #expect(call.body == "World")
            // The deadline is 2 s after the moment chime read the clock, somewhere in [before, after].
            #expect(call.received >= before.addingTimeInterval(2))
            #expect(call.received <= after.addingTimeInterval(2 + Self.allowedLateness))
        }
    }

    @Test func cliSendAtAnExactTimeCarriesEveryField() async throws {
        try await Session.run { s in
            // A whole second at least 2 s away, written as local ISO 8601 as a user would.
            let deadline = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 2).rounded(.up))
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
            formatter.timeZone = .current
            let result = try await s.chime([
                "send", "--at", formatter.string(from: deadline), "-u", "critical", "-t", "5000", "-a", "Pizza App",
                "-i", "dialog-information", "-A", "stop-repeat=Stop Repeat", "-A", "snooze:10m=Snooze 10 min",
                "Pizza Time", "Order now",
            ])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            let call = calls.elements[0]
            #expect(call.summary == "Pizza Time")
            #expect(call.body == "Order now")
            #expect(call.appName == "Pizza App")
            #expect(call.expireTimeout == 5000)
            #expect(call.actions == ["stop-repeat", "Stop Repeat", "snooze:10m", "Snooze 10 min"])
            #expect(call.hints["urgency"] == .byte(2))
            #expect(call.received >= deadline, "delivered \(deadline.timeIntervalSince(call.received)) s early")
            #expect(
                call.received.timeIntervalSince(deadline) <= Self.allowedLateness,
                "delivered \(call.received.timeIntervalSince(deadline)) s late")
        }
    }

    @Test func chimeKitSchedulesInOrderAndOnTime() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let base = Date().addingTimeInterval(1)
            let plan: [(String, TimeInterval)] = [("third", 0.9), ("first", 0.3), ("second", 0.6), ("now", -2)]
            var deadlines: [String: Date] = [:]
            for (summary, offset) in plan {
                let at = base.addingTimeInterval(offset)
                deadlines[summary] = offset < 0 ? Date() : at
                _ = try await client.schedule(
                    ChimeCore.NotificationContent(summary: summary, body: "b", urgency: .low), at: offset < 0 ? nil : at
                )
            }
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 4, timeout: .seconds(10))
            #expect(calls.elements.map(\.summary) == ["now", "first", "second", "third"])
            for call in calls.elements where call.summary != "now" {
                let deadline = deadlines[call.summary!]!
                #expect(call.received >= deadline)
                #expect(
                    call.received.timeIntervalSince(deadline) <= Self.allowedLateness,
                    "\(call.summary!) was \(call.received.timeIntervalSince(deadline)) s late")
                #expect(call.hints["urgency"] == .byte(0))
            }
            #expect(try await client.pending().isEmpty)
        }
    }

    @Test func pendingAndCancel() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let far = Date().addingTimeInterval(3600)
            let keep = try await client.schedule(ChimeCore.NotificationContent(summary: "keep"), at: far)
            let drop = try await client.schedule(
                ChimeCore.NotificationContent(summary: "drop"), at: far.addingTimeInterval(-60))
            #expect(try await client.pending().map(\.id) == [drop, keep])
            let listed = try await s.chime(["pending", "--json"])
            #expect(listed.status == 0)
            let json = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[String: Any]]
            #expect(json?.compactMap { $0["summary"] as? String } == ["drop", "keep"])
            let cancelled = try await s.chime(["cancel", String(drop)])
            #expect(cancelled.status == 0)
            #expect(try await client.pending().map(\.id) == [keep])
            let missing = try await s.chime(["cancel", String(drop)])
            #expect(missing.status == 3)
            #expect(missing.stderr.contains("no pending item \(drop)"))
        }
    }

    @Test func withoutAServerItemsWaitAndAreDeliveredWhenOneAppears() async throws {
        try await Session.run(withServer: false) { s in
            let client = try await s.client()
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "Kept", body: "while no server ran"),
                at: Date().addingTimeInterval(0.2))
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "Also kept"), at: Date().addingTimeInterval(0.3))
            // chimed says on stderr that it keeps the item; nothing is lost.
            try await s.chimed!.waitForStderr(containing: "keeping \"Also kept\"")
            #expect(s.chimed!.stderr.contains("no notification server on the bus"))
            s.server = try await MockNotificationServer.start(on: s.bus, observer: s.observer)
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 2, timeout: .seconds(10))
            #expect(calls.elements.map(\.summary) == ["Kept", "Also kept"])
            #expect(calls.elements[0].body == "while no server ran")
        }
    }

    @Test func introspectionMatchesTheCommittedContract() async throws {
        try await Session.run { s in
            let reply = try await s.observer.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1",
                interface: "org.freedesktop.DBus.Introspectable", member: "Introspect")
            guard case .string(let live)? = reply.first else {
                Issue.record("Introspect returned no XML")
                return
            }
            let contractURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../docs/io.chime.Chime1.xml")
            let contract = try String(contentsOf: contractURL, encoding: .utf8)
            let liveInterface = try InterfaceShape(xml: live, interface: "io.chime.Chime1")
            let contractInterface = try InterfaceShape(xml: contract, interface: "io.chime.Chime1")
            #expect(!contractInterface.members.isEmpty)
            #expect(liveInterface == contractInterface)
        }
    }

    @Test func everyTwoSecondsDeliversAgainAndAgainUntilCancelled() async throws {
        try await Session.run { s in
            let result = try await s.chime(["send", "--every", "every 2 seconds", "Tick"])
            #expect(result.status == 0, "chime send failed: \(result.stderr)")
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 3, timeout: .seconds(15))
            let times = calls.elements.prefix(3).map(\.received)
            #expect(calls.elements.allSatisfy { $0.summary == "Tick" })
            for (a, b) in zip(times, times.dropFirst()) {
                #expect(abs(b.timeIntervalSince(a) - 2) < 0.1, "ticks \(b.timeIntervalSince(a)) s apart")
            }
            // The user's item: the user's tool lists and cancels it; an app does not even see it.
            let pending = try await s.chimeJSON(["pending"])
            #expect(pending.count == 1)
            #expect(try await s.client().pending().isEmpty)
            let id = try #require(pending.first?["id"] as? Int)
            #expect(try await s.chime(["cancel", "\(id)"]).status == 0)
            #expect(try await s.chimeJSON(["pending"]).isEmpty)
        }
    }

    @Test func repeatingRulesAreCheckedWhenScheduled() async throws {
        try await Session.run { s in
            let bad = try await s.chime(["send", "--rrule", "FREQ=DAILY;BYDAY=XX", "x"])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("invalid RRULE at position 18 (\"XX\")"))
            let never = try await s.chime(["send", "--on-calendar", "*-02-30", "x"])
            #expect(never.status == 2)
            #expect(never.stderr.contains("never fires"))
            let zone = try await s.chime(["send", "--every", "every day at 9:00", "--tz", "Mars/Olympus", "x"])
            #expect(zone.status == 2)
            #expect(zone.stderr.contains("unknown time zone"))
            let both = try await s.chime(["send", "--every", "every day", "--in", "1m", "x"])
            #expect(both.status == 2)
            let client = try await s.client()
            #expect(try await client.pending().isEmpty)
        }
    }

    @Test func aRepeatingItemSurvivesARestartWithItsNextOccurrence() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let id = try await client.schedule(
                ChimeCore.NotificationContent(summary: "First Friday"),
                rule: .phrase("every month on the first friday at 20:15"), timeZone: "Europe/Berlin")
            let before = try await client.pending()
            s.chimed!.kill(SIGKILL)
            _ = await s.chimed!.waitForExit()
            s.chimed = try await s.startChimed()
            let after = try await s.client().pending()
            #expect(after.map(\.id) == [id])
            #expect(after.first?.fireDate == before.first?.fireDate)
        }
    }

    /// More items due at one instant than chimed prepares ahead (64), after a restart, so that their
    /// definitions are only in the store: they are read off the daemon's queue, and each is delivered once.
    @Test func moreItemsDueAtOnceThanArePreparedAreEachDeliveredOnceAfterARestart() async throws {
        try await Session.run(settings: HostileAppTests.generous) { s in
            let client = try await s.client()
            let due = Date().addingTimeInterval(3)
            let summaries = (1...70).map { "item \($0)" }
            for summary in summaries {
                _ = try await client.schedule(ChimeCore.NotificationContent(summary: summary), at: due)
            }
            await s.chimed!.stop()
            s.chimed = try await s.startChimed()
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: summaries.count, timeout: .seconds(30))
            #expect(try await s.client().pending().isEmpty)
            #expect(calls.elements.compactMap(\.summary).sorted() == summaries.sorted())
            #expect(s.chimed!.stderr.contains("read the definitions of 70 items due on the store's queue"))
        }
    }

    @Test func acknowledgedItemsSurviveSIGKILL() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let far = Date().addingTimeInterval(7200)
            let kept = try await client.schedule(
                ChimeCore.NotificationContent(summary: "far", body: "still here"), at: far)
            let due = Date().addingTimeInterval(0.3)
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "due while down"), at: due)
            s.chimed!.kill(SIGKILL)
            #expect(await s.chimed!.waitForExit() == 128 + SIGKILL)
            // Restart only after the second item came due, so it must be delivered late, not lost.
            while Date() < due { try await Task.sleep(for: .milliseconds(50)) }
            s.chimed = try await s.startChimed()
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1)
            #expect(calls.elements.map(\.summary) == ["due while down"])
            let again = try await s.client()
            let pending = try await again.pending()
            #expect(pending.map(\.id) == [kept])
            #expect(pending.first?.summary == "far")
            // New ids continue after the restored ones.
            let next = try await again.schedule(ChimeCore.NotificationContent(summary: "after restart"), at: far)
            #expect(next > kept)
        }
    }

    @Test func reloadAppliesAGoodSettingsFileAndKeepsTheOldOneWhenBroken() async throws {
        try await Session.run { s in
            try "[log]\nlevel = \"warning\"\n".write(toFile: s.configFile, atomically: true, encoding: .utf8)
            await s.chimed!.stop()
            s.chimed = try await s.startChimed(logLevel: nil)
            let client = try await s.client()
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "quiet"), at: Date().addingTimeInterval(3600))
            #expect(!s.chimed!.stderr.contains("scheduled \"quiet\""))
            try "[log]\nlevel = \"info\"\n".write(toFile: s.configFile, atomically: true, encoding: .utf8)
            s.chimed!.kill(SIGHUP)
            try await s.chimed!.waitForStderr(containing: "reloaded the settings from \(s.configFile)")
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "heard"), at: Date().addingTimeInterval(3600))
            try await s.chimed!.waitForStderr(containing: "scheduled \"heard\"")
            try "[log]\nlevel = \"shouting\"\n".write(toFile: s.configFile, atomically: true, encoding: .utf8)
            s.chimed!.kill(SIGHUP)
            try await s.chimed!.waitForStderr(containing: "keeping the previous settings")
            #expect(s.chimed!.stderr.contains("\(s.configFile):2: [log] level must be one of"))
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "still info"), at: Date().addingTimeInterval(3600))
            try await s.chimed!.waitForStderr(containing: "scheduled \"still info\"")
        }
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalStopsChimedGracefullyWithNothingLost(signal: Int32) async throws {
        try await Session.run { s in
            let client = try await s.client()
            let id = try await client.schedule(
                ChimeCore.NotificationContent(summary: "kept"), at: Date().addingTimeInterval(3600))
            s.chimed!.kill(signal)
            #expect(await s.chimed!.waitForExit() == 0)
            #expect(s.chimed!.stderr.contains("chimed stopping"))
            s.chimed = try await s.startChimed()
            #expect(try await s.client().pending().map(\.id) == [id])
        }
    }

    @Test func aBrokenSettingsFileStopsChimedAtStart() async throws {
        let bus = try await TestBus.start()
        let config = bus.directory.appendingPathComponent("chime.toml").path
        try "[delivery]\nserver-timeout = \"soon\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let chimed = try ManagedProcess(
            Binaries.chimed, ["--config", config, "--state-dir", bus.directory.appendingPathComponent("s").path],
            environment: bus.environment, directory: bus.directory)
        #expect(await chimed.waitForExit() == 1)
        #expect(chimed.stderr.contains("\(config):2: [delivery] server-timeout must be"))
        await bus.stop()
    }

    /// A file that is not a database is moved aside, never deleted; chimed starts empty, logs where the
    /// file went, and says so in one notification.
    @Test func anUnreadableDatabaseIsMovedAsideAndChimedStartsEmpty() async throws {
        try await Session.run(startChimed: false) { s in
            try FileManager.default.createDirectory(atPath: s.stateDirectory, withIntermediateDirectories: true)
            let database = s.stateDirectory + "/chime.sqlite"
            let garbage = Data(repeating: 0x42, count: 8192)
            try garbage.write(to: URL(fileURLWithPath: database))
            s.chimed = try await s.startChimed()
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            let moved = try FileManager.default.contentsOfDirectory(atPath: s.stateDirectory)
                .filter { $0.hasPrefix("chime.sqlite.corrupt-") }
            #expect(moved.count == 1)
            let path = s.stateDirectory + "/" + (moved.first ?? "")
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
            #expect(calls.elements[0].summary == "Chime started with an empty schedule")
            #expect(calls.elements[0].body?.contains(path) == true)
            #expect(s.chimed!.stderr.contains("it was moved to \(path)"))
        }
    }

    @Test func aSecondChimedExitsWithAClearMessage() async throws {
        try await Session.run { s in
            let second = try ManagedProcess(
                Binaries.chimed, ["--state-dir", s.stateDirectory + "-second", "--config", s.configFile],
                environment: s.bus.environment,
                directory: s.bus.directory)
            let status = await second.waitForExit(timeout: .seconds(20))
            #expect(status == 1)
            #expect(second.stderr.contains("io.chime.Chime1 is already owned by"))
            #expect(second.stderr.contains("Another chimed is already running"))
            // The first one still serves.
            let client = try await s.client()
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "still here"))
            try await s.server!.notifyCalls.wait(forCount: 1)
        }
    }

    @Test(arguments: [
        (["send", "--in", "banana", "x"], "--in: cannot read \"banana\""),
        (["send", "--in", "10", "x"], "expected a unit (s, m, h, d or w) after 10"),
        (["send", "--at", "2001-01-01T00:00:00", "x"], "is in the past"),
        (["send", "--at", "25:00", "x"], "expected a time such as"),
        (["send", "--at", "09:00", "--in", "1m", "x"], "either --at or --in"),
        (["send", "-u", "urgent", "x"], "'urgent' is not an urgency"),
        (["send", ""], "the summary is empty"),
    ])
    func badInputFailsWithAClearMessage(arguments: [String], message: String) async throws {
        try await Session.run { s in
            let result = try await s.chime(arguments)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "stderr was: \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1)
            #expect(s.server!.notifyCalls.elements.isEmpty)
        }
    }

    @Test func noChimedOnTheBusIsAClearError() async throws {
        let bus = try await TestBus.start()
        let process = try ManagedProcess(
            Binaries.chime, ["send", "x"], environment: bus.environment, directory: bus.directory)
        let status = await process.waitForExit()
        #expect(status == 1)
        #expect(process.stderr.contains("chimed is not running on the session bus"))
        await bus.stop()
    }

    @Test func badCallsGetErrorsAndChimedKeepsServing() async throws {
        try await Session.run { s in
            func schedule(_ content: DBusValue, _ trigger: DBusValue) async throws(DBusError) {
                _ = try await s.observer.call(
                    destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                    member: "Schedule", [content, trigger])
            }
            let empty = DBusValue.dictionary(key: .string, value: .variant, [])
            let typo = DBusValue.dictionary(
                key: .string, value: .variant, [DBusDictEntry(.string("sumary"), .variant(.string("x")))])
            let e1 = await #expect(throws: DBusError.self) { try await schedule(typo, empty) }
            #expect(e1?.name == "io.chime.Chime1.Error.InvalidArgument")
            #expect(e1?.message.contains("unknown content key \"sumary\"") == true)
            let wrongType = DBusValue.dictionary(
                key: .string, value: .variant, [DBusDictEntry(.string("summary"), .variant(.int32(1)))])
            let e2 = await #expect(throws: DBusError.self) { try await schedule(wrongType, empty) }
            #expect(e2?.message.contains("must have type s") == true)
            let e3 = await #expect(throws: DBusError.self) { try await schedule(empty, empty) }
            #expect(e3?.message.contains("summary is empty") == true)
            let e4 = await #expect(throws: DBusError.self) {
                _ = try await s.observer.call(
                    destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                    member: "Schedule", [.string("x")])
            }
            #expect(e4?.is(.invalidArgs) == true)
            let version = try await s.observer.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "org.freedesktop.DBus.Properties",
                member: "Get", [.string("io.chime.Chime1"), .string("Version")])
            #expect(version == [.variant(.string(ChimeBus.version))])
            let client = try await s.client()
            _ = try await client.schedule(ChimeCore.NotificationContent(summary: "fine"))
            try await s.server!.notifyCalls.wait(forCount: 1)
        }
    }
}

/// One interface of an introspection document as a comparable value: every member with its
/// arguments (name, type, direction) and every property with its type and access, order ignored.
struct InterfaceShape: Equatable {
    var members: Set<String> = []

    init(xml: String, interface: String) throws {
        let delegate = Delegate(interface: interface)
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = delegate
        guard parser.parse() else { throw parser.parserError ?? CocoaError(.coderReadCorrupt) }
        members = delegate.members
    }

    final class Delegate: NSObject, XMLParserDelegate {
        let interface: String
        var inside = false
        var current: String?
        var arguments: [String] = []
        var members: Set<String> = []

        init(interface: String) { self.interface = interface }

        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            switch name {
            case "interface": inside = attributes["name"] == interface
            case "method",
                "signal" where inside:
                current = "\(name) \(attributes["name"] ?? "")"
                arguments = []
            case "arg" where inside:
                arguments.append(
                    "\(attributes["name"] ?? ""):\(attributes["type"] ?? ""):\(attributes["direction"] ?? "")")
            case "property" where inside:
                members.insert(
                    "property \(attributes["name"] ?? ""):\(attributes["type"] ?? ""):\(attributes["access"] ?? "")")
            default: break
            }
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if (name == "method" || name == "signal"), inside, let current {
                members.insert(current + "(" + arguments.joined(separator: ", ") + ")")
                self.current = nil
            }
            if name == "interface" { inside = false }
        }
    }
}
