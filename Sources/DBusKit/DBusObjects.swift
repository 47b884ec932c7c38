/// One argument of a method or signal, for introspection and signature checks.
public struct DBusArgument: Sendable, Hashable {
    public var name: String
    public var type: DBusType

    public init(_ name: String, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// An incoming method call as a handler sees it.
public struct DBusMethodCall: Sendable {
    public let message: DBusMessage
    /// The connection the call arrived on (to emit signals or call back).
    public let connection: DBusConnection
    /// The message as it arrived, for the argument the method streams.
    let received: ReceivedMessage?
    let streamedArgument: Int?

    /// The call's arguments; their types already match the method's declared inputs. The argument a method
    /// streams (`DBusMethod.streamedArgument`) is an empty array here: read it with `forEachElement`.
    public var arguments: [DBusValue] { message.body }
    /// The caller's unique bus name.
    public var sender: String? { message.sender }
    /// About how many bytes the call's arguments took on the wire.
    public let bytes: Int

    /// Calls `body` with each element of the array argument the method streams, decoded one at a time, so
    /// that a large array never exists as decoded values all at once.
    public func forEachElement(_ body: (DBusValue) throws(DBusError) -> Void) throws(DBusError) {
        guard let received, let streamedArgument else {
            throw DBusError(.failed, "the method streams no argument")
        }
        try Marshalling.forEachElement(of: received.raw, argument: streamedArgument, body)
    }
}

/// A method an exported object answers.
public struct DBusMethod: Sendable {
    public var name: String
    public var inputs: [DBusArgument]
    public var outputs: [DBusArgument]
    /// The largest body a call may have, in bytes on the wire; nil: the connection's
    /// `IncomingLimits.callBytes`. A larger call is answered with LimitsExceeded before it is decoded.
    public var maximumArgumentBytes: Int?
    /// An argument (an array, by index) that the handler reads one element at a time with
    /// `DBusMethodCall.forEachElement` instead of finding it decoded in `arguments`.
    public var streamedArgument: Int?
    /// Returns the reply body, which must match `outputs`; a thrown `DBusError` becomes the error reply,
    /// any other error becomes `org.freedesktop.DBus.Error.Failed`.
    public var handler: @Sendable (DBusMethodCall) async throws -> [DBusValue]

    public init(
        _ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], maximumArgumentBytes: Int? = nil,
        streamedArgument: Int? = nil, handler: @escaping @Sendable (DBusMethodCall) async throws -> [DBusValue]
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.maximumArgumentBytes = maximumArgumentBytes
        self.streamedArgument = streamedArgument
        self.handler = handler
    }
}

/// A signal an exported object may emit (declared for introspection).
public struct DBusSignalDeclaration: Sendable, Hashable {
    public var name: String
    public var arguments: [DBusArgument]

    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}

/// A property of an exported object, served through org.freedesktop.DBus.Properties.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable { case read, write, readwrite }

    public var name: String
    public var type: DBusType
    public var get: (@Sendable () async throws -> DBusValue)?
    /// Validates and stores a new value; throw a `DBusError` (e.g. InvalidArgs) to refuse it.
    public var set: (@Sendable (DBusValue) async throws -> Void)?
    /// Whether a successful Set emits PropertiesChanged with the new value.
    public var emitsChangedSignal: Bool

    public var access: Access {
        switch (get != nil, set != nil) {
        case (true, true): .readwrite
        case (false, true): .write
        default: .read
        }
    }

    public init(
        _ name: String, type: DBusType, emitsChangedSignal: Bool = true,
        get: (@Sendable () async throws -> DBusValue)?, set: (@Sendable (DBusValue) async throws -> Void)? = nil
    ) {
        self.name = name
        self.type = type
        self.get = get
        self.set = set
        self.emitsChangedSignal = emitsChangedSignal
    }
}

/// An interface an object exports: methods, signals and properties under one name.
public struct DBusInterface: Sendable {
    public var name: String
    public var methods: [DBusMethod]
    public var signals: [DBusSignalDeclaration]
    public var properties: [DBusProperty]

    public init(
        _ name: String, methods: [DBusMethod] = [], signals: [DBusSignalDeclaration] = [],
        properties: [DBusProperty] = []
    ) {
        self.name = name
        self.methods = methods
        self.signals = signals
        self.properties = properties
    }
}

extension DBusConnection {
    static let introspectable = "org.freedesktop.DBus.Introspectable"
    static let properties = "org.freedesktop.DBus.Properties"
    static let peer = "org.freedesktop.DBus.Peer"

    /// Exports `interfaces` at `path`, replacing what was exported there. Introspectable, Properties
    /// and Peer are added automatically.
    public func export(_ interfaces: [DBusInterface], at path: DBusObjectPath) throws(DBusError) {
        for interface in interfaces {
            guard DBusNames.isValidInterface(interface.name) else {
                throw DBusError(.invalidArgs, "\"\(interface.name)\" is not a valid interface name")
            }
            for member in interface.methods.map(\.name) + interface.signals.map(\.name)
                + interface.properties.map(\.name)
            where !DBusNames.isValidMember(member) {
                throw DBusError(.invalidArgs, "\"\(member)\" is not a valid member name")
            }
        }
        onQueue {
            objects[path] = Dictionary(interfaces.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        }
    }

    /// Removes the object at `path`.
    public func unexport(_ path: DBusObjectPath) {
        onQueue { _ = objects.removeValue(forKey: path) }
    }

    /// Emits org.freedesktop.DBus.Properties.PropertiesChanged for an exported object.
    public func emitPropertiesChanged(
        path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String] = []
    ) throws(DBusError) {
        let entries = changed.sorted { $0.key < $1.key }.map { DBusDictEntry(.string($0.key), .variant($0.value)) }
        try emitSignal(
            path: path, interface: DBusConnection.properties, member: "PropertiesChanged",
            [
                .string(interface), .dictionary(key: .string, value: .variant, entries),
                .array(element: .string, invalidated.map { .string($0) }),
            ])
    }

    /// A method call arrived (on `queue`), undecoded. One larger than its method takes, or than its sender
    /// or everyone together may have waiting (`IncomingLimits`), is refused with LimitsExceeded; the others
    /// join their sender's lane, and a lane that was empty gets a task that handles its calls one after
    /// another.
    func receiveMethodCall(_ call: IncomingCall) {
        let limit = methodFor(call.header)?.maximumArgumentBytes ?? methodCalls.limits.callBytes
        let refusal: String?
        if call.bytes > limit {
            refusal =
                "\(call.header.member ?? "the call") takes at most \(limit) bytes of arguments; this call has "
                + "\(call.bytes)"
        } else {
            switch methodCalls.admit(call) {
            case .queued:
                refusal = nil
            case .startLane:
                refusal = nil
                Task { [weak self] in
                    var next: IncomingCall? = call
                    while let current = next, let connection = self {
                        await connection.handleMethodCall(current)
                        next = connection.methodCalls.next(after: current)
                    }
                }
            case .tooManyCalls:
                refusal =
                    "\(methodCalls.limits.callsPerSender) calls from this connection are waiting for their answers "
                    + "already; wait for them before sending more"
            case .tooManyBytesFromSender:
                refusal =
                    "calls from this connection holding \(methodCalls.limits.bytesPerSender) bytes are waiting for "
                    + "their answers already; wait for them before sending more"
            case .tooManyBytes:
                refusal = "the service has too many large calls waiting; try again in a moment"
            }
        }
        guard let refusal else { return }
        unreadCount.add(1, ordering: .relaxed)
        guard !call.header.noReplyExpected else { return }
        _ = try? send(call.header.makeError(DBusError(.limitsExceeded, refusal)))
    }

    /// The method a call's header names, if this connection exports it (on `queue`).
    private func methodFor(_ header: DBusMessage) -> DBusMethod? {
        guard let path = header.path, let member = header.member, let interfaces = objects[path] else { return nil }
        if let name = header.interface {
            return interfaces[name]?.methods.first { $0.name == member }
        }
        return interfaces.values.sorted { $0.name < $1.name }.lazy.flatMap(\.methods).first { $0.name == member }
    }

    /// Decodes one call, handles it and sends its answer; runs in its sender's lane.
    func handleMethodCall(_ call: IncomingCall) async {
        let message = call.header
        let reply: DBusMessage
        do {
            let body = try await answer(call)
            let bytes = body.reduce(0) { $0 + $1.estimatedWireBytes }
            guard bytes <= methodCalls.limits.replyBytes else {
                throw DBusError(
                    .limitsExceeded,
                    "the answer to \(message.member ?? "the call") would be about \(bytes) bytes, more than the "
                        + "\(methodCalls.limits.replyBytes) a reply may carry; ask for less")
            }
            reply = message.makeReturn(body)
        } catch let error as DBusError {
            reply = message.makeError(error)
        } catch {
            reply = message.makeError(DBusError(.failed, "\(error)"))
        }
        guard !message.noReplyExpected else { return }
        do {
            try send(reply)
        } catch {
            // The handler returned values that do not marshal: tell the caller instead of staying silent.
            _ = try? send(message.makeError(DBusError(.failed, "the service produced an invalid reply: \(error)")))
        }
    }

    private func answer(_ incoming: IncomingCall) async throws -> [DBusValue] {
        let header = incoming.header
        guard let path = header.path, let member = header.member else {
            throw DBusError(.unknownMethod, "a method call needs a path and a member")
        }
        let (interfaces, children): ([String: DBusInterface]?, [String]) = onQueue {
            (objects[path], childNodes(of: path))
        }
        // Found and checked against the signature in the header, before the body is decoded.
        func decoded(streaming streamed: Int? = nil) throws(DBusError) -> DBusMethodCall {
            var message = header
            decodedCount.add(1, ordering: .relaxed)
            message.body = try Marshalling.read(from: incoming.received.raw, skipping: streamed)
            return DBusMethodCall(
                message: message, connection: self, received: incoming.received, streamedArgument: streamed,
                bytes: incoming.bytes)
        }
        if header.interface == DBusConnection.introspectable || (header.interface == nil && member == "Introspect") {
            guard member == "Introspect" else { throw unknownMethod(header, incoming.signature) }
            try expectSignature(header, incoming.signature, "")
            guard interfaces != nil || !children.isEmpty else { throw unknownObject(path) }
            return [.string(DBusIntrospection.xml(interfaces: Array((interfaces ?? [:]).values), children: children))]
        }
        guard let interfaces else { throw unknownObject(path) }
        if header.interface == DBusConnection.properties {
            return try await answerProperties(
                try decoded(), signature: incoming.signature, interfaces: interfaces, path: path)
        }
        let method: DBusMethod
        if let name = header.interface {
            guard let interface = interfaces[name] else {
                throw DBusError(.unknownInterface, "object \(path) has no interface \(name)")
            }
            guard let found = interface.methods.first(where: { $0.name == member }) else {
                throw unknownMethod(header, incoming.signature)
            }
            method = found
        } else {
            let candidates = interfaces.values.sorted { $0.name < $1.name }.flatMap(\.methods)
            guard let found = candidates.first(where: { $0.name == member }) else {
                throw unknownMethod(header, incoming.signature)
            }
            method = found
        }
        try expectSignature(header, incoming.signature, DBusSignature(method.inputs.map(\.type)).description)
        return try await method.handler(try decoded(streaming: method.streamedArgument))
    }

    private func answerProperties(
        _ call: DBusMethodCall, signature: String, interfaces: [String: DBusInterface], path: DBusObjectPath
    ) async throws -> [DBusValue] {
        let message = call.message
        func interface(_ value: DBusValue) throws -> DBusInterface {
            guard case .string(let name) = value else { throw DBusError(.invalidArgs, "expected an interface name") }
            guard let found = interfaces[name] else {
                throw DBusError(.unknownInterface, "object \(path) has no interface \(name)")
            }
            return found
        }
        func property(_ iface: DBusInterface, _ value: DBusValue) throws -> DBusProperty {
            guard case .string(let name) = value else { throw DBusError(.invalidArgs, "expected a property name") }
            guard let found = iface.properties.first(where: { $0.name == name }) else {
                throw DBusError(.unknownProperty, "interface \(iface.name) has no property \(name)")
            }
            return found
        }
        switch message.member {
        case "Get":
            try expectSignature(message, signature, "ss")
            let iface = try interface(message.body[0])
            let prop = try property(iface, message.body[1])
            guard let get = prop.get else {
                throw DBusError(.accessDenied, "property \(prop.name) of \(iface.name) is write-only")
            }
            return [.variant(try await get())]
        case "GetAll":
            try expectSignature(message, signature, "s")
            let iface = try interface(message.body[0])
            var entries: [DBusDictEntry] = []
            for prop in iface.properties {
                guard let get = prop.get else { continue }
                entries.append(DBusDictEntry(.string(prop.name), .variant(try await get())))
            }
            return [.dictionary(key: .string, value: .variant, entries)]
        case "Set":
            try expectSignature(message, signature, "ssv")
            let iface = try interface(message.body[0])
            let prop = try property(iface, message.body[1])
            guard let set = prop.set else {
                throw DBusError(.propertyReadOnly, "property \(prop.name) of \(iface.name) is read-only")
            }
            guard case .variant(let value) = message.body[2], value.type == prop.type else {
                throw DBusError(
                    .invalidArgs, "property \(prop.name) has type \(prop.type); send a variant holding that type")
            }
            try await set(value)
            if prop.emitsChangedSignal {
                try emitPropertiesChanged(path: path, interface: iface.name, changed: [prop.name: value])
            }
            return []
        default:
            throw unknownMethod(message, signature)
        }
    }

    private func expectSignature(_ message: DBusMessage, _ actual: String, _ expected: String) throws {
        guard actual == expected else {
            throw DBusError(
                .invalidArgs,
                "\(message.interface.map { $0 + "." } ?? "")\(message.member ?? "") expects arguments of signature "
                    + "'\(expected)', got '\(actual)'")
        }
    }

    private func unknownMethod(_ message: DBusMessage, _ signature: String) -> DBusError {
        DBusError(
            .unknownMethod,
            "no method \(message.member ?? "") with signature '\(signature)' on interface "
                + "\(message.interface ?? "(any)") at \(message.path?.rawValue ?? "")")
    }

    private func unknownObject(_ path: DBusObjectPath) -> DBusError {
        DBusError(.unknownObject, "no object at path \(path)")
    }

    /// The names of the nodes directly below `path` that lead to exported objects.
    func childNodes(of path: DBusObjectPath) -> [String] {
        let depth = path.elements.count
        var names = Set<String>()
        for candidate in objects.keys where candidate != path {
            let elements = candidate.elements
            guard elements.count > depth, Array(elements.prefix(depth)) == path.elements else { continue }
            names.insert(String(elements[depth]))
        }
        return names.sorted()
    }
}

/// Generates introspection XML from what is registered.
public enum DBusIntrospection {
    static func escape(_ s: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(s.utf8.count)
        for character in s {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// The XML document for an object with `interfaces` and child nodes `children`; the standard
    /// interfaces are listed too. Interfaces and members appear sorted by name, for stable output.
    public static func xml(interfaces: [DBusInterface], children: [String]) -> String {
        var lines = [
            "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"",
            " \"http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd\">",
            "<node>",
        ]
        func arg(_ a: DBusArgument, direction: String?) -> String {
            let dir = direction.map { " direction=\"\($0)\"" } ?? ""
            return "      <arg name=\"\(escape(a.name))\" type=\"\(escape(a.type.description))\"\(dir)/>"
        }
        let standard = [
            DBusInterface(
                "org.freedesktop.DBus.Introspectable",
                methods: [DBusMethod("Introspect", outputs: [DBusArgument("xml_data", .string)]) { _ in [] }]),
            DBusInterface(
                "org.freedesktop.DBus.Peer",
                methods: [
                    DBusMethod("Ping") { _ in [] },
                    DBusMethod("GetMachineId", outputs: [DBusArgument("machine_uuid", .string)]) { _ in [] },
                ]),
            DBusInterface(
                "org.freedesktop.DBus.Properties",
                methods: [
                    DBusMethod(
                        "Get",
                        inputs: [DBusArgument("interface_name", .string), DBusArgument("property_name", .string)],
                        outputs: [DBusArgument("value", .variant)]
                    ) { _ in [] },
                    DBusMethod(
                        "GetAll", inputs: [DBusArgument("interface_name", .string)],
                        outputs: [DBusArgument("props", .dictionary(key: .string, value: .variant))]
                    ) { _ in [] },
                    DBusMethod(
                        "Set",
                        inputs: [
                            DBusArgument("interface_name", .string), DBusArgument("property_name", .string),
                            DBusArgument("value", .variant),
                        ]
                    ) { _ in [] },
                ],
                signals: [
                    DBusSignalDeclaration(
                        "PropertiesChanged",
                        arguments: [
                            DBusArgument("interface_name", .string),
                            DBusArgument("changed_properties", .dictionary(key: .string, value: .variant)),
                            DBusArgument("invalidated_properties", .array(.string)),
                        ])
                ]),
        ]
        let all = interfaces.isEmpty ? [] : standard + interfaces
        for interface in all.sorted(by: { $0.name < $1.name }) {
            lines.append("  <interface name=\"\(escape(interface.name))\">")
            for method in interface.methods.sorted(by: { $0.name < $1.name }) {
                lines.append("    <method name=\"\(escape(method.name))\">")
                lines += method.inputs.map { arg($0, direction: "in") }
                lines += method.outputs.map { arg($0, direction: "out") }
                lines.append("    </method>")
            }
            for signal in interface.signals.sorted(by: { $0.name < $1.name }) {
                lines.append("    <signal name=\"\(escape(signal.name))\">")
                lines += signal.arguments.map { arg($0, direction: nil) }
                lines.append("    </signal>")
            }
            for property in interface.properties.sorted(by: { $0.name < $1.name }) {
                lines.append(
                    "    <property name=\"\(escape(property.name))\" type=\"\(escape(property.type.description))\" "
                        + "access=\"\(property.access.rawValue)\"/>")
            }
            lines.append("  </interface>")
        }
        for child in children { lines.append("  <node name=\"\(escape(child))\"/>") }
        lines.append("</node>")
        return lines.joined(separator: "\n") + "\n"
    }
}
