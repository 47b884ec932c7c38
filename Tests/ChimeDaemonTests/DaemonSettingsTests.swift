import Logging
import Testing

@testable import ChimeDaemon

@Suite struct DaemonSettingsTests {
    @Test func theExampleFileIsValidAndSaysWhatTheDefaultsAre() throws {
        let path = #filePath.replacingOccurrences(
            of: "Tests/ChimeDaemonTests/DaemonSettingsTests.swift", with: "config/chime.toml")
        let example = try DaemonSettings.load(path: path)
        #expect(example == DaemonSettings())
    }

    @Test func everyKeyIsRead() throws {
        let settings = try DaemonSettings.parse(
            """
            [log]
            level = "debug"

            [delivery]
            server-timeout = 2.5
            """, file: "chime.toml")
        #expect(settings.logLevel == .debug)
        #expect(settings.serverTimeout == .milliseconds(2500))
        #expect(try DaemonSettings.parse("", file: "x") == DaemonSettings())
        #expect(try DaemonSettings.parse("[delivery]\nserver-timeout = 3", file: "x").serverTimeout == .seconds(3))
    }

    @Test(arguments: [
        ("[log]\nlevel = \"loud\"", 2, "[log] level must be one of"),
        ("[log]\nlevle = \"info\"", 2, "unknown key levle in [log]"),
        ("[logs]\nlevel = \"info\"", 1, "unknown section [logs]"),
        ("[delivery]\n\nserver-timeout = -1", 3, "between 0 and 300"),
        ("[delivery]\nserver-timeout = \"ten\"", 2, "between 0 and 300"),
        ("[log\nlevel = 1", 1, "not valid TOML"),
    ])
    func badFilesNameTheFileTheLineAndTheReason(text: String, line: Int, reason: String) {
        #expect {
            try DaemonSettings.parse(text, file: "/home/u/.config/chime/chime.toml")
        } throws: { error in
            guard let error = error as? SettingsError else { return false }
            return error.file == "/home/u/.config/chime/chime.toml" && error.line == line
                && error.reason.contains(reason)
                && error.description.hasPrefix("/home/u/.config/chime/chime.toml:\(line): ")
        }
    }

    @Test func aMissingFileMeansTheDefaults() throws {
        #expect(try DaemonSettings.load(path: "/nonexistent/chime.toml") == DaemonSettings())
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(DaemonSettings.defaultPath(environment: ["XDG_CONFIG_HOME": "/x"]) == "/x/chime/chime.toml")
        #expect(DaemonSettings.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.config/chime/chime.toml")
        #expect(
            DaemonSettings.defaultPath(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"])
                == "/home/u/.config/chime/chime.toml")
    }
}
