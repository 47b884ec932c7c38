import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process a test starts and must stop: SIGTERM, then SIGKILL if it does not exit in time.
/// Its stdout and stderr go to files the test can read.
///
/// It is spawned with posix_spawn and an empty signal mask: the test runner's threads block most
/// signals, and Foundation's Process passes that mask on, so a child would ignore SIGTERM.
public final class ManagedProcess: @unchecked Sendable {
    // @unchecked Sendable: immutable after init; `exited` guards its own state.
    public let executable: String
    public let pid: Int32
    public let stdoutURL: URL
    public let stderrURL: URL
    private let exited = ExitBox()

    /// Where the output files go unless a test says: a folder of this test process's own, which goes
    /// when the process exits.
    public static let outputFolder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("chime-test-output-\(getpid())")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: ManagedProcess.outputFolder) }
        return url
    }()

    /// Starts `executable` with `arguments`; `environment` is added to (and overrides) the test's own.
    public init(
        _ executable: String, _ arguments: [String] = [], environment: [String: String] = [:],
        directory: URL = ManagedProcess.outputFolder
    ) throws {
        self.executable = executable
        var env = ProcessInfo.processInfo.environment
        // A child must not talk to a service manager a test pretends to be.
        env.removeValue(forKey: "NOTIFY_SOCKET")
        for (key, value) in environment { env[key] = value }
        let stem = "\(URL(fileURLWithPath: executable).lastPathComponent)-\(UUID().uuidString.prefix(8))"
        stdoutURL = directory.appendingPathComponent(stem + ".out")
        stderrURL = directory.appendingPathComponent(stem + ".err")

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdoutURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderrURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw NSError(
                domain: "ManagedProcess", code: Int(rc),
                userInfo: [
                    NSLocalizedDescriptionKey: "cannot start \(executable): \(String(cString: strerror(rc)))"
                ])
        }
        self.pid = pid
        let child = pid
        let box = exited
        let thread = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
            let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
            box.finish(code)
        }
        thread.start()
    }

    /// Whether the process has exited (and was reaped).
    public var hasExited: Bool { exited.isFinished }

    /// What the process wrote to stdout so far.
    public var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }
    /// What the process wrote to stderr so far.
    public var stderr: String { (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "" }

    /// Waits for the process to exit by itself; returns its status, or nil after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        await exited.wait(timeout: timeout)
    }

    /// Sends `signal` to the process.
    public func kill(_ signal: Int32) {
        if !exited.isFinished { _ = Glibc.kill(pid, signal) }
    }

    /// Stops the process: SIGTERM, then SIGKILL after `grace`. Returns the exit status.
    @discardableResult
    public func stop(grace: Duration = .seconds(5)) async -> Int32 {
        if !exited.isFinished { _ = Glibc.kill(pid, SIGTERM) }
        if let status = await exited.wait(timeout: grace) { return status }
        _ = Glibc.kill(pid, SIGKILL)
        return await exited.wait(timeout: .seconds(30)) ?? -1
    }

    /// Waits until stderr contains `text` (checked whenever the file grows), or throws after `timeout`.
    public func waitForStderr(containing text: String, timeout: Duration = .seconds(20)) async throws {
        try await Await.condition(
            "stderr of \(URL(fileURLWithPath: executable).lastPathComponent) contains \(text)",
            timeout: timeout, watching: stderrURL
        ) { self.stderr.contains(text) }
    }

    /// Waits until stdout contains `text` (checked whenever the file grows), or throws after `timeout`.
    public func waitForStdout(containing text: String, timeout: Duration = .seconds(20)) async throws {
        try await Await.condition(
            "stdout of \(URL(fileURLWithPath: executable).lastPathComponent) contains \(text)",
            timeout: timeout, watching: stdoutURL
        ) { self.stdout.contains(text) }
    }

    /// Cleans up the output files.
    public func removeFiles() {
        try? FileManager.default.removeItem(at: stdoutURL)
        try? FileManager.default.removeItem(at: stderrURL)
    }
}

extension ManagedProcess {
    /// What a tool run to its end (`run`) printed, and how it exited.
    public struct Outcome: Sendable {
        public var status: Int32
        public var stdout: Data
        public var stderr: String
        /// stdout as text.
        public var output: String { String(decoding: stdout, as: UTF8.self) }
    }

    /// Runs `executable` to its end and returns what it printed; its output files are removed. Throws when
    /// it does not finish within `timeout` (it is stopped then) and, with `check`, when its status is not 0.
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], directory: URL,
        timeout: Duration = .seconds(20), check: Bool = true
    ) async throws -> Outcome {
        let process = try ManagedProcess(executable, arguments, environment: environment, directory: directory)
        defer { process.removeFiles() }
        let command = ([URL(fileURLWithPath: executable).lastPathComponent] + arguments).joined(separator: " ")
        guard let status = await process.waitForExit(timeout: timeout) else {
            await process.stop()
            throw HarnessFailure("\(command) did not finish within \(timeout)")
        }
        let outcome = Outcome(
            status: status, stdout: (try? Data(contentsOf: process.stdoutURL)) ?? Data(), stderr: process.stderr)
        guard !check || status == 0 else {
            throw HarnessFailure("\(command) failed with status \(status): \(outcome.stderr)")
        }
        return outcome
    }
}

/// Resolves waiters when the process exits.
final class ExitBox: @unchecked Sendable {
    // @unchecked Sendable: all state is guarded by `lock`.
    private let lock = NSLock()
    private var status: Int32?
    private var waiters: [CheckedContinuation<Int32?, Never>] = []

    var isFinished: Bool { lock.withLock { status != nil } }

    func finish(_ status: Int32) {
        lock.lock()
        self.status = status
        let w = waiters
        waiters = []
        lock.unlock()
        for c in w { c.resume(returning: status) }
    }

    func wait(timeout: Duration) async -> Int32? {
        await withTaskGroup(of: Int32?.self) { group in
            group.addTask {
                await withCheckedContinuation { c in
                    let done: Int32? = self.lock.withLock {
                        if let s = self.status { return s }
                        self.waiters.append(c)
                        return nil
                    }
                    if let done { c.resume(returning: done) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            if first != nil {
                group.cancelAll()
                return first
            }
            // Timed out: the first task is still waiting; resolve it so the group can finish.
            let w = self.lock.withLock {
                let w = self.waiters
                self.waiters = []
                return w
            }
            for c in w { c.resume(returning: nil) }
            return nil
        }
    }
}

/// Waiting for conditions without fixed sleeps.
public enum Await {
    public struct TimedOut: Error, CustomStringConvertible {
        public var what: String
        public var description: String { "timed out waiting until \(what)" }
    }

    /// Re-checks `condition` each time `file` changes (inotify), until it holds or `timeout` passes.
    public static func condition(
        _ what: String, timeout: Duration, watching file: URL, _ condition: @escaping @Sendable () -> Bool
    ) async throws {
        if condition() { return }
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard fd >= 0 else { throw TimedOut(what: what + " (inotify unavailable)") }
        defer { close(fd) }
        _ = inotify_add_watch(fd, file.path, UInt32(IN_MODIFY | IN_CLOSE_WRITE))
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition() { return }
            // Block in poll(2) until the file changes; the bound only caps how long one wait can be.
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let remaining = deadline - ContinuousClock.now
            let ms = max(
                1,
                min(
                    Int32(
                        remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000),
                    1000))
            await Task.detached { _ = poll(&pfd, 1, ms) }.value
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = read(fd, &buffer, buffer.count)
        }
        if condition() { return }
        throw TimedOut(what: what)
    }

    /// Asks `condition` every `interval` until it holds, or throws after `timeout`: for state that
    /// announces no change (a server's popups on screen). `describe` adds what was last seen to the failure.
    public static func polling(
        _ what: String, timeout: Duration = .seconds(20), interval: Duration = .milliseconds(100),
        describe: () -> String = { "" }, _ condition: () async throws -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + timeout
        while try await !condition() {
            guard ContinuousClock.now < deadline else {
                let seen = describe()
                throw TimedOut(what: what + (seen.isEmpty ? "" : " (\(seen))"))
            }
            try await Task.sleep(for: interval)
        }
    }
}
