import ChimeKit
import DBusKit
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed killed (SIGKILL) at random moments while an app schedules and chimed delivers: nothing it
/// acknowledged is lost, and nothing is shown twice.
///
/// The moment that could show one twice: chimed marks an outbox row as being sent and hands the Notify
/// call to its notification relay, and is killed before it hears the server's answer. The relay is a
/// process of its own: it receives the answer anyway and stores the id on the row, so the next start
/// finds the row shown, under that id, and does not send it again. A row marked without an id never
/// reached the server, and is sent (once) by the next start. The test reads from each start's log which
/// rows it found in flight, and checks that every notification reached the server exactly once.
@Suite(.serialized) struct CrashTests {
    static let rounds = 20

    /// An app's Schedule call that chimed answered.
    struct Acknowledged: Sendable {
        var id: UInt64
        var summary: String
    }

    final class Flag: Sendable {
        private let raised = Mutex(false)
        var isRaised: Bool { raised.withLock { $0 } }
        func raise() { raised.withLock { $0 = true } }
    }

    static let settings = """
        [flood]
        rate = 1000
        burst = 10000

        [limits]
        calls-per-second = 100000
        call-burst = 100000
        """

    @Test func killedAtRandomMomentsChimedKeepsWhatItAcknowledgedAndShowsNothingTwice() async throws {
        let seed = SplitMix64.seed(from: "CHIME_CRASH_SEED")
        print("CrashTests: seed \(seed) (CHIME_CRASH_SEED=\(seed) replays this run)")
        var random = SplitMix64(seed: seed)
        try await Session.run(settings: Self.settings) { s in
            let acknowledged = Recorder<Acknowledged>()
            let unexpected = Recorder<String>()
            var runs: [ManagedProcess] = [s.chimed!]
            for round in 1...Self.rounds {
                let chimed = runs.last!
                let stop = Flag()
                let workerSeeds = (0..<2).map { _ in random.next() }
                let load = Task {
                    await withTaskGroup(of: Void.self) { group in
                        for (worker, workerSeed) in workerSeeds.enumerated() {
                            group.addTask {
                                await Self.schedule(
                                    on: s.observer, round: round, worker: worker, seed: workerSeed, until: stop,
                                    acknowledged: acknowledged, unexpected: unexpected)
                            }
                        }
                    }
                }
                // The random moment: somewhere in a stream of Schedule calls and deliveries.
                try await Task.sleep(for: .milliseconds(random.int(30...400)))
                stop.raise()
                chimed.kill(SIGKILL)
                let status = await chimed.waitForExit()
                #expect(status == 128 + SIGKILL, "round \(round): chimed was not killed")
                await load.value

                // The same state, a new chimed: everything acknowledged so far reaches the server.
                let restarted = try await s.startChimed(logLevel: "info")
                s.chimed = restarted
                runs.append(restarted)
                // Delivered means the server has it: chimed's Delivered signal is not enough, because a
                // crash can come after the delivery was stored and before the signal went out.
                let summaries = Set(acknowledged.elements.map(\.summary))
                try await s.server!.notifyCalls.wait("round \(round): every acknowledged item was delivered") {
                    summaries.isSubset(of: Set($0.compactMap(\.summary)))
                }
            }
            #expect(unexpected.elements.isEmpty, "\(unexpected.elements.prefix(5))")

            // Every acknowledged id is a different item, stored with what was scheduled.
            let acks = acknowledged.elements
            #expect(Set(acks.map(\.id)).count == acks.count, "an id was given twice")
            var scheduled: [UInt64: String] = [:]
            for entry in try await Self.history(s) where entry.event == "scheduled" {
                scheduled[entry.item] = entry.summary
            }
            // Nothing is stuck: every item that exists (also one whose Schedule call the kill cut off)
            // reaches the server.
            let existing = Set(scheduled.values)
            try await s.server!.notifyCalls.wait("every item that exists was delivered") {
                existing.isSubset(of: Set($0.compactMap(\.summary)))
            }
            // chimed sends one notification at a time, so once one more is delivered, every earlier
            // delivery is stored and nothing is left to deliver.
            let last = try await Self.scheduleNow(s.observer, "settled")
            try await s.delivered.wait("the last item was delivered") { $0.contains { $0.item == last } }
            let status = try await s.observer.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                member: "Status")
            #expect(BusAPITests.fields(status.first)["to-deliver"] == .uint32(0))
            var deliveredAgain: [UInt64: Int] = [:]
            for entry in try await Self.history(s)
            where entry.event == "delivered" && entry.detail.contains("sent again after a restart") {
                deliveredAgain[entry.item, default: 0] += 1
            }
            for ack in acks { #expect(scheduled[ack.id] == ack.summary, "item \(ack.id)") }

            // What each start found in flight, from its log: answered to the relay after chimed died, or not.
            // A row is counted once: chimed killed again before it finished a row it found (its records are
            // written a moment after the start) finds the same row at the next start.
            var received: Set<UInt64> = []
            var resent: Set<UInt64> = []
            for run in runs {
                for line in run.stderr.split(separator: "\n") where line.contains("was being sent when chimed stopped")
                {
                    guard let item = line.split(separator: " ").first(where: { $0.hasPrefix("item=") }),
                        let id = UInt64(item.dropFirst(5))
                    else { continue }
                    if line.contains("the server showed it as notification") {
                        received.insert(id)
                    } else {
                        resent.insert(id)
                    }
                }
            }
            #expect(Set(deliveredAgain.keys).isSubset(of: resent), "only a row found without an answer is sent again")

            // Each occurrence reached the server exactly once, also those in flight at a kill.
            var shown: [String: Int] = [:]
            for call in s.server!.notifyCalls.elements { shown[call.summary ?? "", default: 0] += 1 }
            for (summary, count) in shown where count > 1 {
                Issue.record("\(summary) reached the server \(count) times")
            }
            for ack in acks { #expect(shown[ack.summary, default: 0] == 1, "item \(ack.id) was never shown") }
            // chimed sends one notification at a time, so at each kill at most one has no answer yet. Several
            // may have an answer the relay stored while chimed's own record of it was still on its way to
            // the disk (those records answer no one and are written after the next Notify leaves).
            #expect(resent.count <= Self.rounds, "more than one notification without an answer at one crash")
            print(
                """
                CrashTests: seed \(seed): \(Self.rounds) kills, \(acks.count) Schedule calls acknowledged, \
                \(s.server!.notifyCalls.elements.count) notifications shown, none twice; starts found \(received.count) \
                rows the server had answered after chimed died (recorded by the relay, not sent again) and \
                \(resent.count) that had not reached the server (sent again)
                """)
        }
    }

    /// The test app's history, oldest last.
    static func history(_ s: Session) async throws -> [(item: UInt64, event: String, summary: String, detail: String)] {
        let reply = try await s.observer.call(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
            member: "History", [BusAPITests.record(["limit": .uint32(100_000)])])
        guard case .array(_, let entries)? = reply.first else { throw TestFailure("History gave no list") }
        return entries.map(BusAPITests.fields).compactMap { entry in
            guard case .uint64(let item)? = entry["item"], case .string(let event)? = entry["event"] else {
                return nil
            }
            var summary = ""
            var detail = ""
            if case .string(let text)? = entry["summary"] { summary = text }
            if case .string(let text)? = entry["detail"] { detail = text }
            return (item, event, summary, detail)
        }
    }

    static func scheduleNow(_ connection: DBusConnection, _ summary: String) async throws -> UInt64 {
        let reply = try await connection.call(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
            member: "Schedule", [BusAPITests.record(["summary": .string(summary)]), BusAPITests.empty])
        guard case .uint64(let id)? = reply.first else { throw TestFailure("Schedule gave no id") }
        return id
    }

    /// One app's stream of Schedule calls, each due within 150 ms, until `stop`. A call chimed answered is
    /// recorded; one that failed because chimed died is not (it may or may not exist).
    static func schedule(
        on connection: DBusConnection, round: Int, worker: Int, seed: UInt64, until stop: Flag,
        acknowledged: Recorder<Acknowledged>, unexpected: Recorder<String>
    ) async {
        var random = SplitMix64(seed: seed)
        var n = 0
        while !stop.isRaised {
            let summary = "r\(round)-w\(worker)-\(n)"
            n += 1
            let at = Date().addingTimeInterval(Double(random.int(0...150)) / 1000)
            do {
                let reply = try await connection.call(
                    destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                    member: "Schedule",
                    [
                        BusAPITests.record(["summary": .string(summary)]),
                        BusAPITests.record(["at": .int64(Int64(at.timeIntervalSince1970 * 1_000_000))]),
                    ])
                guard case .uint64(let id)? = reply.first else {
                    unexpected.append("\(summary): Schedule answered \(reply)")
                    return
                }
                acknowledged.append(Acknowledged(id: id, summary: summary))
            } catch {
                if !stop.isRaised { unexpected.append("\(summary): \(error)") }
                return
            }
            try? await Task.sleep(for: .milliseconds(random.int(0...12)))
        }
    }
}
