import ArgumentParser
import CLinux
import ChimeConfig
import ChimeDaemon
import ChimeRelay
import ChimeStore
import DBusKit
import Foundation
import Logging
import ServiceLifecycle
import SystemdKit

/// chimed's command line. It is the `chimed` program's, and the `chime` program's when that is started as
/// `chimed` (the installed `chimed` is a link to `chime`: one program for both, so that the Swift runtime,
/// Foundation and ICU's data are in the package once).
public struct Chimed: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "chimed",
        abstract: "The Chime notification scheduler daemon.",
        discussion: """
            chimed owns io.chime.Chime1 on the session bus, keeps the schedule, and delivers each due \
            notification to the desktop's notification server (org.freedesktop.Notifications). When no \
            server is on the bus, due notifications are written to stderr and kept until one appears.

            Groups of timeline entries come from the group files ($XDG_CONFIG_HOME/chime/groups/*.toml) and \
            from apps over D-Bus. The schedule survives restarts; what came due while chimed was not \
            running, while the machine slept or across a clock jump is handled by the missed-trigger \
            policy.

            It stops cleanly on SIGTERM or SIGINT and reads its settings (chime.toml) and the group files \
            again on SIGHUP and whenever they change. Under systemd it reports readiness and status and \
            pings the watchdog.
            """)

    @Option(name: .long, help: "Serve on the bus at this D-Bus address instead of the session bus.")
    var address: String?

    @Option(
        name: .long,
        help:
            "Lowest level to log: trace, debug, info, notice, warning, error, critical (default: chime.toml, else info)."
    )
    var logLevel: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Settings file (default: $XDG_CONFIG_HOME/chime/chime.toml, else ~/.config/chime/chime.toml).",
            valueName: "FILE"))
    var config: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep the schedule in DIR/chime.sqlite (default: $XDG_STATE_HOME/chime, else ~/.local/state/chime).",
            valueName: "DIR"))
    var stateDir: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Read group files from DIR (default: $XDG_CONFIG_HOME/chime/groups, else ~/.config/chime/groups).",
            valueName: "DIR"))
    var groupsDir: String?

    public init() {}

    /// The state directory by the XDG Base Directory rules.
    var resolvedStateDirectory: String {
        if let stateDir { return stateDir }
        let env = ProcessInfo.processInfo.environment
        if let xdg = env["XDG_STATE_HOME"], xdg.hasPrefix("/") { return xdg + "/chime" }
        let home = env["HOME"] ?? NSHomeDirectory()
        return home + "/.local/state/chime"
    }

    /// This executable.
    static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The notification relay's program: beside chimed (a build folder), else in `libexec/chime` beside
    /// chimed's `bin` (`make install`, the Debian package).
    static func relayPath() -> String {
        let folder = URL(fileURLWithPath: executablePath()).deletingLastPathComponent()
        let beside = folder.appendingPathComponent("chime-relay").path
        let installed = folder.deletingLastPathComponent().appendingPathComponent("libexec/chime/chime-relay").path
        return access(beside, X_OK) != 0 && access(installed, X_OK) == 0 ? installed : beside
    }

    public func validate() throws {
        guard let logLevel else { return }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError(
                "'\(logLevel)' is not a log level; use trace, debug, info, notice, warning, error or critical")
        }
    }

    /// Parses the arguments and runs as `AsyncParsableCommand.main` does. The program's entry has taken
    /// over Swift's global executor first (`CLinux_runGlobalJobsOnOvercommitThreads`, GlobalExecutor.c: an
    /// idle chimed must not wake every second), before this call: an `async` call can already run on the
    /// global executor.
    public static func runAsProgram() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }

    public func run() async throws {
        // Every file chimed creates is the user's alone, whatever the
        // umask it was started with: the schedule says what the user does and when.
        umask(0o077)
        // A file size limit (ulimit -f) must make a write fail, which chimed reports, not kill chimed.
        signal(SIGXFSZ, SIG_IGN)
        // A buffer of 1 MiB or more (a big message being read, a page of a listing) is mapped on its own and
        // given back to the system when freed. glibc otherwise raises that threshold each time such a
        // buffer is freed, and later ones stay in the heap: after a few big messages, chimed kept their
        // size for good.
        _ = CLinux_setMmapThreshold(1 << 20)
        let databasePath = resolvedStateDirectory + "/chime.sqlite"
        let settingsPath = config ?? DaemonSettings.defaultPath()
        let settings: DaemonSettings
        do {
            settings = try DaemonSettings.load(path: settingsPath)
        } catch {
            FileHandle.standardError.write(Data("chimed: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let override = logLevel.flatMap { Logger.Level(rawValue: $0) }
        let control = LogLevelControl(override ?? settings.logLevel)
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, control: control) }
        let store: ScheduleStore
        do {
            store = try ScheduleStore(path: databasePath, historyLimits: Daemon.historyLimits(settings))
        } catch {
            FileHandle.standardError.write(Data("chimed: \(error.message)\n".utf8))
            throw ExitCode(1)
        }
        var configuration = Daemon.Configuration(store: store)
        configuration.settingsPath = settingsPath
        configuration.settings = settings
        configuration.applySettings = { new in
            // --log-level on the command line wins over the file, also after a reload.
            if override == nil { control.level = new.logLevel }
        }
        configuration.groupsDirectory = groupsDir ?? DaemonSettings.defaultGroupsDirectory()
        #if CHIME_TEST_HOOKS
            // Debug builds only: the integration tests' controls. A release chimed reads none of these.
            let environment = ProcessInfo.processInfo.environment
            if environment["CHIMED_TEST_HOOKS"] == "1" {
                if let file = environment["CHIMED_TEST_CLOCK_OFFSET_FILE"] {
                    let clock = OffsetClock(file: file)
                    configuration.clock = clock
                    configuration.offsetClock = clock
                }
                if let localtime = environment["CHIMED_TEST_LOCALTIME"] { configuration.localtimePath = localtime }
                configuration.holdFIFO = environment["CHIMED_TEST_HOLD_FIFO"]
                if let boot = environment["CHIMED_TEST_BOOT_TIME"].flatMap(TimeInterval.init) {
                    configuration.bootTime = Date(timeIntervalSince1970: boot)
                }
            }
        #endif
        if let address { configuration.bus = .bus(address) }
        configuration.relay = RelaySettings(
            arguments: [
                Self.relayPath(), "--socket", "\(NotificationRelay.socketDescriptor)", "--receipts",
                DeliveryReceipts.path(besides: databasePath),
            ] + (address.map { ["--address", $0] } ?? []),
            lockPath: databasePath + ".relay-lock")
        configuration.logger = Logger(label: "chimed")
        let daemon = Daemon(configuration: configuration)
        let group = ServiceGroup(
            configuration: .init(
                services: daemon.services(), gracefulShutdownSignals: [.sigterm, .sigint],
                logger: configuration.logger))
        do {
            try await group.run()
        } catch let error as DaemonError {
            if !error.logged { FileHandle.standardError.write(Data("chimed: \(error.message)\n".utf8)) }
            throw ExitCode(error.exitStatus)
        }
    }
}
