import ChimeRelay
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// How chimed reaches the notification server: its own bus connection, or the notification relay.
public protocol NotificationTransport: Sendable {
    /// Calls a method of the notification server; `completion` gets the answer. `rows` are the outbox
    /// rows a Notify stands for: the relay stores the id the server answers with on them, even when chimed
    /// is gone by then.
    func call(
        _ message: DBusMessage, timeout: Duration, rows: [UInt64],
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void)

    /// A call made ready ahead of time, so that making it later costs only sending it.
    func prepare(_ message: DBusMessage, timeout: Duration, rows: [UInt64]) -> PreparedCall

    /// Makes a call `prepare` made ready.
    func call(_ prepared: PreparedCall, completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void)
}

/// A call to the notification server made ready ahead of time (`NotificationTransport.prepare`): for the
/// relay, its frame with the message already serialized.
public struct PreparedCall: Sendable {
    public var message: DBusMessage
    public var timeout: Duration
    public var rows: [UInt64]
    /// The relay's frame (its tag is set when it is sent); nil for a transport that has none.
    var frame: [UInt8]?
}

extension NotificationTransport {
    public func prepare(_ message: DBusMessage, timeout: Duration, rows: [UInt64]) -> PreparedCall {
        PreparedCall(message: message, timeout: timeout, rows: rows)
    }

    public func call(
        _ prepared: PreparedCall, completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        call(prepared.message, timeout: prepared.timeout, rows: prepared.rows, completion: completion)
    }

    func call(_ message: DBusMessage, timeout: Duration, rows: [UInt64]) async throws(DBusError) -> DBusMessage {
        try await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) in
            call(message, timeout: timeout, rows: rows) { continuation.resume(returning: $0) }
        }.get()
    }
}

extension DBusConnection: NotificationTransport {
    public func call(
        _ message: DBusMessage, timeout: Duration, rows: [UInt64],
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        call(message, timeout: timeout, completion: completion)
    }
}

/// chimed's end of the relay: starts the relay process, passes calls to it and their answers back, and
/// starts it again should it stop.
final class RelayLink: NotificationTransport, @unchecked Sendable {
    // @unchecked Sendable: the mutable state is under `state`'s lock, or on `queue`.
    struct State {
        var socket: Int32 = -1
        var pid: pid_t = 0
        var nextTag: UInt64 = 1
        var waiting: [UInt64: @Sendable (Result<DBusMessage, DBusError>) -> Void] = [:]
        /// chimed closed its end (`finish`): no relay is started again.
        var finished = false
    }

    let arguments: [String]
    let lockDescriptor: Int32
    let logger: Logger
    let queue = DispatchQueue(label: "chimed.relay-link", qos: .userInitiated)
    private let state = Mutex(State())
    /// On `queue`.
    private var reader: DispatchSourceRead?
    private var buffer = [UInt8](repeating: 0, count: NotificationRelay.frameLimit)
    /// The largest frame the socket takes (its send buffer); a larger call goes over `direct`.
    private let frameCapacity = Mutex(0)
    /// chimed's own connection, for a call too large for the socket: it is made without a receipt.
    let direct = Mutex<DBusConnection?>(nil)
    /// Signals the server addressed to the relay; on `queue`.
    let onSignal: @Sendable (DBusMessage) -> Void
    /// The relay stopped and cannot be started again: chimed cannot go on.
    let onFailure: @Sendable (String) -> Void
    /// A Notify answered after its timeout (`NotificationRelay.lateTag`); on `queue`.
    let onLateAnswer: @Sendable (UInt32) -> Void

    /// Starts the relay: `arguments` run it (the executable first), `lockDescriptor` is the relay lock
    /// it inherits.
    init(
        arguments: [String], lockDescriptor: Int32, logger: Logger,
        onSignal: @escaping @Sendable (DBusMessage) -> Void, onFailure: @escaping @Sendable (String) -> Void,
        onLateAnswer: @escaping @Sendable (UInt32) -> Void = { _ in }
    ) throws(DaemonError) {
        self.arguments = arguments
        self.lockDescriptor = lockDescriptor
        self.logger = logger
        self.onSignal = onSignal
        self.onFailure = onFailure
        self.onLateAnswer = onLateAnswer
        let spawned: Result<Void, DaemonError> = queue.sync {
            do throws(DaemonError) { try spawn() } catch { return .failure(error) }
            return .success(())
        }
        try spawned.get()
    }

    /// Starts the relay process with a new socket pair; on `queue`.
    private func spawn() throws(DaemonError) {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw DaemonError(
                "cannot make a socket pair for the notification relay: \(String(cString: strerror(errno)))")
        }
        var size = Int32(NotificationRelay.frameLimit)
        for fd in pair { setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
        // The kernel caps the buffer (net.core.wmem_max) and reports it doubled for its bookkeeping.
        var granted: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &granted, &length)
        frameCapacity.withLock { $0 = Int(granted) / 2 - 1024 }
        // Well above the descriptors the relay gets them as, so that each dup2 below clears close-on-exec.
        let relayEnd = fcntl(pair[1], F_DUPFD_CLOEXEC, 64)
        let lockCopy = fcntl(lockDescriptor, F_DUPFD_CLOEXEC, 64)
        close(pair[1])
        defer {
            close(relayEnd)
            close(lockCopy)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, relayEnd, NotificationRelay.socketDescriptor)
        posix_spawn_file_actions_adddup2(&actions, lockCopy, NotificationRelay.lockDescriptor)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ)
        guard status == 0 else {
            close(pair[0])
            throw DaemonError(
                "cannot start the notification relay \(arguments[0]): \(String(cString: strerror(status)))")
        }
        state.withLock {
            $0.socket = pair[0]
            $0.pid = pid
        }
        let reader = DispatchSource.makeReadSource(fileDescriptor: pair[0], queue: queue)
        reader.setEventHandler { [weak self] in self?.readFrames(from: pair[0]) }
        reader.resume()
        self.reader = reader
        logger.debug("notification relay started", metadata: ["pid": "\(pid)"])
    }

    func call(
        _ message: DBusMessage, timeout: Duration, rows: [UInt64],
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        let frame: [UInt8]
        do {
            frame = try NotificationRelay.Request(tag: 0, timeout: timeout, rows: rows, message: message).frame()
        } catch {
            completion(.failure(error))
            return
        }
        transmit(frame, message: message, timeout: timeout, completion: completion)
    }

    func prepare(_ message: DBusMessage, timeout: Duration, rows: [UInt64]) -> PreparedCall {
        PreparedCall(
            message: message, timeout: timeout, rows: rows,
            frame: try? NotificationRelay.Request(tag: 0, timeout: timeout, rows: rows, message: message).frame())
    }

    func call(_ prepared: PreparedCall, completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void) {
        guard let frame = prepared.frame else {
            call(prepared.message, timeout: prepared.timeout, rows: prepared.rows, completion: completion)
            return
        }
        transmit(frame, message: prepared.message, timeout: prepared.timeout, completion: completion)
    }

    /// Sends a call's frame to the relay (or, when it is too large for the relay, makes the call itself).
    private func transmit(
        _ frame: [UInt8], message: DBusMessage, timeout: Duration,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        var frame = frame
        if frame.count > frameCapacity.withLock({ $0 }), let direct = direct.withLock({ $0 }) {
            logger.notice(
                "a call of \(frame.count) bytes is too large for the notification relay; chimed makes it itself")
            direct.call(message, timeout: timeout, completion: completion)
            return
        }
        let (tag, socket) = state.withLock { state in
            let tag = state.nextTag
            state.nextTag += 1
            state.waiting[tag] = completion
            return (tag, state.socket)
        }
        Swift.withUnsafeBytes(of: tag.littleEndian) { frame.replaceSubrange(0..<8, with: $0) }
        let sent = frame.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent != frame.count {
            // The relay is not running (it is started again): the call never reached the server.
            state.withLock { $0.waiting.removeValue(forKey: tag) }?(
                .failure(DBusError(.noReply, "the notification relay is not running")))
        }
    }

    /// Reads the relay's answers and signals; on `queue`.
    private func readFrames(from socket: Int32) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0, errno == EINTR { continue }
            if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return }
            guard count > 8 else {
                relayStopped(socket: socket)
                return
            }
            var frame = NotificationRelay.FrameReader(bytes: buffer[0..<count])
            guard let tag = frame.u64(), let message = try? DBusMessage(serialized: Array(frame.rest)) else {
                logger.error("the notification relay sent a frame that is not a D-Bus message; ignored")
                continue
            }
            if tag == 0 {
                onSignal(message)
                continue
            }
            if tag & NotificationRelay.lateTag != 0 {
                if case .uint32(let id)? = message.body.first { onLateAnswer(id) }
                continue
            }
            let answer: Result<DBusMessage, DBusError> =
                message.kind == .error
                ? .failure(
                    DBusError(
                        name: message.errorName ?? DBusError.Name.failed.rawValue,
                        message: message.body.first.flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""))
                : .success(message)
            state.withLock { $0.waiting.removeValue(forKey: tag) }?(answer)
        }
    }

    /// The relay's end closed: the calls it had are answered as not answered (they may or may not have
    /// reached the server), and a new relay is started.
    private func relayStopped(socket: Int32) {
        reader?.cancel()
        reader = nil
        let (pid, waiting) = state.withLock { state in
            let taken = (state.pid, state.waiting)
            state.waiting = [:]
            state.socket = -1
            return taken
        }
        close(socket)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        for completion in waiting.values { completion(.failure(DBusError(.noReply, "the notification relay stopped"))) }
        logger.error("the notification relay stopped (wait status \(status)); starting it again in a second")
        queue.asyncAfter(deadline: .now() + 1) { [self] in
            guard !state.withLock({ $0.finished }) else { return }
            do throws(DaemonError) {
                try spawn()
            } catch {
                onFailure(error.message)
            }
        }
    }

    /// Closes chimed's end: the relay finishes what it has and exits. Waits until it has exited, and
    /// reaps it, for at most the relay's linger limit and a second: a relay left to outlive chimed would
    /// stay a defunct process until the system's init collects it.
    func finish() async {
        // On `queue`, which owns the reader; without blocking the calling thread meanwhile.
        let pid: pid_t = await withCheckedContinuation { continuation in
            queue.async { [self] in
                reader?.cancel()
                reader = nil
                let (socket, pid) = state.withLock { state in
                    let taken = (state.socket, state.pid)
                    state.socket = -1
                    state.pid = 0
                    state.finished = true
                    return taken
                }
                if socket >= 0 { shutdown(socket, Int32(SHUT_WR)) }
                continuation.resume(returning: socket >= 0 ? pid : 0)
            }
        }
        guard pid > 0 else { return }
        let status = await Self.reap(pid, waitingAtMost: NotificationRelay.lingerLimit + .seconds(1))
        if let status {
            logger.debug("notification relay exited", metadata: ["pid": "\(pid)", "wait status": "\(status)"])
        } else {
            logger.warning(
                "the notification relay (pid \(pid)) is still waiting for the notification server; leaving it")
        }
    }

    /// Waits for the child `pid` to exit and reaps it; its wait status, or nil when it has not exited
    /// within `limit` (it is reaped when it does, while chimed runs).
    static func reap(_ pid: pid_t, waitingAtMost limit: Duration) async -> Int32? {
        let outcome = Mutex<(done: Bool, continuation: CheckedContinuation<Int32?, Never>?)>((false, nil))
        @Sendable func settle(_ status: Int32?) {
            let continuation = outcome.withLock { state -> CheckedContinuation<Int32?, Never>? in
                guard !state.done else { return nil }
                state.done = true
                defer { state.continuation = nil }
                return state.continuation
            }
            continuation?.resume(returning: status)
        }
        return await withCheckedContinuation { continuation in
            outcome.withLock { $0.continuation = continuation }
            // A queue of its own for the blocking wait; not a global queue (see GlobalExecutor.c in CLinux).
            DispatchQueue(label: "chimed.relay-reaper").async {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                settle(status)
            }
            DispatchQueue(label: "chimed.relay-reaper.limit").asyncAfter(
                deadline: .now() + limit.dispatchInterval
            ) { settle(nil) }
        }
    }
}
