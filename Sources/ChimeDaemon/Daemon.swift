import ChimeConfig
import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import SystemdKit
import UnixSignals

/// chimed: owns `io.chime.Chime1`, keeps the groups and items, and delivers due notifications to the
/// notification server.
///
/// An actor whose executor is the serial queue `queue` (`QueueExecutor`): the compiler checks that its
/// state is touched only there. The clock, file and logind watchers and the timers call back on that
/// queue, and say so with `assumeIsolated` (`onQueue`); the one wall-clock timer (`DeadlineTimer`) runs its
/// handler there from a thread of its own. The session bus runs on `busQueue`. The store is written on
/// `storeQueue`, one transaction at a time in the order they were asked for. Calls to the notification
/// server go through the notification relay (`NotificationRelay`).
///
/// A method that awaits may find the state changed after each `await`: each such method reads what it
/// needs again after it, or says why it need not.
public actor Daemon {

    public struct Configuration: Sendable {
        /// Which bus to serve on.
        public var bus: DBusConnection.Address = .session
        /// Where to watch for suspend and resume (logind); nil: not watched.
        public var systemBus: DBusConnection.Address? = .system
        public var logger = Logger(label: "chimed")
        /// Where the schedule is kept.
        public var store: ScheduleStore
        /// The chime.toml to read again on reload (nil: none).
        public var settingsPath: String?
        /// The settings read at start.
        public var settings = DaemonSettings()
        /// The folder of group files (`groups/*.toml`); nil: none.
        public var groupsDirectory: String?
        /// The file whose change means the system time zone changed.
        public var localtimePath = "/etc/localtime"
        /// Called with new settings after a successful reload (chimed applies the log level there).
        public var applySettings: @Sendable (DaemonSettings) -> Void = { _ in }
        /// Where chimed reads the time.
        public var clock: any DaemonClock = SystemClock()
        #if CHIME_TEST_HOOKS
            /// Debug builds only: SIGUSR2 makes chimed read the clock's offset file again and act as if
            /// the clock was set. A release build has neither the field nor the signal.
            public var offsetClock: OffsetClock?
            /// Debug builds only: when the machine started, in place of the kernel's word (so that a test
            /// can make chimed start "after a reboot").
            public var bootTime: Date?
            /// Debug builds only: a FIFO; SIGUSR1 makes the daemon's queue read it to its end, holding the
            /// queue until a test has opened it for writing and closed it (so that a test can show which
            /// calls are answered while the daemon is busy). A release build has neither.
            public var holdFIFO: String?
        #endif
        /// The `chime` executable whose processes act for the user (see `CallerDirectory`); nil: none.
        public var userTool: String? = CallerDirectory.installedUserTool()
        /// How to start the notification relay; nil: chimed calls the server on its own connection.
        public var relay: RelaySettings?

        public init(store: ScheduleStore) {
            self.store = store
        }
    }

    let configuration: Configuration
    let queue: DispatchQueue
    private let executor: QueueExecutor
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// The session bus connection's queue: it reads, decodes and writes the bus's messages, so that none of
    /// that work waits for, or holds up, the scheduler's timer and deliveries on `queue`. What the bus
    /// reports (signals, owners) is handed to the daemon with `onQueue`, never waited for there.
    let busQueue = DispatchQueue(label: "chimed.bus", qos: .userInitiated)
    let storeQueue = DispatchQueue(label: "chimed.store", qos: .userInitiated)
    /// New items waiting to be stored together (`storeNew`).
    let inserts = InsertBatch()
    /// What the daemon's queue publishes for listings, which run elsewhere (`Daemon+Listings.swift`).
    let published = Mutex(PublishedState())
    /// Where the work a call asks for is done, at a lower CPU priority than the deliveries.
    let callerWork = CallerWork(threads: 2)
    /// Each app's call budget, checked and charged without visiting the daemon's queue.
    let rates: CallRates
    let logger: Logger
    let notifier = ServiceNotifier()
    /// Plays the sounds of notifications whose server plays none, on a queue of its own.
    let soundPlayer: SoundPlayer
    let clock: any DaemonClock
    /// GNOME's per-app notification settings, read to tell which notifications GNOME Shell keeps out of
    /// sight; nil when there is no home to find them in.
    let gnomeSettings = GNOMENotificationSettings.user()
    nonisolated var store: ScheduleStore { configuration.store }

    // The daemon's state, isolated to it.
    // The three below change what `Status` answers: each change is published (`publishStatus`), in place
    // (an observer that does not read the old value lets the struct be modified where it is).
    var scheduler = Scheduler() {
        didSet { publishStatus() }
    }
    var settings: DaemonSettings
    var deadlineTimer: DeadlineTimer?
    var armedDeadline: Date?
    /// The alarm that wakes the machine for items that ask to; nil without `CAP_WAKE_ALARM` (`wake.problem`).
    var wakeAlarm: WakeAlarm?
    /// What `Status` says about waking the machine; published with the rest.
    var wake = WakeStatus() {
        didSet { publishStatus() }
    }
    /// The scheduler's `wakeGeneration` the alarm was last armed for.
    var wakeGenerationArmed: UInt64?
    /// Whether the log said why there is no wake alarm (once, when an item first asks for one).
    var wakeProblemLogged = false
    /// When logind said the machine was going to sleep, until it woke.
    var sleepStarted: Date?
    /// The time the machine had spent asleep when chimed last looked (`SleepClock`).
    var secondsAsleepSeen: Double = 0
    var watchdogTimer: DispatchSourceTimer?
    var connection: DBusConnection?
    var server: NotificationServer?
    /// The notification relay, which makes the calls to the server; nil when it could not be started.
    var relayLink: RelayLink?
    /// The relay lock's descriptor, held while chimed runs (-1: none).
    var relayLock: Int32 = -1
    /// A status line for the service manager is on its way (`statusChanged`).
    var statusUpdateScheduled = false
    /// Delivery, the notification server's presence and the interaction with the user (`DeliveryCore`).
    var core: DeliveryCore {
        didSet { publishStatus() }
    }
    /// The timers and the scheduler's side of delivery.
    var delivery = DeliveryState()
    var groupSources: [GroupKey: GroupSource] = [:]
    /// The groups whose timelines a call is replacing, with the calls waiting for their turn (`takeTurn`).
    var groupTurns: [GroupKey: [CheckedContinuation<Void, Never>]] = [:]
    /// The new groups being stored, by owner: they count towards the owner's `[limits] groups-per-app`
    /// before the scheduler has them.
    var groupsBeingMade: [String: Set<String>] = [:]
    var clockMonitor: ClockChangeMonitor?
    var fileWatcher: FileWatcher?
    var sleepMonitor: SleepMonitor?
    var lockMonitor: SessionLockMonitor?
    var reloadTimer: DispatchSourceTimer?
    /// Coalesces the changes of a tzdata upgrade into one re-read of the zone rules.
    var zoneDatabaseTimer: DispatchSourceTimer?
    /// Categories of actions, by owner.
    var categories: [String: [ActionCategory]] = [:]
    /// The categories each group file declared when it was last read without error.
    var configCategories: [String: [ActionCategory]] = [:]
    var interaction = InteractionState()
    let callers: CallerDirectory
    /// The signals chimed handles, trapped first of all (`trapSignals`), and the task that handles them.
    var signals: UnixSignalsSequence?
    var signalTask: Task<Void, Never>?
    /// Failures while running, for the supervision part (`fail`).
    let failures: AsyncStream<DaemonError>
    let failureSink: AsyncStream<DaemonError>.Continuation
    /// How many stored rows are set aside because chimed could not read them (`Status` key `set-aside`).
    var setAsideRows = 0 {
        didSet { publishStatus() }
    }
    /// The rows stored for what comes due at `preparedDeadline`, by item (`prepareNext`); `preparation`
    /// counts the deadlines prepared, so that a late answer of the store for an earlier one is ignored.
    var prepared: [UInt64: OutboxRecord] = [:]
    /// The entries of what comes due at `preparedDeadline`, read from the store ahead of it, with the
    /// fingerprints of the definitions they were read for.
    var preparedEntries: [UInt64: (fingerprint: UInt64, entry: TimelineEntry)] = [:]
    var preparedDeadline: Date?
    var preparation = 0
    /// Their Notify calls, made ready (`prepareCalls`), by row.
    var preparedCalls: [UInt64: NotificationServer.PreparedNotify] = [:]
    /// The steps whose definitions are being read on the store's queue (`perform`), and the states they
    /// gave items meanwhile.
    var stepsBeingRead = 0
    let resolvedStates = ResolvedStates()

    public init(configuration: Configuration) {
        self.configuration = configuration
        let queue = DispatchQueue(label: "chimed.scheduler", qos: .userInitiated)
        self.queue = queue
        self.executor = QueueExecutor(queue: queue)
        self.logger = configuration.logger
        soundPlayer = SoundPlayer(logger: configuration.logger)
        self.clock = configuration.clock
        self.settings = configuration.settings
        self.core = DeliveryCore(
            quietHours: configuration.settings.quietHours, flood: configuration.settings.flood,
            now: configuration.clock.now())
        self.callers = CallerDirectory(userTool: configuration.userTool)
        self.rates = CallRates(
            callsPerSecond: configuration.settings.callsPerSecond, burst: configuration.settings.callBurst)
        (failures, failureSink) = AsyncStream.makeStream()
    }

    /// chimed's parts as services, in the order they start (see `DaemonPart`); run them in one
    /// `ServiceGroup`. It ends with the first failure: a `DaemonError` whose `exitStatus` chimed exits
    /// with.
    public nonisolated func services() -> [ServiceGroupConfiguration.ServiceConfiguration] {
        let startup = StartupSequence()
        func part(
            _ part: DaemonPart, start: @escaping @Sendable () async throws -> Void,
            serve: (@Sendable () async throws -> Void)? = nil, stop: @escaping @Sendable () async -> Void
        ) -> ServiceGroupConfiguration.ServiceConfiguration {
            var service = DaemonPartService(part: part, startup: startup, start: start, stop: stop)
            if let serve { service.serve = serve }
            return .init(
                service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        return [
            part(.store, start: { await self.trapSignals() }, stop: { await self.drainStore() }),
            part(.relay, start: { try await self.startRelay() }, stop: { await self.finishRelay() }),
            part(.scheduler, start: { try await self.startScheduler() }, stop: { await self.stopTimers() }),
            part(
                .files,
                start: {
                    // Watch before loading, and load before owning the name: a file written the moment
                    // chimed can be reached is always seen.
                    await self.startWatchers()
                    await self.loadGroupFiles()
                    await self.reportMovedAside()
                }, stop: { await self.stopWatchers() }),
            part(.bus, start: { try await self.startBus() }, stop: { await self.closeBus() }),
            part(
                .systemBus, start: { await self.startSystemBusMonitors() },
                stop: { await self.stopSystemBusMonitors() }),
            part(
                .supervision, start: { await self.startSupervision() },
                serve: {
                    // A failure while running (the bus lost, the relay or the timer gone) stops chimed
                    // here; the group then stops the other parts in order, so pending writes are kept.
                    for await failure in self.failures.cancelOnGracefulShutdown() { throw failure }
                }, stop: { await self.stopSupervision() }),
        ]
    }

    /// A failure chimed cannot go on after: it is logged, and the service group stops chimed in order
    /// with exit status 3, so that the service manager restarts it. The schedule is on disk.
    nonisolated func fail(_ message: String) {
        logger.critical("\(message); exiting with status 3 so that the service manager restarts chimed")
        failureSink.yield(DaemonError(message, exitStatus: 3, logged: true))
    }

    /// The scheduler's part: its timer, and the stored state restored into it.
    private func startScheduler() async throws {
        let timer: DeadlineTimer
        do {
            timer = try DeadlineTimer(queue: queue) { [weak self] in self?.assumeIsolated { $0.timerFired() } }
        } catch {
            throw DaemonError("cannot create the scheduling timer: \(error)")
        }
        deadlineTimer = timer
        makeWakeAlarm()
        try await restore()
    }

    /// What chimed takes in from callers before their calls are handled (docs/security.md, Limits).
    static var incomingLimits: DBusConnection.IncomingLimits {
        var limits = DBusConnection.IncomingLimits()
        limits.callsPerSender = DBusConnection.maximumCallsPerSender
        limits.bytesPerSender = ChimeBus.maximumWaitingBytesPerConnection
        limits.bytes = ChimeBus.maximumWaitingBytes
        limits.callBytes = ChimeBus.maximumCallBytes
        // Twice what a listing puts in a page: a net under every reply, never reached by one that is bounded.
        limits.replyBytes = 2 * ChimeBus.maximumReplyBytes
        return limits
    }

    /// The bus's part: the connection, the names, the object, the name owned, the server followed.
    private func startBus() async throws {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(
                configuration.bus, queue: busQueue, limits: Self.incomingLimits)
        } catch {
            throw DaemonError(
                "cannot connect to the \(configuration.bus == .session ? "session bus" : "bus"): \(error.message). "
                    + "Is DBUS_SESSION_BUS_ADDRESS set (run inside a desktop session or dbus-run-session)?")
        }
        // An app's call budget is forgotten once it would be full again, so that apps that come and go leave
        // nothing behind.
        callers.onAppGone { [rates, clock] app in rates.forgetIfFull(app, now: clock.now()) }
        do {
            try await callers.indexNames(on: connection)
        } catch {
            connection.close()
            throw DaemonError("cannot follow the bus's names (which tell apps apart): \(error)")
        }
        try connection.export([makeInterface()], at: ChimeBus.path)
        // Set before the name is owned: a call D-Bus activation queued for chimed arrives the moment it is.
        self.connection = connection
        relayLink?.direct.withLock { $0 = connection }
        var server = NotificationServer(transport: relayLink ?? connection)
        server.callTimeout = settings.serverTimeout
        self.server = server
        do {
            try await connection.requestName(ChimeBus.name)
        } catch {
            // Nothing else sets them: the bus's part is the only one that does, and it is starting.
            callers.detach()
            self.connection = nil
            self.server = nil
            connection.close()
            if error.name == DBusError.nameTaken {
                throw DaemonError(
                    "\(error.message). Another chimed is already running on this bus; "
                        + "stop it first (systemctl --user stop chimed) or use that one.")
            }
            throw DaemonError("cannot own \(ChimeBus.name): \(error.message)")
        }
        let address = configuration.bus
        connection.onDisconnect { [weak self] in
            // Without the bus chimed can neither be reached nor deliver: the service manager restarts it. Whether
            // the bus itself went away, or closed chimed's connection while it runs, is found by connecting anew.
            Task {
                let why = await Self.whyDisconnected(from: address)
                self?.fail("lost the connection to the bus (\(why)); the schedule is saved")
            }
        }
        // With a connection's unique name, the bus's id tells one notification server from the next.
        if case .string(let id)? = try? await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetId"
        ).first {
            handle(.busConnected(id: id))
        }
        _ = try await connection.watchNameOwner(NotificationServer.name) { [weak self] owner in
            self?.onQueue { $0.handle(.serverOwnerChanged(owner)) }
        }
        try await subscribeToServerSignals(on: connection)
        try await subscribeToServerPause(on: connection)
        logger.info("chimed serving \(ChimeBus.name) as \(connection.uniqueName ?? "?")")
    }

    /// Why the bus connection was lost: a new connection tells whether the bus daemon is still there.
    static func whyDisconnected(from address: DBusConnection.Address) async -> String {
        guard let probe = try? await DBusConnection.connect(address) else { return "the bus daemon went away" }
        probe.close()
        return "the bus closed chimed's connection, though it still runs"
    }

    /// Closes the bus connection: no call comes in any more.
    private func closeBus() {
        callers.detach()
        connection?.close()
        connection = nil
    }

    /// logind's part: suspend and resume, and the session's lock.
    private func startSystemBusMonitors() async {
        guard let systemBus = configuration.systemBus else { return }
        // Both connections run on `queue`, so their handlers are isolated to the daemon.
        let monitor = await SleepMonitor.connect(systemBus, queue: queue, logger: logger) { [weak self] sleeping in
            self?.assumeIsolated { $0.sleepChanged(goingToSleep: sleeping) }
        }
        let lock = await SessionLockMonitor.connect(systemBus, queue: queue, logger: logger) { [weak self] locked in
            self?.assumeIsolated { $0.handle(.sessionLockChanged(locked: locked)) }
        }
        sleepMonitor = monitor
        lockMonitor = lock
        handle(.sessionLockRead(locked: lock?.initiallyLocked ?? false))
    }

    private func stopSystemBusMonitors() {
        sleepMonitor?.cancel()
        lockMonitor?.cancel()
    }

    /// Reads the stored state; what came due while chimed was not running is handled by the
    /// missed-trigger policy in the first step.
    private func restore() async throws {
        let state: StoredState
        do {
            state = try await persisted { try $0.load() }
        } catch {
            throw DaemonError("cannot read the schedule: \(error)")
        }
        for row in state.setAsideNow {
            logger.error(
                "a stored row chimed cannot read was set aside in the table set_aside of \(store.path ?? "the database"): \(row)"
            )
        }
        let zone = Zone.system(localtime: configuration.localtimePath)
        setAsideRows = state.setAside
        scheduler = Scheduler(systemTimeZone: zone)
        published.withLock { $0.systemTimeZone = zone }
        // Every item the scheduler gets is stored first: it keeps their definitions' fingerprints, and
        // the daemon reads a definition from its row when it needs it, off its queue (`definitions(of:)`).
        scheduler.definitionsInStore = true
        scheduler.defaultMissedPolicy = settings.missedPolicy
        scheduler.phraseDefaults = settings.phraseDefaults
        published.withLock { $0.phraseDefaults = settings.phraseDefaults }
        // What was missed is told by its cause: before the machine started, while it slept, or before
        // chimed started.
        let started = clock.now()
        var bootTime = started.addingTimeInterval(-SleepClock.secondsSinceBoot())
        #if CHIME_TEST_HOOKS
            bootTime = configuration.bootTime ?? bootTime
        #endif
        scheduler.downtime = Downtime(bootTime: bootTime, startTime: started)
        secondsAsleepSeen = SleepClock.secondsAsleep()
        scheduler.reserveIDs(through: state.largestItemID)
        for group in state.groups { groupSources[group.key] = group.source }
        for popup in state.popups { scheduler.trackPopup(popup) }
        let shownServer = try? await persisted { try $0.shownServer() }
        core.restore(shown: state.shown, server: shownServer)
        categories = state.categories
        interaction.storage = AppStorage(categories: state.categories, keptActions: state.keptActionBytes)
        interaction.consents = state.consents
        interaction.groupAuthorizations = GroupAuthorizations(state.groupAuthorizations)
        interaction.groupsTurnedOffByTheirApp = state.groupsTurnedOffByTheirApp
        let now = clock.now()
        let (outbox, taken) = Self.outbox(state.outbox, items: state.items, now: now)
        persist({ try $0.keepPrepared(outbox.filter { taken[$0.itemID] == $0.occurrence }.map(\.seq)) }) {
            daemon, result in
            if case .failure(let error) = result {
                daemon.logger.error("cannot keep the notifications sent before chimed stopped: \(error)")
            }
        }
        core.restore(outbox: outbox)
        if !state.items.isEmpty || !outbox.isEmpty {
            logger.info(
                """
                restored \(state.items.count) items in \(state.groups.count) groups, \
                \(outbox.count) notifications still to deliver
                """)
        }
        restoreEscalations(state.items, outbox: outbox)
        perform(
            scheduler.restore(
                groups: Dictionary(uniqueKeysWithValues: state.groups.map { ($0.key, $0.settings) }),
                items: state.items, now: now),
            taken: taken)
        finishReceived(outbox)
        for row in outbox where row.sentBeforeRestart && row.receivedID == nil {
            // Handed to the relay, but no answer of the server was stored: it never reached the
            // server, or the relay stopped as well. It is sent again rather than risk losing it.
            logger.notice(
                "a notification was being sent when chimed stopped, with no answer from the server; sending it again",
                metadata: ["item": "\(row.itemID)"])
        }
    }

    /// The stored outbox as chimed starts with it, and the occurrences it holds that the scheduler would
    /// otherwise make due again.
    ///
    /// A prepared row (`ScheduleStore.prepare`) is one of the outbox when chimed stopped after it handed
    /// the row to the relay (it is marked as being sent, or the relay stored the server's answer) and
    /// before it stored the step that made it due (its item still waits for that occurrence). Any other
    /// prepared row is not an occurrence: the scheduler decides what is due, and the next preparation
    /// deletes the row.
    static func outbox(_ stored: [OutboxRecord], items: [ScheduledItem], now: Date)
        -> (rows: [OutboxRecord], taken: [UInt64: Date])
    {
        var rows = stored.filter { !$0.prepared }
        var taken: [UInt64: Date] = [:]
        let preparedRows = stored.filter(\.prepared)
        guard !preparedRows.isEmpty else { return (rows, taken) }
        let wanted = Set(preparedRows.map(\.itemID))
        var waiting: [UInt64: Date] = [:]
        for item in items where item.finished == nil && wanted.contains(item.id) { waiting[item.id] = item.fireDate }
        for var row in preparedRows where row.sentBeforeRestart || row.receivedID != nil {
            guard row.occurrence <= now, waiting[row.itemID] == row.occurrence else { continue }
            row.prepared = false
            taken[row.itemID] = row.occurrence
            rows.append(row)
        }
        rows.sort { $0.seq < $1.seq }
        return (rows, taken)
    }

    /// The database was damaged and moved aside when the store opened: says so in the log and, once, in
    /// a notification of the user's own, so that someone who does not read the log learns where the old
    /// schedule went.
    private func reportMovedAside() async {
        guard let moved = store.movedAside else { return }
        logger.error(
            """
            the state database was damaged (\(moved.reason)); it was moved to \(moved.path) and chimed \
            starts with an empty schedule
            """)
        let content = NotificationContent(
            appName: "chime", summary: "Chime started with an empty schedule",
            body: "The schedule's database was damaged; it was moved to \(moved.path).")
        do {
            _ = try await schedule(content, trigger: TriggerWire(), owner: "")
        } catch {
            logger.error("cannot schedule the notification that the database was moved aside: \(error)")
        }
    }

    /// Watches for the clock being set, the time zone, chime.toml and the group files changing. A watch
    /// that cannot be set up is reported and left out: chimed still runs, and still reloads on SIGHUP.
    private func startWatchers() {
        let clockMonitor: ClockChangeMonitor?
        do {
            clockMonitor = try ClockChangeMonitor(queue: queue) { [weak self] in
                self?.assumeIsolated { $0.clockChanged(reason: "clock set") }
            }
        } catch {
            logger.warning(
                "cannot watch for the clock being set (\(error)); a clock jump is noticed at the next deadline")
            clockMonitor = nil
        }
        if let directory = configuration.groupsDirectory {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        var watches: [FileWatcher.Watch] = [.file(configuration.localtimePath)]
        let zoneDirectories = Self.zoneDatabaseDirectories()
        watches += zoneDirectories.map { .directory($0) }
        if let path = configuration.settingsPath { watches.append(.file(path)) }
        if let directory = configuration.groupsDirectory { watches.append(.directory(directory)) }
        var isDirectory: ObjCBool = false
        let usable = watches.filter { watch in
            let directory: String
            switch watch {
            case .directory(let path): directory = path
            case .file(let path): directory = (path as NSString).deletingLastPathComponent
            }
            guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue
            else {
                logger.warning(
                    "\(directory) does not exist, so changes there are not watched; reload chimed after creating it")
                return false
            }
            return true
        }
        let localtime = configuration.localtimePath
        let fileWatcher: FileWatcher?
        do {
            fileWatcher = try FileWatcher(queue: queue, watches: usable) { [weak self] paths in
                self?.assumeIsolated { daemon in
                    let zoneData = paths.filter { zoneDirectories.contains(($0 as NSString).deletingLastPathComponent) }
                    if paths.contains(localtime) { daemon.timeZoneMayHaveChanged() }
                    if !zoneData.isEmpty { daemon.zoneDatabaseMayHaveChanged() }
                    if paths.contains(where: { $0 != localtime && !zoneData.contains($0) }) { daemon.scheduleReload() }
                }
            }
        } catch {
            logger.warning("cannot watch the configuration files (\(error)); reload chimed after changing them")
            fileWatcher = nil
        }
        self.clockMonitor = clockMonitor
        self.fileWatcher = fileWatcher
    }

    /// Traps the signals chimed handles, first of all: a SIGHUP that arrives before chimed is ready must
    /// reload it (once it is), not kill it.
    private func trapSignals() async {
        var trapped: [UnixSignal] = [.sighup]
        #if CHIME_TEST_HOOKS
            if configuration.offsetClock != nil { trapped.append(.sigusr2) }
            if configuration.holdFIFO != nil { trapped.append(.sigusr1) }
        #endif
        signals = await UnixSignalsSequence(trapping: trapped)
    }

    /// The service manager's part: READY, the watchdog and the signals trapped at start.
    private func startSupervision() async {
        notifier.ready(status: statusLine())
        // What a start need not wait for, after READY.
        let now = clock.now()
        persist({ try $0.upkeep(now: now) }) { daemon, result in
            if case .failure(let error) = result { daemon.logger.error("cannot prune the history: \(error)") }
        }
        startWatchdog()
        let trapped = signals
        signalTask = Task { if let trapped { await handleSignals(trapped) } }
    }

    private func stopSupervision() {
        watchdogTimer?.cancel()
        watchdogTimer = nil
        signalTask?.cancel()
        notifier.stopping()
        logger.info("chimed stopping")
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
        watchdogTimer = timer
        logger.debug("watchdog pings every \(half)")
    }

    /// SIGHUP reloads (and, in a debug build with an offset clock, SIGUSR2 sets the clock).
    private func handleSignals(_ sequence: UnixSignalsSequence) async {
        for await signal in sequence {
            switch signal {
            case .sighup:
                await reload()
            #if CHIME_TEST_HOOKS
                case .sigusr2:
                    clockChanged(reason: "clock set (test hook)")
                case .sigusr1:
                    holdQueue()
            #endif
            default:
                break
            }
        }
    }

    #if CHIME_TEST_HOOKS
        /// Holds the daemon's queue until a writer has opened and closed `holdFIFO` (test hook).
        private func holdQueue() {
            guard let path = configuration.holdFIFO else { return }
            let fd = open(path, O_RDONLY)
            guard fd >= 0 else { return }
            var byte: UInt8 = 0
            while read(fd, &byte, 1) > 0 {}
            close(fd)
        }
    #endif

    /// Reads chime.toml and the group files again. A broken file is logged with file, line and reason,
    /// and what was in force stays as it is.
    func reload() async {
        notifier.reloading()
        logger.info("reloading")
        if let path = configuration.settingsPath {
            do {
                let loaded = try DaemonSettings.load(path: path)
                configuration.applySettings(loaded)
                apply(loaded)
                logger.info("reloaded the settings from \(path)")
            } catch {
                logger.error("\(error); keeping the previous settings")
            }
        }
        await loadGroupFiles()
        notifier.ready(status: statusLine())
    }

    /// Puts new settings in force.
    private func apply(_ new: DaemonSettings) {
        let limits = Self.historyLimits(new)
        if limits != Self.historyLimits(settings) {
            let now = clock.now()
            persist({ store in
                store.historyLimits = limits
                try store.pruneHistory(now: now)
            }) { [logger] _, result in
                if case .failure(let error) = result { logger.error("cannot prune the history: \(error)") }
            }
        }
        settings = new
        server?.callTimeout = new.serverTimeout
        scheduler.defaultMissedPolicy = new.missedPolicy
        scheduler.phraseDefaults = new.phraseDefaults
        published.withLock { $0.phraseDefaults = new.phraseDefaults }
        rates.update(callsPerSecond: new.callsPerSecond, burst: new.callBurst)
        handle(.settingsChanged(quietHours: new.quietHours, flood: new.flood))
    }

    /// The store's history limits from chime.toml's `[history]`.
    public static func historyLimits(_ settings: DaemonSettings) -> HistoryLimits {
        HistoryLimits(maximumAge: settings.historyMaxAge, maximumEntries: settings.historyMaxEntries)
    }

    /// A group file or chime.toml changed: reload a moment later, so one editor save is one reload.
    private func scheduleReload() {
        let timer = reloadTimer ?? DispatchSource.makeTimerSource(queue: queue)
        if reloadTimer == nil {
            timer.setEventHandler { [weak self] in
                guard let self else { return }
                Task { await self.reload() }
            }
            timer.resume()
            reloadTimer = timer
        }
        timer.schedule(deadline: .now() + .milliseconds(200))
    }

    /// The scheduler's timers, the gate's and the reload's: nothing fires any more.
    private func stopTimers() {
        for timer in [reloadTimer, zoneDatabaseTimer, delivery.gateTimer]
            + delivery.overdueTimers.values.map(Optional.some)
        {
            timer?.cancel()
        }
        delivery.overdueTimers = [:]
        deadlineTimer?.cancel()
        deadlineTimer = nil
        wakeAlarm = nil
        reloadTimer = nil
        zoneDatabaseTimer = nil
        delivery.gateTimer = nil
    }

    private func stopWatchers() {
        clockMonitor?.cancel()
        fileWatcher?.cancel()
    }

    /// Closes chimed's end of the relay: it finishes the calls it has, stores their answers, and exits.
    private func finishRelay() async {
        await relayLink?.finish()
    }

    /// Waits for every write asked for so far (the store queue runs them in order), then checkpoints the
    /// database so that its file alone holds everything (a copy of it is a complete backup).
    private nonisolated func drainStore() async {
        do {
            try await persisted { try $0.checkpoint() }
        } catch {
            logger.warning("cannot checkpoint the database at stop (\(error)); its -wal file holds the latest changes")
        }
    }

    // MARK: - The store

    /// Runs `work` on the store queue and returns its result. The daemon's state may change while it
    /// runs.
    nonisolated func persisted<T: Sendable>(_ work: @escaping @Sendable (ScheduleStore) throws -> T) async throws
        -> T
    {
        let store = self.store
        return try await withCheckedThrowingContinuation { continuation in
            storeQueue.async { continuation.resume(with: Result { try work(store) }) }
        }
    }

    /// Stores a new item, in one transaction with the other new items that wait for the store then
    /// (`InsertBatch`): calls that come while the store is busy share one sync to the disk. Returns once
    /// the item is on the disk.
    nonisolated func storeNew(_ item: ScheduledItem, now: Date) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            guard inserts.add(InsertBatch.Job(item: item, now: now, continuation: continuation)) else { return }
            storeQueue.async { [store, inserts] in
                let jobs = inserts.take()
                let failures = store.insert(jobs.map { ($0.item, $0.now) })
                for (job, failure) in zip(jobs, failures) {
                    if let failure {
                        job.continuation.resume(throwing: failure)
                    } else {
                        job.continuation.resume()
                    }
                }
            }
        }
    }

    /// Runs `work` on the store queue, then `then` with its result, isolated to the daemon: for a write
    /// whose result is not waited for.
    func persist<T: Sendable>(
        _ work: @escaping @Sendable (ScheduleStore) throws -> T,
        then: @escaping @Sendable (isolated Daemon, Result<T, any Error>) -> Void
    ) {
        let store = self.store
        storeQueue.async {
            let result = Result { try work(store) }
            self.onQueue { then($0, result) }
        }
    }

    /// Runs `work` isolated to the daemon, after what is on its queue now: for callbacks from other
    /// queues (the bus's, the store's, the relay's), in the order they come.
    nonisolated func onQueue(_ work: @escaping @Sendable (isolated Daemon) -> Void) {
        queue.async { self.assumeIsolated { work($0) } }
    }

    /// The status line changed: the service manager hears the new one a second later, so that a burst
    /// of steps and deliveries costs one message to systemd, not one each (and no formatting on the way
    /// to a delivery).
    func statusChanged() {
        guard notifier.isSupervised, !statusUpdateScheduled else { return }
        statusUpdateScheduled = true
        queue.asyncAfter(deadline: .now() + Self.statusInterval) { [weak self] in
            self?.assumeIsolated { daemon in
                daemon.statusUpdateScheduled = false
                daemon.notifier.status(daemon.statusLine())
            }
        }
    }

    static let statusInterval: DispatchTimeInterval = .seconds(1)

    func statusLine() -> String {
        var line = "\(scheduler.count) pending"
        if let next = scheduler.nextDeadline { line += ", next at \(Time.iso(next))" }
        if !outbox.isEmpty { line += ", \(outbox.count) to deliver" }
        if serverMissing { line += " (no notification server)" }
        return line
    }
}

/// A failure that stops chimed, with a message saying what to do.
public struct DaemonError: Error, CustomStringConvertible {
    public var message: String
    /// The exit status chimed ends with: 1 for a failure to start, 3 for one while running (the unit
    /// restarts chimed on it).
    public var exitStatus: Int32
    /// Whether the failure was already logged (a failure while running is logged where it happens).
    public var logged: Bool

    public init(_ message: String, exitStatus: Int32 = 1, logged: Bool = false) {
        self.message = message
        self.exitStatus = exitStatus
        self.logged = logged
    }

    public var description: String { message }
}

/// ISO 8601 for log lines and messages.
enum Time {
    static func iso(_ date: Date) -> String { WallClock.timestamp(date) }
}

/// New items waiting for the store (`Daemon.storeNew`): the first of a batch schedules one write on the
/// store's queue, and every item added before that write runs is stored in it.
///
/// A new item may be stored ahead of a write asked for before it: nothing else refers to an item before
/// it is stored, since the scheduler gets it only after.
final class InsertBatch: Sendable {
    struct Job: Sendable {
        var item: ScheduledItem
        var now: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private let jobs = Mutex<[Job]>([])

    /// Adds a job; true when it is the first of a batch, whose write the caller schedules.
    func add(_ job: Job) -> Bool {
        jobs.withLock { jobs in
            jobs.append(job)
            return jobs.count == 1
        }
    }

    /// The batch: every job added since the last take.
    func take() -> [Job] {
        jobs.withLock { jobs in
            defer { jobs = [] }
            return jobs
        }
    }
}
