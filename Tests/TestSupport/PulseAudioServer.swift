import Foundation

/// A real PulseAudio of a test's own: a null sink (no sound card) whose monitor a `SinkRecording`
/// records, reached through a socket in its own folder (inside the bus's, so it goes when the bus stops).
/// A client finds it through `environment` (`PULSE_SERVER`); nothing else can. `stop()` stops it by PID.
public final class PulseAudioServer: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the process is itself Sendable.
    public static let sinkName = "chime_test"
    /// The format the recordings are made in: mono 16-bit at 16 kHz, enough to tell sound from silence.
    public static let sampleRate = 16_000

    public let process: ManagedProcess
    public let directory: URL
    public var socket: String { directory.appendingPathComponent("native").path }
    /// `PULSE_SERVER` for a client of this server, and `CANBERRA_DRIVER` so that libcanberra tries no
    /// other output (ALSA) when it cannot reach it.
    public var environment: [String: String] { ["PULSE_SERVER": "unix:" + socket, "CANBERRA_DRIVER": "pulse"] }

    /// Starts PulseAudio with only a null sink and the native protocol on a socket of its own, and returns
    /// once it answers `pactl info`.
    public static func start(in parent: URL, timeout: Duration = .seconds(20)) async throws -> PulseAudioServer {
        let directory = parent.appendingPathComponent("pulse-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("native").path
        // -n: no default script, so no module finds sound cards, other sockets or the user's session; no
        // exit when idle; its runtime, state and home folders are the test's.
        let process = try ManagedProcess(
            "/usr/bin/pulseaudio",
            [
                "--daemonize=no", "--exit-idle-time=-1", "-n", "--use-pid-file=no", "--system=no",
                "--realtime=no", "--high-priority=no", "--log-target=stderr",
                "--load=module-null-sink sink_name=\(sinkName) rate=\(sampleRate) channels=1",
                "--load=module-native-protocol-unix socket=\(socket) auth-anonymous=1",
            ],
            environment: [
                "XDG_RUNTIME_DIR": directory.path, "HOME": directory.path,
                "PULSE_RUNTIME_PATH": directory.appendingPathComponent("runtime").path,
                "PULSE_STATE_PATH": directory.appendingPathComponent("state").path,
                "DBUS_SESSION_BUS_ADDRESS": "", "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent",
            ], directory: directory)
        let server = PulseAudioServer(process: process, directory: directory)
        do {
            try await Await.polling(
                "PulseAudio answers on \(socket)", timeout: timeout, describe: { process.stderr }
            ) {
                guard !process.hasExited else { throw HarnessFailure("pulseaudio exited: \(process.stderr)") }
                return try await server.pactl(["info"]).status == 0
            }
        } catch {
            await server.stop()
            throw error
        }
        return server
    }

    private init(process: ManagedProcess, directory: URL) {
        self.process = process
        self.directory = directory
    }

    /// Runs `pactl` against this server.
    public func pactl(_ arguments: [String]) async throws -> ManagedProcess.Outcome {
        try await ManagedProcess.run(
            "/usr/bin/pactl", ["--server", "unix:" + socket] + arguments, environment: environment,
            directory: directory, check: false)
    }

    /// Starts recording what the null sink plays (its monitor), and returns once the first samples came.
    public func record() async throws -> SinkRecording {
        let recorder = try ManagedProcess(
            "/usr/bin/parec",
            [
                "--server", "unix:" + socket, "--device", "\(Self.sinkName).monitor", "--raw", "--format=s16le",
                "--channels=1", "--rate=\(Self.sampleRate)", "--latency-msec=20",
            ], environment: environment, directory: directory)
        let first = SinkRecording(process: recorder, started: Date())
        do {
            try await Await.condition(
                "parec records the null sink's monitor", timeout: .seconds(20), watching: recorder.stdoutURL
            ) { first.samples.count > 0 }
        } catch {
            await recorder.stop()
            throw error
        }
        // The first samples' time, to a few milliseconds (parec's latency is set to 20 ms).
        let recording = SinkRecording(
            process: recorder,
            started: Date().addingTimeInterval(-Double(first.samples.count) / Double(Self.sampleRate)))
        return recording
    }

    public func stop() async {
        await process.stop()
    }
}

/// What a null sink played, as `parec` recorded it: signed 16-bit mono samples, from the moment it started.
public final class SinkRecording: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; the process is itself Sendable.
    public let process: ManagedProcess
    /// About when the first sample was recorded.
    public let started: Date

    init(process: ManagedProcess, started: Date) {
        self.process = process
        self.started = started
    }

    /// About when the first sample louder than `threshold` was recorded; nil: none yet.
    public func firstSound(threshold: Int = 1000) -> Date? {
        samples.firstIndex { abs(Int($0)) > threshold }.map {
            started.addingTimeInterval(Double($0) / Double(PulseAudioServer.sampleRate))
        }
    }

    /// The samples recorded so far.
    public var samples: [Int16] {
        guard let data = try? Data(contentsOf: process.stdoutURL) else { return [] }
        return data.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count - 1, by: 2).map {
                Int16(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: Int16.self))
            }
        }
    }

    /// The largest amplitude among the samples from `offset` on (0: silence).
    public func peak(from offset: Int = 0) -> Int {
        samples.dropFirst(offset).reduce(0) { max($0, abs(Int($1))) }
    }

    /// Waits until a sample after `offset` is louder than `threshold`, or throws after `timeout`.
    public func waitForSound(after offset: Int = 0, threshold: Int = 1000, timeout: Duration = .seconds(20))
        async throws
    {
        try await Await.condition(
            "the null sink plays a sound (a sample above \(threshold))", timeout: timeout,
            watching: process.stdoutURL
        ) { self.peak(from: offset) > threshold }
    }

    public func stop() async {
        await process.stop()
    }
}
