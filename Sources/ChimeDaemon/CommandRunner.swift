import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a content command: no shell, standard input from /dev/null, standard output captured, killed
/// (with everything it started) when it takes longer than its timeout.
enum CommandRunner {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// At most this much output is read; the rest is ignored.
    static let outputLimit = 64 * 1024

    /// Runs `arguments` (the program is looked up on PATH) and returns its standard output when it
    /// exits with status 0 within `timeout` seconds.
    static func run(_ arguments: [String], timeout: TimeInterval) async -> Result<String, Failure> {
        await withCheckedContinuation { continuation in
            // A thread of its own: reading and waiting block, and a content command is rare.
            Thread.detachNewThread {
                continuation.resume(returning: runBlocking(arguments, timeout: timeout))
            }
        }
    }

    private static func runBlocking(_ arguments: [String], timeout: TimeInterval) -> Result<String, Failure> {
        guard let program = arguments.first else { return .failure(Failure(description: "no program given")) }
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else {
            return .failure(Failure(description: "cannot make a pipe: \(String(cString: strerror(errno)))"))
        }
        // Neither end may leak into other children; dup2 gives the command its own copy as stdout.
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, writeEnd, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // chimed blocks the signals it handles itself; the command starts with none blocked and
        // default handlers, in a process group of its own so a timeout kills everything it started.
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        close(writeEnd)
        guard rc == 0 else {
            close(readEnd)
            return .failure(Failure(description: "cannot start \(program): \(String(cString: strerror(rc)))"))
        }
        let timedOut = TimeoutFlag()
        let killer = DispatchWorkItem {
            timedOut.set()
            kill(-pid, SIGKILL)
        }
        // Not a global queue: its threads are the ones libdispatch watches with a timer for as long as
        // the process lives (see GlobalExecutor.c in CLinux).
        DispatchQueue(label: "chimed.command-timeout").asyncAfter(deadline: .now() + timeout, execute: killer)
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(readEnd, &buffer, buffer.count)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            if output.count < outputLimit { output += buffer[0..<min(n, outputLimit - output.count)] }
        }
        close(readEnd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        killer.cancel()
        if timedOut.isSet { return .failure(Failure(description: "it ran longer than \(timeout) s and was stopped")) }
        let signal = status & 0x7f
        if signal != 0 { return .failure(Failure(description: "it was killed by signal \(signal)")) }
        let code = (status >> 8) & 0xff
        guard code == 0 else { return .failure(Failure(description: "it exited with status \(code)")) }
        return .success(String(decoding: output, as: UTF8.self))
    }
}

/// Set once by the timeout, read after the command ended.
private final class TimeoutFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
