import ChimeCore
import ChimeProtocol
import DBusKit

/// A client of the freedesktop `org.freedesktop.Notifications` interface, over DBusKit.
public struct NotificationServer: Sendable {
    public static let name = "org.freedesktop.Notifications"
    public static let path: DBusObjectPath = "/org/freedesktop/Notifications"
    public static let interface = "org.freedesktop.Notifications"
    let transport: any NotificationTransport
    /// How long a server may take to answer before the call counts as failed.
    var callTimeout: Duration = .seconds(10)
    /// Whether the server reads the body as markup (its capability `body-markup`): then the body's `<`,
    /// `>` and `&` are escaped, so that text such as `<b>` is shown as written.
    var bodyMarkup = false

    public init(transport: any NotificationTransport) {
        self.transport = transport
    }

    /// Calls one of the server's methods through the transport; `rows` as in `notify`.
    func call(_ member: String, interface: String = interface, _ body: [DBusValue] = [], rows: [UInt64] = [])
        async throws(DBusError) -> [DBusValue]
    {
        let message = DBusMessage.methodCall(
            destination: Self.name, path: Self.path, interface: interface, member: member, body: body)
        return try await transport.call(message, timeout: callTimeout, rows: rows).body
    }

    /// Shows `content`; returns the server's notification id. `rows` are the outbox rows it stands for:
    /// the relay stores the id on them as soon as the server answers.
    ///
    /// The arguments are the specification's: app_name, replaces_id, app_icon, summary, body,
    /// actions (key, label, key, label, …), hints, expire_timeout.
    public func notify(_ content: NotificationContent, replacesID: UInt32 = 0, rows: [UInt64] = [])
        async throws(DBusError) -> UInt32
    {
        try await withCheckedContinuation { (continuation: CheckedContinuation<Result<UInt32, DBusError>, Never>) in
            notify(content, replacesID: replacesID, rows: rows) { continuation.resume(returning: $0) }
        }.get()
    }

    /// `notify`, with the id or the error given to `completion` (on the transport's queue). The call
    /// leaves before this returns when the transport is the relay.
    public func notify(
        _ content: NotificationContent, replacesID: UInt32 = 0, rows: [UInt64] = [],
        completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void
    ) {
        transport.call(notifyMessage(content, replacesID: replacesID), timeout: callTimeout, rows: rows) { result in
            completion(Self.notificationID(result))
        }
    }

    /// A Notify made ready ahead of time (`NotificationTransport.prepare`), with what it was made from:
    /// sent with `notify(_:completion:)` when the notification due is still the same.
    public struct PreparedNotify: Sendable {
        public var content: NotificationContent
        public var replacesID: UInt32
        var bodyMarkup: Bool
        var call: PreparedCall

        /// Whether this is the Notify `server` would make now for `content` replacing `replacesID`.
        public func matches(_ content: NotificationContent, replacesID: UInt32, on server: NotificationServer) -> Bool {
            bodyMarkup == server.bodyMarkup && call.timeout == server.callTimeout && self.replacesID == replacesID
                && self.content == content
        }
    }

    /// Makes a Notify ready ahead of time: the message built and, for the relay, serialized.
    public func prepareNotify(_ content: NotificationContent, replacesID: UInt32, rows: [UInt64]) -> PreparedNotify {
        PreparedNotify(
            content: content, replacesID: replacesID, bodyMarkup: bodyMarkup,
            call: transport.prepare(notifyMessage(content, replacesID: replacesID), timeout: callTimeout, rows: rows))
    }

    /// Sends a Notify `prepareNotify` made ready.
    public func notify(_ prepared: PreparedNotify, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void)
    {
        transport.call(prepared.call) { result in completion(Self.notificationID(result)) }
    }

    func notifyMessage(_ content: NotificationContent, replacesID: UInt32) -> DBusMessage {
        DBusMessage.methodCall(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "Notify",
            body: Self.notifyArguments(content, replacesID: replacesID, bodyMarkup: bodyMarkup))
    }

    static func notificationID(_ result: Result<DBusMessage, DBusError>) -> Result<UInt32, DBusError> {
        result.flatMap { reply in
            guard case .uint32(let id)? = reply.body.first else {
                return .failure(DBusError(.failed, "the notification server answered Notify without an id"))
            }
            return .success(id)
        }
    }

    /// Closes a shown notification (`CloseNotification`).
    ///
    /// The specification's argument is `u`; some servers (python-dbusmock's template among them) declare
    /// `i` and refuse `u`, so a refusal of the signature is answered by asking again with `i`.
    public func close(notificationID: UInt32, asInt32: Bool = false) async throws(DBusError) {
        if asInt32 {
            _ = try await call("CloseNotification", [.int32(Int32(bitPattern: notificationID))])
            return
        }
        do {
            _ = try await call("CloseNotification", [.uint32(notificationID)])
        } catch  where error.is(.invalidArgs) || error.is(.unknownMethod) {
            _ = try await call("CloseNotification", [.int32(Int32(bitPattern: notificationID))])
        }
    }

    static func notifyArguments(_ content: NotificationContent, replacesID: UInt32, bodyMarkup: Bool) -> [DBusValue] {
        var hints: [DBusDictEntry] = []
        let named: Set<String> = ["urgency", "category", "desktop-entry", "sound-name"]
        for (name, hint) in content.hints.sorted(by: { $0.key < $1.key }) where !named.contains(name) {
            hints.append(DBusDictEntry(.string(name), .variant(hint.dbusValue)))
        }
        if let urgency = content.urgency {
            hints.append(DBusDictEntry(.string("urgency"), .variant(.byte(urgency.rawValue))))
        }
        if let category = content.category {
            hints.append(DBusDictEntry(.string("category"), .variant(.string(category))))
        }
        if let desktopEntry = content.desktopEntry {
            hints.append(DBusDictEntry(.string("desktop-entry"), .variant(.string(desktopEntry))))
        }
        if let sound = content.sound {
            hints.append(DBusDictEntry(.string("sound-name"), .variant(.string(sound))))
        }
        let actions = content.actions.flatMap { [DBusValue.string($0.key), .string($0.label)] }
        return [
            .string(content.appName.isEmpty ? "chime" : content.appName),
            .uint32(replacesID),
            .string(content.icon),
            .string(content.summary),
            .string(content.notifyBody(bodyMarkup: bodyMarkup)),
            .array(element: .string, actions),
            .dictionary(key: .string, value: .variant, hints),
            .int32(content.expireTimeout),
        ]
    }

    /// The server's capabilities (`actions`, `body`, `persistence`, …).
    public func capabilities() async throws(DBusError) -> [String] {
        let reply = try await call("GetCapabilities")
        return try reply.first.map { (v) throws(DBusError) in try v.decode([String].self) } ?? []
    }

    /// The server's name, vendor, version and specification version (`GetServerInformation`).
    public func information() async throws(DBusError) -> (
        name: String, vendor: String, version: String, specVersion: String
    ) {
        let reply = try await call("GetServerInformation")
        let strings = reply.compactMap { if case .string(let s) = $0 { s } else { nil } }
        guard strings.count == 4 else { throw DBusError(.failed, "GetServerInformation did not answer four strings") }
        return (strings[0], strings[1], strings[2], strings[3])
    }

    /// Whether an error means "there is no server", as opposed to "the server refused".
    public static func meansNoServer(_ error: DBusError) -> Bool {
        error.is(.serviceUnknown) || error.is(.nameHasNoOwner)
            || error.name.hasPrefix("org.freedesktop.DBus.Error.Spawn")
            || error.is(.disconnected)
    }

    /// The specification's close reasons, as history records them.
    static func closeReason(_ reason: UInt32) -> String {
        switch reason {
        case 1: "expired"
        case 2: "dismissed by the user"
        case 3: "closed by a call to CloseNotification"
        default: "undefined (\(reason))"
        }
    }
}
