import Foundation
import TestSupport
import Testing

/// The command line itself: usage errors, exit statuses, help and completions, without a daemon.
@Suite struct CommandLineTests {
    /// Runs `chime` with a session bus address where no bus listens.
    static func chime(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try ManagedProcess(
            Binaries.chime, arguments,
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/chime-no-bus", "DISPLAY": ""])
        defer { process.removeFiles() }
        let status = await process.waitForExit(timeout: .seconds(30)) ?? -1
        return (status, process.stdout, process.stderr)
    }

    @Test(arguments: [
        (["send"], "chime: Missing expected argument '<summary>'; see `chime send --help`"),
        (
            ["send", "-t", "soon", "x"],
            "chime: The value 'soon' is invalid for '-t <TIMEOUT>'; see `chime send --help`"
        ),
        (["send", "--count", "many", "x"], "The value 'many' is invalid for '--count <N>'"),
        (["send", "-r", "-1", "x"], "see `chime send --help`"),
        (["send", "--colour", "red", "x"], "chime: Unknown option '--colour'; see `chime send --help`"),
        (["pending", "--next"], "chime: Missing value for '--next <N>'; see `chime pending --help`"),
        (["cancel", "seven"], "The value 'seven' is invalid for '<id>'"),
        (["group", "pause", "daily"], "The value 'pause' is invalid for '<change>'"),
        (["app", "forget", "org.example.Pizza"], "The value 'forget' is invalid for '<choice>'"),
        (["reschedule"], "chime: Missing expected argument '--file <GROUP.toml>'; see `chime reschedule --help`"),
        (["bogus"], "chime: Unexpected argument 'bogus'; see `chime --help`"),
        (["--bogus"], "chime: Unknown option '--bogus'; see `chime --help`"),
    ])
    func usageErrorsAreOneLineWithExitStatus2(arguments: [String], message: String) async throws {
        let result = try await Self.chime(arguments)
        #expect(result.status == 2)
        #expect(result.stderr.contains(message), "stderr: \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test func withoutABusTheStatusIs1() async throws {
        let result = try await Self.chime(["pending"])
        #expect(result.status == 1)
        #expect(result.stderr.hasPrefix("chime: "))
        #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
    }
}
