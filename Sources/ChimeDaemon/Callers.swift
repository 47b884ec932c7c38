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
    // @unchecked Sendable: `known` is guarded by `lock`; `userTool` is immutable.
    private let lock = NSLock()
    private var known: [String: Caller] = [:]
    /// The user's own tool, the `chime` executable; nil: no caller is the user.
    let userTool: String?

    init(userTool: String?) {
        self.userTool = userTool
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
    func caller(_ sender: String?, on connection: DBusConnection) async throws -> Caller {
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
        let appID = try await appID(sender: sender, pid: pid, connection: connection)
        let caller = Caller(uniqueName: sender, uid: uid, pid: pid, appID: appID)
        lock.withLock { known[sender] = caller }
        return caller
    }

    /// Forgets a connection that left the bus.
    func forget(_ uniqueName: String) {
        _ = lock.withLock { known.removeValue(forKey: uniqueName) }
    }

    /// The app id of a process: Flatpak's; "" for the user's own tool; else a well-known name its
    /// connection owns, else its executable's file name.
    func appID(sender: String, pid: UInt32?, connection: DBusConnection) async throws -> String {
        if let pid, let flatpak = Self.flatpakAppID(pid: pid) { return flatpak }
        if let pid, isUserTool(pid: pid) { return "" }
        if let name = try await Self.ownedName(of: sender, connection: connection) { return name }
        guard let pid, let executable = Self.executableName(pid: pid) else { return "unknown" }
        return executable
    }

    /// Whether process `pid` runs the user's own tool: the very file, not one of the same name.
    func isUserTool(pid: UInt32) -> Bool {
        guard let userTool, let tool = try? Linux.fileIdentity(userTool),
            let running = try? Linux.fileIdentity("/proc/\(pid)/exe")
        else { return false }
        return tool == running
    }

    /// `[Application] name=` of a sandboxed app's `/.flatpak-info`.
    static func flatpakAppID(pid: UInt32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/root/.flatpak-info", encoding: .utf8) else {
            return nil
        }
        var inApplication = false
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") { inApplication = trimmed == "[Application]" }
            if inApplication, trimmed.hasPrefix("name=") { return String(trimmed.dropFirst(5)) }
        }
        return nil
    }

    /// The first (sorted) well-known name the connection owns, as apps own their reverse-DNS id.
    static func ownedName(of sender: String, connection: DBusConnection) async throws -> String? {
        let reply = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "ListNames")
        let names = (try reply.first?.decode([String].self) ?? []).filter {
            !$0.hasPrefix(":") && !$0.hasPrefix("org.freedesktop.") && $0 != ChimeBus.name
        }
        for name in names.sorted() {
            let owner = try? await connection.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus", member: "GetNameOwner", [.string(name)])
            if owner?.first == .string(sender) { return name }
        }
        return nil
    }

    /// The file name of `/proc/PID/exe`.
    static func executableName(pid: UInt32) -> String? {
        guard let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") else {
            return nil
        }
        return (path as NSString).lastPathComponent
    }
}
