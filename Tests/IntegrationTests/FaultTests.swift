import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed when what it depends on fails: the notification server dies, the bus goes, the state
/// directory turns read-only or its disk fills up, another process locks the database. Nothing
/// acknowledged is lost, every refusal is `io.chime.Chime1.Error.Storage` with a message that says
/// what is wrong, and chimed keeps serving.
@Suite(.serialized) struct FaultTests {
    static let storage = "io.chime.Chime1.Error.Storage"

    /// No flood digests: every notification is sent on its own, so each can be recognised by its summary.
    static let settings = """
        [flood]
        rate = 1000
        burst = 10000
        """

    static func schedule(_ s: Session, _ summary: String, at: Date? = nil, body: String = "") async throws(DBusError)
        -> UInt64
    {
        let trigger = at.map { BusAPITests.record(["at": .int64(Int64($0.timeIntervalSince1970 * 1_000_000))]) }
        let reply = try await BusAPITests.call(
            s, "Schedule",
            [
                BusAPITests.record(["summary": .string(summary), "body": .string(body)]),
                trigger ?? BusAPITests.empty,
            ])
        guard case .uint64(let id)? = reply.first else { throw DBusError(.failed, "Schedule gave no id") }
        return id
    }

    static func pendingSummaries(_ s: Session) async throws -> [String] {
        let reply = try await BusAPITests.call(s, "ListPending", [BusAPITests.empty])
        guard case .array(_, let items)? = reply.first else { return [] }
        return items.compactMap {
            if case .string(let summary)? = BusAPITests.fields($0)["summary"] { summary } else { nil }
        }
    }

    // MARK: - The notification server

    @Test func notificationsDueWhileTheServerDiesAndComesBackAreAllDelivered() async throws {
        try await Session.run(settings: Self.settings) { s in
            // Forty notifications 25 ms apart, then forty more: a stream of deliveries to interrupt.
            var summaries: [String] = []
            var ids: [UInt64] = []
            func scheduleBatch(_ name: String) async throws {
                let start = Date().addingTimeInterval(0.3)
                for i in 0..<40 {
                    summaries.append("\(name)-\(i)")
                    ids.append(
                        try await Self.schedule(s, "\(name)-\(i)", at: start.addingTimeInterval(Double(i) * 0.025)))
                }
            }
            // The server hangs in the ninth Notify of the first stream and dies with the call in hand: the
            // bus answers chimed's call with NoReply, and that notification must still reach the next server.
            // (The other calls are answered as the template does, with a new id.)
            let first = s.server!
            _ = try await s.observer.call(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.freedesktop.DBus.Mock", member: "AddMethod",
                [
                    .string("org.freedesktop.Notifications"), .string("Notify"), .string("susssasa{sv}i"),
                    .string("u"),
                    .string(
                        """
                        if args[3].startswith('first-') and int(args[3][6:]) >= 8:
                            self.log('held ' + args[3])
                            import time
                            time.sleep(600)
                        self.ids = getattr(self, 'ids', 0) + 1
                        ret = args[1] if args[1] else self.ids
                        """),
                ])
            try await scheduleBatch("first")
            try await first.process.waitForStdout(containing: "held ")
            let heldLine = first.process.stdout.split(separator: "\n").first { $0.contains("held ") }
            let held = String(try #require(heldLine?.split(separator: " ").last))
            first.process.kill(SIGKILL)
            _ = await first.process.waitForExit()
            await first.stop()
            // chimed keeps what comes due meanwhile.
            try await s.chimed!.waitForStderr(containing: "keeping \"first-")
            let second = try await MockNotificationServer.start(on: s.bus, observer: s.observer)
            s.server = second
            try await second.notifyCalls.wait("the held notification reached the new server") {
                $0.contains { $0.summary == held }
            }

            // The second server is killed in the middle of the next stream and replaced at once.
            try await scheduleBatch("second")
            try await second.notifyCalls.wait("the second stream started") {
                $0.filter { $0.summary?.hasPrefix("second-") == true }.count >= 8
            }
            second.process.kill(SIGKILL)
            _ = await second.process.waitForExit()
            await second.stop()
            let third = try await MockNotificationServer.start(on: s.bus, observer: s.observer)
            s.server = third

            let all = Set(summaries)
            // The dead servers' recorders are complete; the third's is read inside its own wait.
            let earlier = [first, second].flatMap { $0.notifyCalls.elements.compactMap(\.summary) }
            try await third.notifyCalls.wait("every notification was shown") {
                all.isSubset(of: Set(earlier + $0.compactMap(\.summary)))
            }
            let shown = earlier + third.notifyCalls.elements.compactMap(\.summary)
            let acknowledged = Set(ids)
            try await s.delivered.wait("chimed reported every delivery") {
                Set($0.map(\.item)).isSuperset(of: acknowledged)
            }
            // A notification shows twice only when a server died after it showed it and before it answered.
            let counts = Dictionary(shown.map { ($0, 1) }, uniquingKeysWith: +)
            let twice = counts.filter { $0.value > 1 }
            #expect(twice.values.allSatisfy { $0 == 2 }, "\(twice)")
            #expect(twice.count <= 2, "\(twice)")
            #expect(counts[held] == 2, "shown by the server that died holding it, and by the next one")
        }
    }

    // MARK: - The bus

    /// chimed's notification relay, its child, of which there is one.
    static func relayPID(of chimed: ManagedProcess) throws -> Int32 {
        // Each thread lists the children it started.
        let threads = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(chimed.pid)/task")
        let pids = threads.flatMap { thread in
            ((try? String(contentsOfFile: "/proc/\(chimed.pid)/task/\(thread)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
        }
        guard pids.count == 1 else { throw TestFailure("chimed has \(pids.count) children, not its one relay") }
        return pids[0]
    }

    // MARK: - The notification relay

    @Test func aKilledRelayIsStartedAgainAndNothingIsLost() async throws {
        try await Session.run(settings: Self.settings) { s in
            let chimed = try #require(s.chimed)
            _ = try await Self.schedule(s, "before")
            try await s.server!.notifyCalls.wait("the first notification went through the relay") {
                $0.contains { $0.summary == "before" }
            }
            let relay = try Self.relayPID(of: chimed)
            #expect(kill(relay, SIGKILL) == 0)
            try await chimed.waitForStderr(containing: "the notification relay stopped")

            // Due while no relay runs, and after: all are delivered, once each, by the relay started again.
            var summaries: [String] = []
            for i in 0..<20 {
                summaries.append("after-\(i)")
                _ = try await Self.schedule(s, "after-\(i)", at: Date().addingTimeInterval(Double(i) * 0.1))
            }
            let wanted = Set(summaries)
            try await s.server!.notifyCalls.wait("every notification after the kill was delivered") {
                wanted.isSubset(of: Set($0.compactMap(\.summary)))
            }
            let shown = s.server!.notifyCalls.elements.compactMap(\.summary).filter { wanted.contains($0) }
            #expect(shown.count == wanted.count, "shown: \(shown.sorted())")
            let again = try Self.relayPID(of: chimed)
            #expect(again != relay)
            #expect(!chimed.hasExited)
        }
    }

    @Test func chimedExitsWhenTheBusGoesAndARestartOnANewBusHasItsState() async throws {
        let farAway = Date(timeIntervalSince1970: 4_102_444_800)
        var state = ""
        var kept: [UInt64] = []
        try await Session.run { s in
            kept.append(try await Self.schedule(s, "kept one", at: farAway))
            kept.append(try await Self.schedule(s, "kept two", at: farAway.addingTimeInterval(60)))
            // Due a moment after the bus goes: delivered by the chimed that comes back.
            kept.append(try await Self.schedule(s, "due while down", at: Date().addingTimeInterval(0.5)))
            state = s.stateDirectory
            await s.bus.kill()
            let chimed = s.chimed!
            let status = await chimed.waitForExit()
            #expect(status == 3, "chimed exits non-zero, so that systemd restarts it")
            #expect(
                chimed.stderr.contains("CRITICAL chimed: lost the connection to the bus (the bus daemon went away)"),
                "\(chimed.stderr)")
            // The old session's folder (and so the state) stays until this closure returns.
            try await Session.run(startChimed: false) { again in
                again.stateDirectory = state
                again.chimed = try await again.startChimed()
                try await again.server!.notifyCalls.wait("the notification due while chimed was down") {
                    $0.contains { $0.summary == "due while down" }
                }
                #expect(try await Self.pendingSummaries(again) == ["kept one", "kept two"])
                let listed = try await BusAPITests.call(again, "ListPending", [BusAPITests.empty])
                guard case .array(_, let items)? = listed.first else { throw TestFailure("no list") }
                #expect(items.map { BusAPITests.fields($0)["id"] } == kept.prefix(2).map { .uint64($0) })
            }
        }
    }

    // MARK: - The state directory

    /// Whether this test process can make a file immutable (`chattr +i`, root on ext4, xfs, btrfs …):
    /// the one way to stop root, and writes through files chimed already has open, from writing.
    static let canMakeFilesImmutable: Bool = {
        guard geteuid() == 0 else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("chime-test-chattr-\(getpid())")
        guard FileManager.default.createFile(atPath: probe.path, contents: Data("x".utf8)) else { return false }
        defer {
            _ = try? run("/usr/bin/chattr", ["-i", probe.path])
            try? FileManager.default.removeItem(at: probe)
        }
        return (try? run("/usr/bin/chattr", ["+i", probe.path])) == 0
    }()

    /// Runs a tool and returns its exit status.
    @discardableResult
    static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// SQLite's own check of the database file.
    static func integrity(of database: String) async throws -> String {
        let check = try ManagedProcess(
            "/usr/bin/python3",
            [
                "-c",
                "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute('PRAGMA integrity_check').fetchone()[0])",
                database,
            ])
        defer { check.removeFiles() }
        guard await check.waitForExit() == 0 else { throw TestFailure("integrity check failed: \(check.stderr)") }
        return check.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The state directory turns read-only under a running chimed (as when the file system is remounted
    /// read-only): chimed's files, already open for writing, are made immutable, which stops root too.
    @Test(.enabled(if: canMakeFilesImmutable, "needs root and a file system that has chattr +i"))
    func aReadOnlyStateDirectoryIsReportedAndChimedKeepsServing() async throws {
        try await Session.run(settings: Self.settings) { s in
            let database = s.stateDirectory + "/chime.sqlite"
            let kept = try await Self.schedule(s, "kept", at: Date(timeIntervalSince1970: 4_102_444_800))
            let frozen = [database, database + "-wal", s.stateDirectory]
            try #require(try Self.run("/usr/bin/chattr", ["+i"] + frozen) == 0)
            do {
                let error = await #expect(throws: DBusError.self) { _ = try await Self.schedule(s, "refused") }
                #expect(error?.name == Self.storage)
                #expect(error?.message.contains("chime.sqlite cannot be written") == true, "\(error?.message ?? "")")
                print("FaultTests: read-only: \(error?.message ?? "")")
                #expect(error?.message.contains("nothing was scheduled") == true, "\(error?.message ?? "")")
                // chimed keeps serving: it reads its schedule, and a change that fails changes nothing.
                #expect(try await Self.pendingSummaries(s) == ["kept"])
                let cancel = await #expect(throws: DBusError.self) {
                    _ = try await BusAPITests.call(s, "Cancel", [.uint64(kept)])
                }
                #expect(cancel?.name == Self.storage, "\(cancel?.message ?? "")")
                #expect(try await Self.pendingSummaries(s) == ["kept"])
                let status = try await BusAPITests.call(s, "Status")
                #expect(BusAPITests.fields(status.first)["pending"] == .uint32(1))
            } catch {
                try Self.run("/usr/bin/chattr", ["-i"] + frozen)
                throw error
            }
            try Self.run("/usr/bin/chattr", ["-i"] + frozen)

            // Writable again: chimed stores again, without a restart.
            _ = try await Self.schedule(s, "stored")
            try await s.server!.notifyCalls.wait("the new item was delivered") {
                $0.contains { $0.summary == "stored" }
            }
            #expect(try await Self.pendingSummaries(s) == ["kept"])
            #expect(try await Self.integrity(of: database) == "ok")
            #expect(!s.chimed!.hasExited)
        }
    }

    /// Whether this test process may mount a small tmpfs (root with CAP_SYS_ADMIN): a real full disk.
    /// `CHIME_TEST_NO_MOUNT=1` tries the other way.
    static let canMountTmpfs: Bool = {
        guard geteuid() == 0, ProcessInfo.processInfo.environment["CHIME_TEST_NO_MOUNT"] == nil else { return false }
        let point = FileManager.default.temporaryDirectory.appendingPathComponent("chime-test-mount-\(getpid())")
        guard (try? FileManager.default.createDirectory(at: point, withIntermediateDirectories: true)) != nil else {
            return false
        }
        defer { try? FileManager.default.removeItem(at: point) }
        guard (try? run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", point.path])) == 0 else {
            return false
        }
        _ = try? run("/usr/bin/umount", [point.path])
        return true
    }()

    /// The disk under the state directory fills up: a 2 MB tmpfs filled to the last byte where the test
    /// may mount one; elsewhere chimed's file size limit is set to 0 (RLIMIT_FSIZE, which binds root too),
    /// so that every write fails as on a full disk. chimed ignores SIGXFSZ, so the write fails instead.
    @Test func aFullDiskIsReportedAndChimedKeepsServing() async throws {
        try await Session.run(settings: Self.settings, startChimed: false) { s in
            let mounted = Self.canMountTmpfs
            if mounted {
                try FileManager.default.createDirectory(atPath: s.stateDirectory, withIntermediateDirectories: true)
                try #require(
                    try Self.run("/usr/bin/mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", s.stateDirectory]) == 0)
            }
            let filler = s.stateDirectory + "/filler"
            do {
                s.chimed = try await s.startChimed()
                let chimed = s.chimed!
                _ = try await Self.schedule(s, "kept", at: Date(timeIntervalSince1970: 4_102_444_800))
                if mounted {
                    Self.fill(filler)
                } else {
                    try Self.limitFileSize(of: chimed.pid, to: 0)
                }
                // A write may still fit in space SQLite already has; the disk is full when it needs more.
                var refusal: DBusError?
                var stored = 0
                let body = String(repeating: "x", count: 15_000)
                while refusal == nil, stored < 500 {
                    do {
                        _ = try await Self.schedule(
                            s, "big \(stored)", at: Date(timeIntervalSince1970: 4_102_444_800), body: body)
                        stored += 1
                    } catch let error as DBusError {
                        refusal = error
                    }
                }
                let error = try #require(refusal, "\(stored) items of 15 kB were stored on a full disk")
                print(
                    """
                    FaultTests: full disk (\(mounted ? "a full 2 MB tmpfs" : "RLIMIT_FSIZE 0")): \(stored) more \
                    items fitted, then: \(error.message)
                    """)
                #expect(error.name == Self.storage, "\(error)")
                #expect(error.message.contains(mounted ? "is full" : "the disk may be full"), "\(error.message)")
                #expect(error.message.contains("nothing was scheduled"), "\(error.message)")
                // Still serving.
                #expect(try await Self.pendingSummaries(s).count == 1 + stored)
                #expect(!chimed.hasExited)

                if mounted {
                    try FileManager.default.removeItem(atPath: filler)
                } else {
                    try Self.limitFileSize(of: chimed.pid, to: nil)
                }
                _ = try await Self.schedule(s, "stored again")
                try await s.server!.notifyCalls.wait("the new item was delivered") {
                    $0.contains { $0.summary == "stored again" }
                }
                await chimed.stop()
                s.chimed = nil
                #expect(try await Self.integrity(of: s.stateDirectory + "/chime.sqlite") == "ok")
                s.chimed = try await s.startChimed()
                #expect(try await Self.pendingSummaries(s).count == 1 + stored)
            } catch {
                await Self.unmount(s, mounted: mounted)
                throw error
            }
            await Self.unmount(s, mounted: mounted)
        }
    }

    /// Writes zeros to `path` until the disk is full.
    static func fill(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let block = [UInt8](repeating: 0, count: 4096)
        while block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    /// Sets (nil: lifts) the soft file size limit of process `pid`; the hard limit stays as it is.
    static func limitFileSize(of pid: Int32, to bytes: UInt64?) throws {
        let soft = bytes.map { "\($0)" } ?? "unlimited"
        guard try run("/usr/bin/prlimit", ["--pid", "\(pid)", "--fsize=\(soft):"]) == 0 else {
            throw TestFailure("prlimit --pid \(pid) --fsize=\(soft): failed")
        }
    }

    static func unmount(_ s: Session, mounted: Bool) async {
        guard mounted else { return }
        if let chimed = s.chimed { await chimed.stop() }
        s.chimed = nil
        _ = try? run("/usr/bin/umount", [s.stateDirectory])
    }

    // MARK: - The database locked

    @Test func aDatabaseLockedByAnotherProcessIsWaitedForThenReported() async throws {
        try await Session.run(settings: Self.settings) { s in
            let database = s.stateDirectory + "/chime.sqlite"
            _ = try await Self.schedule(s, "before")
            let holder = try ManagedProcess(
                "/usr/bin/python3",
                [
                    "-c",
                    """
                    import sqlite3, sys, time
                    db = sqlite3.connect(sys.argv[1], isolation_level=None)
                    db.execute("BEGIN EXCLUSIVE")
                    print("locked", flush=True)
                    time.sleep(600)
                    """,
                    database,
                ], directory: s.bus.directory)
            s.extraProcesses.append(holder)
            try await holder.waitForStdout(containing: "locked")
            // chimed waits for the lock a bounded time (5 s), then refuses; the call does not time out.
            let error = await #expect(throws: DBusError.self) { _ = try await Self.schedule(s, "while locked") }
            #expect(error?.name == Self.storage, "\(error?.message ?? "")")
            #expect(error?.message.contains("locked by another process") == true, "\(error?.message ?? "")")
            print("FaultTests: locked: \(error?.message ?? "")")
            #expect(try await Self.pendingSummaries(s).isEmpty)
            #expect(!s.chimed!.hasExited)

            await holder.stop()
            _ = try await Self.schedule(s, "after", at: Date(timeIntervalSince1970: 4_102_444_800))
            #expect(try await Self.pendingSummaries(s) == ["after"])
            #expect(try await Self.integrity(of: database) == "ok")
        }
    }
}
