import Foundation

/// Collects events from callbacks and lets a test await the moment a condition over them holds.
public final class Recorder<Element: Sendable>: @unchecked Sendable {
    // @unchecked Sendable: all state is guarded by `lock`.
    private let lock = NSLock()
    private var storage: [Element] = []
    private var waiters:
        [(id: UUID, predicate: @Sendable ([Element]) -> Bool, continuation: CheckedContinuation<Bool, Never>)] = []

    public init() {}

    public var elements: [Element] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    public func append(_ element: Element) {
        lock.lock()
        storage.append(element)
        var ready: [CheckedContinuation<Bool, Never>] = []
        waiters.removeAll { waiter in
            guard waiter.predicate(storage) else { return false }
            ready.append(waiter.continuation)
            return true
        }
        lock.unlock()
        for c in ready { c.resume(returning: true) }
    }

    /// Waits until `predicate(elements)` holds; throws `Await.TimedOut` after `timeout`.
    public func wait(
        _ what: String, timeout: Duration = .seconds(20), until predicate: @escaping @Sendable ([Element]) -> Bool
    ) async throws {
        let id = UUID()
        let met = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                    let already: Bool = self.lock.withLock {
                        if predicate(self.storage) { return true }
                        self.waiters.append((id, predicate, c))
                        return false
                    }
                    if already { c.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                let waiter = self.lock.withLock {
                    self.waiters.firstIndex { $0.id == id }.map { self.waiters.remove(at: $0) }
                }
                waiter?.continuation.resume(returning: false)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        guard met else { throw Await.TimedOut(what: what) }
    }

    /// Waits until at least `count` elements arrived.
    public func wait(forCount count: Int, timeout: Duration = .seconds(20)) async throws {
        try await wait("\(count) events arrived", timeout: timeout) { $0.count >= count }
    }

    /// The element at `index` (0-based), once it arrived: what happened elsewhere (chimed's log of a
    /// delivery) may be seen before the event it caused is recorded here.
    public func element(_ index: Int, timeout: Duration = .seconds(20)) async throws -> Element {
        try await wait(forCount: index + 1, timeout: timeout)
        return elements[index]
    }
}
