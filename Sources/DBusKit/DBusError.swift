/// A D-Bus error: a dotted error name and a message a person can act on.
///
/// Errors that come back from remote calls keep the remote name; DBusKit's own failures use the
/// standard `org.freedesktop.DBus.Error.*` names.
public struct DBusError: Error, Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var message: String

    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    public init(_ name: Name, _ message: String) {
        self.init(name: name.rawValue, message: message)
    }

    public var description: String { "\(name): \(message)" }

    /// True when this error has the given standard name.
    public func `is`(_ name: Name) -> Bool { self.name == name.rawValue }

    /// The standard error names from the D-Bus specification that DBusKit uses or callers test for.
    public struct Name: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let failed = Name(rawValue: "org.freedesktop.DBus.Error.Failed")
        public static let noMemory = Name(rawValue: "org.freedesktop.DBus.Error.NoMemory")
        public static let serviceUnknown = Name(rawValue: "org.freedesktop.DBus.Error.ServiceUnknown")
        public static let nameHasNoOwner = Name(rawValue: "org.freedesktop.DBus.Error.NameHasNoOwner")
        public static let noReply = Name(rawValue: "org.freedesktop.DBus.Error.NoReply")
        public static let ioError = Name(rawValue: "org.freedesktop.DBus.Error.IOError")
        public static let badAddress = Name(rawValue: "org.freedesktop.DBus.Error.BadAddress")
        public static let notSupported = Name(rawValue: "org.freedesktop.DBus.Error.NotSupported")
        public static let accessDenied = Name(rawValue: "org.freedesktop.DBus.Error.AccessDenied")
        public static let noServer = Name(rawValue: "org.freedesktop.DBus.Error.NoServer")
        public static let timeout = Name(rawValue: "org.freedesktop.DBus.Error.Timeout")
        public static let disconnected = Name(rawValue: "org.freedesktop.DBus.Error.Disconnected")
        public static let invalidArgs = Name(rawValue: "org.freedesktop.DBus.Error.InvalidArgs")
        public static let invalidSignature = Name(rawValue: "org.freedesktop.DBus.Error.InvalidSignature")
        public static let unknownMethod = Name(rawValue: "org.freedesktop.DBus.Error.UnknownMethod")
        public static let unknownObject = Name(rawValue: "org.freedesktop.DBus.Error.UnknownObject")
        public static let unknownInterface = Name(rawValue: "org.freedesktop.DBus.Error.UnknownInterface")
        public static let unknownProperty = Name(rawValue: "org.freedesktop.DBus.Error.UnknownProperty")
        public static let propertyReadOnly = Name(rawValue: "org.freedesktop.DBus.Error.PropertyReadOnly")
        public static let matchRuleInvalid = Name(rawValue: "org.freedesktop.DBus.Error.MatchRuleInvalid")
        public static let limitsExceeded = Name(rawValue: "org.freedesktop.DBus.Error.LimitsExceeded")
    }
}
