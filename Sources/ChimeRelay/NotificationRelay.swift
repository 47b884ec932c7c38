import DBusKit
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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
    public static let frameLimit = 1 << 20
    /// How long the relay goes on waiting for the answers still due once chimed is gone: the next chimed
    /// waits for the relay lock meanwhile.
    public static let lingerLimit: Duration = .seconds(10)
    /// How long a call is kept open after its timeout, for an answer that comes late: such an answer of
    /// Notify is passed on as late (`lateTag`), so that chimed closes a popup it has sent again meanwhile.
    public static let lateWindow: Duration = .seconds(300)
    /// Added to a call's tag in the frame of an answer that came after its timeout.
    public static let lateTag: UInt64 = 1 << 63

    /// The relay process: serves chimed on `socket` until chimed is gone and every answer is stored, or
    /// until it loses the bus. Returns the status to exit with.
    public static func serve(socket: Int32, receiptsPath: String, bus: DBusConnection.Address) async -> Int32 {
        for signalNumber in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { signal(signalNumber, SIG_IGN) }
        let receipts: DeliveryReceipts
        let connection: DBusConnection
        do {
            receipts = try DeliveryReceipts(path: receiptsPath)
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
                    sender: "org.freedesktop.Notifications", interface: "org.freedesktop.Notifications",
                    path: "/org/freedesktop/Notifications")
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
        report(message)
        return 1
    }

    /// Writes a line to standard error, which chimed's journal or terminal shows.
    static func report(_ message: String) {
        let line = Array("chime-relay: \(message)\n".utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
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
                                NotificationRelay.report("\(error)")
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
    public struct Request: Sendable {
        public var tag: UInt64
        public var timeout: Duration
        public var rows: [UInt64]
        public var message: DBusMessage

        public init(tag: UInt64, timeout: Duration, rows: [UInt64], message: DBusMessage) {
            self.tag = tag
            self.timeout = timeout
            self.rows = rows
            self.message = message
        }

        public init?(frame: ArraySlice<UInt8>) {
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

        public func frame() throws(DBusError) -> [UInt8] {
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

    public struct FrameReader {
        public var bytes: ArraySlice<UInt8>

        public init(bytes: ArraySlice<UInt8>) { self.bytes = bytes }

        public mutating func u64() -> UInt64? { integer(8) }
        public mutating func u32() -> UInt32? { integer(4).map { UInt32($0) } }
        public var rest: ArraySlice<UInt8> { bytes }

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
    public var dispatchInterval: DispatchTimeInterval {
        .milliseconds(Int(clamping: components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000))
    }
}

extension [UInt8] {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
