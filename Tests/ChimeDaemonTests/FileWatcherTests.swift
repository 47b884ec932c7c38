import CLinux
import Dispatch
import Foundation
import TestSupport
import Testing

@testable import ChimeDaemon

#if canImport(Glibc)
    import Glibc
#endif

/// A temporary directory watched by a `FileWatcher`, plus a fence directory that splits the stream of
/// reports into steps.
///
/// inotify reports the events of one instance in the order they happened. After each step the
/// fixture creates a new entry in the fence directory and awaits its report: whatever was reported
/// before it belongs to that step, and anything the step caused has been reported by then. So "only
/// these paths" is checked without waiting for something not to happen.
final class WatchedFolder: Sendable {
    let root: URL
    let fences: URL
    let reports = Recorder<String>()
    let watcher: FileWatcher
    private let fenceCount = Recorder<Int>()

    init(watching watches: (URL) -> [FileWatcher.Watch], prepare: (URL) throws -> Void = { _ in }) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("chime-watch-\(UUID().uuidString)")
        fences = root.appendingPathComponent("fences")
        try FileManager.default.createDirectory(at: fences, withIntermediateDirectories: true)
        let data = root.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        try prepare(data)
        let reports = reports
        watcher = try FileWatcher(
            queue: DispatchQueue(label: "test.file-watcher"),
            watches: watches(data) + [.directory(fences.path)]
        ) { paths in
            for path in paths { reports.append(path) }
        }
    }

    var data: URL { root.appendingPathComponent("data") }

    /// Runs `step` and returns the distinct non-fence paths reported for it, in the order of their
    /// first report (a path can come twice when its events straddle two reads).
    func changes(_ step: (URL) throws -> Void) async throws -> [String] {
        let start = reports.elements.count
        try step(data)
        let fence = fences.appendingPathComponent("\(UUID().uuidString)").path
        try Data().write(to: URL(fileURLWithPath: fence))
        try await reports.wait("the fence \(fence) was reported") { $0[start...].contains(fence) }
        let sinceStart = reports.elements[start...]
        let upToFence = sinceStart[..<sinceStart.firstIndex(of: fence)!]
        var seen: Set<String> = []
        return upToFence.filter { !$0.hasPrefix(fences.path + "/") && seen.insert($0).inserted }
    }

    func remove() {
        watcher.cancel()
        try? FileManager.default.removeItem(at: root)
    }
}

func write(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}

/// Saves the way editors do: write a temporary file, then rename it over the target.
func saveByRename(_ text: String, to url: URL) throws {
    let temporary = url.appendingPathExtension("tmp")
    try write(text, to: temporary)
    try #require(rename(temporary.path, url.path) == 0)
}

/// Replaces a symlink the way `timedatectl` replaces /etc/localtime: a new link renamed into place.
func replaceSymlink(_ url: URL, pointingTo destination: String) throws {
    let temporary = url.appendingPathExtension("new")
    try FileManager.default.createSymbolicLink(atPath: temporary.path, withDestinationPath: destination)
    try #require(rename(temporary.path, url.path) == 0)
}

@Suite struct FileWatcherTests {
    @Test func aWatchedDirectoryReportsEntriesCreatedWrittenReplacedDeletedAndRelinked() async throws {
        let folder = try WatchedFolder(watching: { [.directory($0.path)] }) { data in
            try write("old", to: data.appendingPathComponent("written"))
            try write("old", to: data.appendingPathComponent("saved"))
            try write("old", to: data.appendingPathComponent("deleted"))
            try FileManager.default.createSymbolicLink(
                atPath: data.appendingPathComponent("localtime").path, withDestinationPath: "zone-a")
        }
        defer { folder.remove() }
        let data = folder.data
        func path(_ name: String) -> String { data.appendingPathComponent(name).path }

        let created = try await folder.changes { try write("new", to: $0.appendingPathComponent("created")) }
        #expect(created == [path("created")])
        let written = try await folder.changes { try write("new", to: $0.appendingPathComponent("written")) }
        #expect(written == [path("written")])
        let saved = try await folder.changes { try saveByRename("new", to: $0.appendingPathComponent("saved")) }
        #expect(saved == [path("saved.tmp"), path("saved")])
        let deleted = try await folder.changes {
            try FileManager.default.removeItem(at: $0.appendingPathComponent("deleted"))
        }
        #expect(deleted == [path("deleted")])
        let relinked = try await folder.changes {
            try replaceSymlink($0.appendingPathComponent("localtime"), pointingTo: "zone-b")
        }
        #expect(relinked == [path("localtime.new"), path("localtime")])
    }

    @Test func aWatchedFileIsReportedForEachKindOfChangeAndItsNeighboursAreNot() async throws {
        let folder = try WatchedFolder(watching: {
            [.file($0.appendingPathComponent("chime.toml").path), .file($0.appendingPathComponent("localtime").path)]
        }) { data in
            try write("old", to: data.appendingPathComponent("neighbour"))
            try FileManager.default.createSymbolicLink(
                atPath: data.appendingPathComponent("localtime").path, withDestinationPath: "zone-a")
        }
        defer { folder.remove() }
        let settings = folder.data.appendingPathComponent("chime.toml")
        let localtime = folder.data.appendingPathComponent("localtime")

        // The file does not exist when the watch starts.
        #expect(try await folder.changes { _ in try write("a", to: settings) } == [settings.path])
        #expect(try await folder.changes { _ in try write("b", to: settings) } == [settings.path])
        #expect(try await folder.changes { _ in try saveByRename("c", to: settings) } == [settings.path])
        #expect(try await folder.changes { _ in try FileManager.default.removeItem(at: settings) } == [settings.path])
        #expect(
            try await folder.changes { _ in try replaceSymlink(localtime, pointingTo: "zone-b") } == [localtime.path])

        let nothing = try await folder.changes { data in
            let neighbour = data.appendingPathComponent("neighbour")
            try write("new", to: data.appendingPathComponent("created"))
            try write("new", to: neighbour)
            try saveByRename("newer", to: neighbour)
            try FileManager.default.removeItem(at: neighbour)
        }
        #expect(nothing == [])
    }

    @Test func aMissingDirectoryIsAnErrorNamingIt() throws {
        let missing = FileManager.default.temporaryDirectory.appendingPathComponent(
            "chime-missing-\(UUID().uuidString)")
        let queue = DispatchQueue(label: "test.file-watcher")

        let directoryError = #expect(throws: SystemCallError.self) {
            try FileWatcher(queue: queue, watches: [.directory(missing.path)]) { _ in }
        }
        #expect(directoryError?.errno == ENOENT)
        #expect(directoryError?.description.contains(missing.path) == true)

        let file = missing.appendingPathComponent("chime.toml").path
        let fileError = #expect(throws: SystemCallError.self) {
            try FileWatcher(queue: queue, watches: [.file(file)]) { _ in }
        }
        #expect(fileError?.errno == ENOENT)
        #expect(fileError?.description.contains("the directory \(missing.path) of \(file)") == true)
    }

    @Test func aFileIsNotADirectoryToWatch() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chime-file-\(UUID().uuidString)")
        try write("", to: file)
        defer { try? FileManager.default.removeItem(at: file) }

        let error = #expect(throws: SystemCallError.self) {
            try FileWatcher(queue: DispatchQueue(label: "test.file-watcher"), watches: [.directory(file.path)]) { _ in }
        }
        #expect(error?.errno == ENOTDIR)
    }

    @Test(arguments: [
        ("/etc/localtime", "/etc", "localtime"),
        ("/localtime", "/", "localtime"),
        ("chime.toml", ".", "chime.toml"),
        ("config/chime.toml", "config", "chime.toml"),
        ("/etc/chime/", "/etc", "chime"),
    ])
    func aFilePathSplitsIntoItsDirectoryAndName(path: String, directory: String, name: String) {
        let split = WatchTable.split(path)
        #expect(split?.directory == directory)
        #expect(split?.name == name)
    }

    @Test(arguments: ["", "/", "//"])
    func aPathWithoutAFileNameDoesNotSplit(path: String) {
        #expect(WatchTable.split(path) == nil)
    }
}

/// The event-to-path mapping, with made-up watch descriptors: the cases a real directory cannot
/// easily be made to produce.
@Suite struct WatchTableTests {
    let table: WatchTable

    init() throws {
        // The kernel gives one directory the same descriptor however its path is spelled.
        let descriptors = ["/srv/drop": Int32(1), "/etc": 2, "/srv/drop/": 1]
        table = try WatchTable(
            watches: [
                .directory("/srv/drop"), .file("/etc/localtime"), .file("/etc/chime.toml"), .file("/srv/drop//x"),
            ]
        ) { directory, _ in descriptors[directory]! }
    }

    @Test func oneDirectoryWatchedBothWholeAndForAFileReportsBothPaths() {
        #expect(
            table.changedPaths([InotifyEvent(wd: 1, mask: CLinux_IN_CREATE, name: "x")]) == [
                "/srv/drop/x", "/srv/drop//x",
            ])
        #expect(table.changedPaths([InotifyEvent(wd: 1, mask: CLinux_IN_CREATE, name: "y")]) == ["/srv/drop/y"])
    }

    @Test func eachPathIsReportedOnceInTheOrderItFirstChanged() {
        let events = [
            InotifyEvent(wd: 2, mask: CLinux_IN_CREATE, name: "localtime"),
            InotifyEvent(wd: 1, mask: CLinux_IN_CREATE, name: "a"),
            InotifyEvent(wd: 2, mask: CLinux_IN_CLOSE_WRITE, name: "localtime"),
            InotifyEvent(wd: 2, mask: CLinux_IN_CREATE, name: "passwd"),
        ]
        #expect(table.changedPaths(events) == ["/etc/localtime", "/srv/drop/a"])
    }

    @Test func aLostEventQueueReportsEveryWatchedPath() {
        let overflow = InotifyEvent(wd: -1, mask: CLinux_IN_Q_OVERFLOW, name: "")
        #expect(table.changedPaths([overflow]) == ["/srv/drop", "/srv/drop//x", "/etc/chime.toml", "/etc/localtime"])
    }

    @Test func aDirectoryThatGoesAwayReportsItselfAndItsFiles() {
        let gone = InotifyEvent(wd: 2, mask: CLinux_IN_DELETE_SELF, name: "")
        let ignored = InotifyEvent(wd: 2, mask: CLinux_IN_IGNORED, name: "")
        #expect(table.changedPaths([gone, ignored]) == ["/etc/chime.toml", "/etc/localtime"])
        #expect(table.changedPaths([ignored]) == [])
    }

    @Test func eventsAreParsedFromTheKernelsLayout() {
        // Two events as read(2) returns them: a 16-byte header, then the name padded with NULs.
        var bytes: [UInt8] = []
        func append(wd: Int32, mask: UInt32, name: String, length: UInt32) {
            withUnsafeBytes(of: wd.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: mask.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: UInt32(0).littleEndian) { bytes += $0 }
            withUnsafeBytes(of: length.littleEndian) { bytes += $0 }
            bytes += Array(name.utf8) + Array(repeating: 0, count: Int(length) - name.utf8.count)
        }
        append(wd: 3, mask: CLinux_IN_CREATE, name: "chime.toml", length: 16)
        append(wd: 4, mask: CLinux_IN_DELETE_SELF, name: "", length: 0)
        let events = bytes.withUnsafeBytes { InotifyEvent.parse($0) }
        #expect(
            events == [
                InotifyEvent(wd: 3, mask: CLinux_IN_CREATE, name: "chime.toml"),
                InotifyEvent(wd: 4, mask: CLinux_IN_DELETE_SELF, name: ""),
            ])
    }
}
