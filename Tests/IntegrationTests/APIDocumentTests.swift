import DBusKit
import Foundation
import TestSupport
import Testing

/// docs/dbus-api.md runs as written: every ```sh block is a shell script, run in order against one
/// chimed on a private bus, with `busctl --user` and `gdbus --session` finding that bus through
/// DBUS_SESSION_BUS_ADDRESS. Lines `# → …` under a block give its output (`…` stands for any text,
/// runs of white space count as one space); `# error: …` says it fails and prints that.
@Suite(.serialized) struct APIDocumentTests {
    struct Example: Sendable, CustomStringConvertible {
        /// The line of the opening fence.
        var line: Int
        var script: String
        /// The output pattern, when the example gives one.
        var output: String?
        /// What stderr (or stdout) contains when the example is meant to fail.
        var error: String?

        var description: String { "docs/dbus-api.md:\(line)" }
    }

    static let documentURL = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../docs/dbus-api.md")

    static func examples(in markdown: String) -> [Example] {
        var examples: [Example] = []
        var current: (line: Int, lines: [String])?
        for (index, line) in markdown.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard let open = current else {
                if trimmed == "```sh" { current = (index + 1, []) }
                continue
            }
            guard trimmed == "```" else {
                current = (open.line, open.lines + [line])
                continue
            }
            let outputs = open.lines.filter { $0.hasPrefix("# → ") }.map { String($0.dropFirst(4)) }
            let errors = open.lines.filter { $0.hasPrefix("# error: ") }.map { String($0.dropFirst(9)) }
            let script = open.lines.filter { !$0.hasPrefix("# → ") && !$0.hasPrefix("# error: ") }
            examples.append(
                Example(
                    line: open.line, script: script.joined(separator: "\n"),
                    output: outputs.isEmpty ? nil : outputs.joined(separator: " "),
                    error: errors.isEmpty ? nil : errors.joined(separator: " ")))
            current = nil
        }
        return examples
    }

    static func normalized(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// Whether `text` matches `pattern`, in which `…` stands for any text.
    static func matches(_ text: String, _ pattern: String) -> Bool {
        let text = normalized(text)
        let parts = normalized(pattern).components(separatedBy: "…").map { $0.trimmingCharacters(in: .whitespaces) }
        let trimmedPattern = normalized(pattern)
        if !trimmedPattern.hasPrefix("…"), !text.hasPrefix(parts[0]) { return false }
        if !trimmedPattern.hasSuffix("…"), !text.hasSuffix(parts[parts.count - 1]) { return false }
        var rest = text[...]
        for part in parts where !part.isEmpty {
            guard let found = rest.range(of: part) else { return false }
            rest = rest[found.upperBound...]
        }
        return true
    }

    @Test(arguments: [
        ("t 1", "t 1", true),
        ("t 12", "t 1", false),
        ("(uint64 2,)\n", "(uint64 …,)", true),
        ("aa{sv} 1 3 \"entry\" s \"morning\"", "aa{sv} 1 … \"morning\"", true),
        ("aa{sv} 1 3 \"entry\" s \"evening\"", "aa{sv} 1 … \"morning\"", false),
        ("b   true\n", "b true", true),
        ("a b c", "… c", true),
        ("c b a", "a … c", false),
    ])
    func patternsMatchAsDocumented(text: String, pattern: String, expected: Bool) {
        #expect(Self.matches(text, pattern) == expected)
    }

    @Test func theExtractorReadsScriptsAndExpectations() {
        let markdown = """
            Text.

            ```sh
            busctl --user call a b c \\
              d
            # → t 1
            ```

            ```xml
            <node/>
            ```

            ```sh
            gdbus call x
            # error: NotFound
            ```
            """
        let examples = Self.examples(in: markdown)
        #expect(examples.count == 2)
        #expect(examples.first?.line == 3)
        #expect(examples.first?.script == "busctl --user call a b c \\\n  d")
        #expect(examples.first?.output == "t 1")
        #expect(examples.last?.error == "NotFound")
        #expect(examples.last?.output == nil)
    }

    /// Every member the contract declares has a section, and the examples call the ones that matter.
    @Test func theDocumentCoversTheWholeInterface() throws {
        let markdown = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let contract = try String(
            contentsOf: Self.documentURL.deletingLastPathComponent().appendingPathComponent("io.chime.Chime1.xml"),
            encoding: .utf8)
        let shape = try InterfaceShape(xml: contract, interface: "io.chime.Chime1")
        for member in shape.members {
            // "method Schedule(…)", "signal Delivered(…)", "property Paused:b:read"
            let name = member.split(separator: " ")[1].prefix { $0 != "(" && $0 != ":" }
            #expect(markdown.contains("`\(name)"), "docs/dbus-api.md does not describe \(name)")
        }
        for error in [
            "InvalidArgument", "InvalidRule", "InvalidTime", "NotFound", "PermissionDenied", "LimitsExceeded",
            "Conflict",
            "Storage",
        ] {
            #expect(markdown.contains("`io.chime.Chime1.Error.\(error)`"), "no row for \(error)")
        }
        let scripts = Self.examples(in: markdown).map(\.script).joined(separator: "\n")
        for called in [
            "Schedule", "ListPending", "Cancel", "Snooze", "ListGroups", "Reschedule", "RemoveGroup", "History",
            "get-property", "Properties.Get", "Properties.GetAll", "introspect",
        ] {
            #expect(scripts.contains(called), "no example calls \(called)")
        }
        for property in ["Version", "NotificationServerPresent", "ServerInformation", "Paused"] {
            #expect(scripts.contains("io.chime.Chime1 \(property)"), "no example reads \(property)")
        }
        for error in ["InvalidRule", "InvalidArgument", "NotFound", "InvalidTime"] {
            #expect(
                Self.examples(in: markdown).contains { $0.error?.contains("io.chime.Chime1.Error.\(error)") == true },
                "no example shows \(error)")
        }
    }

    @Test func everyExampleRunsAsShown() async throws {
        let markdown = try String(contentsOf: Self.documentURL, encoding: .utf8)
        let examples = Self.examples(in: markdown)
        #expect(examples.count >= 30)
        try await Session.run { s in
            var environment = s.bus.environment
            environment["PATH"] = Binaries.directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "")
            // The examples need the mock's name and capabilities, which chimed learns a moment after start.
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            for example in examples {
                let process = try ManagedProcess(
                    "/bin/sh", ["-c", example.script], environment: environment, directory: s.bus.directory)
                let status = await process.waitForExit(timeout: .seconds(30))
                let shown =
                    "\(example)\n\(example.script)\nexit status: \(status.map(String.init) ?? "none")\n"
                    + "stdout: \(process.stdout)\nstderr: \(process.stderr)"
                if let error = example.error {
                    #expect(status != 0, "\(shown)")
                    #expect(
                        Self.normalized(process.stderr + " " + process.stdout).contains(Self.normalized(error)),
                        "\(shown)")
                } else {
                    #expect(status == 0, "\(shown)")
                    if let output = example.output {
                        #expect(Self.matches(process.stdout, output), "\(shown)\nexpected: \(output)")
                    }
                }
            }
        }
    }
}
