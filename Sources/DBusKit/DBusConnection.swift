import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A connection to a message bus (or a peer), driven by a Dispatch serial queue.
///
/// libdbus's watch, timeout and dispatch-status callbacks become Dispatch read/write sources and
/// timers on `queue`, so there is no polling thread and nothing blocks the queue. Every libdbus call
/// for this connection, and every piece of its mutable state, is confined to `queue`.
///
/// Every `DBusConnection` is a private libdbus connection owned by this object: call `close()` when
/// done. (libdbus's shared connections cannot be closed and cannot be bound to two queues, so
/// DBusKit does not offer them.)
public final class DBusConnection: @unchecked Sendable {
    // @unchecked Sendable: all mutable state below is read and written only on `queue`;
    // `raw`, `queue` and `queueTag` are immutable.

    /// Where to connect.
    public enum Address: Sendable, Hashable {
        /// `DBUS_SESSION_BUS_ADDRESS`, as libdbus resolves it.
        case session
        /// The system bus.
        case system
        /// A bus at a D-Bus address such as `unix:path=/run/user/1000/bus`; Hello is sent.
        case bus(String)
        /// A peer-to-peer connection to a D-Bus address; no Hello, no bus names.
        case peer(String)
    }

    /// The serial queue that runs libdbus for this connection and delivers its callbacks.
    public let queue: DispatchQueue
    let raw: OpaquePointer
    let queueTag: QueueTag
    /// This connection's unique bus name (`:1.42`); nil for peer connections.
    public let uniqueName: String?

    // Queue-confined state.
    var pendingCalls: [UInt32: PendingCall] = [:]
    var subscriptions: [UInt64: SignalSubscription] = [:]
    var nextSubscriptionID: UInt64 = 1
    var objects: [DBusObjectPath: [String: DBusInterface]] = [:]
    var nameOwners: [String: String] = [:]
    var watchedNames: [String: Int] = [:]
    /// The dispatch sources of libdbus's watches and timeouts. libdbus adds, toggles and removes them from
    /// whichever thread calls into it (a reply or a signal sent from another thread too), so they are kept
    /// behind a lock of their own, not confined to the queue.
    private var sourceTable = SourceTable()
    private let sourcesLock: UnsafeMutablePointer<pthread_mutex_t> = {
        let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(lock, nil)
        return lock
    }()

    /// Runs `body` on the sources with their lock held; `body` makes no call into libdbus.
    private func withSources<T>(_ body: (inout SourceTable) -> T) -> T {
        pthread_mutex_lock(sourcesLock)
        defer { pthread_mutex_unlock(sourcesLock) }
        return body(&sourceTable)
    }

    struct SourceTable {
        var watches: [OpaquePointer: [DispatchSourceProtocol]] = [:]
        var timeouts: [OpaquePointer: DispatchSourceTimer] = [:]
    }
    /// A dispatch is on its way to the queue (set from any thread libdbus calls from).
    let dispatchScheduled = Atomic<Bool>(false)
    var isClosed = false
    /// `isClosed`, for threads other than the queue's.
    let closed = Atomic<Bool>(false)
    var disconnectHandlers: [@Sendable () -> Void] = []
    /// Method calls to exported objects, waiting by sender (see `MethodCallLanes`).
    let methodCalls: MethodCallLanes
    /// What became of the messages that arrived (`statistics`).
    let decodedCount = Atomic<Int>(0)
    let unreadCount = Atomic<Int>(0)
    let readEventCount = Atomic<Int>(0)

    /// What became of the messages that arrived on this connection: how many were decoded, and how many
    /// were dropped or refused without their bodies being decoded (replies nobody waited for, signals
    /// nobody subscribed to, calls and answers over their limits), and how many times it woke to read.
    public struct Statistics: Sendable, Hashable {
        public var decoded: Int
        public var unread: Int
        public var readEvents: Int
    }

    public var statistics: Statistics {
        Statistics(
            decoded: decodedCount.load(ordering: .relaxed), unread: unreadCount.load(ordering: .relaxed),
            readEvents: readEventCount.load(ordering: .relaxed))
    }

    struct PendingCall {
        let complete: @Sendable (Result<DBusMessage, DBusError>) -> Void
        let timer: DispatchSourceTimer
        /// A larger answer is not decoded: the call fails with LimitsExceeded.
        let maximumReplyBytes: Int
    }

    /// How much of other connections' work this one takes in: method calls to its exported objects wait,
    /// undecoded, within these bounds, and a call beyond them is answered with
    /// `org.freedesktop.DBus.Error.LimitsExceeded` before anything of it is decoded.
    public struct IncomingLimits: Sendable, Hashable {
        /// The most calls one sender may have waiting for their answers (the one being handled included).
        public var callsPerSender = 64
        /// The most bytes one sender's waiting calls may hold.
        public var bytesPerSender = 32 << 20
        /// The most bytes all senders' waiting calls may hold together.
        public var bytes = 128 << 20
        /// The largest body of a call to a method that sets no `maximumArgumentBytes` of its own, of
        /// Introspect and Properties calls, and of calls to methods the connection does not export.
        public var callBytes = 1 << 20
        /// The largest reply a handler may send, as `DBusValue.estimatedWireBytes` counts it: a larger one
        /// is not sent, and the caller gets LimitsExceeded instead. A message larger than the bus takes
        /// (the protocol's 128 MiB at most) would make the bus drop this connection.
        public var replyBytes = 64 << 20

        public init() {}
    }

    /// The most method calls one sender may have waiting for their answers by default; more are refused
    /// with `org.freedesktop.DBus.Error.LimitsExceeded`.
    public static let maximumCallsPerSender = IncomingLimits().callsPerSender

    /// The largest answer `call` decodes unless told otherwise.
    public static let defaultMaximumReplyBytes = 16 << 20

    private init(raw: OpaquePointer, uniqueName: String?, queue: DispatchQueue, limits: IncomingLimits) {
        self.raw = raw
        self.uniqueName = uniqueName
        self.queue = queue
        if queue.getSpecific(key: DBusConnection.queueKey) == nil {
            queue.setSpecific(key: DBusConnection.queueKey, value: QueueTag())
        }
        self.queueTag = queue.getSpecific(key: DBusConnection.queueKey)!
        self.methodCalls = MethodCallLanes(limits: limits)
    }

    /// Connects, authenticates and (for buses) registers with Hello, off the caller's queue, then
    /// binds the connection to `queue` (a new serial queue when nil).
    ///
    /// The corresponding C functions are `dbus_bus_get_private`, `dbus_connection_open_private`
    /// and `dbus_bus_register`.
    public static func connect(
        _ address: Address, queue: DispatchQueue? = nil, label: String = "DBusKit.connection",
        limits: IncomingLimits = IncomingLimits()
    ) async throws(DBusError) -> DBusConnection {
        let result: Result<(UInt, String?), DBusError> = await withCheckedContinuation { continuation in
            // libdbus connects and authenticates with blocking I/O: do it on a queue of its own, never on
            // the connection's (or any caller's) serial queue. (Not on a global queue: a serial queue
            // runs on libdispatch's overcommit threads, which it does not watch with a timer.)
            DispatchQueue(label: "DBusKit.connect").async {
                continuation.resume(returning: openBlocking(address))
            }
        }
        let (bits, unique) = try result.get()
        guard let raw = OpaquePointer(bitPattern: bits) else { throw DBusError(.failed, "no connection") }
        let connection = DBusConnection(
            raw: raw, uniqueName: unique, queue: queue ?? DispatchQueue(label: label), limits: limits)
        connection.queue.sync { connection.install() }
        return connection
    }

    private static func openBlocking(_ address: Address) -> Result<(UInt, String?), DBusError> {
        _ = dbus_threads_init_default()
        var error = CDBus.DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        let raw: OpaquePointer?
        switch address {
        case .session: raw = dbus_bus_get_private(DBUS_BUS_SESSION, &error)
        case .system: raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &error)
        case .bus(let a), .peer(let a): raw = dbus_connection_open_private(a, &error)
        }
        guard let raw else { return .failure(DBusError(takingC: &error, default: "cannot connect to \(address)")) }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        if case .bus = address {
            guard dbus_bus_register(raw, &error) != 0 else {
                dbus_connection_close(raw)
                dbus_connection_unref(raw)
                return .failure(DBusError(takingC: &error, default: "Hello failed"))
            }
        }
        var unique: String? = nil
        if case .peer = address {
        } else if let name = dbus_bus_get_unique_name(raw) {
            unique = String(cString: name)
        }
        return .success((UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(raw))), unique))
    }

    /// Registers the callbacks that drive libdbus from `queue`. Runs on `queue`.
    private func install() {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            raw,
            { watch, data in DBusConnection.from(data).addWatch(watch!) },
            { watch, data in DBusConnection.from(data).removeWatch(watch!) },
            { watch, data in DBusConnection.from(data).toggleWatch(watch!) },
            context, nil)
        dbus_connection_set_timeout_functions(
            raw,
            { timeout, data in DBusConnection.from(data).addTimeout(timeout!) },
            { timeout, data in DBusConnection.from(data).removeTimeout(timeout!) },
            { timeout, data in DBusConnection.from(data).toggleTimeout(timeout!) },
            context, nil)
        dbus_connection_set_dispatch_status_function(
            raw,
            { _, status, data in
                if status == DBUS_DISPATCH_DATA_REMAINS { DBusConnection.from(data).scheduleDispatch() }
            }, context, nil)
        dbus_connection_add_filter(
            raw,
            { _, message, data in
                DBusConnection.from(data).filter(message!)
            }, context, nil)
        scheduleDispatch()
    }

    private static func from(_ data: UnsafeMutableRawPointer?) -> DBusConnection {
        Unmanaged<DBusConnection>.fromOpaque(data!).takeUnretainedValue()
    }

    deinit {
        if !isClosed {
            // libdbus connections are thread-safe; nothing else can reach this object any more.
            dbus_connection_close(raw)
        }
        methodCalls.removeAll()
        dbus_connection_unref(raw)
        pthread_mutex_destroy(sourcesLock)
        sourcesLock.deallocate()
    }

    // MARK: - Watches, timeouts and dispatch

    private func addWatch(_ watch: OpaquePointer) -> dbus_bool_t {
        if dbus_watch_get_enabled(watch) != 0 { enableWatch(watch) }
        return 1
    }

    private func removeWatch(_ watch: OpaquePointer) {
        let removed = withSources { $0.watches.removeValue(forKey: watch) }
        for source in removed ?? [] { source.cancel() }
    }

    private func toggleWatch(_ watch: OpaquePointer) {
        removeWatch(watch)
        if dbus_watch_get_enabled(watch) != 0 { enableWatch(watch) }
    }

    private func enableWatch(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return }
        let flags = dbus_watch_get_flags(watch)
        var made: [DispatchSourceProtocol] = []
        // Each source watches its own duplicate of the socket, closed only once the source is cancelled.
        // libdbus closes its descriptor as soon as the connection closes, before a cancellation has
        // reached the dispatch queue; a new connection may then get the same number, and libdispatch,
        // which keys its epoll registrations by number, would take the new socket for the old, still
        // registered one and never watch it (a reply that never arrives).
        func watched() -> Int32? {
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            return copy >= 0 ? copy : nil
        }
        if flags & CDBUS_WATCH_READABLE != 0, let copy = watched() {
            let source = DispatchSource.makeReadSource(fileDescriptor: copy, queue: queue)
            source.setCancelHandler { _ = Glibc.close(copy) }
            // Weak, not unowned: the last reference to a connection may go on another thread while an
            // event of its sources is already on its way; the event then finds nothing and touches nothing.
            source.setEventHandler { [weak self] in
                // A watch libdbus removed meanwhile (and may have freed) is not touched.
                guard let self, self.isWatched(watch) else { return }
                // libdbus reads about 4 KiB per call (its socket transport's `max_bytes_read_per_iteration`),
                // so a message of some MiB took an event per 4 KiB, and every message behind it on the
                // stream (another caller's call, the bus's signals) waited as long. Read on while bytes wait,
                // up to `readBytesPerEvent`, handing over each message as soon as it is whole.
                self.readEventCount.add(1, ordering: .relaxed)
                var rounds = 0
                repeat {
                    _ = dbus_watch_handle(watch, CDBUS_WATCH_READABLE)
                    self.dispatchAll()
                    rounds += 1
                    // A watch libdbus disabled or removed meanwhile (its queue of messages full, the
                    // connection gone) is no longer in `sources`, and is not touched again.
                } while rounds < Self.readRoundsPerEvent && !self.isClosed && self.isWatched(watch)
                    && cdbus_bytes_waiting(fd) > 0
            }
            made.append(source)
        }
        if flags & CDBUS_WATCH_WRITABLE != 0, let copy = watched() {
            let source = DispatchSource.makeWriteSource(fileDescriptor: copy, queue: queue)
            source.setCancelHandler { _ = Glibc.close(copy) }
            source.setEventHandler { [weak self] in
                guard let self, self.isWatched(watch) else { return }
                _ = dbus_watch_handle(watch, CDBUS_WATCH_WRITABLE)
                self.dispatchAll()
            }
            made.append(source)
        }
        // Known before their first event, which checks for them.
        withSources { $0.watches[watch] = made }
        for source in made { source.resume() }
    }

    /// Whether `watch` is still one of libdbus's (not removed or disabled since).
    private func isWatched(_ watch: OpaquePointer) -> Bool { withSources { $0.watches[watch] != nil } }

    /// The most a readable event reads before the queue serves its other events: 1,024 of libdbus's reads
    /// of at most about 4 KiB, about 4 MiB.
    static let readRoundsPerEvent = 1_024

    private func addTimeout(_ timeout: OpaquePointer) -> dbus_bool_t {
        if dbus_timeout_get_enabled(timeout) != 0 { enableTimeout(timeout) }
        return 1
    }

    private func removeTimeout(_ timeout: OpaquePointer) {
        withSources { $0.timeouts.removeValue(forKey: timeout) }?.cancel()
    }

    private func toggleTimeout(_ timeout: OpaquePointer) {
        removeTimeout(timeout)
        if dbus_timeout_get_enabled(timeout) != 0 { enableTimeout(timeout) }
    }

    private func enableTimeout(_ timeout: OpaquePointer) {
        let interval = DispatchTimeInterval.milliseconds(Int(dbus_timeout_get_interval(timeout)))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in
            // A timeout libdbus removed meanwhile (and may have freed) is not touched.
            guard let self, self.withSources({ $0.timeouts[timeout] != nil }) else { return }
            _ = dbus_timeout_handle(timeout)
            self.dispatchAll()
        }
        withSources { $0.timeouts[timeout] = timer }
        timer.resume()
    }

    /// Called by libdbus, possibly with its lock held and on any thread: never dispatch here, only schedule.
    private func scheduleDispatch() {
        guard !dispatchScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        queue.async { [weak self] in
            guard let self else { return }
            self.dispatchScheduled.store(false, ordering: .releasing)
            self.dispatchAll()
        }
    }

    func dispatchAll() {
        guard !isClosed else { return }
        while dbus_connection_dispatch(raw) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    // MARK: - Incoming messages

    /// Every message that arrives passes here, on `queue`. Only its header is read first: a reply nobody
    /// waits for, a signal no subscription wants and a call that is too big, or whose sender has too much
    /// waiting, are dropped or refused unread; a method call is queued undecoded and decoded when its turn
    /// comes, off this queue.
    private func filter(_ rawMessage: OpaquePointer) -> DBusHandlerResult {
        let header: DBusMessage
        do {
            header = try DBusMessage(header: rawMessage)
        } catch {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        switch header.kind {
        case .methodReturn, .error:
            // A reply that no call waits for is left unread.
            guard let pending = pendingCalls.removeValue(forKey: header.replySerial) else {
                unreadCount.add(1, ordering: .relaxed)
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }
            pending.timer.cancel()
            let bytes = Marshalling.bodyBytes(of: rawMessage)
            guard bytes <= pending.maximumReplyBytes else {
                unreadCount.add(1, ordering: .relaxed)
                pending.complete(
                    .failure(
                        DBusError(
                            .limitsExceeded,
                            "\(header.sender ?? "the peer") answered with \(bytes) bytes, more than the "
                                + "\(pending.maximumReplyBytes) taken from it")))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            decodedCount.add(1, ordering: .relaxed)
            let result = Result { () throws(DBusError) in try DBusMessage(decoding: rawMessage) }
            switch result {
            case .success(let message):
                if let error = message.error {
                    pending.complete(.failure(error))
                } else {
                    pending.complete(.success(message))
                }
            case .failure(let error):
                pending.complete(.failure(error))
            }
            return DBUS_HANDLER_RESULT_HANDLED
        case .signal:
            if header.interface == "org.freedesktop.DBus.Local", header.member == "Disconnected" {
                handleDisconnect()
                return DBUS_HANDLER_RESULT_HANDLED
            }
            receiveSignal(header, rawMessage)
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        case .methodCall:
            // Peer is answered by libdbus itself after the filters.
            if header.interface == "org.freedesktop.DBus.Peer" { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
            let signature = dbus_message_get_signature(rawMessage).map { String(cString: $0) } ?? ""
            receiveMethodCall(
                IncomingCall(
                    header: header, signature: signature, bytes: Marshalling.bodyBytes(of: rawMessage),
                    received: ReceivedMessage(retaining: rawMessage)))
            return DBUS_HANDLER_RESULT_HANDLED
        }
    }

    private func replyError(to rawMessage: OpaquePointer, _ error: DBusError) {
        guard let reply = dbus_message_new_error(rawMessage, error.name, error.message) else { return }
        dbus_connection_send(raw, reply, nil)
        dbus_message_unref(reply)
    }

    private func handleDisconnect() {
        let pending = pendingCalls
        pendingCalls.removeAll()
        for (_, call) in pending {
            call.timer.cancel()
            call.complete(.failure(DBusError(.disconnected, "the connection to the bus was lost")))
        }
        let handlers = disconnectHandlers
        disconnectHandlers.removeAll()
        for handler in handlers { handler() }
    }

    /// Runs `handler` on the queue when the connection is lost (not after `close()`).
    public func onDisconnect(_ handler: @escaping @Sendable () -> Void) {
        queue.async { self.disconnectHandlers.append(handler) }
    }

    // MARK: - Sending

    /// Sends a message without waiting for a reply; returns its serial.
    ///
    /// The corresponding C function is `dbus_connection_send`.
    @discardableResult
    public func send(_ message: DBusMessage) throws(DBusError) -> UInt32 {
        let encoded = try message.encode()
        defer { dbus_message_unref(encoded) }
        return try onQueue { () throws(DBusError) -> UInt32 in
            guard !isClosed else { throw DBusError(.disconnected, "the connection is closed") }
            var serial: UInt32 = 0
            guard dbus_connection_send(raw, encoded, &serial) != 0 else {
                throw DBusError(.noMemory, "cannot queue the message")
            }
            return serial
        }
    }

    /// Calls a method and waits for its reply without blocking any thread.
    ///
    /// An error reply throws a `DBusError` carrying the remote error name and message; no reply
    /// within `timeout` throws `org.freedesktop.DBus.Error.NoReply`; a cancelled task throws at once.
    ///
    /// An answer whose body is larger than `maximumReplyBytes` is not decoded: the call throws
    /// `org.freedesktop.DBus.Error.LimitsExceeded`.
    public func call(
        _ message: DBusMessage, timeout: Duration = .seconds(25),
        maximumReplyBytes: Int = DBusConnection.defaultMaximumReplyBytes
    ) async throws(DBusError) -> DBusMessage {
        let serialBox = SerialBox()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) in
                call(message, timeout: timeout, maximumReplyBytes: maximumReplyBytes, serialBox: serialBox) {
                    continuation.resume(returning: $0)
                }
            }
        } onCancel: {
            queue.async {
                serialBox.cancelled = true
                guard let serial = serialBox.serial, let pending = self.pendingCalls.removeValue(forKey: serial)
                else { return }
                pending.timer.cancel()
                pending.complete(.failure(DBusError(.failed, "the call was cancelled")))
            }
        }
        return try result.get()
    }

    /// Calls a method; `completion` gets the reply (or the error, as for the async form) on the
    /// connection's queue. Called on that queue, the message is sent before this returns, so calls made
    /// one after the other there leave in that order.
    public func call(
        _ message: DBusMessage, timeout: Duration = .seconds(25),
        maximumReplyBytes: Int = DBusConnection.defaultMaximumReplyBytes,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        call(
            message, timeout: timeout, maximumReplyBytes: maximumReplyBytes, serialBox: SerialBox(),
            completion: completion)
    }

    private func call(
        _ message: DBusMessage, timeout: Duration, maximumReplyBytes: Int, serialBox: SerialBox,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        guard message.kind == .methodCall else {
            completion(.failure(DBusError(.invalidArgs, "call() needs a method call")))
            return
        }
        let encoded: OpaquePointer
        do {
            encoded = try message.encode()
        } catch {
            completion(.failure(error))
            return
        }
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(encoded)))
        let send: @Sendable () -> Void = { [self] in
            let encoded = OpaquePointer(bitPattern: bits)!
            defer { dbus_message_unref(encoded) }
            guard !isClosed else {
                completion(.failure(DBusError(.disconnected, "the connection is closed")))
                return
            }
            if serialBox.cancelled {
                completion(.failure(DBusError(.failed, "the call was cancelled")))
                return
            }
            var serial: UInt32 = 0
            guard dbus_connection_send(raw, encoded, &serial) != 0 else {
                completion(.failure(DBusError(.noMemory, "cannot queue the message")))
                return
            }
            serialBox.serial = serial
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .nanoseconds(Int(timeout.nanoseconds)))
            timer.setEventHandler { [weak self] in
                guard let self, let pending = self.pendingCalls.removeValue(forKey: serial) else { return }
                pending.timer.cancel()
                pending.complete(
                    .failure(
                        DBusError(
                            .noReply,
                            "\(message.destination ?? "the peer") did not answer \(message.member ?? "") within \(timeout)"
                        )))
            }
            timer.resume()
            pendingCalls[serial] = PendingCall(
                complete: completion, timer: timer, maximumReplyBytes: maximumReplyBytes)
        }
        if isOnQueue { send() } else { queue.async(execute: send) }
    }

    /// Calls a method and returns the reply's body.
    public func call(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, _ body: [DBusValue] = [],
        timeout: Duration = .seconds(25), maximumReplyBytes: Int = DBusConnection.defaultMaximumReplyBytes
    ) async throws(DBusError) -> [DBusValue] {
        let message = DBusMessage.methodCall(
            destination: destination, path: path, interface: interface, member: member, body: body)
        return try await call(message, timeout: timeout, maximumReplyBytes: maximumReplyBytes).body
    }

    /// Emits a signal without waiting for the connection's queue: the signal is encoded on the calling
    /// thread and written by the queue after what it is doing now (reading a large message, say), in order
    /// with the other messages sent on the connection. A signal emitted on a connection that is closed
    /// meanwhile is dropped.
    public func emitSignal(
        path: DBusObjectPath, interface: String, member: String, _ body: [DBusValue] = [], destination: String? = nil
    ) throws(DBusError) {
        let encoded = try DBusMessage.signal(
            path: path, interface: interface, member: member, destination: destination, body: body
        ).encode()
        guard !isOnQueue else {
            defer { dbus_message_unref(encoded) }
            guard !isClosed else { throw DBusError(.disconnected, "the connection is closed") }
            guard dbus_connection_send(raw, encoded, nil) != 0 else {
                throw DBusError(.noMemory, "cannot queue the message")
            }
            return
        }
        guard !closed.load(ordering: .acquiring) else {
            dbus_message_unref(encoded)
            throw DBusError(.disconnected, "the connection is closed")
        }
        let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(encoded)))
        queue.async { [self] in
            let encoded = OpaquePointer(bitPattern: bits)!
            defer { dbus_message_unref(encoded) }
            if !isClosed { dbus_connection_send(raw, encoded, nil) }
        }
    }

    /// Waits until every queued outgoing message has been written to the socket.
    public func flush() async {
        await withCheckedContinuation { continuation in
            queue.async {
                if !self.isClosed { dbus_connection_flush(self.raw) }
                continuation.resume()
            }
        }
    }

    /// Closes the connection: pending calls fail with Disconnected, sources are cancelled, exported
    /// objects disappear. Safe to call twice.
    public func close() {
        onQueue {
            guard !isClosed else { return }
            dbus_connection_flush(raw)
            isClosed = true
            closed.store(true, ordering: .releasing)
            let pending = pendingCalls
            pendingCalls.removeAll()
            for (_, call) in pending {
                call.timer.cancel()
                call.complete(.failure(DBusError(.disconnected, "the connection was closed")))
            }
            dbus_connection_close(raw)
            let table = withSources { table in
                defer { table = SourceTable() }
                return table
            }
            for (_, watchSources) in table.watches { for source in watchSources { source.cancel() } }
            for (_, timer) in table.timeouts { timer.cancel() }
            subscriptions.removeAll()
            objects.removeAll()
            disconnectHandlers.removeAll()
        }
        methodCalls.removeAll()
    }

    /// Runs `body` on the queue, synchronously; re-entrant when already on it.
    func onQueue<T>(_ body: () throws(DBusError) -> T) throws(DBusError) -> T {
        if isOnQueue { return try body() }
        let result: Result<T, DBusError> = queue.sync {
            do throws(DBusError) { return .success(try body()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    func onQueue<T>(_ body: () -> T) -> T {
        if isOnQueue { return body() }
        return queue.sync { body() }
    }

    /// True when the current thread is running this connection's queue.
    var isOnQueue: Bool { DispatchQueue.getSpecific(key: DBusConnection.queueKey) === queueTag }

    static let queueKey = DispatchSpecificKey<QueueTag>()
}

/// Marks a queue, so that code can tell whether it already runs on a connection's queue.
final class QueueTag: Sendable {}

/// Carries a call's serial between the queue and the cancellation handler; touched only on the queue.
private final class SerialBox: @unchecked Sendable {
    // @unchecked Sendable: both fields are read and written only on the connection's queue.
    var serial: UInt32?
    var cancelled = false
}

extension Duration {
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension DBusError {
    /// Converts and clears a filled-in libdbus error.
    init(takingC error: inout CDBus.DBusError, default text: String) {
        if dbus_error_is_set(&error) != 0, let name = error.name {
            self.init(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? text)
        } else {
            self.init(.failed, text)
        }
    }
}
