import CLinux
import ChimeRelay
import DBusKit

#if canImport(Glibc)
    import Glibc
#endif

// chimed's notification relay (ChimeRelay's `NotificationRelay`): a program of its own, without Foundation
// or GRDB, so that the process that runs beside chimed all day is small. chimed starts it with the socket
// and the relay lock on descriptors 3 and 4:
//   chime-relay --socket FD --receipts PATH [--address ADDRESS]

/// Says what is wrong with the command line and exits with status 2.
func usage(_ problem: String) -> Never {
    let text = """
        chime-relay: \(problem)
        usage: chime-relay --socket FD --receipts PATH [--address ADDRESS]
        chime-relay is chimed's notification relay; chimed starts it itself.

        """
    _ = Array(text.utf8).withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var socket: Int32?
var receiptsPath: String?
var address: String?
var arguments = CommandLine.arguments.dropFirst()
while let option = arguments.popFirst() {
    guard let value = arguments.popFirst() else { usage("\(option) needs a value") }
    switch option {
    case "--socket":
        guard let descriptor = Int32(value), descriptor >= 0 else {
            usage("--socket takes a descriptor number, not '\(value)'")
        }
        socket = descriptor
    case "--receipts":
        guard value.hasPrefix("/") else { usage("--receipts takes an absolute path, not '\(value)'") }
        receiptsPath = value
    case "--address":
        guard !value.isEmpty else { usage("--address takes a D-Bus address") }
        address = value
    default:
        usage("unknown option '\(option)'")
    }
}
guard let socket else { usage("--socket is missing") }
guard let receiptsPath else { usage("--receipts is missing") }

// As chimed: its files are the user's alone, a file size limit fails a write instead of killing the relay,
// Swift's global executor does not wake an idle relay, and big buffers go back to the system when freed.
umask(0o077)
signal(SIGXFSZ, SIG_IGN)
CLinux_runGlobalJobsOnOvercommitThreads()
_ = CLinux_setMmapThreshold(1 << 20)
exit(
    await NotificationRelay.serve(socket: socket, receiptsPath: receiptsPath, bus: address.map { .bus($0) } ?? .session)
)
