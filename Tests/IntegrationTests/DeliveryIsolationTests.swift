import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The delivery path at its edges (issue "Isolation"): chimed's notification relay reaped when chimed
/// stops; a stalled server that gets each Notify once, and a late answer whose popup is closed; a popup id
/// of an earlier server never used to replace; a server that does not say what it can gets escaped bodies.
@Suite(.serialized) struct DeliveryIsolationTests {
    /// A server timeout of one second (a Notify is waited for six), and no rate limit or flood digest.
    static let settings = """
        [delivery]
        server-timeout = 1

        [limits]
        calls-per-second = 100000
        call-burst = 100000

        [flood]
        rate = 1000
        burst = 10000
        """

    /// The processes `pid` started (from each of its threads' list of children).
    static func children(of pid: Int32) -> [Int32] {
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return threads.flatMap { thread in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
    }

    /// Schedules `summary` (with `body`, markup when `markup`) as this test process, due now.
    static func scheduleNow(_ s: Session, _ summary: String, body: String = "", markup: Bool = false) async throws
        -> UInt64
    {
        var content: [String: DBusValue] = ["summary": .string(summary), "body": .string(body)]
        if markup { content["markup"] = .boolean(true) }
        let record = DBusValue.dictionary(
            key: .string, value: .variant,
            content.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
        let reply = try await BusAPITests.call(s, "Schedule", [record, BusAPITests.empty])
        guard case .uint64(let id)? = reply.first else { throw TestFailure("Schedule gave no id") }
        return id
    }

    /// The Notify calls the mock server handled for `summary`.
    static func calls(_ s: Session, _ summary: String) -> [MockNotificationServer.Call] {
        s.server!.notifyCalls.elements.filter { $0.summary == summary }
    }

    /// Waits until the mock server has handled every call sent to it before this: a notification sent
    /// after them is delivered (chimed sends one at a time, and the server answers in order).
    static func settle(_ s: Session) async throws {
        let last = try await scheduleNow(s, "settled \(UUID().uuidString.prefix(8))")
        try await s.delivered.wait("the last notification was delivered", timeout: .seconds(30)) {
            $0.contains { $0.item == last }
        }
    }

    @Test func chimedReapsItsNotificationRelayWhenItStops() async throws {
        try await Session.run { s in
            let chimed = s.chimed!
            let relays = Self.children(of: chimed.pid)
            #expect(relays.count == 1, "chimed's children: \(relays)")
            let relay = try #require(relays.first)
            #expect(await chimed.stop() == 0, "\(chimed.stderr.suffix(1000))")
            // chimed waited for its relay and reaped it before it exited: nothing of the relay is left, not
            // even a defunct process for the system's init to collect later.
            let state = (try? String(contentsOfFile: "/proc/\(relay)/stat", encoding: .utf8)) ?? "gone"
            #expect(!FileManager.default.fileExists(atPath: "/proc/\(relay)"), "the relay is left: \(state)")
        }
    }

    @Test func chimedsRelayIsTheSmallRelayProgramWithoutFoundation() async throws {
        try await Session.run { s in
            let relay = try #require(Self.children(of: s.chimed!.pid).first, "chimed has no relay")
            let program = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(relay)/exe")
            #expect(program == Binaries.directory.appendingPathComponent("chime-relay").path)
            // The libraries it has mapped: libdbus and SQLite, not Foundation (and so not ICU) nor chimed's code.
            // Read to its end: /proc says the file is empty, so a read by its size would get nothing.
            let file = try #require(FileHandle(forReadingAtPath: "/proc/\(relay)/maps"))
            let maps = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            try file.close()
            #expect(maps.contains("libdbus-1") && maps.contains("libsqlite3"))
            for library in ["libFoundation", "libicu", "/chimed"] {
                #expect(!maps.contains(library), "the relay maps \(library)")
            }
        }
    }

    @Test func theRelayProgramSaysWhatIsWrongWithItsArguments() async throws {
        let relay = Binaries.directory.appendingPathComponent("chime-relay").path
        let cases: [([String], String)] = [
            ([], "--socket is missing"),
            (["--socket", "three", "--receipts", "/tmp/r"], "--socket takes a descriptor number, not 'three'"),
            (["--socket", "3"], "--receipts is missing"),
            (["--socket", "3", "--receipts", "relative"], "--receipts takes an absolute path, not 'relative'"),
            (["--socket", "3", "--receipts", "/tmp/r", "--speed", "9"], "unknown option '--speed'"),
            (["--socket"], "--socket needs a value"),
        ]
        for (arguments, problem) in cases {
            let process = try ManagedProcess(relay, arguments)
            #expect(await process.waitForExit() == 2, "\(arguments)")
            #expect(process.stderr.hasPrefix("chime-relay: \(problem)\n"), "\(arguments): \(process.stderr)")
            #expect(process.stderr.contains("chimed starts it itself"))
        }
    }

    @Test func aStalledServerGetsEachNotifyOnce() async throws {
        try await Session.run(settings: Self.settings) { s in
            let server = s.server!.process
            server.kill(SIGSTOP)
            let id = try await Self.scheduleNow(s, "while stalled")
            // Stalled four server timeouts: a chimed that sent the notification again at each timeout would
            // have queued it more times by then.
            try await Task.sleep(for: .seconds(4))
            server.kill(SIGCONT)
            try await s.delivered.wait("the notification was delivered", timeout: .seconds(30)) {
                $0.contains { $0.item == id }
            }
            try await Self.settle(s)
            #expect(Self.calls(s, "while stalled").count == 1)
            #expect(s.server!.closeCalls.elements.isEmpty)
            let delivered = try await CrashTests.history(s).filter { $0.item == id && $0.event == "delivered" }
            #expect(delivered.count == 1)
        }
    }

    @Test func aLateAnswerOfAServerStalledLongerThanChimedWaitsClosesItsPopup() async throws {
        try await Session.run(settings: Self.settings) { s in
            let server = s.server!.process
            server.kill(SIGSTOP)
            let id = try await Self.scheduleNow(s, "stalled long")
            // Sent again after six server timeouts and a second: the stalled server then holds it twice.
            try await s.chimed!.waitForStderr(containing: "did not answer", timeout: .seconds(30))
            try await Task.sleep(for: .seconds(1.5))
            server.kill(SIGCONT)
            try await s.delivered.wait("the notification was delivered", timeout: .seconds(30)) {
                $0.contains { $0.item == id }
            }
            try await Self.settle(s)
            let calls = Self.calls(s, "stalled long")
            #expect(calls.count == 2)
            // The first call's answer came after chimed gave up on it: that popup is closed, the one chimed
            // recorded stays.
            let shown = try #require(s.delivered.elements.first { $0.item == id }?.notification)
            try await s.server!.closeCalls.wait("the extra popup was closed") { !$0.isEmpty }
            #expect(s.server!.closeCalls.elements.count == 1)
            #expect(!s.server!.closeCalls.elements.contains(shown))
        }
    }

    @Test func aPopupIDFromBeforeAServerRestartIsNeverReplaced() async throws {
        try await Session.run(settings: Self.settings) { s in
            let item = try await Self.scheduleNow(s, "shown before the restart")
            try await s.delivered.wait("delivered") { $0.contains { $0.item == item } }
            let first = try #require(s.delivered.elements.first { $0.item == item }?.notification)
            // The app's next notification replaces its popup, which is still open.
            let at = Int64(Date().addingTimeInterval(3).timeIntervalSince1970 * 1_000_000)
            let reply = try await BusAPITests.call(
                s, "Schedule",
                [
                    BusAPITests.record(["summary": .string("replacing")]),
                    BusAPITests.record(["at": .int64(at), "replaces-id": .uint32(first)]),
                ])
            guard case .uint64(let replacing)? = reply.first else { throw TestFailure("Schedule gave no id") }
            // A new server: it gives its ids from 1 again, so the old popup's id names another popup there.
            await s.server!.stop()
            s.server = try await MockNotificationServer.start(on: s.bus, observer: s.observer)
            _ = try await Self.scheduleNow(s, "another app's popup")
            try await s.delivered.wait("the replacing notification was delivered") {
                $0.contains { $0.item == replacing }
            }
            let calls = Self.calls(s, "replacing")
            #expect(calls.count == 1)
            #expect(calls.first?.replacesID == 0, "it replaced popup \(calls.first?.replacesID ?? 0) of the new server")
        }
    }

    @Test func aServerThatDoesNotSayWhatItCanGetsBodiesEscapedNeverDecoded() async throws {
        try await Session.run(settings: Self.settings, startChimed: false) { s in
            // GetCapabilities answers after the server timeout (one second).
            _ = try await s.observer.call(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
                [
                    .string("org.freedesktop.Notifications"), .string("GetCapabilities"), .string(""), .string("as"),
                    .string("import time; time.sleep(3); ret = ['actions', 'body', 'body-markup']"),
                ])
            s.chimed = try await s.startChimed()
            let entity = try await Self.scheduleNow(
                s, "entities", body: "&lt;a href=\"https://example.org\"&gt;x&lt;/a&gt;", markup: true)
            let text = try await Self.scheduleNow(s, "text", body: "<a href=\"https://example.org\">y</a>")
            try await s.delivered.wait("delivered") { rows in
                [entity, text].allSatisfy { i in rows.contains { $0.item == i } }
            }
            for summary in ["entities", "text"] {
                let body = try #require(Self.calls(s, summary).first?.body)
                #expect(!body.contains("<"), "\(summary): a markup server would read a tag in \(body)")
                #expect(body.contains("&lt;a href="), "\(summary): \(body)")
            }
        }
    }
}
