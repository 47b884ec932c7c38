import CSystemd
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A swift-log handler that writes structured journal entries when stderr goes to journald, and
/// readable `LEVEL label: message key=value` lines on stderr otherwise.
///
/// Metadata keys become journal fields in upper case (`group` → `CHIME_GROUP` with the `fieldPrefix`).
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    /// With a shared control the level follows it, so a reload can change every logger at once.
    public var logLevel: Logger.Level {
        get { control?.level ?? ownLevel }
        set {
            if let control { control.level = newValue } else { ownLevel = newValue }
        }
    }
    private var ownLevel: Logger.Level
    private let control: LogLevelControl?
    public let label: String
    private let toJournal: Bool
    private let fieldPrefix: String

    /// Where log lines go.
    public enum Destination: Sendable {
        /// The journal when stderr is connected to journald (JOURNAL_STREAM), else stderr.
        case automatic
        case journal
        case stderr
    }

    public init(
        label: String, level: Logger.Level = .info, fieldPrefix: String = "CHIME_",
        destination: Destination = .automatic, control: LogLevelControl? = nil
    ) {
        self.label = label
        self.ownLevel = level
        self.control = control
        self.fieldPrefix = fieldPrefix
        switch destination {
        case .automatic: self.toJournal = JournalLogHandler.stderrIsJournal()
        case .journal: self.toJournal = true
        case .stderr: self.toJournal = false
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        if toJournal {
            var fields = [
                "MESSAGE=\(event.message)", "PRIORITY=\(JournalLogHandler.priority(event.level))",
                "SYSLOG_IDENTIFIER=\(label)", "CODE_FILE=\(event.file)", "CODE_LINE=\(event.line)",
                "CODE_FUNC=\(event.function)",
            ]
            for (key, value) in all.sorted(by: { $0.key < $1.key }) {
                fields.append("\(fieldPrefix)\(JournalLogHandler.fieldName(key))=\(value)")
            }
            JournalLogHandler.send(fields)
        } else {
            let extra = all.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            let line = "\(event.level.rawValue.uppercased()) \(label): \(event.message)\(extra)\n"
            // One write(2) per line, so lines from several threads never interleave.
            var bytes = Array(line.utf8)
            _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
    }

    /// journald sets JOURNAL_STREAM to the device:inode of the stream it gave us as stderr.
    static func stderrIsJournal() -> Bool {
        guard let env = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: env).split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(2, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    static func fieldName(_ key: String) -> String {
        String(key.uppercased().map { ($0.isLetter || $0.isNumber) && $0.isASCII ? $0 : "_" })
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// The corresponding C function is `sd_journal_sendv` (sd_journal_send is variadic).
    static func send(_ fields: [String]) {
        let encoded = fields.map { Array($0.utf8) }
        var storage = encoded.flatMap { $0 }
        storage.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            var iovecs = encoded.map { field -> iovec in
                defer { offset += field.count }
                return iovec(iov_base: base + offset, iov_len: field.count)
            }
            _ = sd_journal_sendv(&iovecs, Int32(iovecs.count))
        }
    }
}

/// A log level shared by every handler made with it, changeable while running.
public final class LogLevelControl: Sendable {
    private let storage: Mutex<Logger.Level>

    public init(_ level: Logger.Level) { storage = Mutex(level) }

    public var level: Logger.Level {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}
