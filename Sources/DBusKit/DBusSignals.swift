#if canImport(Glibc)
    import Glibc
#endif

/// A match rule: which signals a subscription receives.
///
/// The rule is sent to the bus (AddMatch) so the bus routes matching signals here, and the same rule is
/// checked locally so that each subscriber sees only its own signals.
public struct DBusMatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The sender, unique (`:1.5`) or well-known (`org.freedesktop.Notifications`).
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    /// Matches `path` and every path below it.
    public var pathNamespace: DBusObjectPath?
    /// String arguments that must be equal, by index (arg0, arg1, …).
    public var arguments: [Int: String]
    /// Whether matching signals addressed to other connections are received too. Some services send
    /// signals to one client only (a notification server's `ActionInvoked` goes to the connection that
    /// called `Notify`); a third party sees them only by eavesdropping, which the bus's policy must allow
    /// (`<allow eavesdrop="true"/>`).
    public var eavesdrop: Bool

    public init(
        sender: String? = nil, interface: String? = nil, member: String? = nil, path: DBusObjectPath? = nil,
        pathNamespace: DBusObjectPath? = nil, arguments: [Int: String] = [:], eavesdrop: Bool = false
    ) {
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.arguments = arguments
        self.eavesdrop = eavesdrop
    }

    /// The rule in the bus's text form: `type='signal',sender='…',arg0='…',eavesdrop='true'`.
    public var description: String {
        func quote(_ s: String) -> String {
            "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        }
        var parts = ["type='signal'"]
        if let sender { parts.append("sender=" + quote(sender)) }
        if let interface { parts.append("interface=" + quote(interface)) }
        if let member { parts.append("member=" + quote(member)) }
        if let path { parts.append("path=" + quote(path.rawValue)) }
        if let pathNamespace { parts.append("path_namespace=" + quote(pathNamespace.rawValue)) }
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) {
            parts.append("arg\(index)=" + quote(value))
        }
        if eavesdrop { parts.append("eavesdrop='true'") }
        return parts.joined(separator: ",")
    }

    /// Whether the header of `message` matches everything but the sender (the sender needs the name-owner
    /// table) and the arguments (which need the body).
    func matchesHeader(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal else { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let p = message.path?.rawValue else { return false }
            let ns = pathNamespace.rawValue
            if !(ns == "/" || p == ns || p.hasPrefix(ns + "/")) { return false }
        }
        return true
    }

    /// Whether the decoded body of `message` holds the string arguments the rule asks for.
    func matchesArguments(_ message: DBusMessage) -> Bool {
        for (index, value) in arguments {
            guard index < message.body.count, case .string(let s) = message.body[index], s == value else {
                return false
            }
        }
        return true
    }
}

/// A live subscription; `cancel()` removes it (and its match rule from the bus).
public final class DBusSubscription: Sendable {
    let id: UInt64
    weak let connection: DBusConnection?

    init(id: UInt64, connection: DBusConnection) {
        self.id = id
        self.connection = connection
    }

    /// Stops delivery; safe to call more than once.
    public func cancel() {
        connection?.unsubscribe(id)
    }
}

struct SignalSubscription {
    let rule: DBusMatchRule
    /// A larger signal is dropped unread.
    let maximumBytes: Int
    let handler: @Sendable (DBusMessage) -> Void
    /// Whether AddMatch was sent for this subscription (peer connections have no bus).
    let addedToBus: Bool
}

extension DBusConnection {
    static let busName = "org.freedesktop.DBus"
    static let busPath: DBusObjectPath = "/org/freedesktop/DBus"

    /// The largest signal body a subscription takes unless told otherwise.
    public static let defaultMaximumSignalBytes = 1 << 20

    /// Subscribes to signals matching `rule`; `handler` runs on the connection's queue, in arrival order.
    /// A matching signal whose body is larger than `maximumBytes` is dropped without being decoded.
    ///
    /// On a bus connection this returns after the bus has accepted the rule (AddMatch), so no signal
    /// sent after the call returns is missed.
    public func subscribe(
        _ rule: DBusMatchRule, maximumBytes: Int = DBusConnection.defaultMaximumSignalBytes,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) async throws(DBusError) -> DBusSubscription {
        let onBus = uniqueName != nil
        if onBus {
            _ = try await callBus("AddMatch", [.string(rule.description)])
            if let sender = rule.sender, !sender.hasPrefix(":"), sender != DBusConnection.busName {
                try await trackOwner(of: sender)
            }
        }
        return onQueue {
            let id = nextSubscriptionID
            nextSubscriptionID += 1
            subscriptions[id] = SignalSubscription(
                rule: rule, maximumBytes: maximumBytes, handler: handler, addedToBus: onBus)
            return DBusSubscription(id: id, connection: self)
        }
    }

    /// An asynchronous sequence of the signals matching `rule`; ending the iteration unsubscribes.
    public func signals(matching rule: DBusMatchRule) async throws(DBusError) -> AsyncStream<DBusMessage> {
        let (stream, continuation) = AsyncStream<DBusMessage>.makeStream()
        let subscription = try await subscribe(rule) { continuation.yield($0) }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }

    func unsubscribe(_ id: UInt64) {
        let removed: SignalSubscription? = onQueue { subscriptions.removeValue(forKey: id) }
        guard let removed, removed.addedToBus, !isClosedNow else { return }
        let message = DBusMessage.methodCall(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: "RemoveMatch", body: [.string(removed.rule.description)])
        var quiet = message
        quiet.noReplyExpected = true
        _ = try? send(quiet)
    }

    var isClosedNow: Bool { onQueue { isClosed } }

    /// A signal arrived (on `queue`), its header read. The subscriptions whose rule its header and sender
    /// match decide whether its body is decoded at all: a signal nobody subscribed to, one from a sender
    /// the rule does not name (however it is addressed), or one larger than every matching subscription
    /// takes, is dropped unread.
    func receiveSignal(_ header: DBusMessage, _ raw: OpaquePointer) {
        let ownerChange =
            header.sender == DBusConnection.busName && header.member == "NameOwnerChanged"
            && header.interface == DBusConnection.busName && !watchedNames.isEmpty
        // A signal addressed to another connection is here only because some rule eavesdrops.
        let overheard = header.destination.map { $0.hasPrefix(":") && $0 != uniqueName } ?? false
        let wanted = subscriptions.sorted(by: { $0.key < $1.key }).map(\.value).filter { subscription in
            guard subscription.rule.matchesHeader(header), subscription.rule.eavesdrop || !overheard else {
                return false
            }
            guard let sender = subscription.rule.sender, sender != header.sender else { return true }
            // A well-known sender name matches the unique name that currently owns it.
            guard !sender.hasPrefix(":"), let owner = nameOwners[sender] else { return false }
            return owner == header.sender
        }
        guard ownerChange || !wanted.isEmpty else {
            unreadCount.add(1, ordering: .relaxed)
            return
        }
        let bytes = Marshalling.bodyBytes(of: raw)
        let limit = max(wanted.map(\.maximumBytes).max() ?? 0, ownerChange ? Self.ownerChangeBytes : 0)
        guard bytes <= limit else {
            unreadCount.add(1, ordering: .relaxed)
            return
        }
        decodedCount.add(1, ordering: .relaxed)
        guard let message = try? DBusMessage(decoding: raw) else { return }
        if ownerChange, message.body.count == 3, case .string(let name) = message.body[0],
            case .string(let newOwner) = message.body[2], watchedNames[name] != nil
        {
            nameOwners[name] = newOwner.isEmpty ? nil : newOwner
        }
        for subscription in wanted where bytes <= subscription.maximumBytes {
            guard subscription.rule.matchesArguments(message) else { continue }
            subscription.handler(message)
        }
    }

    /// NameOwnerChanged carries three bus names, 255 bytes each at most.
    static let ownerChangeBytes = 1024

    /// Keeps `nameOwners[name]` current, for matching signals sent by a well-known name.
    private func trackOwner(of name: String) async throws(DBusError) {
        let first: Bool = onQueue {
            watchedNames[name, default: 0] += 1
            return watchedNames[name] == 1
        }
        guard first else { return }
        _ = try await callBus("AddMatch", [.string(DBusConnection.nameOwnerRule(name).description)])
        let owner = try? await getNameOwner(name)
        onQueue {
            if nameOwners[name] == nil, let owner { nameOwners[name] = owner }
        }
    }

    static func nameOwnerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(
            sender: busName, interface: busName, member: "NameOwnerChanged", path: busPath, arguments: [0: name])
    }

    /// Calls a method of the bus daemon itself.
    func callBus(_ member: String, _ body: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call(
            destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busName,
            member: member, body)
    }

    /// Watches who owns `name`: `handler` gets the current owner at once (nil when none), then every
    /// change (NameOwnerChanged), on the connection's queue.
    public func watchNameOwner(
        _ name: String, handler: @escaping @Sendable (String?) -> Void
    ) async throws(DBusError) -> DBusSubscription {
        let subscription = try await subscribe(DBusConnection.nameOwnerRule(name)) { message in
            guard message.body.count == 3, case .string(let newOwner) = message.body[2] else { return }
            handler(newOwner.isEmpty ? nil : newOwner)
        }
        let owner: String?
        do {
            owner = try await getNameOwner(name)
        } catch  where error.is(.nameHasNoOwner) {
            owner = nil
        }
        queue.async { handler(owner) }
        return subscription
    }

    /// The unique name owning `name`; throws NameHasNoOwner when none does.
    public func getNameOwner(_ name: String) async throws(DBusError) -> String {
        guard case .string(let owner)? = try await callBus("GetNameOwner", [.string(name)]).first else {
            throw DBusError(.failed, "GetNameOwner returned no name")
        }
        return owner
    }

    /// Whether anyone owns `name` now.
    public func nameHasOwner(_ name: String) async throws(DBusError) -> Bool {
        guard case .boolean(let has)? = try await callBus("NameHasOwner", [.string(name)]).first else {
            throw DBusError(.failed, "NameHasOwner returned no answer")
        }
        return has
    }

    /// The process id of the connection `name` (unique or well-known).
    public func unixProcessID(of name: String) async throws(DBusError) -> UInt32 {
        guard case .uint32(let pid)? = try await callBus("GetConnectionUnixProcessID", [.string(name)]).first else {
            throw DBusError(.failed, "GetConnectionUnixProcessID returned no pid")
        }
        return pid
    }

    /// The Unix user id of the connection `name`.
    public func unixUser(of name: String) async throws(DBusError) -> UInt32 {
        guard case .uint32(let uid)? = try await callBus("GetConnectionUnixUser", [.string(name)]).first else {
            throw DBusError(.failed, "GetConnectionUnixUser returned no uid")
        }
        return uid
    }

    /// How a name request is made.
    public struct NameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let allowReplacement = NameFlags(rawValue: 0x1)
        public static let replaceExisting = NameFlags(rawValue: 0x2)
        public static let doNotQueue = NameFlags(rawValue: 0x4)
    }

    /// Requests a well-known name. When another connection owns it and will not give it up, throws
    /// `io.chime.DBusKit.Error.NameTaken` saying which process has it.
    public func requestName(_ name: String, flags: NameFlags = [.doNotQueue]) async throws(DBusError) {
        guard DBusNames.isValidBusName(name), !name.hasPrefix(":") else {
            throw DBusError(.invalidArgs, "\"\(name)\" is not a valid well-known bus name")
        }
        let reply = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)])
        guard case .uint32(let code)? = reply.first else { throw DBusError(.failed, "RequestName gave no answer") }
        switch code {
        case 1, 4: return  // primary owner, or already the owner
        default:
            var who = "another process"
            if let owner = try? await getNameOwner(name) {
                who = "\(owner)"
                if let pid = try? await unixProcessID(of: owner) {
                    who += " (pid \(pid)\(DBusConnection.processName(pid).map { ", \($0)" } ?? ""))"
                }
            }
            let queued = code == 2 ? "; this connection waits in the queue for it" : ""
            throw DBusError(
                name: DBusError.nameTaken, message: "the bus name \(name) is already owned by \(who)\(queued)")
        }
    }

    /// Gives up a well-known name.
    public func releaseName(_ name: String) async throws(DBusError) {
        _ = try await callBus("ReleaseName", [.string(name)])
    }

    static func processName(_ pid: UInt32) -> String? {
        // The name is at most 16 bytes and ends with a newline.
        let descriptor = Glibc.open("/proc/\(pid)/comm", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { _ = Glibc.close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: bytes[0..<count], as: UTF8.self).trimmingCharacters { $0.isWhitespace }
        return text.isEmpty ? nil : text
    }
}

extension DBusError {
    /// The error `requestName` throws when the name belongs to someone else.
    public static let nameTaken = "io.chime.DBusKit.Error.NameTaken"
}

extension String {
    /// The string without the leading and trailing characters `isTrimmed` accepts.
    func trimmingCharacters(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }), let last = lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(self[first...last])
    }
}
