import DBusKit
import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A minimal notification server of the bench's own: it answers Notify at once and records, per
/// summary, when the call reached it (CLOCK_REALTIME, taken first thing in the handler).
final class RecordingServer: @unchecked Sendable {
    // @unchecked Sendable: `received` and `nextID` are guarded by `lock`.
    let connection: DBusConnection
    private let lock = NSLock()
    private var received: [String: Double] = [:]
    private var nextID: UInt32 = 0

    private init(connection: DBusConnection) { self.connection = connection }

    static func start(on bus: TestBus) async throws -> RecordingServer {
        let server = RecordingServer(connection: try await bus.connect())
        let path: DBusObjectPath = "/org/freedesktop/Notifications"
        try server.connection.export(
            [
                DBusInterface(
                    "org.freedesktop.Notifications",
                    methods: [
                        DBusMethod(
                            "Notify",
                            inputs: [
                                DBusArgument("app_name", .string), DBusArgument("replaces_id", .uint32),
                                DBusArgument("app_icon", .string), DBusArgument("summary", .string),
                                DBusArgument("body", .string), DBusArgument("actions", .array(.string)),
                                DBusArgument("hints", .dictionary(key: .string, value: .variant)),
                                DBusArgument("expire_timeout", .int32),
                            ], outputs: [DBusArgument("id", .uint32)]
                        ) { call in
                            let now = Clock.realtime()
                            guard case .string(let summary) = call.arguments[3] else { return [.uint32(0)] }
                            return [.uint32(server.record(summary, at: now))]
                        },
                        DBusMethod("GetCapabilities", outputs: [DBusArgument("capabilities", .array(.string))]) { _ in
                            [.array(element: .string, [.string("body"), .string("actions")])]
                        },
                        DBusMethod(
                            "GetServerInformation",
                            outputs: [
                                DBusArgument("name", .string), DBusArgument("vendor", .string),
                                DBusArgument("version", .string), DBusArgument("spec_version", .string),
                            ]
                        ) { _ in [.string("chime-bench"), .string("Chime"), .string("1"), .string("1.2")] },
                        DBusMethod("CloseNotification", inputs: [DBusArgument("id", .uint32)]) { _ in [] },
                    ])
            ], at: path)
        try await server.connection.requestName("org.freedesktop.Notifications")
        return server
    }

    private func record(_ summary: String, at time: Double) -> UInt32 {
        lock.lock()
        defer { lock.unlock() }
        received[summary] = time
        nextID += 1
        return nextID
    }

    /// When `summary` arrived (seconds since the epoch), if it did.
    func arrival(of summary: String) -> Double? {
        lock.lock()
        defer { lock.unlock() }
        return received[summary]
    }

    /// How late each of `count` notifications named `"PREFIX K"` arrived, the K-th due at
    /// `start + K * spacing`; waits until all are in or `slack` seconds after the last is due.
    func lateness(of prefix: String, count: Int, start: Double, spacing: Double, slack: Double) async throws -> [Double]
    {
        let deadline = Clock.monotonic() + (start - Clock.realtime()) + Double(count) * spacing + slack
        while (0..<count).contains(where: { arrival(of: "\(prefix) \($0)") == nil }), Clock.monotonic() < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        return try (0..<count).map { k in
            guard let arrival = arrival(of: "\(prefix) \(k)") else {
                throw BenchFailure("\(prefix) \(k) never arrived")
            }
            return arrival - (start + Double(k) * spacing)
        }
    }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return received.count
    }

    func close() { connection.close() }
}

enum Clock {
    /// CLOCK_REALTIME in seconds, to the nanosecond.
    static func realtime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Sleeps until the realtime instant `deadline` (an absolute-deadline timer).
    static func sleep(until deadline: Double) {
        var ts = timespec(
            tv_sec: Int(deadline.rounded(.down)), tv_nsec: Int((deadline - deadline.rounded(.down)) * 1e9))
        while clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// p50, p99 and max of a sample, in milliseconds.
struct Percentiles: Codable {
    var count: Int
    var p50: Double
    var p99: Double
    var max: Double

    init(seconds values: [Double]) {
        let sorted = values.sorted()
        func at(_ p: Double) -> Double {
            sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))] * 1000
        }
        count = values.count
        p50 = at(0.5)
        p99 = at(0.99)
        max = (sorted.last ?? .nan) * 1000
    }

    var text: String { String(format: "p50 %.3f ms  p99 %.3f ms  max %.3f ms  (n=%d)", p50, p99, max, count) }
}

/// chimed as a child process with its own state, reporting readiness on a notify socket as under systemd.
final class ChimedProcess {
    let process: ManagedProcess
    /// Seconds from spawn to READY=1.
    let readySeconds: Double

    static func start(
        binary: String, bus: TestBus, directory: URL, logLevel: String = "warning"
    ) async throws -> ChimedProcess {
        let socketPath = directory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8)).sock").path
        let socket = try NotifySocket(path: socketPath)
        defer { socket.close() }
        var environment = bus.environment
        environment["NOTIFY_SOCKET"] = socketPath
        let started = Clock.monotonic()
        let process = try ManagedProcess(
            binary,
            [
                "--log-level", logLevel, "--state-dir", directory.appendingPathComponent("state").path, "--config",
                directory.appendingPathComponent("chime.toml").path, "--groups-dir",
                directory.appendingPathComponent("groups").path,
            ], environment: environment, directory: directory)
        guard socket.waitFor("READY=1", timeout: 600, unless: { process.hasExited }) else {
            await process.stop()
            throw BenchFailure("chimed did not report READY=1: \(process.stderr.prefix(3000))")
        }
        return ChimedProcess(process: process, readySeconds: Clock.monotonic() - started)
    }

    private init(process: ManagedProcess, readySeconds: Double) {
        self.process = process
        self.readySeconds = readySeconds
    }

    var pid: Int32 { process.pid }

    /// chimed and its notification relay (its child), whose costs count as chimed's.
    var pids: [Int32] {
        // Each thread lists the children it started.
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return [pid]
            + threads.flatMap { thread in
                ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? "")
                    .split(separator: " ").compactMap { Int32($0) }
            }
    }

    /// Resident memory of chimed and its relay, from /proc.
    var residentBytes: Int {
        pids.reduce(0) { total, pid in
            let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
            let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            return total + (Int(line?.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
        }
    }

    /// Context switches per thread (by process and thread id) and the CPU time of chimed and its relay.
    var activity: Activity {
        var result = Activity()
        for pid in pids {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
            for task in tasks {
                let status = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)) ?? ""
                var switches = 0
                for line in status.split(separator: "\n") {
                    let parts = line.split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                    if parts.first == "voluntary_ctxt_switches" || parts.first == "nonvoluntary_ctxt_switches" {
                        switches += Int(parts.last ?? "") ?? 0
                    }
                }
                result.switches["\(pid)/\(task)"] = switches
            }
            // utime and stime (fields 14 and 15) count every thread, also the ones that ended.
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            if let close = stat.lastIndex(of: ")") {
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                if fields.count > 13, let user = Int(fields[11]), let system = Int(fields[12]) {
                    result.cpuTicks += user + system
                }
            }
        }
        return result
    }

    func stop() async { _ = await process.stop() }
}

struct Activity {
    /// Context switches so far, by process and thread id ("PID/TID").
    var switches: [String: Int] = [:]
    /// CPU time in clock ticks (user + system).
    var cpuTicks = 0

    /// What happened between `earlier` and this sample: the switches of the threads alive now (a thread
    /// that started in between counts whole), and the CPU time.
    func since(_ earlier: Activity) -> (contextSwitches: Int, cpuMilliseconds: Double) {
        let switched = switches.reduce(0) { $0 + $1.value - (earlier.switches[$1.key] ?? 0) }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        return (switched, Double(cpuTicks - earlier.cpuTicks) * 1000 / ticks)
    }
}

/// A datagram socket such as systemd's NOTIFY_SOCKET.
final class NotifySocket {
    let fd: Int32

    init(path: String) throws {
        // Close-on-exec: chimed must not inherit (and so keep open, unread) the reading end.
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchFailure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchFailure("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (i, byte) in bytes.enumerated() { buffer[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw BenchFailure("bind \(path): \(errno)") }
    }

    /// Waits until a datagram contains `text`.
    func waitFor(_ text: String, timeout: Double, unless gaveUp: () -> Bool) -> Bool {
        let deadline = Clock.monotonic() + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Clock.monotonic() < deadline, !gaveUp() {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let left = Int32(max(1, min(1, deadline - Clock.monotonic()) * 1000))
            guard poll(&poller, 1, left) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, 0)
            if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).contains(text) { return true }
        }
        return false
    }

    func close() { Glibc.close(fd) }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Bytes of the files in a folder.
func folderSize(_ path: String) -> Int {
    let files = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    return files.reduce(0) { total, name in
        let size = ((try? FileManager.default.attributesOfItem(atPath: "\(path)/\(name)"))?[.size] as? Int) ?? 0
        return total + size
    }
}
