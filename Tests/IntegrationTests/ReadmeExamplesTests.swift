import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// README's examples, run as they stand: each fenced block after a `<!-- tested: NAME -->` line.
@Suite(.serialized) struct ReadmeExamplesTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized

    /// The blocks README marks as tested, by name.
    static func blocks() throws -> [String: String] {
        let lines = try String(contentsOf: repository.appendingPathComponent("README.md"), encoding: .utf8)
            .components(separatedBy: "\n")
        var result: [String: String] = [:]
        var index = 0
        while index < lines.count {
            let line = lines[index]
            index += 1
            guard line.hasPrefix("<!-- tested: "), line.hasSuffix(" -->") else { continue }
            let name = String(line.dropFirst("<!-- tested: ".count).dropLast(" -->".count))
            guard index < lines.count, lines[index].hasPrefix("```") else {
                throw TestFailure("README: the tested block \(name) does not start with a fence")
            }
            index += 1
            var block: [String] = []
            while index < lines.count, lines[index] != "```" {
                block.append(lines[index])
                index += 1
            }
            result[name] = block.joined(separator: "\n") + "\n"
        }
        return result
    }

    /// Runs a shell block with the built binaries first on PATH, against the session's bus.
    static func shell(_ s: Session, _ script: String) async throws -> (status: Int32, stdout: String, stderr: String) {
        var environment = s.bus.environment
        environment["PATH"] =
            Binaries.directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")
        let process = try ManagedProcess(
            "/bin/sh", ["-ec", script], environment: environment, directory: s.bus.directory)
        let status = await process.waitForExit(timeout: .seconds(60)) ?? -1
        return (status, process.stdout, process.stderr)
    }

    @Test func theCommandLineExampleReachesTheServerWithEveryField() async throws {
        let script = try #require(try Self.blocks()["cli"])
        try await Session.run { s in
            let result = try await Self.shell(s, script)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("First Friday"), "\(result.stdout)")
            let calls = s.server!.notifyCalls
            try await calls.wait("the stand-up", timeout: .seconds(10)) { $0.contains { $0.summary == "Stand-up" } }
            let call = try #require(calls.elements.first { $0.summary == "Stand-up" })
            #expect(call.appName == "myapp")
            #expect(call.arguments[2].unwrappingVariant == .string("dialog-information"))
            #expect(call.body == "Room 4")
            #expect(call.actions == ["ok", "OK"])
            #expect(call.expireTimeout == 5000)
            #expect(call.hints["urgency"] == .byte(2))
            #expect(call.hints["category"] == .string("im.received"))
            #expect(call.hints["x-k"] == .string("v"))
        }
    }

    @Test func theDBusExampleSchedulesAndLists() async throws {
        let script = try #require(try Self.blocks()["dbus"])
        try await Session.run { s in
            let allowed = try await s.chime(["app", "allow", "gdbus"])
            #expect(allowed.status == 0)
            let result = try await Self.shell(s, script)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.components(separatedBy: "(uint64 ").count == 3, "two ids: \(result.stdout)")
            #expect(result.stdout.contains("'summary': <'First Friday'>"), "\(result.stdout)")
            try await s.server!.notifyCalls.wait("hello", timeout: .seconds(10)) {
                $0.contains { $0.summary == "Hello" && $0.body == "from gdbus" }
            }
        }
    }

    @Test func theChimeKitExampleIsTheOneThatIsBuiltAndItSchedulesTheGroup() async throws {
        let block = try #require(try Self.blocks()["Examples/FirstFriday/FirstFriday.swift"])
        let source = try String(
            contentsOf: Self.repository.appendingPathComponent("Examples/FirstFriday/FirstFriday.swift"),
            encoding: .utf8)
        #expect(block == source, "README shows the example as it is built")
        try await Session.run { s in
            let allowed = try await s.chime(["app", "allow", "org.example.Pizza"])
            #expect(allowed.status == 0)
            let process = try ManagedProcess(
                Binaries.directory.appendingPathComponent("FirstFriday").path, [], environment: s.bus.environment,
                directory: s.bus.directory)
            let status = await process.waitForExit(timeout: .seconds(30))
            #expect(status == 0, "\(process.stderr)")
            #expect(process.stdout.hasPrefix("scheduled group first-friday"), "\(process.stdout)")
            let pending = try await s.chimeJSON(["pending"])
            #expect(pending.map { $0["summary"] as? String } == ["First Friday"])
            #expect(pending.first?["rule"] as? String == "every month on the first Friday at 20:15, 12 times")
        }
    }
}
