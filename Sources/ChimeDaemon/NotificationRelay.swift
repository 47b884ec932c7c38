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

/// The notification relay: a small process of chimed's own that makes chimed's calls to the notification
/// server and stores the id each Notify is answered with, before it exits.
///
/// The server gives a notification its id only in the answer to Notify, so a chimed killed between the
/// call and the answer could not know whether its notification was shown, or what a repeat should
/// replace. The relay outlives such a chimed: it waits for the answers still due, stores their ids on
/// the outbox rows (`DeliveryReceipts`), and exits. It holds chimed's relay lock until then, so the next
/// chimed reads the outbox only after every answer is stored, and finds those rows shown.
///
/// chimed and the relay speak over a socket pair (SOCK_SEQPACKET, one frame per packet). A frame is a
/// D-Bus message in wire format after a small header:
/// - chimed to relay: tag (u64), timeout in ms (u32), row count (u32), the rows' seqs (u64 each), call.
/// - relay to chimed: tag (u64), then the answer (method return or error); tag 0 for a signal the server
///   addressed to the relay (some servers send NotificationClosed and ActionInvoked only to the
///   connection that called Notify).
///
/// The relay ignores SIGTERM, SIGINT and SIGHUP: it stops when chimed's end of the socket closes and no
/// answer is due any more, or when it loses the bus.
public enum NotificationRelay {
    /// The relay's side of the socket pair, in the relay process.
    public static let socketDescriptor: Int32 = 3
    /// The relay lock, inherited from chimed and held until the relay exits.
    public static let lockDescriptor: Int32 = 4
    /// The largest frame either side sends or reads.
    static let frameLimit = 1 << 20
    /// How long the relay goes on waiting for the answers still due once chimed is gone: the next chimed
    /// waits for the relay lock meanwhile.
    static let lingerLimit: Duration = .seconds(10)
    /// How long a call is kept open after its timeout, for an answer that comes late: such an answer of
    /// Notify is passed on as late (`lateTag`), so that chimed closes a popup it has sent again meanwhile.
    static let lateWindow: Duration = .seconds(300)
    /// Added to a call's tag in the frame of an answer that came after its timeout.
    static let lateTag: UInt64 = 1 << 63

    /// The relay process: serves chimed on `socket` until chimed is gone and every answer is stored, or
    /// until it loses the bus. Returns the status to exit with.
    public static func serve(socket: Int32, databasePath: String, bus: DBusConnection.Address) async -> Int32 {
        for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { signal(signalNumber, SIG_IGN) }
        let receipts: DeliveryReceipts
        let connection: DBusConnection
        do {
            receipts = try DeliveryReceipts(path: DeliveryReceipts.path(besides: databasePath))
        } catch {
            return failed("cannot store delivery receipts: \(error)")
        }
        let queue = DispatchQueue(label: "chimed.relay", qos: .userInitiated)
        do {
            connection = try await DBusConnection.connect(bus, queue: queue)
        } catch {
            return failed("cannot connect to the bus: \(error.message)")
        }
        let end = RelayEnd()
        connection.onDisconnect { end.finish(0) }
        let relay = Relay(socket: socket, connection: connection, receipts: receipts, queue: queue, end: end)
        do {
            _ = try await connection.subscribe(
                DBusMatchRule(
                    sender: NotificationServer.name, interface: NotificationServer.interface,
                    path: NotificationServer.path)
            ) { message in
                // Broadcast signals reach chimed's own connection; only those addressed to the relay
                // are passed on.
                if message.destination != nil { relay.reply(tag: 0, message) }
            }
        } catch {
            return failed("cannot subscribe to the notification server's signals: \(error.message)")
        }
        relay.start()
        return await end.status()
    }

    /// Says why the relay cannot go on; returns the status to exit with.
    static func failed(_ message: String) -> Int32 {
        FileHandle.standardError.write(Data("chimed (notification relay): \(message)\n".utf8))
        return 1
    }

    /// The relay's end: the first status given is the one the relay exits with.
    final class RelayEnd: Sendable {
        private let state = Mutex<(status: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

        func finish(_ status: Int32) {
            let waiter = state.withLock { state -> CheckedContinuation<Int32, Never>? in
                guard state.status == nil else { return nil }
                state.status = status
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: status)
        }

        func status() async -> Int32 {
            await withCheckedContinuation { continuation in
                let status = state.withLock { state -> Int32? in
                    if let status = state.status { return status }
                    state.waiter = continuation
                    return nil
                }
                if let status { continuation.resume(returning: status) }
            }
        }
    }

    /// The relay's state, on its queue.
    final class Relay: @unchecked Sendable {
        // @unchecked Sendable: every var is touched on `queue` only.
        let socket: Int32
        let connection: DBusConnection
        let receipts: DeliveryReceipts
        let queue: DispatchQueue
        var reader: DispatchSourceRead?
        var buffer = [UInt8](repeating: 0, count: NotificationRelay.frameLimit)
        /// Calls made and not yet finished: answered (or given up at their timeout), and their receipt
        /// stored.
        var inFlight = 0
        var chimedGone = false
        /// The timers that give up on calls at their timeout, by tag.
        var giveUpTimers: [UInt64: DispatchSourceTimer] = [:]
        /// Calls given up at their timeout and still open for a late answer.
        var givenUp: Set<UInt64> = []
        let end: RelayEnd
        /// Where receipts are written, in the order the answers came.
        let receiptQueue = DispatchQueue(label: "chimed.relay.receipts", qos: .userInitiated)

        init(
            socket: Int32, connection: DBusConnection, receipts: DeliveryReceipts, queue: DispatchQueue,
            end: RelayEnd
        ) {
            self.socket = socket
            self.connection = connection
            self.receipts = receipts
            self.queue = queue
            self.end = end
        }

        func start() {
            queue.async {
                let reader = DispatchSource.makeReadSource(fileDescriptor: self.socket, queue: self.queue)
                reader.setEventHandler { [weak self] in self?.readFrames() }
                reader.resume()
                self.reader = reader
            }
        }

        private func readFrames() {
            while true {
                let count = buffer.withUnsafeMutableBytes {
                    recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK { return }
                }
                guard count > 0 else {
                    // chimed is gone: finish what is due, then go; but not after the linger limit, since the
                    // next chimed waits for the relay lock meanwhile (a call still unanswered then never
                    // got a receipt, and the next chimed sends it again).
                    reader?.cancel()
                    chimedGone = true
                    queue.asyncAfter(deadline: .now() + NotificationRelay.lingerLimit.dispatchInterval) { [self] in
                        end.finish(0)
                    }
                    exitWhenIdle()
                    return
                }
                guard let request = Request(frame: buffer[0..<count]) else {
                    reader?.cancel()
                    end.finish(NotificationRelay.failed("chimed sent a frame that is not a call"))
                    return
                }
                inFlight += 1
                let tag = request.tag
                // Given up at its timeout (chimed hears NoReply, as from the bus), but kept open for a late
                // answer: a server that was stopped or busy answers every call it got once it goes on.
                let timer = DispatchSource.makeTimerSource(queue: queue)
                timer.schedule(deadline: .now() + request.timeout.dispatchInterval)
                timer.setEventHandler { [weak self] in self?.giveUp(tag) }
                timer.resume()
                giveUpTimers[tag] = timer
                // On the connection's queue, so the call leaves now, in the order chimed asked; its answer
                // comes back there too.
                connection.call(request.message, timeout: request.timeout + NotificationRelay.lateWindow) {
                    [self] result in
                    if givenUp.remove(tag) != nil { return lateAnswer(to: request, result) }
                    giveUpTimers.removeValue(forKey: tag)?.cancel()
                    switch result {
                    case .success(let answer):
                        // chimed hears of the answer at once, and the receipt is stored on a queue of its
                        // own: under a load of chimed's own writes, waiting for the database here would
                        // hold up the next notification, which chimed sends only after this answer. The
                        // relay exits only after the receipt is stored, so a chimed killed now still
                        // finds the rows shown at its next start.
                        reply(tag: request.tag, answer)
                        guard !request.rows.isEmpty, case .uint32(let id)? = answer.body.first else {
                            return finished()
                        }
                        receiptQueue.async { [self] in
                            do {
                                try receipts.record(notificationID: id, seqs: request.rows)
                            } catch {
                                FileHandle.standardError.write(Data("chimed (notification relay): \(error)\n".utf8))
                            }
                            queue.async { self.finished() }
                        }
                    case .failure(let error):
                        reply(
                            tag: request.tag,
                            DBusMessage(kind: .error, errorName: error.name, body: [.string(error.message)]))
                        finished()
                    }
                }
            }
        }

        /// A call's timeout passed without an answer: chimed hears NoReply; the call stays open for a late
        /// answer (`lateAnswer`).
        private func giveUp(_ tag: UInt64) {
            guard let timer = giveUpTimers.removeValue(forKey: tag) else { return }
            timer.cancel()
            givenUp.insert(tag)
            reply(
                tag: tag,
                DBusMessage(
                    kind: .error, errorName: DBusError.Name.noReply.rawValue,
                    body: [.string("the notification server did not answer in time")]))
            finished()
        }

        /// An answer that came after its call's timeout. A Notify's id goes to chimed as late (chimed sent
        /// the notification again meanwhile, or will, and closes this popup), unless the server answered
        /// with the id the call replaces: that popup is the one chimed keeps.
        private func lateAnswer(to request: Request, _ result: Result<DBusMessage, DBusError>) {
            guard case .success(let answer) = result, request.message.member == "Notify",
                case .uint32(let id)? = answer.body.first
            else { return }
            if request.message.body.count > 1, case .uint32(let replaced) = request.message.body[1], replaced == id {
                return
            }
            reply(tag: request.tag | NotificationRelay.lateTag, answer)
        }

        /// A call is answered and its receipt stored (on `queue`).
        private func finished() {
            inFlight -= 1
            exitWhenIdle()
        }

        private func exitWhenIdle() {
            if chimedGone, inFlight == 0 { end.finish(0) }
        }

        /// Sends an answer (or, with tag 0, a signal) to chimed; nothing to do when chimed is gone.
        func reply(tag: UInt64, _ message: DBusMessage) {
            var message = message
            // A reply in wire format needs the serial it answers; chimed matches by tag, not by it.
            if message.kind != .signal { message.replySerial = 1 }
            guard let bytes = try? message.serialized() else { return }
            var frame = [UInt8]()
            frame.reserveCapacity(8 + bytes.count)
            frame.appendLittleEndian(tag)
            frame += bytes
            _ = frame.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }
    }

    /// A call chimed asks the relay to make.
    struct Request {
        var tag: UInt64
        var timeout: Duration
        var rows: [UInt64]
        var message: DBusMessage

        init(tag: UInt64, timeout: Duration, rows: [UInt64], message: DBusMessage) {
            self.tag = tag
            self.timeout = timeout
            self.rows = rows
            self.message = message
        }

        init?(frame: ArraySlice<UInt8>) {
            var reader = FrameReader(bytes: frame)
            guard let tag = reader.u64(), let milliseconds = reader.u32(), let count = reader.u32(),
                count <= 4096
            else { return nil }
            var rows: [UInt64] = []
            for _ in 0..<count {
                guard let seq = reader.u64() else { return nil }
                rows.append(seq)
            }
            guard let message = try? DBusMessage(serialized: Array(reader.rest)), message.kind == .methodCall else {
                return nil
            }
            self.init(tag: tag, timeout: .milliseconds(Int64(milliseconds)), rows: rows, message: message)
        }

        func frame() throws(DBusError) -> [UInt8] {
            let bytes = try message.serialized()
            var frame = [UInt8]()
            frame.reserveCapacity(16 + rows.count * 8 + bytes.count)
            frame.appendLittleEndian(tag)
            let milliseconds =
                timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            frame.appendLittleEndian(UInt32(clamping: milliseconds))
            frame.appendLittleEndian(UInt32(rows.count))
            for row in rows { frame.appendLittleEndian(row) }
            return frame + bytes
        }
    }

    struct FrameReader {
        var bytes: ArraySlice<UInt8>

        mutating func u64() -> UInt64? { integer(8) }
        mutating func u32() -> UInt32? { integer(4).map { UInt32($0) } }
        var rest: ArraySlice<UInt8> { bytes }

        private mutating func integer(_ size: Int) -> UInt64? {
            guard bytes.count >= size else { return nil }
            var value: UInt64 = 0
            for (shift, byte) in bytes.prefix(size).enumerated() { value |= UInt64(byte) << (8 * UInt64(shift)) }
            bytes = bytes.dropFirst(size)
            return value
        }
    }
}

extension Duration {
    /// The duration for a Dispatch deadline, to the millisecond.
    var dispatchInterval: DispatchTimeInterval {
        .milliseconds(Int(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000))
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
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
