import ChimeCore
import Foundation
import Logging
import Testing

@testable import ChimeConfig

@Suite struct DaemonSettingsTests {
    @Test func theExampleFileIsValidAndSaysWhatTheDefaultsAre() throws {
        let example = try DaemonSettings.load(path: ConfigFolder.path + "/chime.toml")
        #expect(example == DaemonSettings())
    }

    @Test func theDefaultsAreThoseTheExampleFileDocuments() {
        let defaults = DaemonSettings()
        #expect(defaults.logLevel == .info)
        #expect(defaults.serverTimeout == .seconds(10))
        #expect(defaults.missedPolicy == .deliverLate(window: 3600))
        #expect(defaults.quietHours == nil)
        #expect(defaults.flood == FloodControl(rate: 5, burst: 10))
        #expect(defaults.bytesPerApp == 33_554_432)
        #expect(defaults.groupsPerApp == 1000)
        #expect(defaults.historyMaxAge == 90 * 86_400)
        #expect(defaults.historyMaxEntries == 100_000)
    }

    @Test func thePhraseTimesAreRead() throws {
        #expect(DaemonSettings().phraseDefaults == PhraseDefaults.standard)
        let settings = try DaemonSettings.parse(
            """
            [phrases]
            morning = "07:30"
            afternoon = "13:00"
            evening = "19:15"
            night = "22:45"
            default-time = "8:00"
            """, file: "chime.toml")
        #expect(
            settings.phraseDefaults
                == PhraseDefaults(
                    morning: TimeOfDay(hour: 7, minute: 30), afternoon: TimeOfDay(hour: 13, minute: 0),
                    evening: TimeOfDay(hour: 19, minute: 15), night: TimeOfDay(hour: 22, minute: 45),
                    time: TimeOfDay(hour: 8, minute: 0)))
        let twice = try DaemonSettings.parse("[phrases]\nbiweekly = \"twice-a-week\"", file: "x").phraseDefaults
        #expect(twice.biweekly == .twiceAWeek && PhraseDefaults.standard.biweekly == .everyTwoWeeks)
        let anchored = try DaemonSettings.parse("[phrases]\nevery-other-week = \"first-occurrence\"", file: "x")
        #expect(anchored.phraseDefaults.everyOtherWeek == .firstOccurrence)
        #expect(PhraseDefaults.standard.everyOtherWeek == .thisWeek)
        let unknown = try #require(throws: ConfigError.self) {
            try DaemonSettings.parse("[phrases]\nbiweekly = \"fortnightly\"", file: "chime.toml")
        }
        #expect(unknown.description.contains("\"every-2-weeks\" or \"twice-a-week\""))
        let partial = try DaemonSettings.parse("[phrases]\nevening = \"20:00\"", file: "x").phraseDefaults
        #expect(partial.evening == TimeOfDay(hour: 20, minute: 0) && partial.morning == TimeOfDay(hour: 9, minute: 0))
        let error = try #require(throws: ConfigError.self) {
            try DaemonSettings.parse("[phrases]\nnight = \"late\"", file: "chime.toml")
        }
        #expect(error.line == 2)
        #expect(error.reason.contains("[phrases] night = \"late\" is not a time of day; write HH:MM"))
    }

    @Test func theHistoryLimitsAndTheBytesPerAppAreRead() throws {
        let settings = try DaemonSettings.parse(
            """
            [limits]
            bytes-per-app = 1048576
            groups-per-app = 20

            [history]
            max-age = "2w"
            max-entries = 500
            """, file: "chime.toml")
        #expect(settings.bytesPerApp == 1_048_576)
        #expect(settings.groupsPerApp == 20)
        #expect(try DaemonSettings.parse("[limits]\ngroups-per-app = 100000", file: "x").groupsPerApp == 100_000)
        #expect(settings.historyMaxAge == 14 * 86_400)
        #expect(settings.historyMaxEntries == 500)
        let edges = try DaemonSettings.parse(
            "[limits]\nbytes-per-app = 65536\n[history]\nmax-age = \"1h\"\nmax-entries = 10000000", file: "x")
        #expect(edges.bytesPerApp == 65_536 && edges.historyMaxAge == 3600 && edges.historyMaxEntries == 10_000_000)
        #expect(try DaemonSettings.parse("[history]\nmax-age = \"3650d\"", file: "x").historyMaxAge == 3650 * 86_400)
        #expect(try DaemonSettings.parse("[history]", file: "x") == DaemonSettings())
    }

    @Test func everyKeyIsRead() throws {
        let settings = try DaemonSettings.parse(
            """
            [log]
            level = "debug"

            [delivery]
            server-timeout = 2.5

            [missed]
            policy = "deliver-late"
            late-window = "2h30m"

            [quiet-hours]
            start = "22:00"
            end = "7:00"

            [flood]
            rate = 0.5
            burst = 3
            """, file: "chime.toml")
        #expect(settings.logLevel == .debug)
        #expect(settings.serverTimeout == .milliseconds(2500))
        #expect(settings.missedPolicy == .deliverLate(window: 9000))
        #expect(
            settings.quietHours == QuietHours(start: TimeOfDay(hour: 22, minute: 0), end: TimeOfDay(hour: 7, minute: 0))
        )
        #expect(settings.flood == FloodControl(rate: 0.5, burst: 3))
        #expect(try DaemonSettings.parse("", file: "x") == DaemonSettings())
        #expect(try DaemonSettings.parse("[delivery]\nserver-timeout = 3", file: "x").serverTimeout == .seconds(3))
    }

    @Test(arguments: [
        ("policy = \"deliver-late\"", MissedPolicy.deliverLate(window: 3600)),
        ("policy = \"deliver-late\"\nlate-window = \"90s\"", .deliverLate(window: 90)),
        ("policy = \"coalesce\"", .coalesce),
        ("policy = \"skip\"", .skip),
        ("", .deliverLate(window: 3600)),
    ])
    func theMissedPolicyIsReadWithItsWindow(keys: String, policy: MissedPolicy) throws {
        #expect(try DaemonSettings.parse("[missed]\n" + keys, file: "x").missedPolicy == policy)
    }

    @Test func floodKeysDefaultOneByOne() throws {
        #expect(try DaemonSettings.parse("[flood]\nrate = 20", file: "x").flood == FloodControl(rate: 20, burst: 10))
        #expect(try DaemonSettings.parse("[flood]\nburst = 1", file: "x").flood == FloodControl(rate: 5, burst: 1))
    }

    @Test func quietHoursMayEndBeforeTheyStartAndAnEmptySectionMeansNone() throws {
        let overnight = try DaemonSettings.parse("[quiet-hours]\nstart = \"23:30\"\nend = \"06:15\"", file: "x")
        #expect(
            overnight.quietHours
                == QuietHours(start: TimeOfDay(hour: 23, minute: 30), end: TimeOfDay(hour: 6, minute: 15)))
        #expect(try DaemonSettings.parse("[quiet-hours]\n# start = \"22:00\"", file: "x").quietHours == nil)
    }

    @Test(arguments: [
        (
            "[log]\nlevel = \"loud\"", 2,
            "[log] level must be one of trace, debug, info, notice, warning, error, critical"
        ),
        (
            "[log]\nlevle = \"info\"", 2,
            "unknown key levle in [log]; did you mean level? Known keys: level"
        ),
        (
            "[logs]\nlevel = \"info\"", 1,
            "unknown section [logs]; did you mean [log]? Known sections: [log], [delivery], [missed], [quiet-hours], "
                + "[flood], [phrases], [limits], [history]"
        ),
        (
            "[delivery]\n\nserver-timeout = -1", 3,
            "[delivery] server-timeout must be a number of seconds between 0 and 300"
        ),
        (
            "[delivery]\nserver-timeout = \"ten\"", 2,
            "[delivery] server-timeout must be a number of seconds between 0 and 300"
        ),
        ("log = \"info\"", 1, "log must be a section: write [log] with its keys below"),
        (
            "[missed]\npolicy = \"late\"", 2,
            "policy = \"late\" is not a policy; use \"deliver-late\", \"coalesce\", \"skip\""
        ),
        (
            "[missed]\npolicy = \"skip\"\nlate-window = \"1h\"", 3,
            "late-window applies only with policy = \"deliver-late\"; remove it, or change policy"
        ),
        (
            "[missed]\nlate-window = \"1h\"", 2,
            "late-window applies only with policy = \"deliver-late\"; add that line or remove this one"
        ),
        (
            "[missed]\npolicy = \"deliver-late\"\nlate-window = \"an hour\"", 3,
            "late-window: cannot read \"an hour\" (at character 1): expected a duration such as 90s, 10m, 1h30m or 2d "
                + "(units s, m, h, d, w); e.g. late-window = \"1h\""
        ),
        (
            "[missed]\npolicy = \"deliver-late\"\nlate-window = 3600", 3,
            "late-window must be text in quotes, not an integer; e.g. late-window = \"1h\""
        ),
        (
            "[quiet-hours]\nstart = \"22:00\"", 2,
            "[quiet-hours] needs end as well as start; add end = \"07:00\""
        ),
        (
            "[quiet-hours]\n\nend = \"07:00\"", 3,
            "[quiet-hours] needs start as well as end; add start = \"22:00\""
        ),
        (
            "[quiet-hours]\nstart = \"22:00\"\nend = \"22:00\"", 3,
            "[quiet-hours] start and end are both 22:00; give a span such as start = \"22:00\", end = \"07:00\", "
                + "or remove the section"
        ),
        (
            "[quiet-hours]\nstart = \"10pm\"\nend = \"07:00\"", 2,
            "[quiet-hours] start = \"10pm\" is not a time of day; write HH:MM, e.g. start = \"22:00\""
        ),
        (
            "[quiet-hours]\nstart = \"22:00\"\nend = \"24:00\"", 3,
            "[quiet-hours] end = \"24:00\" is not a time of day; write HH:MM, e.g. end = \"07:00\""
        ),
        ("[flood]\nrate = 0", 2, "[flood] rate must be a number of notifications per second above 0 and at most 1000"),
        (
            "[flood]\nrate = 1001", 2,
            "[flood] rate must be a number of notifications per second above 0 and at most 1000"
        ),
        ("[flood]\nburst = 0", 2, "[flood] burst must be a whole number of notifications from 1 to 10000"),
        ("[flood]\nburst = 2.5", 2, "[flood] burst must be a whole number of notifications from 1 to 10000"),
        (
            "[limits]\nbytes-per-app = 65535", 2,
            "[limits] bytes-per-app must be 65536 to 17179869184 (bytes an app keeps in chimed; the default is "
                + "33554432, 32 MiB)"
        ),
        ("[limits]\ngroups-per-app = 0", 2, "[limits] groups-per-app must be 1 to 100000"),
        ("[limits]\ngroups-per-app = 100001", 2, "[limits] groups-per-app must be 1 to 100000"),
        (
            "[limits]\nbytes-per-app = \"32M\"", 2,
            "bytes-per-app must be a whole number, not text; e.g. bytes-per-app = 33554432"
        ),
        ("[history]\nmax-age = \"59m\"", 2, "[history] max-age must be 1h to 3650d; e.g. max-age = \"90d\""),
        ("[history]\nmax-age = \"3651d\"", 2, "[history] max-age must be 1h to 3650d; e.g. max-age = \"90d\""),
        (
            "[history]\nmax-age = 90", 2,
            "max-age must be text in quotes, not an integer; e.g. max-age = \"90d\""
        ),
        (
            "[history]\nmax-age = \"ninety days\"", 2,
            "max-age: cannot read \"ninety days\" (at character 1): expected a duration such as 90s, 10m, 1h30m or "
                + "2d (units s, m, h, d, w); e.g. max-age = \"90d\""
        ),
        ("[history]\nmax-entries = 0", 2, "[history] max-entries must be 1 to 10000000"),
        ("[history]\nmax-entries = 10000001", 2, "[history] max-entries must be 1 to 10000000"),
        (
            "[history]\nmax-entries = 1e5", 2,
            "max-entries must be a whole number, not a number; e.g. max-entries = 100000"
        ),
        (
            "[history]\nmax-entrys = 5", 2,
            "unknown key max-entrys in [history]; did you mean max-entries? Known keys: max-age, max-entries"
        ),
        (
            "[flood]\nrate = 5\nburts = 10", 3,
            "unknown key burts in [flood]; did you mean burst? Known keys: rate, burst"
        ),
    ])
    func badFilesNameTheFileTheLineAndTheReason(text: String, line: Int, reason: String) {
        let file = "/home/u/.config/chime/chime.toml"
        #expect(throws: ConfigError(file: file, line: line, reason: reason)) {
            try DaemonSettings.parse(text, file: file)
        }
    }

    @Test func aSyntaxErrorNamesTomlKitsLine() {
        #expect {
            try DaemonSettings.parse("[log]\nlevel = \"info\"\n[delivery\n", file: "c.toml")
        } throws: { error in
            guard let error = error as? ConfigError else { return false }
            return error.line == 3 && error.reason.hasPrefix("not valid TOML: ")
                && error.description.hasPrefix("c.toml:3: not valid TOML: ")
        }
    }

    @Test func aMissingFileMeansTheDefaults() throws {
        #expect(try DaemonSettings.load(path: "/nonexistent/chime.toml") == DaemonSettings())
    }

    @Test func theDefaultPathsFollowXDG() {
        #expect(DaemonSettings.defaultPath(environment: ["XDG_CONFIG_HOME": "/x"]) == "/x/chime/chime.toml")
        #expect(DaemonSettings.defaultPath(environment: ["HOME": "/home/u"]) == "/home/u/.config/chime/chime.toml")
        #expect(
            DaemonSettings.defaultPath(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"])
                == "/home/u/.config/chime/chime.toml")
        #expect(DaemonSettings.defaultGroupsDirectory(environment: ["XDG_CONFIG_HOME": "/x"]) == "/x/chime/groups")
        #expect(
            DaemonSettings.defaultGroupsDirectory(environment: ["HOME": "/home/u"]) == "/home/u/.config/chime/groups")
        #expect(
            DaemonSettings.defaultGroupsDirectory(environment: ["HOME": "/home/u", "XDG_CONFIG_HOME": "relative"])
                == "/home/u/.config/chime/groups")
    }

    @Test func theErrorDescriptionIsFileLineReason() {
        #expect(ConfigError(file: "a.toml", line: 4, reason: "bad").description == "a.toml:4: bad")
        #expect(ConfigError(file: "a.toml", line: nil, reason: "bad").description == "a.toml: bad")
    }
}

/// The repository's `config/` folder, found from this file's path.
enum ConfigFolder {
    static var path: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config").path
    }
}
