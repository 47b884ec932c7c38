import CDBus

/// A D-Bus message as a value: header fields and a decoded body.
///
/// Incoming messages are decoded once, on the connection's queue, into this value; outgoing ones are
/// encoded when sent. No libdbus pointer ever leaves DBusKit.
public struct DBusMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    public var errorName: String?
    public var destination: String?
    public var sender: String?
    public var serial: UInt32 = 0
    public var replySerial: UInt32 = 0
    public var noReplyExpected = false
    /// Whether the bus may start the destination's service to deliver a method call.
    public var autoStart = true
    public var body: [DBusValue]

    public init(
        kind: Kind, path: DBusObjectPath? = nil, interface: String? = nil, member: String? = nil,
        errorName: String? = nil, destination: String? = nil, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.destination = destination
        self.body = body
    }

    /// A method call to `destination` (nil for peer-to-peer connections).
    public static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// A signal from `path`; broadcast unless `destination` is set.
    public static func signal(
        path: DBusObjectPath, interface: String, member: String, destination: String? = nil, body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .signal, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// The successful reply to this method call.
    public func makeReturn(_ body: [DBusValue] = []) -> DBusMessage {
        var reply = DBusMessage(kind: .methodReturn, destination: sender, body: body)
        reply.replySerial = serial
        return reply
    }

    /// The error reply to this method call.
    public func makeError(_ error: DBusError) -> DBusMessage {
        var reply = DBusMessage(
            kind: .error, errorName: error.name, destination: sender, body: [.string(error.message)])
        reply.replySerial = serial
        return reply
    }

    /// The body's signature, e.g. `susssasa{sv}i`.
    public var signature: DBusSignature { DBusSignature(body.map(\.type)) }

    /// For an error message: the error it carries.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        var text = ""
        if case .string(let s)? = body.first { text = s }
        return DBusError(name: errorName ?? DBusError.Name.failed.rawValue, message: text)
    }

    // MARK: - libdbus conversion

    /// Builds a libdbus message that the caller owns (one reference).
    func encode() throws(DBusError) -> OpaquePointer {
        let signature = DBusSignature(body.map(\.type)).description
        guard signature.utf8.count <= 255 else {
            throw DBusError(.invalidSignature, "the body's signature is \(signature.utf8.count) bytes, more than 255")
        }
        for value in body { try value.validate() }
        try checkHeader()
        let type: Int32
        switch kind {
        case .methodCall: type = CDBUS_MESSAGE_TYPE_METHOD_CALL
        case .methodReturn: type = CDBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error: type = CDBUS_MESSAGE_TYPE_ERROR
        case .signal: type = CDBUS_MESSAGE_TYPE_SIGNAL
        }
        guard let message = dbus_message_new(type) else { throw DBusError(.noMemory, "dbus_message_new") }
        var ok = true
        if let path { ok = ok && dbus_message_set_path(message, path.rawValue) != 0 }
        if let interface { ok = ok && dbus_message_set_interface(message, interface) != 0 }
        if let member { ok = ok && dbus_message_set_member(message, member) != 0 }
        if let errorName { ok = ok && dbus_message_set_error_name(message, errorName) != 0 }
        if let destination { ok = ok && dbus_message_set_destination(message, destination) != 0 }
        if replySerial != 0 { ok = ok && dbus_message_set_reply_serial(message, replySerial) != 0 }
        dbus_message_set_no_reply(message, noReplyExpected ? 1 : 0)
        dbus_message_set_auto_start(message, autoStart ? 1 : 0)
        guard ok else {
            dbus_message_unref(message)
            throw DBusError(.noMemory, "setting message header")
        }
        do {
            try Marshalling.append(body, to: message)
        } catch {
            dbus_message_unref(message)
            throw error
        }
        return message
    }

    /// libdbus aborts on an invalid header field, so each one is checked here first.
    private func checkHeader() throws(DBusError) {
        if let interface, !DBusNames.isValidInterface(interface) {
            throw DBusError(.invalidArgs, "\"\(interface)\" is not a valid interface name")
        }
        if let member, !DBusNames.isValidMember(member) {
            throw DBusError(.invalidArgs, "\"\(member)\" is not a valid member name")
        }
        if let errorName, !DBusNames.isValidInterface(errorName) {
            throw DBusError(.invalidArgs, "\"\(errorName)\" is not a valid error name")
        }
        if let destination, !DBusNames.isValidBusName(destination) {
            throw DBusError(.invalidArgs, "\"\(destination)\" is not a valid bus name")
        }
        switch kind {
        case .methodCall where path == nil || member == nil:
            throw DBusError(.invalidArgs, "a method call needs a path and a member")
        case .signal where path == nil || member == nil || interface == nil:
            throw DBusError(.invalidArgs, "a signal needs a path, an interface and a member")
        case .error where errorName == nil:
            throw DBusError(.invalidArgs, "an error message needs an error name")
        default: break
        }
    }

    /// Decodes a libdbus message (borrowed; not released here).
    init(decoding message: OpaquePointer) throws(DBusError) {
        try self.init(header: message)
        body = try Marshalling.read(from: message)
    }

    /// Reads a libdbus message's header only (borrowed; not released here): `body` stays empty, so that
    /// what the message is, who sent it and how big it is can be checked before its body is decoded.
    init(header message: OpaquePointer) throws(DBusError) {
        switch dbus_message_get_type(message) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: kind = .signal
        default: throw DBusError(.failed, "message of unknown type")
        }
        func text(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }
        path = text(dbus_message_get_path(message)).flatMap { try? DBusObjectPath($0) }
        interface = text(dbus_message_get_interface(message))
        member = text(dbus_message_get_member(message))
        errorName = text(dbus_message_get_error_name(message))
        destination = text(dbus_message_get_destination(message))
        sender = text(dbus_message_get_sender(message))
        serial = dbus_message_get_serial(message)
        replySerial = dbus_message_get_reply_serial(message)
        noReplyExpected = dbus_message_get_no_reply(message) != 0
        autoStart = dbus_message_get_auto_start(message) != 0
        body = []
    }
}

/// Validity checks for the names the specification defines.
public enum DBusNames {
    private static func isElementChar(_ b: UInt8, allowHyphen: Bool) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
            || (allowHyphen && b == UInt8(ascii: "-"))
    }

    /// `a.b.c`: two or more elements of `[A-Za-z_][A-Za-z0-9_]*`, at most 255 bytes.
    public static func isValidInterface(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { e in
            guard let first = e.first, !(first >= 0x30 && first <= 0x39) else { return false }
            return e.allSatisfy { isElementChar($0, allowHyphen: false) }
        }
    }

    /// A member (method, signal or property) name: one element, not starting with a digit.
    public static func isValidMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= 255, !(first >= 0x30 && first <= 0x39) else { return false }
        return bytes.allSatisfy { isElementChar($0, allowHyphen: false) }
    }

    /// A unique (`:1.42`) or well-known (`io.chime.Chime1`) bus name.
    public static func isValidBusName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 255 else { return false }
        let unique = bytes.first == UInt8(ascii: ":")
        let rest = unique ? Array(bytes.dropFirst()) : bytes
        let elements = rest.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        return elements.allSatisfy { e in
            guard let first = e.first else { return false }
            if !unique, first >= 0x30 && first <= 0x39 { return false }
            return e.allSatisfy { isElementChar($0, allowHyphen: true) }
        }
    }
}

extension DBusMessage {
    /// The message in D-Bus wire format (header and body), e.g. to store or to test marshalling.
    /// Unix file descriptors cannot travel this way: they need a connection.
    ///
    /// The corresponding C function is `dbus_message_marshal`.
    public func serialized() throws(DBusError) -> [UInt8] {
        if body.contains(where: { $0.containsUnixFD }) {
            throw DBusError(.notSupported, "a message holding unix fds cannot be serialized")
        }
        let message = try encode()
        defer { dbus_message_unref(message) }
        dbus_message_set_serial(message, serial == 0 ? 1 : serial)
        var buffer: UnsafeMutablePointer<CChar>? = nil
        var length: Int32 = 0
        guard dbus_message_marshal(message, &buffer, &length) != 0, let buffer else {
            throw DBusError(.noMemory, "dbus_message_marshal")
        }
        defer { dbus_free(buffer) }
        return buffer.withMemoryRebound(to: UInt8.self, capacity: Int(length)) {
            Array(UnsafeBufferPointer(start: $0, count: Int(length)))
        }
    }

    /// Parses a message in wire format, validating it as libdbus validates what arrives on a socket.
    ///
    /// The corresponding C function is `dbus_message_demarshal`.
    public init(serialized bytes: [UInt8]) throws(DBusError) {
        let raw = try Marshalling.demarshal(bytes)
        defer { dbus_message_unref(raw) }
        try self.init(decoding: raw)
    }
}

extension DBusValue {
    var containsUnixFD: Bool {
        switch self {
        case .unixFD: true
        case .variant(let v): v.containsUnixFD
        case .array(let t, let items): t.description.contains("h") || items.contains { $0.containsUnixFD }
        case .dictionary(_, _, let entries): entries.contains { $0.key.containsUnixFD || $0.value.containsUnixFD }
        case .structure(let fields): fields.contains { $0.containsUnixFD }
        default: false
        }
    }
}
