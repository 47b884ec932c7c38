import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import ChimeKit

/// What an app sends chimed over the bus is checked before it is decoded (issue "Isolation",
/// docs/security.md): on a bus with a desktop session's limits, big calls, unsolicited signals and big
/// answers cost chimed their bytes on the wire at most, never their decoded size, and nobody waits for
/// them; callers that come and go leave no match rule behind.
@Suite(.serialized) struct BusIsolationTests {
    static let record = HostileAppTests.record
    static let empty = HostileAppTests.empty

    /// The most memory chimed may have held at any moment in these tests (its peak resident set, VmHWM):
    /// what it needs at rest, and one message on the wire at a time, never a decoded copy of one.
    static let peakResidentLimit = 400 << 20

    /// chimed's peak resident set so far, in bytes (`VmHWM` of /proc/PID/status).
    static func peakResident(_ s: Session) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(s.chimed!.pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }

    /// How many match rules chimed's connection has on the bus (the bus's own count, Debug.Stats).
    static func matchRules(_ s: Session) async throws -> UInt32 {
        let unique = try await s.observer.getNameOwner("io.chime.Chime1")
        let reply = try await s.observer.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats", [.string(unique)])
        return try #require(try WireFields(reply.first ?? empty, what: "stats").uint32("MatchRules"))
    }

    @Test func unsolicitedHugeSignalsAreDroppedUnreadAndNobodyWaits() async throws {
        try await Session.run(sessionLimits: true) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let attacker = try await s.appConnection("io.example.Noise", allowed: false)
            let victim = try await s.appConnection("io.example.Victim", allowed: false)
            let chimed = try await s.observer.getNameOwner("io.chime.Chime1")
            let payload = DBusValue.bytes(Array(repeating: 0x41, count: 40 << 20))
            // Ten 40 MiB signals addressed to chimed alone: some of an interface nobody there listens to, some
            // dressed as the notification server's ActionInvoked, which chimed hears only from the server.
            for index in 0..<10 {
                let (interface, member) =
                    index.isMultiple(of: 2)
                    ? ("io.example.Noise", "Shout") : ("org.freedesktop.Notifications", "ActionInvoked")
                try attacker.emitSignal(
                    path: "/org/freedesktop/Notifications", interface: interface, member: member, [payload],
                    destination: chimed)
            }
            // Another app is answered meanwhile.
            for _ in 0..<20 { _ = try await HostileAppTests.call(victim, "Status", timeout: .seconds(25)) }
            await attacker.flush()
            _ = try await HostileAppTests.call(victim, "Status")
            #expect(try Self.peakResident(s) < Self.peakResidentLimit, "chimed held decoded copies of the signals")
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func callsOverTheirMethodsLimitAreRefusedUnread() async throws {
        try await Session.run(settings: HostileAppTests.generous, sessionLimits: true) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Big")
            // A Schedule of 60 MiB: user info of one long byte array.
            let content = Self.record([
                "summary": .string("big"),
                "user-info": Self.record(["blob": .bytes(Array(repeating: 1, count: 60 << 20))]),
            ])
            let error = await HostileAppTests.error("a 60 MiB Schedule") {
                try await HostileAppTests.call(app, "Schedule", [content, Self.empty], timeout: .seconds(60))
            }
            HostileAppTests.expect(error, HostileAppTests.busLimitsExceeded, mentioning: "2097152", "60 MiB Schedule")
            // A Reschedule of 40 MiB: many small entries, which would decode to many times that.
            let entry = Self.record(["id": .string("x"), "at": .int64(HostileAppTests.farFuture)])
            let entries = DBusValue.array(
                element: BusAPITests.recordType, Array(repeating: entry, count: (40 << 20) / 40))
            let reschedule = await HostileAppTests.error("a 40 MiB Reschedule") {
                try await HostileAppTests.call(
                    app, "Reschedule", [.string("huge"), Self.empty, entries, Self.empty], timeout: .seconds(60))
            }
            HostileAppTests.expect(
                reschedule, HostileAppTests.busLimitsExceeded, mentioning: "33554432", "40 MiB Reschedule")
            // Within its limit, the same app schedules.
            _ = try await HostileAppTests.schedule(app, Self.record(["summary": .string("small")]))
            #expect(try Self.peakResident(s) < Self.peakResidentLimit, "chimed decoded a refused call")
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aContentAnswerOverItsLimitIsNotReadAndTheFallbackShows() async throws {
        try await Session.run(settings: HostileAppTests.generous, sessionLimits: true) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            // The app answers MakeContent with 20 MiB.
            let flood = Self.record([
                "summary": .string("From the app"),
                "user-info": Self.record(["blob": .bytes(Array(repeating: 7, count: 20 << 20))]),
            ])
            let asked = Recorder<Bool>()
            let app = try await s.contentProvider("org.example.Bloat") { _ in
                asked.append(true)
                return flood
            }
            defer { app.close() }
            let at = Date().addingTimeInterval(1.5)
            try await ChimeClient(connection: app).reschedule(
                TimelineGroup(
                    id: "bloat",
                    entries: (0..<3).map { index in
                        TimelineEntry(
                            id: "e\(index)", trigger: .at(at.addingTimeInterval(Double(index) * 0.2)),
                            content: .callback(
                                CallbackSource(
                                    busName: "org.example.Bloat", timeout: 10,
                                    fallback: ChimeCore.NotificationContent(summary: "Fallback \(index)"))))
                    }))
            let calls = s.server!.notifyCalls
            try await calls.wait("the three fell back", timeout: .seconds(30)) {
                Set($0.compactMap(\.summary)).isSuperset(of: ["Fallback 0", "Fallback 1", "Fallback 2"])
            }
            #expect(!asked.elements.isEmpty, "the app was never asked")
            // chimed says why it showed the fallback: the answer's size, measured before reading it.
            try await Await.condition(
                "chimed logged the refused answer", timeout: .seconds(10), watching: s.chimed!.stderrURL
            ) {
                s.chimed!.stderr.contains("more than the \(ChimeBus.maximumContentReplyBytes) taken from it")
            }
            #expect(try Self.peakResident(s) < Self.peakResidentLimit, "chimed decoded an answer over its limit")
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    /// The daemon's queue held (by a debug build's test hook, as a long job on it would hold it): `Status`,
    /// `ListPending` and the properties are answered meanwhile, from what the daemon published and from the
    /// store, and only what changes the daemon's state waits for it.
    @Test func statusAndListingsAreAnsweredWhileTheDaemonIsBusy() async throws {
        try await Session.run(startChimed: false) { s in
            let fifo = s.bus.directory.appendingPathComponent("hold").path
            #expect(mkfifo(fifo, 0o600) == 0)
            s.chimedEnvironment["CHIMED_TEST_HOLD_FIFO"] = fifo
            s.chimed = try await s.startChimed()
            let app = try await s.appConnection("io.example.Patient")
            let reader = try await s.appConnection("io.example.Reader")
            let later = Self.record(["at": .int64(4_102_444_800_000_000)])
            _ = try await HostileAppTests.schedule(reader, Self.record(["summary": .string("first")]), later)
            _ = try await HostileAppTests.call(app, "Status")

            // SIGUSR1 makes the daemon's queue read the FIFO to its end: it is held from when this test can
            // open the FIFO for writing (chimed has opened it for reading) until the test closes it.
            #expect(kill(s.chimed!.pid, SIGUSR1) == 0)
            var writer: Int32 = -1
            try await Await.polling("chimed opened the FIFO", interval: .milliseconds(10)) {
                writer = open(fifo, O_WRONLY | O_NONBLOCK)
                return writer >= 0
            }
            let scheduled = Mutex(false)
            let scheduling = Task {
                _ = try await HostileAppTests.schedule(app, Self.record(["summary": .string("second")]), later)
                scheduled.withLock { $0 = true }
            }
            let status = try WireFields(
                try await HostileAppTests.call(reader, "Status", timeout: .seconds(10)).first ?? Self.empty,
                what: "status")
            #expect(try status.uint32("pending") == 1)
            let listed = try await HostileAppTests.call(reader, "ListPending", [Self.empty], timeout: .seconds(10))
            guard case .array(_, let items)? = listed.first else { throw TestFailure("ListPending gave no array") }
            #expect(items.count == 1)
            // A connection's first call too: who calls is found out without the daemon.
            let newcomer = try await s.appConnection("io.example.Newcomer", allowed: false)
            let first = try WireFields(
                try await HostileAppTests.call(newcomer, "Status", timeout: .seconds(10)).first ?? Self.empty,
                what: "status")
            #expect(try first.uint32("pending") == 1)
            // The server's properties, from what the daemon published.
            let present = try await reader.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "org.freedesktop.DBus.Properties",
                member: "Get", [.string("io.chime.Chime1"), .string("NotificationServerPresent")], timeout: .seconds(10)
            )
            #expect(present.first == .variant(.boolean(true)))
            // The Schedule sent meanwhile waits for the daemon.
            #expect(!scheduled.withLock { $0 }, "the daemon's queue was not held")
            close(writer)
            try await scheduling.value
            let after = try WireFields(
                try await HostileAppTests.call(reader, "Status").first ?? Self.empty, what: "status")
            #expect(try after.uint32("pending") == 2)
        }
    }

    @Test func callersThatComeAndGoLeaveNoMatchRuleBehind() async throws {
        try await Session.run(settings: HostileAppTests.generous) { s in
            _ = try await HostileAppTests.call(s.observer, "Status")
            let before = try await Self.matchRules(s)
            // Forty callers that stay connected, and two hundred that hang up as soon as they have called.
            var staying: [DBusConnection] = []
            for _ in 0..<40 {
                let connection = try await s.bus.connect()
                staying.append(connection)
                _ = try await HostileAppTests.call(connection, "Status")
            }
            #expect(try await Self.matchRules(s) == before, "a match rule per caller")
            for _ in 0..<200 {
                let connection = try await s.bus.connect()
                connection.call(
                    DBusMessage.methodCall(
                        destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                        member: "Status")
                ) { _ in }
                await connection.flush()
                connection.close()
            }
            for connection in staying { connection.close() }
            // Once chimed has answered everything that reached it, its rules are those it started with.
            _ = try await HostileAppTests.call(s.observer, "Status")
            #expect(try await Self.matchRules(s) == before)
        }
    }
}
