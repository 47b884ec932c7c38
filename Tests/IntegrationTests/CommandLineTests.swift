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

/// `chime help`: its topics, kept in step with the documents they summarise, and the commands' help.
@Suite struct HelpTopicTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized
    static let topics = ["rules", "phrases", "hints", "actions", "exit-codes"]

    @Test(arguments: topics)
    func everyTopicIsShown(topic: String) async throws {
        let result = try await CommandLineTests.chime(["help", topic])
        #expect(result.status == 0)
        #expect(result.stdout.split(separator: "\n").count > 5, "stdout: \(result.stdout)")
        #expect(result.stderr.isEmpty)
    }

    @Test func chimesHelpNamesEveryTopic() async throws {
        let help = try await CommandLineTests.chime(["--help"])
        #expect(help.stdout.contains("Topics: chime help " + Self.topics.joined(separator: ", ") + "."))
        #expect(try await CommandLineTests.chime(["help"]).stdout == help.stdout)
    }

    @Test(arguments: ["send", "pending", "group", "next"])
    func helpOfACommandIsItsOwnHelp(command: String) async throws {
        let viaHelp = try await CommandLineTests.chime(["help", command])
        let viaFlag = try await CommandLineTests.chime([command, "--help"])
        #expect(viaHelp.status == 0)
        #expect(viaHelp.stdout == viaFlag.stdout)
        #expect(viaHelp.stdout.contains("USAGE: chime \(command)"))
    }

    @Test func anUnknownTopicListsTheTopicsOnOneLine() async throws {
        let result = try await CommandLineTests.chime(["help", "rulez"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("no help topic or command \"rulez\"; topics: rules, phrases"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    /// The grammar in `chime help phrases` is docs/rule-phrases.md's, and its examples are among those
    /// the document lists (which the phrase tests check against the implementation).
    @Test func thePhrasesTopicIsTheDocumentsGrammar() async throws {
        let document = try String(
            contentsOf: Self.repository.appendingPathComponent("docs/rule-phrases.md"), encoding: .utf8)
        let grammar = try #require(Self.block(after: "```ebnf\n", in: document))
        let topic = try await CommandLineTests.chime(["help", "phrases"]).stdout
        #expect(Self.block(after: "```ebnf\n", in: topic) == grammar)
        let examples = Self.commands(in: topic).compactMap { words in
            words.firstIndex(of: "--every").map { words[$0 + 1] }
        }
        #expect(examples.count >= 5)
        for phrase in examples {
            #expect(document.contains("- `\(phrase)` → "), "\(phrase) is not among the document's examples")
        }
    }

    /// Every `chime next` line in the topics runs.
    @Test(arguments: ["rules", "phrases"])
    func theTopicsExamplesRun(topic: String) async throws {
        let text = try await CommandLineTests.chime(["help", topic]).stdout
        let commands = Self.commands(in: text)
        #expect(commands.count >= 3)
        for command in commands {
            let result = try await CommandLineTests.chime(Array(command.dropFirst()))
            #expect(result.status == 0, "\(command): \(result.stderr)")
        }
    }

    /// The lines of a topic that run `chime next`, split into words as a shell would ("…" quoted).
    static func commands(in text: String) -> [[String]] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("chime next ") }
            .map { line in
                var words: [String] = []
                var word = ""
                var quoted = false
                for character in line {
                    if character == "\"" {
                        quoted.toggle()
                    } else if character == " ", !quoted {
                        if !word.isEmpty { words.append(word) }
                        word = ""
                    } else {
                        word.append(character)
                    }
                }
                if !word.isEmpty { words.append(word) }
                return words
            }
    }

    /// The text from `opening` to the next ``` fence.
    static func block(after opening: String, in text: String) -> String? {
        guard let start = text.range(of: opening),
            let end = text.range(of: "```", range: start.upperBound..<text.endIndex)
        else { return nil }
        return String(text[start.upperBound..<end.lowerBound])
    }
}

/// The completion scripts `make install` puts in place.
@Suite struct CompletionScriptTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func everyShellGetsAScriptWithEveryCommandAndOption(shell: String) async throws {
        let result = try await CommandLineTests.chime(["--generate-completion-script", shell])
        #expect(result.status == 0)
        for word in ["send", "pending", "reschedule", "history", "next", "group", "on-calendar", "replace-id"] {
            #expect(result.stdout.contains(word), "\(shell) script lacks \(word)")
        }
    }

    /// bash reads the script, and completing a few words offers what they should.
    @Test func bashCompletesCommandsAndOptions() async throws {
        let script = try await CommandLineTests.chime(["--generate-completion-script", "bash"]).stdout
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chime-test-completion-\(UUID()).bash")
        try script.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let probe = """
            source "\(file.path)"
            complete_line() {
                COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$COMP_LINE"
                [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
                _chime chime "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
                echo "${COMPREPLY[*]}"
            }
            complete_line "chime resch"
            complete_line "chime send --gr"
            complete_line "chime pending --n"
            complete_line "chime he"
            """
        let bash = try ManagedProcess("/bin/bash", ["-c", probe])
        defer { bash.removeFiles() }
        #expect(await bash.waitForExit(timeout: .seconds(30)) == 0, "\(bash.stderr)")
        #expect(bash.stdout == "reschedule\n--group\n--next\nhelp\n")
    }
}
