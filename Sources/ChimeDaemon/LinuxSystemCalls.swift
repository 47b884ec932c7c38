import CLinux

#if canImport(Glibc)
    import Glibc
#endif

/// A Linux system call that failed: which call, what it was about, and the `errno` it set.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The C function, such as `inotify_add_watch`.
    public var call: String
    /// The `errno` value the call set.
    public var errno: Int32
    /// What the call was about (a path, say); nil when there is nothing more to name.
    public var subject: String?

    public init(call: String, errno: Int32, subject: String? = nil) {
        self.call = call
        self.errno = errno
        self.subject = subject
    }

    public var description: String {
        let reason = String(cString: strerror(errno))
        guard let subject else { return "\(call) failed: \(reason)" }
        return "\(call) failed for \(subject): \(reason)"
    }
}

/// One wrapper per Linux system call that ChimeDaemon makes directly: each returns the call's result
/// or throws a `SystemCallError` carrying `errno`, so callers never read `errno` themselves.
enum Linux {
    /// Sets the calling thread's nice value (Linux keeps one per thread: `PRIO_PROCESS` with a thread id).
    /// Any process may raise it (lower its priority); lowering it again needs privileges.
    ///
    /// The corresponding C function is `setpriority`.
    static func setThreadNice(_ nice: Int32) throws(SystemCallError) {
        guard setpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(CLinux_gettid()), nice) == 0 else {
            throw SystemCallError(call: "setpriority", errno: errno)
        }
    }

    /// The calling thread's nice value.
    ///
    /// The corresponding C function is `getpriority`.
    static func threadNice() -> Int32 {
        getpriority(__priority_which_t(PRIO_PROCESS.rawValue), id_t(CLinux_gettid()))
    }

    /// Creates a timer file descriptor on `clock`.
    ///
    /// The corresponding C function is `timerfd_create`.
    static func timerfdCreate(clock: clockid_t, flags: Int32) throws(SystemCallError) -> Int32 {
        let fd = timerfd_create(clock, flags)
        guard fd >= 0 else { throw SystemCallError(call: "timerfd_create", errno: errno) }
        return fd
    }

    /// Arms (or disarms, with a zero `value`) the timer behind `fd`.
    ///
    /// The corresponding C function is `timerfd_settime`.
    static func timerfdSetTime(_ fd: Int32, flags: Int32, _ value: itimerspec) throws(SystemCallError) {
        var value = value
        guard timerfd_settime(fd, flags, &value, nil) == 0 else {
            throw SystemCallError(call: "timerfd_settime", errno: errno)
        }
    }

    /// The device and inode of the file at `path`, following symbolic links: what makes two paths the
    /// same file. (`/proc/PID/exe` leads to the executable a process runs, even one since deleted.)
    ///
    /// The corresponding C function is `stat`.
    static func fileIdentity(_ path: String) throws(SystemCallError) -> FileIdentity {
        var info = stat()
        guard stat(path, &info) == 0 else { throw SystemCallError(call: "stat", errno: errno, subject: path) }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Creates an inotify instance.
    ///
    /// The corresponding C function is `inotify_init1`.
    static func inotifyInit(flags: Int32) throws(SystemCallError) -> Int32 {
        let fd = inotify_init1(flags)
        guard fd >= 0 else { throw SystemCallError(call: "inotify_init1", errno: errno) }
        return fd
    }

    /// Watches `path` for the events in `mask`; returns the watch descriptor. `subject` names the
    /// path in the error the way the caller's user knows it.
    ///
    /// The corresponding C function is `inotify_add_watch`.
    static func inotifyAddWatch(
        _ fd: Int32, path: String, mask: UInt32, subject: String
    ) throws(SystemCallError) -> Int32 {
        let wd = inotify_add_watch(fd, path, mask)
        guard wd >= 0 else { throw SystemCallError(call: "inotify_add_watch", errno: errno, subject: subject) }
        return wd
    }

    /// Reads into `buffer`, retrying when a signal interrupts the call; returns the byte count.
    ///
    /// The corresponding C function is `read`.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            let code = errno
            if code != EINTR { throw SystemCallError(call: "read", errno: code) }
        }
    }

    /// Closes `fd`. It is not retried on EINTR: on Linux the descriptor is released even then.
    ///
    /// The corresponding C function is `close`.
    static func close(_ fd: Int32) throws(SystemCallError) {
        guard Glibc.close(fd) == 0 else { throw SystemCallError(call: "close", errno: errno) }
    }
}

/// A file as the kernel knows it, whatever path leads to it.
struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
}

extension Linux {
    /// Opens `path` relative to the directory `directory` (`AT_FDCWD`: the working directory).
    ///
    /// The corresponding C function is `openat`.
    static func openat(_ directory: Int32, _ path: String, flags: Int32, subject: String) throws(SystemCallError)
        -> Int32
    {
        while true {
            let fd = Glibc.openat(directory, path, flags)
            if fd >= 0 { return fd }
            let code = errno
            if code != EINTR { throw SystemCallError(call: "openat", errno: code, subject: subject) }
        }
    }

    /// The file behind `fd`: its type and size in bytes.
    ///
    /// The corresponding C function is `fstat`.
    static func fileStatus(_ fd: Int32, subject: String) throws(SystemCallError) -> (isRegular: Bool, size: Int) {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SystemCallError(call: "fstat", errno: errno, subject: subject) }
        return ((info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size))
    }

    /// The type of the file system that holds `path`.
    ///
    /// The corresponding C function is `statfs`.
    static func fileSystemType(_ path: String) throws(SystemCallError) -> Int {
        var info = statfs()
        guard statfs(path, &info) == 0 else { throw SystemCallError(call: "statfs", errno: errno, subject: path) }
        return Int(info.f_type)
    }

    /// Reads `fd` to its end, at most `limit` bytes; nil when there is more.
    static func readAll(_ fd: Int32, limit: Int) throws(SystemCallError) -> [UInt8]? {
        var bytes: [UInt8] = []
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 1)
        defer { chunk.deallocate() }
        while true {
            let count = try read(fd, into: chunk)
            if count == 0 { return bytes }
            bytes += chunk.prefix(count)
            if bytes.count > limit { return nil }
        }
    }
}
