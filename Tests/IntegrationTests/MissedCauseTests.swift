import ChimeCore
import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// Occurrences missed because the machine was off, was asleep, or chimed was not running: each cause gets
/// the group's policy for it, and history says which cause applied.
@Suite struct MissedCauseDeliveryTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    /// A group whose one entry is due at `at`: late after chimed was stopped or the machine slept, in a
    /// digest after the machine was off, skipped otherwise.
    static func group(at: Date) -> String {
        """
        missed = "skip"
        missed-when-off = "coalesce"
        missed-when-suspended = "deliver-late"
        missed-when-not-running = "deliver-late"
        late-window-when-not-running = "1h"

        [[entry]]
        id = "pills"
        at = "\(GroupTests.local(at, zone: berlin))"
        summary = "Take the pills"
        """
    }

    /// The detail of the item's `missed` record, once history has it.
    static func missedDetail(_ s: Session) async throws -> String? {
        // Group files are the user's: `chime history` shows their records.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            let history = try await s.chimeJSON(["history"])
            if let missed = history.first(where: { $0["event"] as? String == "missed" }) {
                return missed["detail"] as? String
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// An app sets a policy per cause over D-Bus (ChimeKit's client), and the listing shows it.
    @Test func anAppSetsAPolicyPerCause() async throws {
        try await Session.run { s in
            let client = try await s.client()
            let entry = TimelineEntry(
                id: "e", trigger: .rule(.phrase("every day at 9:00"), timeZone: nil),
                content: .fixed(ChimeCore.NotificationContent(summary: "Stand-up")))
            let settings = GroupSettings(
                missedPolicy: .skip,
                missedPolicyByCause: [.machineOff: .coalesce, .notRunning: .deliverLate(window: 7200)])
            _ = try await client.reschedule(TimelineGroup(id: "standup", settings: settings, entries: [entry]))
            let groups = try await s.chimeJSON(["groups"])
            let standup = try #require(groups.first { $0["id"] as? String == "standup" })
            #expect(standup["missed"] as? String == "skip; off: coalesce; not-running: deliver-late (7200 s)")
        }
    }

    @Test func whileChimedWasStoppedItIsDeliveredLate() async throws {
        let at = Date().addingTimeInterval(20)
        try await Session.run(groups: ["pills.toml": Self.group(at: at)]) { s in
            await s.chimed!.stop()
            // chimed comes back two minutes after the occurrence; the machine ran all along.
            try s.setClock(offset: 140, tellChimed: false)
            s.chimed = try await s.startChimed()
            try await s.server!.notifyCalls.wait(forCount: 1, timeout: .seconds(10))
            #expect((try await s.server!.notifyCalls.element(0)).summary == "Take the pills")
            let detail = try #require(try await Self.missedDetail(s))
            #expect(detail.hasPrefix("1 delivered-late, chimed was not running ("), "\(detail)")
        }
    }

    @Test func whileTheMachineWasOffItIsInTheDigest() async throws {
        let at = Date().addingTimeInterval(20)
        try await Session.run(groups: ["pills.toml": Self.group(at: at)]) { s in
            await s.chimed!.stop()
            // The machine started ten seconds after the occurrence.
            try s.setClock(offset: 140, tellChimed: false)
            s.chimedEnvironment["CHIMED_TEST_BOOT_TIME"] = "\(at.addingTimeInterval(10).timeIntervalSince1970)"
            s.chimed = try await s.startChimed()
            try await s.server!.notifyCalls.wait(forCount: 1, timeout: .seconds(10))
            #expect((try await s.server!.notifyCalls.element(0)).summary == "1 reminder missed in pills")
            let detail = try #require(try await Self.missedDetail(s))
            #expect(detail.hasPrefix("1 coalesced, the machine was off ("), "\(detail)")
        }
    }

    @Test func whileTheMachineSleptItIsDeliveredLate() async throws {
        let at = Date().addingTimeInterval(1800)
        try await Session.run(groups: ["pills.toml": Self.group(at: at)], startChimed: false) { s in
            try await s.startLogindMock()
            s.chimed = try await s.startChimed()
            try await s.prepareForSleep(true)
            try await s.chimed!.waitForStderr(containing: "the machine is going to sleep")
            // It sleeps past the occurrence by a minute.
            try s.setClock(offset: 1860, tellChimed: false)
            try await s.prepareForSleep(false)
            try await s.server!.notifyCalls.wait(forCount: 1, timeout: .seconds(10))
            #expect((try await s.server!.notifyCalls.element(0)).summary == "Take the pills")
            let detail = try #require(try await Self.missedDetail(s))
            #expect(detail.hasPrefix("1 delivered-late, the machine was asleep ("), "\(detail)")
        }
    }
}
