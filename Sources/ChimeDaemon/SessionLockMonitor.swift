import DBusKit
import Dispatch
import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Reports whether the user's graphical session is locked, from logind's `LockedHint` on the system
/// bus, so that actions that need authentication wait for the screen to be unlocked.
///
/// chimed runs under the user's service manager, outside any session, so the session is found through
/// the user: its `Display` session, else its first session.
public final class SessionLockMonitor: Sendable {
    static let busName = "org.freedesktop.login1"
    static let sessionInterface = "org.freedesktop.login1.Session"

    private let connection: DBusConnection
    private let subscription: DBusSubscription
    /// Whether the session was locked when the monitor started.
    public let initiallyLocked: Bool

    private init(connection: DBusConnection, subscription: DBusSubscription, initiallyLocked: Bool) {
        self.connection = connection
        self.subscription = subscription
        self.initiallyLocked = initiallyLocked
    }

    /// Connects to `address` and watches the user's session; nil when there is no system bus, no logind,
    /// or no session (then nothing is ever locked). `handler` runs on `queue` with the new value.
    public static func connect(
        _ address: DBusConnection.Address = .system, queue: DispatchQueue, logger: Logger,
        handler: @escaping @Sendable (_ locked: Bool) -> Void
    ) async -> SessionLockMonitor? {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.connect(address, queue: queue, label: "chimed.session-lock")
        } catch {
            return nil
        }
        do {
            let session = try await userSession(connection)
            let subscription = try await connection.subscribe(
                DBusMatchRule(
                    sender: busName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    path: session)
            ) { message in
                guard message.body.count >= 2, case .string(sessionInterface) = message.body[0],
                    case .dictionary(_, _, let changed) = message.body[1],
                    let entry = changed.first(where: { $0.key == .string("LockedHint") }),
                    case .boolean(let locked) = entry.value.unwrappingVariant
                else { return }
                handler(locked)
            }
            let current = try await property(connection, session, sessionInterface, "LockedHint")
            guard case .boolean(let locked) = current else { throw DBusError(.failed, "LockedHint is not a boolean") }
            logger.info("watching whether session \(session) is locked (now \(locked ? "locked" : "unlocked"))")
            return SessionLockMonitor(connection: connection, subscription: subscription, initiallyLocked: locked)
        } catch {
            logger.info("no logind session to watch for locking (\(error)); actions needing authentication run at once")
            connection.close()
            return nil
        }
    }

    /// The user's graphical session: `User.Display`; else, from `ListSessions`, the user's session on a
    /// seat, else the user's first session.
    private static func userSession(_ connection: DBusConnection) async throws -> DBusObjectPath {
        if let reply = try? await connection.call(
            destination: busName, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
            member: "GetUser", [.uint32(getuid())]),
            case .objectPath(let user)? = reply.first,
            case .structure(let display)? = try? await property(
                connection, user, "org.freedesktop.login1.User", "Display"),
            display.count == 2, case .objectPath(let path) = display[1], path.rawValue != "/"
        {
            return path
        }
        let reply = try await connection.call(
            destination: busName, path: "/org/freedesktop/login1", interface: "org.freedesktop.login1.Manager",
            member: "ListSessions")
        guard case .array(_, let sessions)? = reply.first else { throw DBusError(.failed, "ListSessions gave no list") }
        // (id, uid, user name, seat, path)
        let mine = sessions.compactMap { session -> (seat: String, path: DBusObjectPath)? in
            guard case .structure(let f) = session, f.count == 5, case .uint32(let uid) = f[1], uid == getuid(),
                case .string(let seat) = f[3], case .objectPath(let path) = f[4]
            else { return nil }
            return (seat, path)
        }
        guard let session = mine.first(where: { !$0.seat.isEmpty }) ?? mine.first else {
            throw DBusError(.failed, "the user has no session")
        }
        return session.path
    }

    private static func property(
        _ connection: DBusConnection, _ path: DBusObjectPath, _ interface: String, _ name: String
    ) async throws -> DBusValue {
        let reply = try await connection.call(
            destination: busName, path: path, interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string(interface), .string(name)])
        guard let value = reply.first?.unwrappingVariant else { throw DBusError(.failed, "no \(name)") }
        return value
    }

    public func cancel() {
        subscription.cancel()
        connection.close()
    }
}
