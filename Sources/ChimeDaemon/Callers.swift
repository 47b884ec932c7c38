import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Who is calling chimed, from its D-Bus connection.
public struct Caller: Hashable, Sendable {
    /// The connection's unique name (`:1.42`).
    public var uniqueName: String
    public var uid: UInt32
    public var pid: UInt32?
    /// The app id: the Flatpak app id, else a well-known name the connection owns, else the executable's
    /// name. Empty for the user's own tool, the `chime` command.
    public var appID: String

    /// The `chime` command acts for the user: it sees and manages every app's groups and items.
    public var isUser: Bool { appID.isEmpty }

    /// What the caller may see and change: its own app's things, or everything for the user.
    public func owns(_ owner: String) -> Bool { isUser || owner == appID }
}

/// Finds out who a connection belongs to, and remembers it while the connection lives.
///
/// The user is the caller whose process runs the `chime` executable that was installed with chimed:
/// the same file (device and inode) as `userTool`, not merely a file of that name, and outside a
/// Flatpak sandbox. Anything else is an app. docs/security.md says why and what this leaves open.
final class CallerDirectory: @unchecked Sendable {
    // @unchecked Sendable: `known`, `names` and `nameSubscription` are guarded by `lock`; `userTool` is
    // immutable.
    private let lock = NSLock()
    private var known: [String: Caller] = [:]
    /// The callers' live connections, by unique name (`admit`), and each app's (by app id), so that its
    /// signals go to it alone.
    private var registered: [String: Caller] = [:]
    private var appConnections: [String: Set<String>] = [:]
    /// The well-known names each connection (by unique name) owns, kept current from NameOwnerChanged.
    private var names: [String: Set<String>] = [:]
    private var nameSubscription: DBusSubscription?
    /// The session bus connection chimed serves on, from `indexNames` until `detach`.
    private var connection: DBusConnection?
    /// Told of each app whose last connection left the bus (by app id), from the same NameOwnerChanged
    /// subscription: one match rule for every caller, none added or removed per connection.
    private var appGone: (@Sendable (String) -> Void)?
    /// The user's own tool, the `chime` executable; nil: no caller is the user.
    let userTool: String?
    /// The user's runtime folder, where Flatpak records each sandbox it starts (`FlatpakSandbox`).
    let runtimeDirectory: String

    init(userTool: String?, runtimeDirectory: String = CallerDirectory.userRuntimeDirectory()) {
        self.userTool = userTool
        self.runtimeDirectory = runtimeDirectory
    }

    /// `$XDG_RUNTIME_DIR`, else `/run/user/UID`, where Flatpak keeps its instances.
    static func userRuntimeDirectory() -> String {
        if let folder = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], folder.hasPrefix("/") {
            return folder
        }
        return "/run/user/\(getuid())"
    }

    /// The `chime` installed beside the running chimed (`/proc/self/exe`), as `make install` and the
    /// package put both into one `bin` folder.
    static func installedUserTool() -> String? {
        guard let chimed = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return nil
        }
        // A chimed replaced on disk while it runs reads "/path/chimed (deleted)": its folder is still right.
        return ((chimed as NSString).deletingLastPathComponent as NSString).appendingPathComponent("chime")
    }

    /// The caller behind `sender`; refuses a connection of another user.
    private func caller(_ sender: String?, on connection: DBusConnection) async throws -> Caller {
        guard let sender else { throw DBusError(.accessDenied, "the call has no sender") }
        if let cached = lock.withLock({ known[sender] }) { return cached }
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionCredentials", [.string(sender)])
        let fields = try WireFields(reply.first ?? .dictionary(key: .string, value: .variant, []), what: "credentials")
        guard let uid = try fields.uint32("UnixUserID") else {
            throw DBusError(.accessDenied, "the bus did not say which user is calling")
        }
        guard uid == getuid() else {
            throw DBusError(
                .accessDenied, "chimed serves user \(getuid()) only; calls from user \(uid) are refused")
        }
        let pid = try fields.uint32("ProcessID")
        let appID = try appID(sender: sender, pid: pid)
        let caller = Caller(uniqueName: sender, uid: uid, pid: pid, appID: appID)
        lock.withLock { known[sender] = caller }
        return caller
    }

    /// The caller of a method call, remembered as a live connection of its app while the connection lives:
    /// the bus's process, the process's files and the names the connection owns are looked at once per
    /// connection, here, off the daemon's queue. Every caller's connection is remembered, the user's too:
    /// signals about items go to their owner's connections only. A connection that left before it was
    /// remembered is found by asking the bus once, after.
    func admit(_ sender: String?) async throws -> Caller {
        if let caller = registeredCaller(sender) { return caller }
        guard let connection = lock.withLock({ self.connection }) else {
            throw DBusError(.failed, "chimed is stopping")
        }
        let caller = try await self.caller(sender, on: connection)
        let inserted = lock.withLock {
            guard registered[caller.uniqueName] == nil else { return false }
            registered[caller.uniqueName] = caller
            appConnections[caller.appID, default: []].insert(caller.uniqueName)
            return true
        }
        if inserted, (try? await connection.nameHasOwner(caller.uniqueName)) == false {
            connectionGone(caller.uniqueName)
        }
        return caller
    }

    /// Has `handler` told of every app whose last connection left the bus (its app id), on the bus's queue.
    func onAppGone(_ handler: @escaping @Sendable (String) -> Void) {
        lock.withLock { appGone = handler }
    }

    /// A connection left the bus: it is forgotten, and its app too when it has no other.
    func connectionGone(_ uniqueName: String) {
        let (gone, handler): (String?, (@Sendable (String) -> Void)?) = lock.withLock {
            known.removeValue(forKey: uniqueName)
            guard let caller = registered.removeValue(forKey: uniqueName) else { return (nil, nil) }
            appConnections[caller.appID]?.remove(uniqueName)
            guard appConnections[caller.appID]?.isEmpty == true else { return (nil, nil) }
            appConnections.removeValue(forKey: caller.appID)
            return (caller.appID, appGone)
        }
        if let gone { handler?(gone) }
    }

    /// The caller behind `sender` when its connection is remembered (`admit`): its later calls are told
    /// apart by this lookup alone.
    func registeredCaller(_ sender: String?) -> Caller? {
        guard let sender else { return nil }
        return lock.withLock { registered[sender] }
    }

    /// The live connections of `app` (unique names, sorted), for the signals about its items.
    func connections(of app: String) -> [String] {
        lock.withLock { appConnections[app].map { $0.sorted() } ?? [] }
    }

    /// The apps with at least one live connection.
    func connectedApps() -> Set<String> {
        lock.withLock { Set(appConnections.keys) }
    }

    /// No calls are taken any more: chimed's connection is closing.
    func detach() {
        lock.withLock { connection = nil }
    }

    /// The app id of a process: Flatpak's; "" for the user's own tool; else a well-known name its
    /// connection owns, else its executable's file name. A process whose root holds a `/.flatpak-info`
    /// that is not a real Flatpak sandbox's is refused: it is neither the app it names nor the user.
    func appID(sender: String, pid: UInt32?) throws(DBusError) -> String {
        if let pid {
            do {
                if let flatpak = try FlatpakSandbox.appID(pid: pid, runtimeDirectory: runtimeDirectory) {
                    return flatpak
                }
            } catch {
                throw DBusError(
                    .accessDenied,
                    "process \(pid) has a /.flatpak-info but is not in a Flatpak sandbox chimed can verify "
                        + "(\(error.reason)); chimed serves it as no app")
            }
        }
        if let pid, isUserTool(pid: pid) { return "" }
        if let name = ownedName(of: sender) { return name }
        guard let pid, let executable = Self.executableName(pid: pid), !executable.isEmpty else { return "unknown" }
        return executable
    }

    /// Whether process `pid` runs the user's own tool: the very file, not one of the same name.
    func isUserTool(pid: UInt32) -> Bool {
        guard let userTool, let tool = try? Linux.fileIdentity(userTool),
            let running = try? Linux.fileIdentity("/proc/\(pid)/exe")
        else { return false }
        return tool == running
    }

    /// The first (sorted) well-known name the connection owns, as apps own their reverse-DNS id: from the
    /// index of the bus's names, so that telling who calls costs the same however many names there are.
    func ownedName(of sender: String) -> String? {
        lock.withLock { names[sender]?.min() }
    }

    /// Whether a well-known name can stand for an app: not the bus's own, not a desktop service's, not
    /// chimed's.
    static func isAppName(_ name: String) -> Bool {
        !name.hasPrefix(":") && !name.hasPrefix("org.freedesktop.") && name != ChimeBus.name
    }

    /// Starts following which connection owns which well-known name (NameOwnerChanged, then the names the
    /// bus has now), and takes calls on `connection` (`admit`). Before chimed owns its name: a caller's
    /// names are known before its first call, since the bus announces a name to chimed before the owner's
    /// next message can reach chimed.
    func indexNames(on connection: DBusConnection) async throws {
        let subscription = try await connection.subscribe(
            DBusMatchRule(
                sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged")
        ) { [weak self] message in
            guard let self, message.body.count == 3, case .string(let name) = message.body[0],
                case .string(let old) = message.body[1], case .string(let new) = message.body[2]
            else { return }
            if name.hasPrefix(":"), new.isEmpty {
                self.connectionGone(name)
                return
            }
            guard Self.isAppName(name) else { return }
            self.lock.withLock {
                if !old.isEmpty {
                    self.names[old]?.remove(name)
                    if self.names[old]?.isEmpty == true { self.names.removeValue(forKey: old) }
                }
                if !new.isEmpty { self.names[new, default: []].insert(name) }
            }
        }
        lock.withLock {
            nameSubscription = subscription
            self.connection = connection
        }
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ListNames")
        for name in (try reply.first?.decode([String].self) ?? []) where Self.isAppName(name) {
            // A name released meanwhile has no owner to ask; one taken meanwhile came as a signal too.
            guard
                let owner = try? await connection.call(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "GetNameOwner", [.string(name)]),
                case .string(let unique)? = owner.first
            else { continue }
            lock.withLock { _ = names[unique, default: []].insert(name) }
        }
    }

    /// The file name of `/proc/PID/exe`.
    static func executableName(pid: UInt32) -> String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") else {
            return nil
        }
        return (path as NSString).lastPathComponent
    }
}

extension Daemon {
    /// Refuses entries whose content names another app's desktop file or chimed's own name (`OwnNames`).
    static func checkOwnNames(in entries: [TimelineEntry], caller: Caller) throws(DBusError) {
        for entry in entries {
            try OwnNames.check(entry.content.base, appID: caller.appID, what: "entry \(entry.id) content")
        }
    }
}
