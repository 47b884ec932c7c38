import DBusKit
import Dispatch
import Logging

/// Reports when the machine is about to suspend and when it has resumed, from logind's
/// `PrepareForSleep(b)` signal on the system bus.
///
/// logind sends `PrepareForSleep(true)` before suspending and `PrepareForSleep(false)` after
/// resuming. It does not wait for anyone unless they hold a "delay" inhibitor lock, which this monitor
/// does not take: the `true` call may run only after resume. What matters to a scheduler is the
/// `false` call (time passed while asleep; re-check what is due).
public final class SleepMonitor: Sendable {
    /// logind's bus name.
    public static let busName = "org.freedesktop.login1"
    /// logind's manager object.
    public static let objectPath: DBusObjectPath = "/org/freedesktop/login1"
    /// The interface that declares `PrepareForSleep`.
    public static let interface = "org.freedesktop.login1.Manager"

    static let rule = DBusMatchRule(
        sender: busName, interface: interface, member: "PrepareForSleep", path: objectPath)

    private let subscription: DBusSubscription
    /// The connection `connect(_:queue:logger:handler:)` opened for this monitor alone; nil when the
    /// caller's connection is used.
    private let ownedConnection: DBusConnection?

    /// Subscribes to `PrepareForSleep` on `connection` (the system bus, in production). `handler`
    /// runs on the connection's queue with `true` before sleep and `false` after resume.
    ///
    /// Returns once the bus has accepted the match rule; logind need not be running (the monitor
    /// starts reporting when it appears).
    public convenience init(
        connection: DBusConnection, handler: @escaping @Sendable (_ goingToSleep: Bool) -> Void
    ) async throws(DBusError) {
        let subscription = try await SleepMonitor.subscribe(connection, handler)
        self.init(subscription: subscription, ownedConnection: nil)
    }

    private init(subscription: DBusSubscription, ownedConnection: DBusConnection?) {
        self.subscription = subscription
        self.ownedConnection = ownedConnection
    }

    /// Connects to `address` (the system bus unless a test says otherwise) on its own connection and
    /// subscribes; nil when there is no such bus or it refuses the subscription, as in a container
    /// without a system bus, so that chimed runs without sleep reports rather than not at all.
    ///
    /// The connection runs on `queue` (a new serial queue when nil), and `handler` runs there.
    /// `logger` is told why when the result is nil. `cancel()` closes the connection.
    public static func connect(
        _ address: DBusConnection.Address = .system, queue: DispatchQueue? = nil, logger: Logger? = nil,
        handler: @escaping @Sendable (_ goingToSleep: Bool) -> Void
    ) async -> SleepMonitor? {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(address, queue: queue, label: "chimed.sleep-monitor")
        } catch {
            logger?.info("no system bus, so suspend and resume are not watched: \(error)")
            return nil
        }
        do {
            let subscription = try await subscribe(connection, handler)
            return SleepMonitor(subscription: subscription, ownedConnection: connection)
        } catch {
            logger?.warning("cannot watch suspend and resume on the system bus: \(error)")
            connection.close()
            return nil
        }
    }

    private static func subscribe(
        _ connection: DBusConnection, _ handler: @escaping @Sendable (Bool) -> Void
    ) async throws(DBusError) -> DBusSubscription {
        try await connection.subscribe(rule) { message in
            guard case .boolean(let goingToSleep)? = message.body.first else { return }
            handler(goingToSleep)
        }
    }

    /// Stops reporting and closes the connection `connect` opened; safe to call more than once.
    public func cancel() {
        subscription.cancel()
        ownedConnection?.close()
    }

    deinit {
        cancel()
    }
}
