import Foundation
import Logging
import Testing

@testable import SystemdKit

#if canImport(Glibc)
    import Glibc
#endif

/// sd_notify against a datagram socket that stands in for the service manager's.
@Suite(.serialized) struct ServiceNotifierTests {
    /// Binds a datagram socket, points NOTIFY_SOCKET at it for `body`, and returns what arrived.
    func receiving(_ body: () -> Void) throws -> [String] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        #expect(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            path.utf8CString.withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        setenv("NOTIFY_SOCKET", path, 1)
        body()
        unsetenv("NOTIFY_SOCKET")
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            messages.append(String(decoding: buffer.prefix(n), as: UTF8.self))
        }
        return messages
    }

    @Test func sendsEachStateToTheManager() throws {
        let notifier = ServiceNotifier()
        var supervised = false
        let messages = try receiving {
            supervised = notifier.isSupervised
            #expect(notifier.ready(status: "3 pending\nnext at 09:00"))
            #expect(notifier.status("idle"))
            #expect(notifier.watchdog())
            #expect(notifier.reloading())
            #expect(notifier.stopping())
        }
        #expect(supervised)
        #expect(messages.count == 5)
        #expect(messages[0] == "READY=1\nSTATUS=3 pending next at 09:00")
        #expect(messages[1] == "STATUS=idle")
        #expect(messages[2] == "WATCHDOG=1")
        #expect(messages[3].hasPrefix("RELOADING=1\nMONOTONIC_USEC="))
        #expect(messages[4] == "STOPPING=1")
    }

    @Test func isANoOpOutsideSystemd() {
        unsetenv("NOTIFY_SOCKET")
        let notifier = ServiceNotifier()
        #expect(!notifier.isSupervised)
        #expect(!notifier.ready())
        #expect(!notifier.watchdog())
        #expect(notifier.watchdogInterval == nil)
    }

    @Test func watchdogIntervalComesFromTheEnvironmentForThisProcessOnly() {
        setenv("WATCHDOG_USEC", "3000000", 1)
        setenv("WATCHDOG_PID", String(getpid()), 1)
        #expect(ServiceNotifier().watchdogInterval == .seconds(3))
        setenv("WATCHDOG_PID", String(getpid() + 1), 1)
        #expect(ServiceNotifier().watchdogInterval == nil)
        unsetenv("WATCHDOG_USEC")
        unsetenv("WATCHDOG_PID")
    }

    @Test func journalFieldNamesAreUpperCaseIdentifiers() {
        #expect(JournalLogHandler.fieldName("group") == "GROUP")
        #expect(JournalLogHandler.fieldName("item-id") == "ITEM_ID")
        #expect(JournalLogHandler.priority(.error) == 3)
        #expect(JournalLogHandler.priority(.debug) == 7)
    }
}

/// The journal handler speaks journald's native protocol; a datagram socket at journald's address
/// receives exactly what journald would.
@Suite(.serialized) struct JournalLogHandlerTests {
    static let socketPath = "/run/systemd/journal/socket"

    /// Runs only where the test may stand in for journald: as root, with no journald running.
    static var canImpersonateJournald: Bool {
        getuid() == 0 && !FileManager.default.fileExists(atPath: socketPath)
    }

    @Test(.enabled(if: canImpersonateJournald, "needs root and no running journald"))
    func writesStructuredEntriesWithChimeFields() throws {
        try FileManager.default.createDirectory(atPath: "/run/systemd/journal", withIntermediateDirectories: true)
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        defer {
            close(fd)
            unlink(Self.socketPath)
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            Self.socketPath.utf8CString.withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0)
        var logger = Logger(label: "chimed") { JournalLogHandler(label: $0, level: .debug, destination: .journal) }
        logger[metadataKey: "group"] = "pizza"
        logger.warning("delivered late", metadata: ["item": "42"])
        var buffer = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &buffer, buffer.count, 0)
        try #require(n > 0)
        let fields = Dictionary(
            String(decoding: buffer.prefix(n), as: UTF8.self).split(separator: "\n").compactMap { line in
                line.firstIndex(of: "=").map { (String(line[..<$0]), String(line[line.index(after: $0)...])) }
            }, uniquingKeysWith: { first, _ in first })
        #expect(fields["MESSAGE"] == "delivered late")
        #expect(fields["PRIORITY"] == "4")
        #expect(fields["SYSLOG_IDENTIFIER"] == "chimed")
        #expect(fields["CHIME_GROUP"] == "pizza")
        #expect(fields["CHIME_ITEM"] == "42")
    }

    @Test func stderrIsTheJournalOnlyWhenJournalStreamNamesIt() {
        unsetenv("JOURNAL_STREAM")
        #expect(!JournalLogHandler.stderrIsJournal())
        setenv("JOURNAL_STREAM", "0:0", 1)
        #expect(!JournalLogHandler.stderrIsJournal())
        var st = stat()
        fstat(2, &st)
        setenv("JOURNAL_STREAM", "\(st.st_dev):\(st.st_ino)", 1)
        #expect(JournalLogHandler.stderrIsJournal())
        unsetenv("JOURNAL_STREAM")
    }
}
