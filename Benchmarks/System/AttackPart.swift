import ChimeKit
import ChimeProtocol
import DBusKit
import Foundation
import Synchronization
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// "Lateness while one app attacks" (issue "Isolation"): on a chimed of its own, with chime.toml's default
/// limits (flood control aside, so that every notification of the victim is shown on its own), one app
/// holds many entries, another runs the hogs below, and a third, the victim, has one-offs come due while
/// it calls `Status`. The figures: the victim's delivery lateness against the floor's (same run), its
/// `Status` latency, chimed's peak resident memory, and whether chimed stayed the same process.
///
/// The hogs, all of one app (the bench's executable, connections without a name):
/// - `ListPending` back to back from eight connections, while the holder has its entries;
/// - `Status` back to back;
/// - a rule whose occurrences are sparse (29 February on a Monday, 23:59:59) and `ListPending` of it up to
///   year 9999, 1,000 occurrences at a time;
/// - a `Schedule` of several MiB (an `ay` under a key chimed does not know), back to back;
/// - unsolicited signals of several MiB sent to chimed's connection alone, two a second;
/// - a burst of 200 critical one-offs due at once, early in the victim's window.
///
/// A hog's call that chimed refuses, or that times out, is what a defence may do: it is counted, never a
/// failure of the bench. Only the bench's own setup (the holder's load, the victim's calls) must succeed.
enum AttackPart {
    static let holderName = "org.chime.bench.Holder"
    static let victimName = "org.chime.bench.Victim"
    static let sparseRule = "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29;BYDAY=MO;BYHOUR=23;BYMINUTE=59;BYSECOND=59"

    struct Sizes {
        var heldEntries: Int
        var victimItems: Int
        var victimSpacing: Double
        var bigMessageBytes: Int
        var criticalBurst = 200
        /// How long after its due time a victim's notification is waited for; one not there by then counts
        /// as this late.
        var slack: Double

        init(quick: Bool) {
            heldEntries = quick ? 20_000 : 100_000
            victimItems = quick ? 100 : 400
            victimSpacing = quick ? 0.03 : 0.025
            bigMessageBytes = quick ? 4 << 20 : 16 << 20
            slack = quick ? 20 : 60
        }
    }

    /// What each hog got from chimed.
    struct HogCount: Codable {
        var answered = 0
        var refused = 0
        var timedOut = 0
        /// Still waiting for chimed when the window ended.
        var unanswered = 0
    }

    static func run(binaries: URL, quick: Bool) async throws -> AttackFigures {
        let sizes = Sizes(quick: quick)
        let bus = try await TestBus.start()
        var chimed: ChimedProcess?
        var server: RecordingServer?
        do {
            server = try await RecordingServer.start(on: bus)
            try FileManager.default.createDirectory(
                at: bus.directory.appendingPathComponent("groups"), withIntermediateDirectories: true)
            try """
            [flood]
            rate = 1000
            burst = 10000
            """.write(to: bus.directory.appendingPathComponent("chime.toml"), atomically: true, encoding: .utf8)
            chimed = try await ChimedProcess.start(
                binary: try ChimeBench.installedChimed(binaries, in: bus.directory), bus: bus,
                directory: bus.directory,
                logLevel: ProcessInfo.processInfo.environment["CHIME_BENCH_LOG"] ?? "warning")
            let chime = binaries.appendingPathComponent("chime").path
            for app in [holderName, victimName, "chime-bench"] {
                try await ChimeBench.allow(appID: app, chime: chime, bus: bus)
            }
            let figures = try await attack(bus: bus, server: server!, chimed: chimed!, sizes: sizes)
            await chimed!.stop()
            server!.close()
            await bus.stop()
            return figures
        } catch {
            if let chimed { say("chimed said:\n" + chimed.process.stderr.suffix(4000)) }
            await chimed?.stop()
            server?.close()
            await bus.stop()
            throw error
        }
    }

    /// The hogs to run: all, unless `CHIME_BENCH_HOGS` names some (comma-separated: critical, sparse,
    /// listing, status, sparse-listing, big-schedule, big-signal), to find which one costs the victim.
    static let hogs: Set<String> = {
        let all: Set = ["critical", "sparse", "listing", "status", "sparse-listing", "big-schedule", "big-signal"]
        guard let named = ProcessInfo.processInfo.environment["CHIME_BENCH_HOGS"] else { return all }
        return Set(named.split(separator: ",").map(String.init)).intersection(all)
    }()

    static func attack(bus: TestBus, server: RecordingServer, chimed: ChimedProcess, sizes: Sizes) async throws
        -> AttackFigures
    {
        let holder = try await ChimeClient.connect(.bus(bus.address), owning: holderName)
        defer { holder.close() }
        try await ChimeBench.load(
            holder, groups: max(1, sizes.heldEntries / 10_000), entriesPerGroup: min(sizes.heldEntries, 10_000),
            prefix: "held")
        let victim = try await bus.connect()
        defer { victim.close() }
        try await victim.requestName(victimName)
        var connections: [DBusConnection] = []
        for _ in 0..<12 { connections.append(try await bus.connect()) }
        let hogConnections = connections
        defer { for c in hogConnections { c.close() } }
        let chimedName = try await victim.getNameOwner(ChimeBus.name)
        let pid = chimed.pid

        // The victim's one-offs, and the attacker's critical burst early in their window.
        let start = Clock.realtime() + 3 + Double(sizes.victimItems) * 0.004
        for k in 0..<sizes.victimItems {
            _ = try await schedule(
                victim, ChimeCore.NotificationContent(summary: "victim \(k)"),
                at: start + Double(k) * sizes.victimSpacing)
        }
        let counts = HogCounts()
        let burstAt = start + 0.2
        for k in 0..<(hogs.contains("critical") ? sizes.criticalBurst : 0) {
            var content = ChimeCore.NotificationContent(summary: "burst \(k)")
            content.urgency = .critical
            await hog("critical burst", counts) { _ = try await schedule(hogConnections[0], content, at: burstAt) }
        }
        if hogs.contains("sparse") {
            await hog("sparse rule", counts) {
                _ = try await call(
                    hogConnections[1], "Schedule",
                    [
                        ContentWire.encode(ChimeCore.NotificationContent(summary: "sparse")),
                        TriggerWire(rule: .rrule(sparseRule, dtstart: nil)).encoded,
                    ])
            }
        }

        // The hogs run from a second before the victim's first item until its last is due.
        let end = start + Double(sizes.victimItems) * sizes.victimSpacing + 0.1
        let junk = DBusValue.bytes([UInt8](repeating: 0x2a, count: sizes.bigMessageBytes))
        let big = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                DBusDictEntry(.string("summary"), .variant(.string("big"))),
                DBusDictEntry(.string("junk"), .variant(junk)),
            ])
        try? await Task.sleep(for: .seconds(max(0, start - 1 - Clock.realtime())))
        let statusLatencies = Samples()
        let busLatencies = Samples()
        // The machine's floor while the hogs run: an absolute-deadline timer loop on a thread of its own,
        // every 10 ms over the window, as the floor before the part is measured.
        let floorDuring = Samples()
        let floorThread = Thread {
            var deadline = Clock.realtime() + 0.01
            while deadline < end {
                Clock.sleep(until: deadline)
                floorDuring.add(Clock.realtime() - deadline)
                deadline += 0.01
            }
        }
        floorThread.start()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<(hogs.contains("listing") ? 8 : 0) {
                group.addTask {
                    await loop(until: end) {
                        await hog("ListPending ×8", counts) {
                            _ = try await call(hogConnections[2 + index], "ListPending", [record([:])])
                        }
                    }
                }
            }
            if hogs.contains("status") {
                group.addTask {
                    await loop(until: end) {
                        await hog("Status", counts) { _ = try await call(hogConnections[10], "Status") }
                    }
                }
            }
            if hogs.contains("sparse-listing") {
                group.addTask {
                    let options = record([
                        "until": .int64(253_402_300_799_000_000), "next": .uint32(1000),
                    ])
                    await loop(until: end) {
                        await hog("ListPending of the sparse rule", counts) {
                            _ = try await call(hogConnections[1], "ListPending", [options])
                        }
                    }
                }
            }
            if hogs.contains("big-schedule") {
                group.addTask {
                    // Two a second, as the signals below.
                    await loop(until: end) {
                        await hog("big Schedule", counts) {
                            _ = try await call(hogConnections[11], "Schedule", [big, record([:])])
                        }
                        try? await Task.sleep(for: .milliseconds(500))
                    }
                }
            }
            if hogs.contains("big-signal") {
                group.addTask {
                    await loop(until: end) {
                        await hog("big signal", counts) {
                            try hogConnections[0].emitSignal(
                                path: "/org/chime/bench", interface: "org.chime.bench.Junk", member: "Junk", [junk],
                                destination: chimedName)
                        }
                        try? await Task.sleep(for: .milliseconds(500))
                    }
                }
            }
            group.addTask {
                // The victim's Status, ten a second.
                await loop(until: end) {
                    let t = Clock.monotonic()
                    do {
                        _ = try await call(victim, "Status")
                    } catch {
                        statusLatencies.fail()
                    }
                    // A call that failed, or was still unanswered at the end, took at least this long.
                    statusLatencies.add(Clock.monotonic() - t)
                    // The bus daemon's own answer, the same way: what any call costs while the hogs use the
                    // bus, whoever answers it.
                    let b = Clock.monotonic()
                    do {
                        _ = try await victim.call(
                            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                            interface: "org.freedesktop.DBus", member: "GetId", [], timeout: .seconds(25))
                    } catch {
                        busLatencies.fail()
                    }
                    busLatencies.add(Clock.monotonic() - b)
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            // Calls still waiting for chimed when the window ends are given up.
            try? await Task.sleep(for: .seconds(max(0, end - Clock.realtime())))
            group.cancelAll()
        }

        // How late each of the victim's notifications came; one still missing after the slack counts as that
        // late.
        let lateness = await server.latenessCensored(
            of: "victim", count: sizes.victimItems, start: start, spacing: sizes.victimSpacing, slack: sizes.slack)
        let peak = chimed.peakResidentBytes
        let owner = try? await victim.unixProcessID(of: ChimeBus.name)
        return AttackFigures(
            lateness: Percentiles(seconds: lateness.map(\.lateness)), missing: lateness.filter(\.missing).count,
            status: Percentiles(seconds: statusLatencies.values), statusFailures: statusLatencies.failures,
            bus: Percentiles(seconds: busLatencies.values), floorDuring: Percentiles(seconds: floorDuring.values),
            peakRSSMB: Double(peak) / 1_048_576,
            sameProcess: !chimed.process.hasExited && owner == UInt32(pid), heldEntries: sizes.heldEntries,
            hogs: counts.counts)
    }

    static func record(_ pairs: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: .string, value: .variant,
            pairs.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
    }

    static func call(_ connection: DBusConnection, _ member: String, _ arguments: [DBusValue] = []) async throws
        -> [DBusValue]
    {
        try await connection.call(
            destination: ChimeBus.name, path: ChimeBus.path, interface: ChimeBus.interface, member: member, arguments,
            timeout: .seconds(25))
    }

    static func schedule(_ connection: DBusConnection, _ content: ChimeCore.NotificationContent, at: Double)
        async throws -> [DBusValue]
    {
        try await call(
            connection, "Schedule",
            [ContentWire.encode(content), TriggerWire(at: Date(timeIntervalSince1970: at)).encoded])
    }

    /// Runs `body` until the realtime instant `end`, or until the task is cancelled.
    static func loop(until end: Double, _ body: () async -> Void) async {
        while Clock.realtime() < end, !Task.isCancelled { await body() }
    }

    /// One call of a hog, counted by what chimed did with it. A refused call is paced a little, so that a
    /// refusal costs the machine (and so the victim) no more than chimed's answer.
    static func hog(_ name: String, _ counts: HogCounts, _ body: () async throws -> Void) async {
        do {
            try await body()
            counts.count(name) { $0.answered += 1 }
        } catch let error as DBusError where error.is(.noReply) {
            counts.count(name) { $0.timedOut += 1 }
        } catch {
            guard !Task.isCancelled else {
                counts.count(name) { $0.unanswered += 1 }
                return
            }
            counts.count(name) { $0.refused += 1 }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// The hogs' counts, from their tasks.
    final class HogCounts: Sendable {
        private let state = Mutex<[String: HogCount]>([:])
        func count(_ name: String, _ change: (inout HogCount) -> Void) {
            state.withLock { change(&$0[name, default: HogCount()]) }
        }
        var counts: [String: HogCount] { state.withLock { $0 } }
    }

    /// Latencies of a call, and how many failed.
    final class Samples: Sendable {
        private let state = Mutex<(values: [Double], failures: Int)>(([], 0))
        func add(_ value: Double) { state.withLock { $0.values.append(value) } }
        func fail() { state.withLock { $0.failures += 1 } }
        var values: [Double] { state.withLock { $0.values } }
        var failures: Int { state.withLock { $0.failures } }
    }
}

struct AttackFigures: Codable {
    /// The victim's delivery lateness (a notification never shown counts as the slack).
    var lateness: Percentiles
    /// The victim's notifications not shown within the slack.
    var missing: Int
    /// The victim's `Status` latency (a call that failed, or was unanswered at the end of the window,
    /// counts with the time it had taken).
    var status: Percentiles
    /// The victim's `Status` calls that failed or were unanswered at the end of the window.
    var statusFailures: Int
    /// The latency of the bus daemon's own `GetId` for the victim, in the same loop as its `Status`: the
    /// part of any call's latency that is the bus's while the hogs use it.
    var bus: Percentiles
    /// The floor (an absolute-deadline timer loop) measured while the hogs ran: what any process on the
    /// machine got then.
    var floorDuring: Percentiles
    /// chimed's and its relay's peak resident memory (VmHWM).
    var peakRSSMB: Double
    /// chimed never exited, and still owns its name.
    var sameProcess: Bool
    var heldEntries: Int
    var hogs: [String: AttackPart.HogCount]

    var text: String {
        String(
            format:
                "victim %@; missing %d; Status p50 %.1f ms, p99 %.1f ms (%d failed or unanswered); the bus's GetId p50 %.1f ms, p99 %.1f ms; the floor meanwhile p50 %.2f ms, p99 %.2f ms; peak RSS %.0f MB; %@",
            lateness.text, missing, status.p50, status.p99, statusFailures, bus.p50, bus.p99, floorDuring.p50,
            floorDuring.p99, peakRSSMB,
            sameProcess ? "same chimed" : "chimed EXITED")
    }

    var hogsText: String {
        hogs.sorted { $0.key < $1.key }.map { name, count in
            "\(name): \(count.answered) answered, \(count.refused) refused, \(count.timedOut) timed out, "
                + "\(count.unanswered) unanswered at the end"
        }.joined(separator: "; ")
    }
}

extension RecordingServer {
    /// `lateness`, but a notification not there `slack` seconds after its due time counts as `slack` late
    /// (and as missing) instead of failing.
    func latenessCensored(of prefix: String, count: Int, start: Double, spacing: Double, slack: Double) async
        -> [(lateness: Double, missing: Bool)]
    {
        let deadline = Clock.monotonic() + (start - Clock.realtime()) + Double(count) * spacing + slack
        while (0..<count).contains(where: { arrival(of: "\(prefix) \($0)") == nil }), Clock.monotonic() < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return (0..<count).map { k in
            guard let arrival = arrival(of: "\(prefix) \(k)") else { return (slack, true) }
            return (arrival - (start + Double(k) * spacing), false)
        }
    }
}

extension ChimedProcess {
    /// The peak resident memory (VmHWM) of chimed and its relay.
    var peakResidentBytes: Int {
        pids.reduce(0) { total, pid in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }
            return total + (Int(line?.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
    }
}
