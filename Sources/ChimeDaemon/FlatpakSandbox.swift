import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Tells whether a process runs in a Flatpak sandbox, and which app it is, checked as xdg-desktop-portal
/// checks it, so that a root the caller made itself (an `unshare` and `chroot`, a container sharing the
/// session bus) cannot name an app or the user.
///
/// A process is a Flatpak app when all of these hold:
/// 1. its own root (`/proc/PID/root`, opened as a directory and never followed by path) holds
///    `.flatpak-info`, a regular file (not a link) of at most `maximumFileBytes`;
/// 2. that key file names a valid app id (`name=` in `[Runtime]` when it has that group, else in
///    `[Application]`; `isValidAppID`) and an `instance-id` in `[Instance]`;
/// 3. Flatpak recorded that instance in the user's runtime folder, which no sandbox can write:
///    `$XDG_RUNTIME_DIR/.flatpak/INSTANCE/bwrapinfo.json`, whose `child-pid` is the sandbox's first
///    process, as bubblewrap wrote it (`--info-fd`);
/// 4. the calling process is that process or one of its descendants (its chain of parents, read from
///    `/proc/PID/status`, reaches it), or the D-Bus proxy Flatpak started for that sandbox, which holds
///    an end of the pipe whose other end that process holds (`isProxy`).
///
/// A process without `/.flatpak-info` runs on the host. One whose root is on FUSE and cannot be opened
/// (a toolbox container) runs on the host too: a Flatpak sandbox's root never is. Anything else fails
/// closed: the caller is refused, never taken for the app it names, and never for the user.
enum FlatpakSandbox {
    /// Why a process's sandbox could not be verified.
    struct Unverified: Error, CustomStringConvertible {
        var reason: String
        var description: String { reason }
        init(_ reason: String) { self.reason = reason }
    }

    /// The largest `.flatpak-info` or `bwrapinfo.json` read; Flatpak writes a few kilobytes.
    static let maximumFileBytes = 65_536
    /// How many parents are followed from the caller to its sandbox's first process.
    static let maximumDepth = 256
    /// `FUSE_SUPER_MAGIC`, the file-system type of a FUSE mount.
    static let fuseMagic = 0x6573_5546

    /// The Flatpak app id of process `pid`; nil when it runs on the host. Throws when its root holds a
    /// `/.flatpak-info` that is not a real sandbox's.
    static func appID(pid: UInt32, runtimeDirectory: String) throws(Unverified) -> String? {
        let rootPath = "/proc/\(pid)/root"
        let root: Int32
        do {
            root = try Linux.openat(
                AT_FDCWD, rootPath, flags: O_RDONLY | O_NONBLOCK | O_DIRECTORY | O_CLOEXEC | O_NOCTTY,
                subject: rootPath)
        } catch {
            if error.errno == EACCES, (try? Linux.fileSystemType(rootPath)) == fuseMagic { return nil }
            // Most likely the process is gone; nothing is known of it, so nothing is granted.
            throw Unverified("its root cannot be opened: \(error)")
        }
        defer { try? Linux.close(root) }
        let info: Int32
        do {
            info = try Linux.openat(
                root, ".flatpak-info", flags: O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
                subject: "/.flatpak-info")
        } catch {
            if error.errno == ENOENT { return nil }
            throw Unverified("its /.flatpak-info cannot be opened: \(error)")
        }
        defer { try? Linux.close(info) }
        let keys = try KeyFile(read(info, what: "/.flatpak-info"))
        let group = keys.groups["Runtime"] != nil ? "Runtime" : "Application"
        guard let name = keys.groups[group]?["name"], isValidAppID(name) else {
            throw Unverified("its /.flatpak-info names no valid app id (name= in [\(group)])")
        }
        guard let instance = keys.groups["Instance"]?["instance-id"], isValidInstanceID(instance) else {
            throw Unverified("its /.flatpak-info names no valid instance (instance-id= in [Instance])")
        }
        let record = "\(runtimeDirectory)/.flatpak/\(instance)/bwrapinfo.json"
        let child = try sandboxProcess(recordedIn: record)
        guard isInside(Int(pid), sandboxOf: child) || isProxy(Int(pid), ofSandbox: child) else {
            throw Unverified(
                "it is neither inside Flatpak instance \(instance) (its first process is \(child)) nor its D-Bus proxy")
        }
        return name
    }

    /// The `child-pid` bubblewrap wrote into an instance's `bwrapinfo.json`.
    static func sandboxProcess(recordedIn path: String) throws(Unverified) -> Int {
        let fd: Int32
        do {
            fd = try Linux.openat(AT_FDCWD, path, flags: O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, subject: path)
        } catch {
            throw Unverified("Flatpak did not record its instance: \(error)")
        }
        defer { try? Linux.close(fd) }
        let text = try read(fd, what: path)
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let pid = object["child-pid"] as? Int, pid > 1
        else { throw Unverified("\(path) gives no child-pid") }
        return pid
    }

    /// A regular file's text, at most `maximumFileBytes`.
    private static func read(_ fd: Int32, what: String) throws(Unverified) -> String {
        do {
            let status = try Linux.fileStatus(fd, subject: what)
            guard status.isRegular else { throw Unverified("\(what) is not a regular file") }
            guard let bytes = try Linux.readAll(fd, limit: maximumFileBytes) else {
                throw Unverified("\(what) is larger than \(maximumFileBytes) bytes")
            }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw Unverified("\(what) is not UTF-8")
            }
            return text
        } catch let error as SystemCallError {
            throw Unverified("\(what) cannot be read: \(error)")
        } catch let error as Unverified {
            throw error
        } catch {
            throw Unverified("\(what) cannot be read: \(error)")
        }
    }

    /// Whether process `pid` is `sandbox` or one of its descendants.
    static func isInside(_ pid: Int, sandboxOf sandbox: Int) -> Bool {
        var current = pid
        for _ in 0..<maximumDepth {
            if current == sandbox { return true }
            guard current > 1, let parent = parentProcess(of: current) else { return false }
            current = parent
        }
        return false
    }

    /// Whether process `pid` is the D-Bus proxy Flatpak started for the sandbox whose first process is
    /// `sandbox`. Flatpak runs `xdg-dbus-proxy` in a bubblewrap of its own with the app's `/.flatpak-info`
    /// at its root, so that a service can tell the app from the proxy's PID, and detached from
    /// `flatpak run` (GLib's double fork): the proxy is in none of the sandbox's process tree. What ties
    /// them is the pipe Flatpak made for both: the proxy holds its write end (`--fd`), the sandbox's first
    /// process its read end (bubblewrap's `--sync-fd`), so that the proxy ends with the sandbox. An
    /// anonymous pipe has no path to open; only a process Flatpak gave it to, or one allowed to read that
    /// process's descriptors (the app itself, an unsandboxed process of the user), can hold it. A pipe
    /// the sandbox's first process inherited from whoever started Flatpak is not that pipe, and could be
    /// shared with anyone that launcher started: bubblewrap's own process outside the sandbox (the first
    /// process's parent) holds those too, and not the `--sync-fd`, so they do not count; nor do
    /// descriptors 0 to 2. Any descriptor that cannot be read fails closed.
    static func isProxy(_ pid: Int, ofSandbox sandbox: Int) -> Bool {
        guard let parent = parentProcess(of: sandbox), let inherited = pipes(heldBy: parent, from: 0),
            let sandboxPipes = pipes(heldBy: sandbox, from: 3)?.subtracting(inherited), !sandboxPipes.isEmpty,
            let callerPipes = pipes(heldBy: pid, from: 0)
        else { return false }
        return !callerPipes.isDisjoint(with: sandboxPipes)
    }

    /// How many descriptors a process may hold for its pipes to be read; Flatpak's proxy and bubblewrap
    /// hold a few, the proxy two more for each connection through it.
    static let maximumDescriptors = 4096

    /// The anonymous pipes (`pipe:[INODE]`, as `/proc/PID/fd` shows them) among process `pid`'s
    /// descriptors numbered `lowest` or more; nil when they cannot be read or are more than
    /// `maximumDescriptors`.
    static func pipes(heldBy pid: Int, from lowest: Int) -> Set<String>? {
        let path = "/proc/\(pid)/fd"
        guard let directory = opendir(path) else { return nil }
        defer { closedir(directory) }
        var found: Set<String> = []
        var looked = 0
        while let entry = readdir(directory) {
            looked += 1
            guard looked <= maximumDescriptors + 2 else { return nil }  // "." and ".." count too
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let number = Int(name), number >= lowest else { continue }
            var target = [CChar](repeating: 0, count: 64)
            let count = readlink("\(path)/\(name)", &target, target.count)
            guard count > 0, count < target.count else { continue }
            let link = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if link.hasPrefix("pipe:[") { found.insert(link) }
        }
        return found
    }

    /// The `PPid:` of `/proc/PID/status`, which every process of the user may read.
    static func parentProcess(of pid: Int) -> Int? {
        let path = "/proc/\(pid)/status"
        guard let fd = try? Linux.openat(AT_FDCWD, path, flags: O_RDONLY | O_CLOEXEC, subject: path) else { return nil }
        defer { try? Linux.close(fd) }
        guard let bytes = try? Linux.readAll(fd, limit: maximumFileBytes) else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("PPid:") {
            return Int(line.dropFirst(5).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }

    /// An app id as the portal takes one: 1 to 255 bytes; elements separated by dots, at least two, none
    /// empty and the first not starting with a dot; ASCII letters, digits and `_`, and `-` in the last
    /// element only. Every such id is also a valid D-Bus name and desktop file id, and holds no `/`.
    static func isValidAppID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...255).contains(bytes.count) else { return false }
        let elements = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard elements.count >= 2 else { return false }
        for (index, element) in elements.enumerated() {
            let last = index == elements.count - 1
            guard !element.isEmpty else { return false }
            for byte in element {
                let allowed =
                    (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "_") || (last && byte == UInt8(ascii: "-"))
                guard allowed else { return false }
            }
        }
        return true
    }

    /// An instance id names a folder: ASCII letters, digits, `-` and `_`, 1 to 64 bytes (Flatpak's are numbers).
    static func isValidInstanceID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
    }

    /// A key file as GLib reads one: `[Group]` headers, `key=value` lines (spaces around `=` dropped),
    /// `#` comments; a key given twice keeps its last value.
    struct KeyFile {
        var groups: [String: [String: String]] = [:]

        init(_ text: String) {
            var group: String?
            for raw in text.split(whereSeparator: \.isNewline) {
                let line = raw.trimmingCharacters(in: .whitespaces)
                if line.isEmpty || line.hasPrefix("#") { continue }
                if line.hasPrefix("["), line.hasSuffix("]") {
                    let name = String(line.dropFirst().dropLast())
                    group = name
                    groups[name, default: [:]] = groups[name] ?? [:]
                    continue
                }
                guard let group, let equals = line.firstIndex(of: "=") else { continue }
                let key = line[..<equals].trimmingCharacters(in: .whitespaces)
                let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                groups[group]?[key] = value
            }
        }
    }
}
