import ChimeCore
import ChimeRelay
import ChimeStore
import DBusKit
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// How chimed starts its notification relay (see `NotificationRelay`).
public struct RelaySettings: Sendable {
    /// The relay's command line, the executable first.
    public var arguments: [String]
    /// The lock file: held by chimed and its relay, so that a new chimed waits for the last relay.
    public var lockPath: String

    public init(arguments: [String], lockPath: String) {
        self.arguments = arguments
        self.lockPath = lockPath
    }
}

extension Daemon {
    /// Takes the relay lock, waiting while the relay of a chimed that stopped still stores its answers.
    static func lockRelay(_ path: String, logger: Logger) async throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw DaemonError("cannot open the relay lock \(path): \(String(cString: strerror(errno)))")
        }
        if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return descriptor }
        logger.notice(
            "waiting for the notification relay of the previous chimed to store the answers it is waiting for")
        let locked = await withCheckedContinuation { continuation in
            // A queue of its own for the blocking wait; not a global queue (see GlobalExecutor.c in CLinux).
            DispatchQueue(label: "chimed.relay-lock").async {
                continuation.resume(returning: flock(descriptor, LOCK_EX) == 0)
            }
        }
        guard locked else {
            close(descriptor)
            throw DaemonError("cannot lock \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// Takes the relay lock, then starts the relay. Without it chimed calls the server itself, and says
    /// what that costs. The lock is taken before the outbox is read: a relay of the previous chimed may
    /// still be storing an answer.
    func startRelay() async throws {
        guard let relay = configuration.relay else { return }
        let lock = try await Self.lockRelay(relay.lockPath, logger: logger)
        relayLock = lock
        if let path = store.path {
            // The last relay has exited: its receipts are all stored, and no relay writes them now.
            do {
                let moved = try await persisted { try $0.takeReceipts(at: DeliveryReceipts.path(besides: path)) }
                if moved > 0 { logger.debug("\(moved) notifications were answered after the last chimed stopped") }
            } catch {
                logger.error(
                    """
                    cannot read the notification relay's receipts (\(error)); a notification being sent when \
                    chimed stopped may show twice
                    """)
            }
        }
        do {
            relayLink = try RelayLink(
                arguments: relay.arguments, lockDescriptor: lock, logger: logger,
                onSignal: { [weak self] message in self?.onQueue { $0.serverSignal(message) } },
                onFailure: { [weak self] message in self?.fail(message) },
                onLateAnswer: { [weak self] id in self?.onQueue { $0.lateAnswer(notificationID: id) } })
        } catch {
            logger.warning(
                """
                \(error.message); chimed calls the notification server itself, so a notification it is sending \
                when it is killed may show twice
                """)
        }
    }

    /// Outbox rows an earlier chimed was sending when it stopped, whose answer its relay received and
    /// stored: they are shown, under that id, and are recorded as delivered instead of sent again.
    /// After the scheduler is restored.
    func finishReceived(_ rows: [OutboxRecord]) {
        let byID = Dictionary(grouping: rows.filter { $0.receivedID != nil }, by: { $0.receivedID! })
        guard !byID.isEmpty else { return }
        let now = clock.now()
        for (id, rows) in byID.sorted(by: { $0.key < $1.key }) {
            var shown: ShownNotification?
            if rows.count == 1, let row = rows.first, row.kind == .occurrence {
                shown = shownRecord(of: row, as: id, now: now)
            }
            for row in rows {
                logger.notice(
                    "a notification was being sent when chimed stopped; the server showed it as notification \(id)",
                    metadata: ["item": "\(row.itemID)"])
            }
            let record = shown
            let digest = rows.count > 1 ? "digest" : nil
            persist({ try $0.delivered(rows, notificationID: id, digest: digest, shown: record, now: now) }) {
                daemon, result in
                if case .failure(let error) = result { daemon.logger.error("cannot record a delivery: \(error)") }
            }
            core.shownBeforeStart(Set(rows.map(\.seq)), as: record)
            if let record {
                if let until = record.until {
                    scheduler.trackPopup(ShownPopup(notificationID: id, itemID: record.itemID, until: until))
                }
                if let row = rows.first, let step = row.escalation {
                    escalationShown(step, as: record, row: row, now: now)
                }
            } else {
                escalationDigested(rows)
            }
        }
        arm(scheduler.nextDeadline)
    }
}
