import ServiceLifecycle
import Synchronization

/// chimed's long-running parts, in the order they start. The service group stops them in the reverse
/// order: supervision first (the service manager hears STOPPING), then the watchers of the system bus,
/// the bus connection (no call comes in any more), the file watchers, the scheduler's timers, the relay
/// (it stores the answers still due), and the store last, after every write asked for is done.
enum DaemonPart: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// The schedule's database: at stop, the writes asked for are drained and the file is checkpointed.
    case store
    /// The notification relay process and its lock.
    case relay
    /// The stored state restored into the scheduler, and the scheduler's timers.
    case scheduler
    /// The clock-set, time zone and configuration file watchers, and the group files they load.
    case files
    /// The session bus connection: `io.chime.Chime1` served, the notification server followed.
    case bus
    /// logind on the system bus: suspend and resume, the session's lock.
    case systemBus
    /// The service manager: readiness, status, watchdog, SIGHUP; a failure while running ends here.
    case supervision

    var description: String {
        switch self {
        case .store: "store"
        case .relay: "relay"
        case .scheduler: "scheduler"
        case .files: "files"
        case .bus: "bus"
        case .systemBus: "system-bus"
        case .supervision: "supervision"
        }
    }
}

/// Start-up in order: each part waits until the one before it has started. A part that cannot start
/// throws; the service group then stops the parts already running, in reverse order, and the parts
/// still waiting return when their turn to stop comes.
final class StartupSequence: Sendable {
    private struct State {
        /// The last part that started (-1: none).
        var reached = -1
        var waiters: [Int: (part: Int, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var cancelled: Set<Int> = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())

    /// Returns once `part` has started; throws `CancellationError` if the task is cancelled first.
    func wait(for part: DaemonPart) async throws {
        let waiter = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let now: Bool? = state.withLock { state in
                    if state.reached >= part.rawValue { return true }
                    if state.cancelled.remove(waiter) != nil { return false }
                    state.waiters[waiter] = (part.rawValue, continuation)
                    return nil
                }
                switch now {
                case true?: continuation.resume()
                case false?: continuation.resume(throwing: CancellationError())
                case nil: break
                }
            }
        } onCancel: {
            let waiting = state.withLock { state in
                guard let waiting = state.waiters.removeValue(forKey: waiter) else {
                    state.cancelled.insert(waiter)
                    return nil as CheckedContinuation<Void, any Error>?
                }
                return waiting.continuation
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// `part` has started: the part after it may start.
    func started(_ part: DaemonPart) {
        let ready = state.withLock { state in
            state.reached = max(state.reached, part.rawValue)
            let ready = state.waiters.filter { $0.value.part <= part.rawValue }
            for key in ready.keys { state.waiters.removeValue(forKey: key) }
            return ready.values.map(\.continuation)
        }
        for continuation in ready { continuation.resume() }
    }
}

/// One part of chimed as a service of the group: it starts once the part before it has, runs until the
/// group shuts it down, then stops.
struct DaemonPartService: Service, CustomStringConvertible {
    let part: DaemonPart
    let startup: StartupSequence
    /// Starts the part; throwing stops chimed (a `DaemonError` says why).
    let start: @Sendable () async throws -> Void
    /// What the part does while it runs; by default it waits for the graceful shutdown. Throwing stops
    /// chimed.
    var serve: @Sendable () async throws -> Void = { try? await gracefulShutdown() }
    /// Stops the part.
    let stop: @Sendable () async -> Void

    var description: String { "chimed.\(part)" }

    func run() async throws {
        if let previous = DaemonPart(rawValue: part.rawValue - 1) {
            do {
                try await cancelWhenGracefulShutdown { [startup] in try await startup.wait(for: previous) }
            } catch {
                // chimed stopped before this part's turn came: there is nothing to stop.
                return
            }
        }
        try await start()
        startup.started(part)
        do {
            try await serve()
        } catch {
            await stop()
            throw error
        }
        await stop()
    }
}
