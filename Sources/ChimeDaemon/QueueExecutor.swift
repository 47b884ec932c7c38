import Dispatch

/// The serial executor of `Daemon`: its jobs run on the daemon's serial queue, the same queue its timers,
/// watchers and logind monitors call back on. So code that Dispatch runs on that queue is isolated to the
/// daemon as well, and says so with `assumeIsolated`, which `checkIsolated` answers.
///
/// Jobs and blocks run one at a time, in the order they were enqueued.
final class QueueExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
