import Foundation

/// A closure the app passed to one of NiceNotifications' closure parameters (a completion handler, `perform:`,
/// a content maker, a permission asker), carried to the main queue and called only there.
///
/// NiceNotifications declares these parameters plain `@escaping (…) -> Void`, not `@Sendable`, and ChimeKit
/// declares them the same. A Swift 6 caller on the main actor that passes a closure literal to such a parameter
/// gets a closure isolated to the main actor, which may touch main-actor state without `await`; calling it
/// anywhere but on the main actor would be a data race the compiler cannot see. ChimeKit does its work on
/// other threads, so it keeps the closure in this box to carry it across, and calls it the way NiceNotifications
/// delivers its completion handlers: on the main queue (`DispatchQueue.main.async`), which is where the main
/// actor runs.
///
/// `@unchecked Sendable` is sound because `closure` is private and read only inside the blocks `async` and
/// `run` submit to the main queue: whatever the closure captured is touched only on the main queue, one block
/// after another, never on the thread that made the box. (A caller isolated to another actor gets its closure
/// called on the main queue all the same, as NiceNotifications calls it there.)
final class MainQueueClosure<Closure>: @unchecked Sendable {
    private let closure: Closure

    init(_ closure: Closure) { self.closure = closure }

    /// Calls `use` with the closure on the main queue, later (never before returning).
    func async(_ use: @escaping @Sendable (Closure) -> Void) {
        DispatchQueue.main.async { use(self.closure) }
    }

    /// Calls `use` with the closure on the main queue and waits for what it returns.
    func run<Result: Sendable>(_ use: @escaping @Sendable (Closure) -> Result) async -> Result {
        await withCheckedContinuation { continuation in
            DispatchQueue.main.async { continuation.resume(returning: use(self.closure)) }
        }
    }
}

extension MainQueueClosure {
    /// Hands `argument` to the closure on the main queue; may be called from any thread.
    func call<Argument: Sendable>(_ argument: Argument) where Closure == (Argument) -> Void {
        async { $0(argument) }
    }
}
