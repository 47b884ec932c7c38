import ArgumentParser
import ChimeKit
import ChimeProtocol
import DBusKit
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-system figures for chimed on a private bus: delivery lateness against the machine's floor and a
/// systemd timer, idle cost, scale, API throughput against Peer.Ping, and the time engine against
/// python-dateutil and systemd-analyze. Prints a table and a JSON summary.
@main
struct ChimeBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chime-bench",
        abstract: "Measures chimed on a private bus (run through scripts/bench).")

    @Flag(help: "Smaller sizes and shorter windows (under two minutes), as CI runs it.")
    var quick = false

    @Option(help: ArgumentHelp("Also write the JSON summary to this file.", valueName: "FILE"))
    var json: String?

    @Flag(help: "Leave out the systemd timer peer (it needs root and systemd).")
    var noSystemd = false

    @Option(help: ArgumentHelp("Compare the ratios with this baseline; exit 1 on a regression.", valueName: "FILE"))
    var baseline: String?

    @Option(
        help: ArgumentHelp(
            "Measure only this part (repeat for several); the floor is always measured.", valueName: "PART"))
    var only: [Part] = []

    enum Part: String, CaseIterable, ExpressibleByArgument {
        case idle, lateness, throughput, systemd, attack, scale, engine
    }

    func measures(_ part: Part) -> Bool { only.isEmpty || only.contains(part) }

    func run() async throws {
        // chimed and chime are built beside this executable.
        let binaries = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        var report = Report(mode: quick ? "quick" : "full")
        report.machine = Machine.describe()
        let sizes = Sizes(quick: quick)
        say("chime-bench (\(report.mode)): \(report.machine)\n")

        // 1. The floor: an absolute-deadline timer loop, nothing else.
        report.floor = Percentiles(seconds: floorLateness(count: sizes.dueItems, spacing: sizes.spacing))
        say(row("floor: clock_nanosleep(TIMER_ABSTIME)", report.floor!.text))

        if [.idle, .lateness, .throughput, .systemd].contains(where: measures) {
            try await measureOnABus(binaries: binaries, sizes: sizes, into: &report)
        }

        // 5b. Lateness while one app attacks, on a chimed of its own.
        if measures(.attack) {
            let attack = try await AttackPart.run(binaries: binaries, quick: quick)
            report.attack = attack
            say(row("attack: \(attack.heldEntries) entries held; victim", attack.text))
            say(row("attack: the hogs", attack.hogsText))
            if let floor = report.floor {
                let met =
                    attack.lateness.p99 <= 10 * floor.p99 && attack.lateness.p99 <= 5 && attack.status.p99 <= 50
                    && attack.peakRSSMB <= 300 && attack.sameProcess
                say(
                    row(
                        "attack: targets",
                        String(
                            format: "%@ (victim p99 %.1f× the floor's, at most 10× and 5 ms; Status p99 ≤ 50 ms; "
                                + "RSS ≤ 300 MB; chimed never exits)", met ? "met" : "NOT MET",
                            attack.lateness.p99 / floor.p99)))
            }
        }

        // 6. Scale, on a chimed of its own.
        if measures(.scale) {
            report.scale = try await Self.scale(binaries: binaries, groups: sizes.scaleGroups, entriesPerGroup: 1000)
            say(row("scale: \(report.scale!.entries) entries in \(sizes.scaleGroups) groups", report.scale!.text))
        }

        // 7. The time engine.
        if measures(.engine) {
            report.timeEngine = try Self.timeEngine(binaries: binaries, iterations: sizes.calendarIterations)
            say(row("time engine", report.timeEngine!.text))
        }

        var regressions: [String] = []
        if let baseline {
            regressions = try Self.compare(report, baseline: baseline)
            if !regressions.isEmpty && regressions.allSatisfy(Self.confirmedByASecondRun.contains) {
                // A delivery's p99 is the second-latest of 200; another process waking on these two cores
                // at the wrong moment moves it. Noise does not repeat; a regression (deliveries waiting on a
                // lock or a queue) does: the floor and the lateness are measured once more, and the ratio
                // fails only if it fails again.
                say("\n\(regressions.joined(separator: ", ")) beyond the baseline: the floor and lateness once more")
                var again = self
                again.only = [.lateness]
                var second = Report(mode: report.mode)
                second.floor = Percentiles(seconds: floorLateness(count: sizes.dueItems, spacing: sizes.spacing))
                say(row("floor: clock_nanosleep(TIMER_ABSTIME)", second.floor!.text))
                try await again.measureOnABus(binaries: binaries, sizes: sizes, into: &second)
                report.secondRun = SecondRun(
                    floor: second.floor, lateness: second.lateness, latenessUnderLoad: second.latenessUnderLoad)
                regressions = try Self.compare(second, baseline: baseline, only: Set(regressions))
            }
        }
        let data = try JSONEncoder.sorted.encode(report)
        say("\n" + String(decoding: data, as: UTF8.self))
        if let json { try data.write(to: URL(fileURLWithPath: json)) }
        if !regressions.isEmpty {
            throw BenchFailure("regressed beyond the baseline: \(regressions.joined(separator: ", "))")
        }
    }

    /// The ratios that fail only when a second measurement fails too: a few milliseconds of another
    /// process's work at the wrong instant decide them.
    static let confirmedByASecondRun: Set<String> = [
        "lateness-p99-over-floor-p99", "lateness-under-load-p99-over-floor-p99",
    ]

    /// Idle cost, lateness, throughput and the systemd peer: one chimed with the active entries loaded.
    func measureOnABus(binaries: URL, sizes: Sizes, into report: inout Report) async throws {
        let bus = try await TestBus.start()
        var chimed: ChimedProcess?
        var server: RecordingServer?
        do {
            server = try await RecordingServer.start(on: bus)
            try Self.writeSettings(in: bus.directory)
            chimed = try await ChimedProcess.start(
                binary: try Self.installedChimed(binaries, in: bus.directory), bus: bus, directory: bus.directory,
                logLevel: ProcessInfo.processInfo.environment["CHIME_BENCH_LOG"] ?? "warning")
            try await Self.allow(appID: "chime-bench", chime: binaries.appendingPathComponent("chime").path, bus: bus)
            let client = try await ChimeClient.connect(.bus(bus.address))
            defer { client.close() }
            if measures(.idle) {
                // A fresh chimed and its relay, with nothing scheduled yet: what every session pays all day.
                report.freshRSSMB = Double(chimed!.residentBytes) / 1_048_576
                say(row("fresh chimed and its relay, resident", String(format: "%.1f MB", report.freshRSSMB!)))
            }

            // 2. Load the active entries (far ahead, spread over years), then measure idle cost.
            let loadStart = Clock.monotonic()
            try await Self.load(client, groups: sizes.activeEntries / 10_000, entriesPerGroup: 10_000, prefix: "active")
            report.loadSeconds = Clock.monotonic() - loadStart
            say(
                row(
                    "load \(sizes.activeEntries) entries (Reschedule, 10k per group)",
                    String(format: "%.2f s", report.loadSeconds!)))
            if measures(.idle) {
                // Idle means after the load's last work: its writes, and libdispatch's threads retiring
                // (5 s after their last job). Wait, at most 10 s, for a second without a context switch.
                var settled = chimed!.activity
                for _ in 0..<10 {
                    try await Task.sleep(for: .seconds(1))
                    let now = chimed!.activity
                    if now.since(settled).contextSwitches == 0 { break }
                    settled = now
                }
                let before = chimed!.activity
                try await Task.sleep(for: .seconds(sizes.idleSeconds))
                let idle = chimed!.activity.since(before)
                report.idle = Idle(
                    seconds: sizes.idleSeconds, contextSwitches: idle.contextSwitches,
                    cpuMilliseconds: idle.cpuMilliseconds)
                say(row("idle \(sizes.idleSeconds) s with \(sizes.activeEntries) entries", report.idle!.text))
            }

            // 3. Lateness: items due at known instants, received by the recording server.
            if measures(.lateness) {
                report.lateness = Percentiles(
                    seconds: try await Self.lateness(
                        client, server: server!, count: sizes.dueItems, spacing: sizes.spacing))
                say(row("chimed: Schedule → Notify received", report.lateness!.text))
            }

            // 3b. Lateness while eight clients call Schedule as fast as they can: the timer and the
            // deliveries must not wait behind the calls.
            if measures(.lateness) {
                report.latenessUnderLoad = Percentiles(
                    seconds: try await Self.latenessUnderLoad(
                        client, bus: bus, server: server!, count: sizes.dueItems, spacing: sizes.spacing))
                say(row("chimed: the same, 8 clients calling Schedule", report.latenessUnderLoad!.text))
            }

            // 4. Throughput: Schedule calls (durable before the reply) against the bus's own Ping.
            if measures(.throughput) { try await measureThroughput(bus: bus, sizes: sizes, into: &report) }

            // 5. The systemd timer peer.
            if !noSystemd && !quick && measures(.systemd) {
                if let peer = try await SystemdPeer.lateness(
                    bus: bus, server: server!, count: sizes.peerItems, spacing: sizes.spacing)
                {
                    report.systemdTimer = Percentiles(seconds: peer)
                    say(row("systemd timer (AccuracySec=1us) → gdbus Notify", report.systemdTimer!.text))
                } else {
                    say(row("systemd timer", "skipped: needs root and systemd"))
                }
            }
        } catch {
            if let chimed { say("chimed said:\n" + chimed.process.stderr.suffix(4000)) }
            await chimed?.stop()
            server?.close()
            await bus.stop()
            throw error
        }
        await chimed?.stop()
        server?.close()
        await bus.stop()
    }

    func measureThroughput(bus: TestBus, sizes: Sizes, into report: inout Report) async throws {
        let throughput = try await Self.throughput(bus: bus, seconds: sizes.throughputSeconds)
        report.throughput = throughput
        say(row("Peer.Ping to the bus, 1 client", String(format: "%.0f calls/s", throughput.ping)))
        for (clients, rate) in [(1, throughput.schedule1), (8, throughput.schedule8)] {
            say(
                row(
                    "Schedule, \(clients) client\(clients == 1 ? "" : "s")",
                    String(format: "%.0f calls/s (%.0f%% of Ping)", rate, 100 * rate / throughput.ping)))
        }
    }

    func row(_ label: String, _ value: String) -> String {
        label.padding(toLength: 52, withPad: " ", startingAt: 0) + value
    }

    /// Lateness of an absolute-deadline timer: the best this machine does.
    func floorLateness(count: Int, spacing: Double) -> [Double] {
        let start = Clock.realtime() + 0.05
        return (0..<count).map { k in
            let deadline = start + Double(k) * spacing
            Clock.sleep(until: deadline)
            return Clock.realtime() - deadline
        }
    }

    /// chimed as it is installed: the chime program started by the name `chimed`, through a link in
    /// `folder` (it finds its relay beside the program itself, in `binaries`).
    static func installedChimed(_ binaries: URL, in folder: URL) throws -> String {
        let link = folder.appendingPathComponent("chimed").path
        try FileManager.default.createSymbolicLink(
            atPath: link, withDestinationPath: binaries.appendingPathComponent("chime").path)
        return link
    }

    static func writeSettings(in directory: URL) throws {
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("groups"), withIntermediateDirectories: true)
        try """
        [flood]
        rate = 1000
        burst = 10000

        [limits]
        entries-per-app = 10000000
        groups-per-app = 2000
        bytes-per-app = 17179869184
        calls-per-second = 100000
        call-burst = 100000
        """.write(to: directory.appendingPathComponent("chime.toml"), atomically: true, encoding: .utf8)
    }

    static func allow(appID: String, chime: String, bus: TestBus) async throws {
        let process = try ManagedProcess(
            chime, ["app", "allow", appID], environment: bus.environment, directory: bus.directory)
        guard await process.waitForExit(timeout: .seconds(30)) == 0 else {
            throw BenchFailure("chime app allow failed: \(process.stderr)")
        }
    }

    /// `groups` groups of `entriesPerGroup` one-offs far ahead, each group in one Reschedule.
    static func load(_ client: ChimeClient, groups: Int, entriesPerGroup: Int, prefix: String) async throws {
        let base = Date(timeIntervalSince1970: 1_924_992_000)  // 2031
        for g in 0..<groups {
            let entries = (0..<entriesPerGroup).map { e in
                TimelineEntry(
                    id: "e\(e)", trigger: .at(base.addingTimeInterval(Double(g * entriesPerGroup + e) * 60)),
                    content: .fixed(ChimeCore.NotificationContent(summary: "\(prefix) \(g).\(e)")))
            }
            try await client.reschedule(TimelineGroup(id: "\(prefix)-\(g)", entries: entries))
        }
    }

    /// Schedules `count` one-offs `spacing` apart and returns each one's lateness at the server.
    static func lateness(_ client: ChimeClient, server: RecordingServer, count: Int, spacing: Double) async throws
        -> [Double]
    {
        let start = Clock.realtime() + 1 + Double(count) * 0.003
        for k in 0..<count {
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "due \(k)"),
                at: Date(timeIntervalSince1970: start + Double(k) * spacing))
        }
        return try await server.lateness(of: "due", count: count, start: start, spacing: spacing, slack: 10)
    }

    /// `lateness`, while eight more connections call Schedule back to back. The measured items are
    /// scheduled before the load starts, so that a slow answer under load does not make them late.
    static func latenessUnderLoad(
        _ client: ChimeClient, bus: TestBus, server: RecordingServer, count: Int, spacing: Double
    ) async throws -> [Double] {
        let start = Clock.realtime() + 2 + Double(count) * 0.003
        for k in 0..<count {
            _ = try await client.schedule(
                ChimeCore.NotificationContent(summary: "loaded \(k)"),
                at: Date(timeIntervalSince1970: start + Double(k) * spacing))
        }
        var connections: [DBusConnection] = []
        for _ in 0..<8 { connections.append(try await bus.connect()) }
        defer { for c in connections { c.close() } }
        let content = ContentWire.encode(ChimeCore.NotificationContent(summary: "load"))
        let far = Date(timeIntervalSince1970: 1_956_528_000)  // 2032
        // From before the first item is due until the last one is.
        let end = start + Double(count) * spacing + 0.05
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, connection) in connections.enumerated() {
                group.addTask {
                    var n = 0
                    while Clock.realtime() < end {
                        let at = far.addingTimeInterval(Double(index * 1_000_000 + n))
                        _ = try await connection.call(
                            destination: ChimeBus.name, path: ChimeBus.path, interface: ChimeBus.interface,
                            member: "Schedule", [content, TriggerWire(at: at).encoded])
                        n += 1
                    }
                }
            }
            try await group.waitForAll()
        }
        guard Clock.realtime() >= end else { throw BenchFailure("the load stopped before the last item was due") }
        return try await server.lateness(of: "loaded", count: count, start: start, spacing: spacing, slack: 10)
    }

    static func throughput(bus: TestBus, seconds: Double) async throws -> Throughput {
        func rate(clients: Int, _ call: @escaping @Sendable (DBusConnection, Int) async throws -> Void) async throws
            -> Double
        {
            var connections: [DBusConnection] = []
            for _ in 0..<clients { connections.append(try await bus.connect()) }
            defer { for c in connections { c.close() } }
            let end = Clock.monotonic() + seconds
            let started = Clock.monotonic()
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for connection in connections {
                    group.addTask {
                        var n = 0
                        while Clock.monotonic() < end {
                            try await call(connection, n)
                            n += 1
                        }
                        return n
                    }
                }
                return try await group.reduce(0, +)
            }
            return Double(total) / (Clock.monotonic() - started)
        }
        let ping = try await rate(clients: 1) { connection, _ in
            _ = try await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus.Peer",
                member: "Ping", [])
        }
        let far = Date(timeIntervalSince1970: 1_956_528_000)  // 2032
        let content = ContentWire.encode(ChimeCore.NotificationContent(summary: "throughput"))
        let schedule: @Sendable (DBusConnection, Int) async throws -> Void = { connection, n in
            _ = try await connection.call(
                destination: ChimeBus.name, path: ChimeBus.path, interface: ChimeBus.interface, member: "Schedule",
                [content, TriggerWire(at: far.addingTimeInterval(Double(n))).encoded])
        }
        return Throughput(
            ping: ping, schedule1: try await rate(clients: 1, schedule), schedule8: try await rate(clients: 8, schedule)
        )
    }

    static func scale(binaries: URL, groups: Int, entriesPerGroup: Int) async throws -> Scale {
        let bus = try await TestBus.start()
        var chimed: ChimedProcess?
        do {
            try writeSettings(in: bus.directory)
            let binary = try installedChimed(binaries, in: bus.directory)
            chimed = try await ChimedProcess.start(binary: binary, bus: bus, directory: bus.directory)
            try await allow(appID: "chime-bench", chime: binaries.appendingPathComponent("chime").path, bus: bus)
            var client = try await ChimeClient.connect(.bus(bus.address))
            let loadStart = Clock.monotonic()
            try await load(client, groups: groups, entriesPerGroup: entriesPerGroup, prefix: "scale")
            let load = Clock.monotonic() - loadStart
            let rssLoaded = chimed!.residentBytes
            client.close()
            await chimed!.stop()
            chimed = try await ChimedProcess.start(binary: binary, bus: bus, directory: bus.directory)
            let ready = chimed!.readySeconds
            let rssRestarted = chimed!.residentBytes
            client = try await ChimeClient.connect(.bus(bus.address))
            defer { client.close() }
            // One 10,000-entry group: added, then replaced with one entry changed.
            let base = Date(timeIntervalSince1970: 1_988_150_400)  // 2033
            var entries = (0..<10_000).map { e in
                TimelineEntry(
                    id: "e\(e)", trigger: .at(base.addingTimeInterval(Double(e) * 60)),
                    content: .fixed(ChimeCore.NotificationContent(summary: "big \(e)")))
            }
            var t = Clock.monotonic()
            try await client.reschedule(TimelineGroup(id: "big", entries: entries))
            let add = Clock.monotonic() - t
            entries[5000].content = .fixed(ChimeCore.NotificationContent(summary: "big changed"))
            t = Clock.monotonic()
            try await client.reschedule(TimelineGroup(id: "big", entries: entries))
            let replace = Clock.monotonic() - t
            // A calendar of the size whose import other tools' users report taking 14 to 53 s.
            let calendar = bus.directory.appendingPathComponent("calendar.ics")
            try Self.calendar(events: 1_700).write(to: calendar, atomically: true, encoding: .utf8)
            t = Clock.monotonic()
            let importer = try ManagedProcess(
                binaries.appendingPathComponent("chime").path, ["import", calendar.path],
                environment: bus.environment, directory: bus.directory)
            guard await importer.waitForExit(timeout: .seconds(120)) == 0 else {
                throw BenchFailure("chime import failed: \(importer.stderr)")
            }
            let importSeconds = Clock.monotonic() - t
            let result = Scale(
                entries: groups * entriesPerGroup, loadSeconds: load, rssLoadedMB: Double(rssLoaded) / 1_048_576,
                rssRestartedMB: Double(rssRestarted) / 1_048_576,
                databaseMB: Double(folderSize(bus.directory.appendingPathComponent("state").path)) / 1_048_576,
                readySeconds: ready, reschedule10kAddSeconds: add, reschedule10kReplaceSeconds: replace,
                import1700Seconds: importSeconds)
            await chimed!.stop()
            await bus.stop()
            return result
        } catch {
            await chimed?.stop()
            await bus.stop()
            throw error
        }
    }

    /// An iCalendar file of `events` events with a 15-minute alarm each, as a personal calendar holds them:
    /// from a year ago to two years ahead, one in five weekly with an exception, one in ten all day, half in
    /// a named zone.
    static func calendar(events: Int) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Chime//bench//EN"]
        let start = Date(timeIntervalSince1970: 1_764_547_200)  // 2025-12-01
        var utc = Calendar(identifier: .gregorian)
        utc.timeZone = TimeZone(identifier: "UTC")!
        for n in 0..<events {
            let day = utc.date(byAdding: .hour, value: n * 15 + 9, to: start)!
            let c = utc.dateComponents([.year, .month, .day, .hour, .minute], from: day)
            let date = String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)
            let time = String(format: "T%02d%02d00", c.hour!, 0)
            lines += ["BEGIN:VEVENT", "UID:bench-\(n)@chime", "DTSTAMP:20251201T000000Z", "SUMMARY:Event \(n)"]
            // The start's form, and an exception two weeks on in the same form.
            let form: (String) -> String
            if n % 10 == 0 {
                form = { ";VALUE=DATE:\($0)" }
            } else if n % 2 == 0 {
                form = { ";TZID=Europe/Berlin:\($0)\(time)" }
                lines.append("DURATION:PT1H")
            } else {
                form = { ":\($0)\(time)Z" }
                lines.append("DURATION:PT30M")
            }
            lines.append("DTSTART" + form(date))
            if n % 5 == 1 {
                let c = utc.dateComponents([.year, .month, .day], from: utc.date(byAdding: .day, value: 14, to: day)!)
                lines += [
                    "RRULE:FREQ=WEEKLY;COUNT=20",
                    "EXDATE" + form(String(format: "%04d%02d%02d", c.year!, c.month!, c.day!)),
                ]
            }
            lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Event \(n)", "TRIGGER:-PT15M", "END:VALARM"]
            lines += ["END:VEVENT"]
        }
        lines.append("END:VCALENDAR")
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    static func timeEngine(binaries: URL, iterations: Int) throws -> TimeEngine {
        let expressions = ["Mon..Fri *-*-* 09:00", "*-*-01 00:00:00", "Sat *-*-1..7 18:00", "*:0/15"]
        func wall(_ executable: String, _ arguments: [String]) throws -> Double {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let start = Clock.monotonic()
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else {
                throw BenchFailure("\(executable) \(arguments.joined(separator: " ")) failed")
            }
            return Clock.monotonic() - start
        }
        var chime = 0.0
        var systemd = 0.0
        for expression in expressions {
            chime += try wall(
                binaries.appendingPathComponent("chime").path,
                ["next", "--on-calendar", expression, "--count", "\(iterations)", "--after", "2026-11-22T00:00:00"])
            systemd += try wall(
                "/usr/bin/systemd-analyze",
                ["calendar", "--iterations=\(iterations)", "--base-time=2026-11-22 00:00:00", expression])
        }
        // The RRULE comparison with python-dateutil is the time-engine benchmark's last line.
        let engine = Process()
        engine.executableURL = binaries.appendingPathComponent("time-engine-benchmark")
        let pipe = Pipe()
        engine.standardOutput = pipe
        try engine.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        engine.waitUntilExit()
        let last = output.split(separator: "\n").last.map(String.init) ?? "{}"
        let summary = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any] ?? [:]
        return TimeEngine(
            iterations: iterations, expressions: expressions.count, chimeNextSeconds: chime,
            systemdAnalyzeSeconds: systemd,
            dateutilOverChimeCore: (summary["rrule_set"] as? [String: Any])?["ratio"] as? Double ?? .nan)
    }

    /// Prints each ratio against the baseline (those in `only`, when given) and returns the regressed ones.
    static func compare(_ report: Report, baseline path: String, only: Set<String>? = nil) throws -> [String] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let base = try JSONDecoder().decode(Baseline.self, from: data)
        var regressions: [String] = []
        for (name, value) in report.ratios where only?.contains(name) ?? true {
            guard let limit = base.ratios[name] else { continue }
            let tolerance = limit.tolerance ?? base.tolerance
            let worse = limit.lowerIsBetter ? value > limit.value * tolerance : value < limit.value / tolerance
            let verdict = worse ? "REGRESSION" : "ok"
            say(
                String(
                    format: "baseline %@: %.3f (baseline %.3f, tolerance %.1fx) %@", name, value, limit.value,
                    tolerance, verdict))
            if worse { regressions.append(name) }
        }
        return regressions.sorted()
    }
}

struct Sizes {
    var activeEntries: Int
    var dueItems: Int
    var peerItems: Int
    var spacing: Double
    var idleSeconds: Double
    var throughputSeconds: Double
    var scaleGroups: Int
    var calendarIterations: Int

    init(quick: Bool) {
        activeEntries = quick ? 10_000 : 100_000
        dueItems = quick ? 200 : 1000
        peerItems = 200
        spacing = 0.01
        idleSeconds = quick ? 10 : 60
        throughputSeconds = quick ? 2 : 5
        scaleGroups = quick ? 100 : 1000
        calendarIterations = 10_000
    }
}

struct Report: Codable {
    var mode: String
    var machine = ""
    var floor: Percentiles?
    var lateness: Percentiles?
    var latenessUnderLoad: Percentiles?
    var systemdTimer: Percentiles?
    var loadSeconds: Double?
    var freshRSSMB: Double?
    var idle: Idle?
    var throughput: Throughput?
    var scale: Scale?
    var timeEngine: TimeEngine?
    var attack: AttackFigures?
    /// The floor and lateness measured again when their ratio was beyond the baseline.
    var secondRun: SecondRun?

    init(mode: String) { self.mode = mode }

    /// The figures the baseline holds, as ratios to what the same run measured of the machine (so they do
    /// not drift with the machine's speed) or as counts.
    var ratios: [String: Double] {
        var result: [String: Double] = [:]
        if let lateness, let floor { result["lateness-p99-over-floor-p99"] = lateness.p99 / floor.p99 }
        if let latenessUnderLoad, let floor {
            result["lateness-under-load-p99-over-floor-p99"] = latenessUnderLoad.p99 / floor.p99
        }
        if let attack, let floor {
            result["attack-victim-lateness-p99-over-floor-p99"] = attack.lateness.p99 / floor.p99
            result["attack-status-p99-over-floor-p99"] = attack.status.p99 / floor.p99
            // Memory does not drift with the machine's speed; an exit is a count.
            result["attack-peak-rss-mb"] = attack.peakRSSMB
            result["attack-chimed-exited"] = attack.sameProcess ? 0 : 1
        }
        if let throughput {
            result["schedule-1-over-ping"] = throughput.schedule1 / throughput.ping
            result["schedule-8-over-ping"] = throughput.schedule8 / throughput.ping
        }
        if let idle { result["idle-wakeups-per-minute"] = Double(idle.contextSwitches) * 60 / idle.seconds }
        // Memory does not drift with the machine's speed.
        if let freshRSSMB { result["fresh-rss-mb"] = freshRSSMB }
        if let timeEngine {
            result["chime-next-over-systemd-analyze"] = timeEngine.chimeNextSeconds / timeEngine.systemdAnalyzeSeconds
            // Both expand the same RRULE set in the same run: the ratio does not drift with the machine.
            result["rrule-dateutil-over-chimecore"] = timeEngine.dateutilOverChimeCore
        }
        if let scale {
            // Memory does not drift with the machine's speed: kilobytes per entry, chimed and its relay.
            result["scale-rss-kb-per-entry"] = scale.rssRestartedMB * 1024 / Double(scale.entries)
            // Nor does the state folder: kilobytes per entry, with its history record.
            result["scale-state-kb-per-entry"] = scale.databaseMB * 1024 / Double(scale.entries)
            if let throughput {
                // In bus round trips: READY per 1,000 entries, a 10,000-entry group added and replaced.
                result["scale-ready-per-1k-entries-in-pings"] =
                    scale.readySeconds * throughput.ping / (Double(scale.entries) / 1000)
                result["scale-add-10k-in-pings"] = scale.reschedule10kAddSeconds * throughput.ping
                result["scale-replace-10k-in-pings"] = scale.reschedule10kReplaceSeconds * throughput.ping
                result["scale-import-1700-in-pings"] = scale.import1700Seconds * throughput.ping
            }
        }
        return result
    }
}

struct SecondRun: Codable {
    var floor: Percentiles?
    var lateness: Percentiles?
    var latenessUnderLoad: Percentiles?
}

struct Idle: Codable {
    var seconds: Double
    var contextSwitches: Int
    var cpuMilliseconds: Double
    var text: String {
        String(format: "%d context switches, %.1f ms CPU", contextSwitches, cpuMilliseconds)
    }
}

struct Throughput: Codable {
    var ping: Double
    var schedule1: Double
    var schedule8: Double
}

struct Scale: Codable {
    var entries: Int
    var loadSeconds: Double
    var rssLoadedMB: Double
    var rssRestartedMB: Double
    var databaseMB: Double
    var readySeconds: Double
    var reschedule10kAddSeconds: Double
    var reschedule10kReplaceSeconds: Double
    /// `chime import` of a 1,700-event calendar, process start to exit.
    var import1700Seconds: Double
    var text: String {
        String(
            format:
                "READY %.2f s, RSS %.0f MB (after load %.0f MB), db %.0f MB, 10k group add %.0f ms, replace %.0f ms, "
                + "import of 1,700 events %.0f ms",
            readySeconds, rssRestartedMB, rssLoadedMB, databaseMB, reschedule10kAddSeconds * 1000,
            reschedule10kReplaceSeconds * 1000, import1700Seconds * 1000)
    }
}

struct TimeEngine: Codable {
    var iterations: Int
    var expressions: Int
    var chimeNextSeconds: Double
    var systemdAnalyzeSeconds: Double
    var dateutilOverChimeCore: Double
    var text: String {
        String(
            format: "chime next %.2f s vs systemd-analyze %.2f s (%d × %d); dateutil/ChimeCore %.1fx",
            chimeNextSeconds, systemdAnalyzeSeconds, expressions, iterations, dateutilOverChimeCore)
    }
}

struct Baseline: Codable {
    struct Limit: Codable {
        var value: Double
        var lowerIsBetter: Bool
        /// This figure's own tolerance, for one that does not move with the machine's load (memory).
        var tolerance: Double?
    }
    var tolerance: Double
    var ratios: [String: Limit]
}

enum Machine {
    static func describe() -> String {
        let cpu =
            ((try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "").split(separator: "\n")
            .first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces)
            ?? "?"
        // The load average says whether the machine was shared while the figures were taken.
        let load =
            ((try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "").split(separator: " ").first
            ?? "?"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), load average \(load)"
    }
}

extension JSONEncoder {
    static var sorted: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }
}

/// One line to standard output at once (print buffers when the output is a file).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
