import Foundation
import Testing

@testable import ChimeDaemon

/// The threads that do the work callers ask for run at a lower priority than the rest of chimed, and do
/// the jobs they are given, with their results and errors.
@Suite struct CallerWorkTests {
    struct Refused: Error {}

    @Test func jobsRunOnThreadsOfLowerPriorityAndReturnTheirResults() async throws {
        let work = CallerWork(threads: 2, name: "test.caller-work")
        let nice = try await work.run { Linux.threadNice() }
        #expect(nice == CallerWork.nice)
        #expect(Linux.threadNice() < CallerWork.nice, "the test's own thread is not lowered")
        let sums = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 1...20 { group.addTask { try await work.run { (1...n).reduce(0, +) } } }
            return try await group.reduce(into: [Int]()) { $0.append($1) }.sorted()
        }
        #expect(sums == (1...20).map { $0 * ($0 + 1) / 2 })
        await #expect(throws: Refused.self) { try await work.run { () throws -> Int in throw Refused() } }
    }
}
