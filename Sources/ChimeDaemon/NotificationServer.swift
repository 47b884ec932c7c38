import ChimeCore
import ChimeProtocol
import DBusKit

/// A client of the freedesktop `org.freedesktop.Notifications` interface, over DBusKit.
public struct NotificationServer: Sendable {
    public static let name = "org.freedesktop.Notifications"
    public static let path: DBusObjectPath = "/org/freedesktop/Notifications"
    public static let interface = "org.freedesktop.Notifications"
    let transport: any NotificationTransport
    /// How long a server may take to answer before the call counts as failed; a delivery's Notify is
    /// waited for longer (`notifyTimeout`).
    var callTimeout: Duration = .seconds(10)
    /// How many times `callTimeout` a Notify is waited for before it counts as failed and is sent again.
    /// A server that is stopped or busy answers every call it got once it goes on, and shows each: sent
    /// again at `callTimeout`, a notification would show as often. chimed says meanwhile that the server
    /// is late; an answer that comes even later closes its popup (`NotificationRelay.lateTag`).
    static let notifyPatience = 6
    /// How long a Notify is waited for.
    var notifyTimeout: Duration { callTimeout * Self.notifyPatience }
    /// How the server reads a body (`BodyFormat`): as markup (its capability `body-markup`), as plain text,
    /// or not known (it did not say what it can).
    var bodyFormat = BodyFormat.plain

    /// Whether the server reads the body as markup: then the body's `<`, `>` and `&` are escaped, so that
    /// text such as `<b>` is shown as written.
    var bodyMarkup: Bool {
        get { bodyFormat == .markup || bodyFormat == .basicMarkup }
        set { bodyFormat = newValue ? .markup : .plain }
    }

    /// How a server reads a notification's body.
    enum BodyFormat: Hashable, Sendable {
        /// Plain text: markup is taken out, its entities decoded.
        case plain
        /// Markup (`body-markup`): text is escaped, markup kept where the specification allows it.
        case markup
        /// Markup of which the server reads `<b>`, `<i>` and `<u>` only (`ServerQuirks.readsBasicMarkupOnly`).
        case basicMarkup
        /// Not known: the server did not answer `GetCapabilities` (in time). The body is escaped, never
        /// decoded, whatever it holds: entities decoded for a server that reads markup after all would
        /// become live tags (`&lt;a href=…&gt;` a link). A server that shows plain text shows the
        /// entities as written.
        case unknown
    }

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
        // Within the call timeout, not `notifyTimeout`: this form asks a question (a permission prompt),
        // which its caller waits for, and which is not sent again.
        let message = notifyMessage(content, replacesID: replacesID)
        return try await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<UInt32, DBusError>, Never>) in
            transport.call(message, timeout: callTimeout, rows: rows) { result in
                continuation.resume(returning: Self.notificationID(result))
            }
        }.get()
    }

    /// `notify`, with the id or the error given to `completion` (on the transport's queue). The call
    /// leaves before this returns when the transport is the relay.
    public func notify(
        _ content: NotificationContent, replacesID: UInt32 = 0, rows: [UInt64] = [],
        completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void
    ) {
        transport.call(notifyMessage(content, replacesID: replacesID), timeout: notifyTimeout, rows: rows) { result in
            completion(Self.notificationID(result))
        }
    }

    /// A Notify made ready ahead of time (`NotificationTransport.prepare`), with what it was made from:
    /// sent with `notify(_:completion:)` when the notification due is still the same.
    public struct PreparedNotify: Sendable {
        public var content: NotificationContent
        public var replacesID: UInt32
        var bodyFormat: BodyFormat
        var call: PreparedCall

        /// Whether this is the Notify `server` would make now for `content` replacing `replacesID`.
        public func matches(_ content: NotificationContent, replacesID: UInt32, on server: NotificationServer) -> Bool {
            bodyFormat == server.bodyFormat && call.timeout == server.notifyTimeout && self.replacesID == replacesID
                && self.content == content
        }
    }

    /// Makes a Notify ready ahead of time: the message built and, for the relay, serialized.
    public func prepareNotify(_ content: NotificationContent, replacesID: UInt32, rows: [UInt64]) -> PreparedNotify {
        PreparedNotify(
            content: content, replacesID: replacesID, bodyFormat: bodyFormat,
            call: transport.prepare(notifyMessage(content, replacesID: replacesID), timeout: notifyTimeout, rows: rows))
    }

    /// Sends a Notify `prepareNotify` made ready.
    public func notify(_ prepared: PreparedNotify, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void)
    {
        transport.call(prepared.call) { result in completion(Self.notificationID(result)) }
    }

    func notifyMessage(_ content: NotificationContent, replacesID: UInt32) -> DBusMessage {
        DBusMessage.methodCall(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "Notify",
            body: Self.notifyArguments(content, replacesID: replacesID, bodyFormat: bodyFormat))
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

    static func notifyArguments(_ content: NotificationContent, replacesID: UInt32, bodyFormat: BodyFormat)
        -> [DBusValue]
    {
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
            .string(body(of: content, for: bodyFormat)),
            .array(element: .string, actions),
            .dictionary(key: .string, value: .variant, hints),
            .int32(content.expireTimeout),
        ]
    }

    /// The body as a server that reads it as `format` gets it.
    static func body(of content: NotificationContent, for format: BodyFormat) -> String {
        switch format {
        case .plain: content.notifyBody(bodyMarkup: false)
        case .markup: content.notifyBody(bodyMarkup: true)
        case .basicMarkup: content.notifyBody(bodyMarkup: true, basicMarkup: true)
        case .unknown: BodyMarkup.escaped(content.notifyBody(bodyMarkup: false))
        }
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
