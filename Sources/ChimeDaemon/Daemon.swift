import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import SystemdKit
import UnixSignals

/// chimed: owns `io.chime.Chime1`, keeps the schedule, and delivers due items to the notification server.
///
/// All scheduling state lives on `queue`, which also runs the D-Bus connection and the one timer.
public final class Daemon: Service, @unchecked Sendable {
    // @unchecked Sendable: every mutable field is touched only on `queue`.

    public struct Configuration: Sendable {
        /// Which bus to serve on.
        public var bus: DBusConnection.Address = .session
        public var logger = Logger(label: "chimed")
        /// Injected so tests can run the daemon against a fake clock.
        public var now: @Sendable () -> Date = { Date() }
        /// Where the schedule is kept.
        public var store: any ItemStore
        /// The chime.toml to read again on reload (nil: none).
        public var settingsPath: String?
        /// The settings read at start.
        public var settings = DaemonSettings()
        /// Called with new settings after a successful reload (chimed applies the log level there).
        public var applySettings: @Sendable (DaemonSettings) -> Void = { _ in }
        /// Test-only: SIGUSR1 stalls the daemon's queue forever, so tests can prove the watchdog works.
        public var testHooks = false

        public init(store: any ItemStore) {
            self.store = store
        }
    }

    let configuration: Configuration
    let queue = DispatchQueue(label: "chimed.scheduler", qos: .userInitiated)
    let logger: Logger
    let notifier = ServiceNotifier()
    var store: any ItemStore { configuration.store }

    // Queue-confined state.
    private var scheduler = Scheduler()
    private var timer: DispatchSourceTimer?
    private var watchdogTimer: DispatchSourceTimer?
    private var armedDeadline: Date?
    /// Due items that found no notification server; delivered when one appears.
    private var waitingForServer: [ScheduledItem] = []
    private var serverOwner: String?
    /// Set when Notify found no server; cleared when one appears. While set, due items wait without
    /// another futile call (which could also try to auto-start a server again and again).
    private var serverMissing = false
    private var connection: DBusConnection?
    private var server: NotificationServer?
    private var delivering = false

    public init(configuration: Configuration) {
        self.configuration = configuration
        self.logger = configuration.logger
    }

    /// Connects, claims the bus name, serves until graceful shutdown, then closes.
    public func run() async throws {
        let connection = try await start()
        logger.info("chimed serving \(ChimeBus.name) as \(connection.uniqueName ?? "?")")
        notifier.ready(status: queue.sync { statusLine() })
        startWatchdog()
        let signals = Task { await handleSignals() }
        connection.onDisconnect { [logger] in
            // Without the bus chimed can neither be reached nor deliver: exit non-zero so that the
            // service manager restarts it; the schedule is safe on disk.
            logger.critical("lost the connection to the bus; exiting")
            exit(3)
        }
        try? await gracefulShutdown()
        signals.cancel()
        notifier.stopping()
        logger.info("chimed stopping")
        stop()
    }

    /// Everything before READY: bus, name, object, server watch. Public for tests that drive the daemon.
    public func start() async throws -> DBusConnection {
        try await restore()
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(configuration.bus, queue: queue)
        } catch {
            throw DaemonError(
                "cannot connect to the \(configuration.bus == .session ? "session bus" : "bus"): \(error.message). "
                    + "Is DBUS_SESSION_BUS_ADDRESS set (run inside a desktop session or dbus-run-session)?")
        }
        try connection.export([makeInterface()], at: ChimeBus.path)
        do {
            try await connection.requestName(ChimeBus.name)
        } catch {
            connection.close()
            if error.name == DBusError.nameTaken {
                throw DaemonError(
                    "\(error.message). Another chimed is already running on this bus; "
                        + "stop it first (systemctl --user stop chimed) or use that one.")
            }
            throw DaemonError("cannot own \(ChimeBus.name): \(error.message)")
        }
        queue.sync {
            self.connection = connection
            var server = NotificationServer(connection: connection)
            server.callTimeout = configuration.settings.serverTimeout
            self.server = server
        }
        _ = try await connection.watchNameOwner(NotificationServer.name) { [weak self] owner in
            self?.serverOwnerChanged(owner)
        }
        return connection
    }

    /// Pings the service manager's watchdog from the daemon's own queue, so a hung queue stops the
    /// pings and the manager restarts chimed.
    private func startWatchdog() {
        guard let interval = notifier.watchdogInterval else { return }
        let half = DispatchTimeInterval.nanoseconds(
            Int(interval.components.seconds * 500_000_000 + interval.components.attoseconds / 2_000_000_000))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: half)
        timer.setEventHandler { [notifier] in notifier.watchdog() }
        timer.resume()
        queue.sync { watchdogTimer = timer }
        logger.debug("watchdog pings every \(half)")
    }

    /// SIGHUP reloads; SIGUSR1 stalls the queue when test hooks are on.
    private func handleSignals() async {
        var trapped: [UnixSignal] = [.sighup]
        if configuration.testHooks { trapped.append(.sigusr1) }
        for await signal in await UnixSignalsSequence(trapping: trapped) {
            switch signal {
            case .sighup:
                reload()
            case .sigusr1:
                logger.warning("test hook: stalling the scheduler queue")
                queue.async {
                    while true { sleep(3600) }
                }
            default:
                break
            }
        }
    }

    /// Reads chime.toml again. A broken file is logged with file, line and reason, and the settings in
    /// force stay as they are.
    private func reload() {
        notifier.reloading()
        logger.info("reloading")
        var loaded: DaemonSettings?
        if let path = configuration.settingsPath {
            do {
                loaded = try DaemonSettings.load(path: path)
            } catch {
                logger.error("\(error); keeping the previous settings")
            }
        }
        if let loaded, let path = configuration.settingsPath {
            configuration.applySettings(loaded)
            logger.info("reloaded the settings from \(path)")
        }
        let timeout = loaded?.serverTimeout
        queue.async {
            if let timeout { self.server?.callTimeout = timeout }
            self.notifier.ready(status: self.statusLine())
        }
    }

    /// Loads the pending items from the store; those already due are delivered once a server is there.
    private func restore() async throws {
        let items: [ScheduledItem]
        let largest: UInt64
        do {
            items = try await store.pendingItems()
            largest = try await store.largestItemID()
        } catch {
            throw DaemonError("cannot read the schedule: \(error)")
        }
        queue.sync {
            scheduler.systemTimeZone = .current
            scheduler.reserveIDs(through: largest)
            if !items.isEmpty { logger.info("restored \(items.count) pending items") }
            perform(scheduler.restore(items, now: configuration.now()))
        }
    }

    /// Closes the bus connection and the timer.
    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
            watchdogTimer?.cancel()
            watchdogTimer = nil
            connection?.close()
            connection = nil
        }
    }

    // MARK: - Scheduling (on queue)

    private func perform(_ actions: [SchedulerAction]) {
        var writes: [SchedulerAction] = []
        var due: [ScheduledItem] = []
        for action in actions {
            switch action {
            case .arm(let deadline): arm(deadline)
            case .disarm: disarm()
            case .deliver(let items): due += items
            case .advance, .finish: writes.append(action)
            }
        }
        notifier.status(statusLine())
        guard !writes.isEmpty else {
            if !due.isEmpty { deliver(due) }
            return
        }
        // A repeating item's next occurrence is committed before the due one is delivered, so that a
        // crash in between loses at most that one delivery and never repeats it.
        let store = self.store
        let now = configuration.now()
        let dueNow = due
        Task {
            for write in writes {
                do {
                    switch write {
                    case .advance(let item): try await store.advance(item.id, to: item.fireDate, now: now)
                    case .finish(let id): try await store.finish(id, now: now)
                    default: break
                    }
                } catch {
                    self.logger.error("cannot store the next occurrence: \(error)")
                }
            }
            if !dueNow.isEmpty { self.queue.async { self.deliver(dueNow) } }
        }
    }

    /// The one timer: a wall-clock deadline, no leeway, so reminders fire at the instant they name.
    private func arm(_ deadline: Date) {
        guard armedDeadline != deadline else { return }
        armedDeadline = deadline
        let timer = self.timer ?? makeTimer()
        let seconds = deadline.timeIntervalSince1970
        let spec = timespec(tv_sec: Int(seconds.rounded(.down)), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        timer.schedule(wallDeadline: DispatchWallTime(timespec: spec), leeway: .nanoseconds(0))
    }

    private func makeTimer() -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(flags: .strict, queue: queue)
        timer.setEventHandler { [weak self] in self?.timerFired() }
        timer.resume()
        self.timer = timer
        return timer
    }

    private func disarm() {
        armedDeadline = nil
        timer?.schedule(wallDeadline: .distantFuture)
    }

    private func timerFired() {
        armedDeadline = nil
        perform(scheduler.step(now: configuration.now()))
    }

    private func deliver(_ items: [ScheduledItem]) {
        waitingForServer.append(contentsOf: items)
        if serverMissing {
            for item in items { reportKept(item, reason: "no notification server on the bus") }
            return
        }
        flushWaiting()
    }

    private func reportKept(_ item: ScheduledItem, reason: String) {
        let line =
            "chimed: \(reason); keeping \"\(item.content.summary)\" (item \(item.id), due \(iso(item.fireDate))) "
            + "until one appears; \(waitingForServer.count) waiting\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Sends waiting items in order, one Notify at a time so the server is never flooded.
    private func flushWaiting() {
        guard !delivering, !serverMissing, !waitingForServer.isEmpty, let server else { return }
        delivering = true
        let item = waitingForServer.removeFirst()
        Task {
            do throws(DBusError) {
                let id = try await server.notify(item.content)
                queue.async { self.delivered(item, notificationID: id) }
            } catch {
                queue.async { self.deliveryFailed(item, error: error) }
            }
        }
    }

    private func delivered(_ item: ScheduledItem, notificationID: UInt32) {
        delivering = false
        logger.info(
            "delivered \"\(item.content.summary)\"",
            metadata: ["item": "\(item.id)", "notification": "\(notificationID)"])
        let store = self.store
        let now = configuration.now()
        Task {
            do {
                try await store.markDelivered(item.id, notificationID: notificationID, now: now)
            } catch {
                // The popup is shown; at worst it is shown once more after a restart.
                self.logger.error("cannot record the delivery of item \(item.id): \(error)")
            }
        }
        try? connection?.emitSignal(
            path: ChimeBus.path, interface: ChimeBus.interface, member: "Delivered",
            [.uint64(item.id), .uint32(notificationID)])
        flushWaiting()
    }

    private func deliveryFailed(_ item: ScheduledItem, error: DBusError) {
        delivering = false
        if NotificationServer.meansNoServer(error) {
            // Keep it, first in line, until a server appears: nothing is lost.
            waitingForServer.insert(item, at: 0)
            serverMissing = true
            for waiting in waitingForServer {
                reportKept(waiting, reason: "no notification server on the bus (\(error.name))")
            }
            return
        }
        logger.error(
            "the notification server refused \"\(item.content.summary)\": \(error)", metadata: ["item": "\(item.id)"])
        flushWaiting()
    }

    private func serverOwnerChanged(_ owner: String?) {
        serverOwner = owner
        if let owner {
            serverMissing = false
            logger.info("notification server present", metadata: ["owner": "\(owner)"])
            flushWaiting()
        } else {
            logger.info("no notification server on the bus")
        }
    }

    private func statusLine() -> String {
        var line = "\(scheduler.count) pending"
        if let next = scheduler.nextDeadline { line += ", next at \(iso(next))" }
        if !waitingForServer.isEmpty { line += ", \(waitingForServer.count) waiting for a notification server" }
        return line
    }

    private func iso(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .omitted))
    }

    // MARK: - D-Bus API

    private func makeInterface() -> DBusInterface {
        DBusInterface(
            ChimeBus.interface,
            methods: [
                DBusMethod(
                    "Schedule",
                    inputs: [
                        DBusArgument("content", .dictionary(key: .string, value: .variant)),
                        DBusArgument("trigger", .dictionary(key: .string, value: .variant)),
                    ],
                    outputs: [DBusArgument("item_id", .uint64)]
                ) { [unowned self] call in
                    let content = try ContentWire.decode(call.arguments[0])
                    let trigger = try TriggerWire.decode(call.arguments[1])
                    guard let rule = trigger.rule else {
                        return [.uint64(try await self.schedule(content, at: trigger.at))]
                    }
                    return [.uint64(try await self.schedule(content, rule: rule, timeZone: trigger.timeZone))]
                },
                DBusMethod("Cancel", inputs: [DBusArgument("item_id", .uint64)]) { [unowned self] call in
                    let id = try call.arguments[0].decode(UInt64.self)
                    guard try await self.cancel(id) else {
                        throw DBusError(
                            name: ChimeBus.ErrorName.notFound,
                            message: "no pending item \(id); list them with `chime pending`")
                    }
                    return []
                },
                DBusMethod("ListPending", outputs: [DBusArgument("items", .array(PendingInfo.wireType))]) {
                    [unowned self] _ in
                    let items = self.queue.sync { self.scheduler.pending }
                    return [
                        .array(
                            element: PendingInfo.wireType,
                            items.map {
                                PendingInfo(
                                    id: $0.id, fireDate: $0.fireDate, appName: $0.content.appName,
                                    summary: $0.content.summary
                                ).wireValue
                            })
                    ]
                },
            ],
            signals: [
                DBusSignalDeclaration(
                    "Delivered",
                    arguments: [DBusArgument("item_id", .uint64), DBusArgument("notification_id", .uint32)])
            ],
            properties: [
                DBusProperty("Version", type: .string, emitsChangedSignal: false) { .string(ChimeBus.version) },
                DBusProperty("NotificationServerPresent", type: .boolean, emitsChangedSignal: false) {
                    [unowned self] in
                    .boolean(self.queue.sync { self.serverOwner != nil })
                },
            ])
    }

    /// Schedules `content` at `at` (now when nil) and returns the new item id once it is committed.
    public func schedule(_ content: NotificationContent, at: Date?) async throws -> UInt64 {
        let now = configuration.now()
        return try await commit(content, fireDate: at ?? now, recurrence: nil, now: now)
    }

    /// Schedules a repeating item: it fires at each occurrence of `rule` from now on.
    public func schedule(_ content: NotificationContent, rule: WrittenRule, timeZone: String?) async throws -> UInt64 {
        let now = configuration.now()
        let system = queue.sync { scheduler.systemTimeZone }
        let zone: RuleTimeZone = timeZone.map { .named($0) } ?? .floating
        let recurrence: Recurrence
        do {
            recurrence = try Recurrence.parse(rule, now: now, timeZone: zone, systemTimeZone: system)
        } catch {
            throw DBusError(name: ChimeBus.ErrorName.invalidTime, message: error.description)
        }
        guard let first = recurrence.nextOccurrence(after: now, systemTimeZone: system) else {
            let why = recurrence.neverFires(systemTimeZone: system) ? "never fires" : "has no occurrence after now"
            throw DBusError(
                name: ChimeBus.ErrorName.invalidTime, message: "the rule \(why); check it with `chime next`")
        }
        return try await commit(content, fireDate: first, recurrence: recurrence, now: now)
    }

    /// Stores a new item and, once that is committed, makes it active: durable before acknowledged.
    private func commit(
        _ content: NotificationContent, fireDate: Date, recurrence: Recurrence?, now: Date
    ) async throws -> UInt64 {
        let id = queue.sync { scheduler.allocateID() }
        let item = ScheduledItem(id: id, content: content, fireDate: fireDate, recurrence: recurrence)
        do {
            try await store.insert(item, now: now)
        } catch {
            logger.error("cannot store a new item: \(error)")
            throw DBusError(.failed, "chimed could not save the item (\(error)); nothing was scheduled")
        }
        queue.sync {
            let kind = recurrence == nil ? "" : "repeating "
            logger.info(
                "scheduled \(kind)\"\(content.summary)\" at \(iso(fireDate))", metadata: ["item": "\(id)"])
            perform(scheduler.restore(item, now: configuration.now()))
        }
        return id
    }

    /// Cancels a pending item; false when there is none with that id.
    public func cancel(_ id: UInt64) async throws -> Bool {
        let pending = queue.sync { scheduler.contains(id) }
        guard pending, try await store.cancel(id, now: configuration.now()) else { return false }
        queue.sync {
            perform(scheduler.cancel(id, now: configuration.now()).actions)
        }
        return true
    }
}

/// A failure that stops chimed, with a message saying what to do.
public struct DaemonError: Error, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
