/// Why a time zone's data could not be used: a TZif file (RFC 8536) that is malformed or over a limit, a
/// POSIX TZ string that does not parse, or a zone name that is not allowed or not found.
public struct TZifError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, where, and (when there is one) what to do.
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
