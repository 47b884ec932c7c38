import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import ChimeDaemon

/// chimed's parts in a real service group: they start one after another whatever order their tasks run
/// in, stop in the reverse order, and a failure stops the ones running, in order.
struct DaemonPartsTests {
    struct Failed: Error, Equatable { var part: String }

    /// What the parts did, in order.
    final class Journal: Sendable {
        private let lines = Mutex<[String]>([])
        func note(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    /// A group of the seven parts. `failAtStart` makes that part's start throw; `failWhileRunning`
    /// makes that part throw once every part has started. Each start yields first, so that without the
    /// start-up sequence the parts' tasks would start in whatever order they ran.
    static func group(
        journal: Journal, failAtStart: DaemonPart? = nil, failWhileRunning: DaemonPart? = nil,
        running: (@Sendable () -> Void)? = nil
    ) -> ServiceGroup {
        let startup = StartupSequence()
        let services = DaemonPart.allCases.map { part in
            var service = DaemonPartService(
                part: part, startup: startup,
                start: {
                    for _ in 0..<(DaemonPart.allCases.count - part.rawValue) { await Task.yield() }
                    if part == failAtStart { throw Failed(part: "\(part)") }
                    journal.note("start \(part)")
                    if part == .supervision { running?() }
                },
                stop: { journal.note("stop \(part)") })
            if part == failWhileRunning {
                service.serve = {
                    try await startup.wait(for: .supervision)
                    throw Failed(part: "\(part)")
                }
            }
            return ServiceGroupConfiguration.ServiceConfiguration(
                service: service, successTerminationBehavior: .gracefullyShutdownGroup,
                failureTerminationBehavior: .gracefullyShutdownGroup)
        }
        return ServiceGroup(
            configuration: .init(
                services: services, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })))
    }

    final class GroupBox: Sendable {
        let group = Mutex<ServiceGroup?>(nil)
    }

    static let names = DaemonPart.allCases.map(\.description)

    @Test func thePartsStartInOrderAndStopInTheReverseOrder() async throws {
        let journal = Journal()
        let box = GroupBox()
        let group = Self.group(journal: journal) {
            // Every part has started: stop chimed as SIGTERM would.
            Task { await box.group.withLock { $0 }?.triggerGracefulShutdown() }
        }
        box.group.withLock { $0 = group }
        try await group.run()
        #expect(journal.all == Self.names.map { "start \($0)" } + Self.names.reversed().map { "stop \($0)" })
    }

    @Test(arguments: [DaemonPart.store, .scheduler, .bus, .supervision])
    func aPartThatCannotStartStopsThoseBeforeItInReverseAndNoneAfterIt(_ failing: DaemonPart) async throws {
        let journal = Journal()
        let group = Self.group(journal: journal, failAtStart: failing)
        await #expect(throws: Failed(part: "\(failing)")) { try await group.run() }
        let before = Self.names.prefix(failing.rawValue)
        #expect(journal.all == before.map { "start \($0)" } + before.reversed().map { "stop \($0)" })
    }

    @Test(arguments: [DaemonPart.bus, .supervision])
    func aFailureWhileRunningStopsThatPartThenEveryOtherInReverse(_ failing: DaemonPart) async throws {
        let journal = Journal()
        let group = Self.group(journal: journal, failWhileRunning: failing)
        await #expect(throws: Failed(part: "\(failing)")) { try await group.run() }
        let others = Self.names.reversed().filter { $0 != "\(failing)" }
        #expect(journal.all == Self.names.map { "start \($0)" } + ["stop \(failing)"] + others.map { "stop \($0)" })
    }

    @Test func aWaiterCancelledBeforeItsPartStartsThrowsAndLaterOnesStillStart() async throws {
        let startup = StartupSequence()
        let cancelled = Task { try await startup.wait(for: .bus) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        let waiting = Task { try await startup.wait(for: .relay) }
        startup.started(.store)
        startup.started(.relay)
        try await waiting.value
        // A part that has started is not waited for again.
        try await startup.wait(for: .store)
    }
}
