import Foundation
import TestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// The peer: a systemd user timer with `AccuracySec=1us` per due instant, under a real `systemd --user`,
/// whose service sends the same Notify with `gdbus` (so its figure includes starting a process, which is
/// how a timer delivers anything).
enum SystemdPeer {
    /// Each timer's lateness at the recording server, or nil when systemd cannot run here (not root, no
    /// systemd).
    static func lateness(bus: TestBus, server: RecordingServer, count: Int, spacing: Double) async throws -> [Double]? {
        let systemd = "/lib/systemd/systemd"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: systemd),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-run"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus")
        else { return nil }
        // systemd --user starts only when sd_booted() holds.
        let marker = "/run/systemd/system"
        let madeMarker = !FileManager.default.fileExists(atPath: marker)
        if madeMarker { try FileManager.default.createDirectory(atPath: marker, withIntermediateDirectories: true) }
        let root = bus.directory.appendingPathComponent("systemd-peer")
        let runtime = root.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        chmod(runtime.path, 0o700)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        environment["XDG_DATA_HOME"] = root.appendingPathComponent("data").path
        environment.removeValue(forKey: "DBUS_SESSION_BUS_ADDRESS")
        let manager = try ManagedProcess(
            "/usr/bin/setsid", [systemd, "--user"], environment: environment, directory: root)
        defer {
            if madeMarker { rmdir(marker) }
        }
        do {
            // systemd has no event for this here: ask until it says so.
            let ready = Clock.monotonic() + 20
            while true {
                let state = run("/usr/bin/systemctl", ["--user", "is-system-running"], environment: environment)
                if state.output.hasPrefix("running") || state.output.hasPrefix("degraded") { break }
                guard Clock.monotonic() < ready else {
                    throw BenchFailure("systemd --user did not start: \(state.output)")
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss.SSSSSS"
            let start = Clock.realtime() + 2 + Double(count) * 0.04
            for k in 0..<count {
                let due = Date(timeIntervalSince1970: start + Double(k) * spacing)
                let made = run(
                    "/usr/bin/systemd-run",
                    [
                        "--user", "--quiet", "--unit=chime-bench-peer-\(k)",
                        "--on-calendar=\(formatter.string(from: due)) UTC", "--timer-property=AccuracySec=1us",
                        "--setenv=DBUS_SESSION_BUS_ADDRESS=\(bus.address)", "/usr/bin/gdbus", "call", "--session",
                        "--dest", "org.freedesktop.Notifications", "--object-path", "/org/freedesktop/Notifications",
                        "--method", "org.freedesktop.Notifications.Notify", "peer", "0", "", "peer \(k)", "", "[]",
                        "{}", "0",
                    ], environment: environment)
                guard made.status == 0 else { throw BenchFailure("systemd-run failed: \(made.output)") }
            }
            guard Clock.realtime() < start else { throw BenchFailure("setting up the timers took too long") }
            let result = try await server.lateness(of: "peer", count: count, start: start, spacing: spacing, slack: 15)
            _ = await manager.stop()
            return result
        } catch {
            _ = await manager.stop()
            throw error
        }
    }

    static func run(_ executable: String, _ arguments: [String], environment: [String: String]) -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
