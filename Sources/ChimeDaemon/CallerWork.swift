import Foundation
import Synchronization

/// Threads of chimed's own, at a lower CPU priority (nice 10), for the work a caller's call asks for in
/// proportion to what it asks: a listing's rows read and its occurrences searched, a group's new timeline
/// planned. The delivery path — the timer's thread, the daemon's queue, the relay — runs at the normal
/// priority, so however much of this work callers ask for, the kernel gives the deliveries the CPU first
/// (at nice 10 a thread gets about a tenth of what a nice 0 one does when both want to run).
///
/// The threads are dedicated and never run anything else: a thread's priority, once lowered, cannot be
/// raised again without privileges, so no shared (Dispatch or Swift concurrency) thread is lowered. Jobs run
/// in the order they come, `threads` at a time.
final class CallerWork: Sendable {
    /// How much less than chimed's other threads these threads get of the CPU (setpriority's nice).
    static let nice: Int32 = 10

    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let available = DispatchSemaphore(value: 0)

    /// Starts `threads` threads; they live as long as the process (chimed makes one `CallerWork`).
    init(threads: Int, name: String = "chimed.caller-work") {
        for index in 0..<threads {
            let thread = Thread { [self] in work() }
            thread.name = "\(name)-\(index)"
            thread.start()
        }
    }

    /// One thread's life: its priority lowered, then the jobs as they come.
    private func work() -> Never {
        // A thread that cannot lower its priority still works, at the normal one.
        try? Linux.setThreadNice(Self.nice)
        while true {
            available.wait()
            let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
            job?()
        }
    }

    /// Runs `body` on one of the threads, without blocking the caller's thread, and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            jobs.withLock { $0.append { continuation.resume(with: Result { try body() }) } }
            available.signal()
        }
    }
}
