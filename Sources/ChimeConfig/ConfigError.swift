/// A config file that cannot be used (chime.toml or a group file): which file, which line, and what to
/// write instead.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file's path as it was given.
    public var file: String
    /// 1-based line of the offending key or section; nil when the problem is the file as a whole (it
    /// cannot be read, or its name is not a valid group id).
    public var line: Int?
    /// What is wrong and what to do about it.
    public var reason: String

    public init(file: String, line: Int?, reason: String) {
        self.file = file
        self.line = line
        self.reason = reason
    }

    /// `file:line: reason`, the form editors and compilers use, so that a terminal can jump to the line.
    public var description: String { "\(file)\(line.map { ":\($0)" } ?? ""): \(reason)" }
}
