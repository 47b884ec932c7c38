import CLinux
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// Reports changes to directories and single files, through inotify.
///
/// A single file is watched through its parent directory, by name, rather than by its own inode:
/// editors save by writing a new file and renaming it over the old one, and `/etc/localtime` is
/// replaced (a new symlink renamed into place), not edited. A watch on the file's inode would see
/// neither, and would go on watching the old, unlinked file. Watching by name also means the file
/// need not exist yet.
public final class FileWatcher: @unchecked Sendable {
    // @unchecked Sendable: the one stored property is set in init and never changed; the only call
    // made on it from outside, `cancel()`, is thread-safe in libdispatch (any thread, any number of times).
    /// Something to watch.
    public enum Watch: Hashable, Sendable {
        /// Every entry of a directory: one created, deleted, written and closed, moved in or moved
        /// out. A change is reported as the directory's path joined with the entry's name.
        case directory(String)
        /// One file, by name in its parent directory: created, deleted, written and closed,
        /// replaced by a rename, moved away. A change is reported as this path, exactly as given.
        case file(String)
    }

    private let source: any DispatchSourceRead

    /// Starts watching. `handler` runs on `queue` with the paths that changed since the previous
    /// call, each once, in the order of their first change; one call per read of the inotify queue.
    ///
    /// When the kernel's event queue overflows, every watched path is reported, since any of them
    /// may have changed. A watched directory that is itself deleted, moved or unmounted is reported
    /// (with every file watched in it) and is not watched any further: start a new watcher for it.
    ///
    /// Throws when a directory to watch (or the parent directory of a file to watch) does not exist
    /// or is not a directory; the error names it.
    public init(
        queue: DispatchQueue, watches: [Watch], handler: @escaping @Sendable ([String]) -> Void
    ) throws(SystemCallError) {
        let fd = try Linux.inotifyInit(flags: CLinux_IN_CLOEXEC | CLinux_IN_NONBLOCK)
        let table: WatchTable
        do {
            table = try WatchTable(watches: watches) { (directory, subject) throws(SystemCallError) in
                try Linux.inotifyAddWatch(fd, path: directory, mask: WatchTable.mask, subject: subject)
            }
        } catch {
            try? Linux.close(fd)
            throw error
        }
        // The handlers capture the descriptor and the table, not the watcher, so that dropping the
        // watcher ends it.
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler {
            let changed = FileWatcher.readChanges(fd, table)
            if !changed.isEmpty { handler(changed) }
        }
        // Dispatch may still watch the descriptor until the source is cancelled: close it only then.
        // Closing an inotify descriptor removes all its watches.
        source.setCancelHandler { try? Linux.close(fd) }
        source.resume()
        self.source = source
    }

    /// Stops watching and closes the inotify descriptor; safe to call more than once. A handler call
    /// already under way on the queue finishes; none starts after `cancel()` has run on the queue.
    public func cancel() {
        source.cancel()
    }

    deinit {
        source.cancel()
    }

    /// One read of whatever the kernel has queued, as changed paths. Reading once per wake-up keeps
    /// a busy directory from starving the queue: Dispatch wakes the source again while data remains.
    private static func readChanges(_ fd: Int32, _ table: WatchTable) -> [String] {
        // Large enough for hundreds of events; the kernel needs room for at least one event with a
        // maximal name (sizeof(struct inotify_event) + NAME_MAX + 1).
        withUnsafeTemporaryAllocation(byteCount: 64 * 1024, alignment: MemoryLayout<inotify_event>.alignment) {
            buffer in
            // EAGAIN (a spurious wake-up) or any other failure reads as nothing changed.
            guard let count = try? Linux.read(fd, into: buffer), count > 0 else { return [] }
            return table.changedPaths(InotifyEvent.parse(UnsafeRawBufferPointer(rebasing: buffer[..<count])))
        }
    }
}

/// One event as the kernel reports it; `name` is empty for events about a watched directory itself.
struct InotifyEvent: Equatable, Sendable {
    var wd: Int32
    var mask: UInt32
    var name: String

    /// Splits what one `read` returned into events.
    static func parse(_ buffer: UnsafeRawBufferPointer) -> [InotifyEvent] {
        let nameOffset = Int(CLinux_INOTIFY_EVENT_NAME_OFFSET)
        var events: [InotifyEvent] = []
        var offset = 0
        while offset + nameOffset <= buffer.count {
            let header = buffer.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let end = min(offset + nameOffset + Int(header.len), buffer.count)
            // The name is padded with NULs to an alignment boundary.
            let name = buffer[(offset + nameOffset)..<end].prefix { $0 != 0 }
            events.append(InotifyEvent(wd: header.wd, mask: header.mask, name: String(decoding: name, as: UTF8.self)))
            offset = end
        }
        return events
    }
}

/// Which watch descriptor stands for which directory, and which paths its events report.
struct WatchTable: Sendable, Equatable {
    /// What one watched directory reports.
    struct Directory: Sendable, Equatable {
        /// The directory's path as first given.
        var path: String
        /// Whether every entry is reported (a `.directory` watch), not only `files`.
        var reportsEveryEntry = false
        /// Entry names watched as single files, and the path each is reported as.
        var files: [String: String] = [:]

        /// The paths reported when the directory itself goes away, or when events were lost.
        var allPaths: [String] {
            (reportsEveryEntry ? [path] : []) + files.values.sorted()
        }

        func path(of name: String) -> String {
            path.hasSuffix("/") ? path + name : path + "/" + name
        }
    }

    /// The events every watch asks for. IN_MASK_ADD merges the masks when two watches name the same
    /// directory (or one directory under two spellings, which the kernel gives the same descriptor);
    /// IN_ONLYDIR turns a path that is not a directory into ENOTDIR; IN_EXCL_UNLINK leaves out
    /// events on files that are already deleted but still open.
    static let mask: UInt32 =
        CLinux_IN_CREATE | CLinux_IN_DELETE | CLinux_IN_CLOSE_WRITE | CLinux_IN_MOVED_FROM | CLinux_IN_MOVED_TO
        | CLinux_IN_DELETE_SELF | CLinux_IN_MOVE_SELF | CLinux_IN_ONLYDIR | CLinux_IN_EXCL_UNLINK
        | CLinux_IN_MASK_ADD

    /// Events about the watched directory itself that end the watch.
    static let directoryGone: UInt32 = CLinux_IN_DELETE_SELF | CLinux_IN_MOVE_SELF | CLinux_IN_UNMOUNT

    private(set) var directories: [Int32: Directory] = [:]

    /// Builds the table; `addWatch(directory, subject)` watches one directory and returns its
    /// descriptor, `subject` naming it for an error message.
    init(
        watches: [FileWatcher.Watch], addWatch: (String, String) throws(SystemCallError) -> Int32
    ) throws(SystemCallError) {
        for watch in watches {
            switch watch {
            case .directory(let path):
                let wd = try addWatch(path, "the directory \(path)")
                directories[wd, default: Directory(path: path)].reportsEveryEntry = true
            case .file(let path):
                guard let (directory, name) = WatchTable.split(path) else {
                    throw SystemCallError(call: "inotify_add_watch", errno: EINVAL, subject: "\(path) (no file name)")
                }
                let wd = try addWatch(directory, "the directory \(directory) of \(path)")
                directories[wd, default: Directory(path: directory)].files[name] = path
            }
        }
    }

    /// The distinct paths `events` report, in the order of their first report.
    func changedPaths(_ events: [InotifyEvent]) -> [String] {
        var changed: [String] = []
        var seen: Set<String> = []
        for event in events {
            for path in paths(for: event) where seen.insert(path).inserted {
                changed.append(path)
            }
        }
        return changed
    }

    private func paths(for event: InotifyEvent) -> [String] {
        if event.mask & CLinux_IN_Q_OVERFLOW != 0 {
            return directories.sorted { $0.key < $1.key }.flatMap { $0.value.allPaths }
        }
        guard let directory = directories[event.wd] else { return [] }
        if event.name.isEmpty {
            return event.mask & WatchTable.directoryGone != 0 ? directory.allPaths : []
        }
        var paths: [String] = []
        if directory.reportsEveryEntry { paths.append(directory.path(of: event.name)) }
        if let file = directory.files[event.name] { paths.append(file) }
        return paths
    }

    /// A file path's parent directory and name: `/etc/localtime` is `/etc` and `localtime`,
    /// `chime.toml` is `.` and `chime.toml`. Nil when the path names no file (`/`, empty).
    static func split(_ path: String) -> (directory: String, name: String)? {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else {
            return trimmed.isEmpty ? nil : (".", String(trimmed))
        }
        let name = trimmed[trimmed.index(after: slash)...]
        guard !name.isEmpty else { return nil }
        let directory = trimmed[..<slash]
        return (directory.isEmpty ? "/" : String(directory), String(name))
    }
}
