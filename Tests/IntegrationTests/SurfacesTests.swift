import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

/// One scenario through each of the three surfaces — hand-built D-Bus messages, the chime CLI with a group
/// file, and ChimeKit's declarative API — each against its own chimed: the pending lists and the Notify
/// calls must be the same.
@Suite(.serialized) struct SurfacesTests {
    /// A pending item as the user sees it, minus the ids (which each chimed numbers itself) and the
    /// one-off's time (each run has its own "in two seconds").
    struct Pending: Hashable, CustomStringConvertible {
        var group: String
        var entry: String
        var summary: String
        var next: [String]
        var description: String { "\(group)/\(entry) \(summary) \(next)" }
    }

    /// A Notify call, every argument but the server-side id.
    struct Shown: Hashable {
        var appName: String?
        var summary: String?
        var body: String?
        var actions: [String]
        var hints: [String: DBusValue]
        var expireTimeout: Int32?
    }

    /// The standup scenario: a one-off in two seconds (critical, with an icon, an app name, a timeout and a
    /// button), a daily rule, and a one-off far ahead; `drive` schedules it on its surface.
    static func outcome(_ drive: (Session, Date) async throws -> Void) async throws -> (Set<Pending>, [Shown]) {
        var pending: Set<Pending> = []
        var shown: [Shown] = []
        try await Session.run { s in
            let soon = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 2).rounded(.up))
            try await drive(s, soon)
            for item in try await s.chimeJSON(["pending", "--next", "3"]) {
                let entry = item["entry"] as? String ?? ""
                pending.insert(
                    Pending(
                        group: (item["group"] as? String ?? "").components(separatedBy: "/").last ?? "", entry: entry,
                        summary: item["summary"] as? String ?? "",
                        next: entry == "soon" ? [] : item["next"] as? [String] ?? []))
            }
            let calls = s.server!.notifyCalls
            try await calls.wait(forCount: 1, timeout: .seconds(10))
            shown = calls.elements.map {
                Shown(
                    appName: $0.appName, summary: $0.summary, body: $0.body, actions: $0.actions, hints: $0.hints,
                    expireTimeout: $0.expireTimeout)
            }
        }
        return (pending, shown)
    }

    static let farAhead = Date(timeIntervalSince1970: 1_924_992_000)  // 2031-01-01T00:00:00Z

    @Test func theSameScenarioThroughDBusTheCLIAndChimeKitGivesTheSamePendingListAndNotifyCalls() async throws {
        // 1. D-Bus, messages built by hand as any language would.
        let viaDBus = try await Self.outcome { s, soon in
            func record(_ fields: [String: DBusValue]) -> DBusValue {
                .dictionary(
                    key: .string, value: .variant,
                    fields.map { DBusDictEntry(.string($0.key), .variant($0.value)) })
            }
            func micros(_ date: Date) -> DBusValue { .int64(Int64(date.timeIntervalSince1970 * 1_000_000)) }
            let actions = DBusValue.array(
                element: .structure([.string, .string]), [.structure([.string("ok"), .string("OK")])])
            let entries: [DBusValue] = [
                record([
                    "id": .string("soon"), "at": micros(soon),
                    "content": record([
                        "summary": .string("Stand-up"), "body": .string("Room 4"), "app-name": .string("Standup"),
                        "icon": .string("dialog-information"), "urgency": .byte(2), "expire-timeout": .int32(5000),
                        "actions": actions,
                    ]),
                ]),
                record([
                    "id": .string("daily"), "every": .string("every day at 9:00"),
                    "content": record(["summary": .string("Daily"), "app-name": .string("Standup")]),
                ]),
                record([
                    "id": .string("later"), "at": micros(Self.farAhead),
                    "content": record(["summary": .string("Later"), "app-name": .string("Standup")]),
                ]),
            ]
            _ = try await s.observer.call(
                destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1",
                member: "Reschedule",
                [.string("standup"), record([:]), .array(element: WireRecordType.type, entries), record([:])])
        }

        // 2. The CLI, with a group file.
        let viaCLI = try await Self.outcome { s, soon in
            let utc = ISO8601DateFormatter()
            utc.formatOptions = [.withFullDate, .withTime, .withColonSeparatorInTime, .withDashSeparatorInDate]
            func local(_ date: Date) -> String { String(utc.string(from: date).prefix(19)) }
            let file = s.bus.directory.appendingPathComponent("standup.toml").path
            try """
            app-name = "Standup"

            [[entry]]
            id = "soon"
            at = "\(local(soon))"
            tz = "UTC"
            summary = "Stand-up"
            body = "Room 4"
            icon = "dialog-information"
            urgency = "critical"
            expire-timeout = 5000
            actions = ["ok=OK"]

            [[entry]]
            id = "daily"
            every = "every day at 9:00"
            summary = "Daily"

            [[entry]]
            id = "later"
            at = "\(local(Self.farAhead))"
            tz = "UTC"
            summary = "Later"
            """.write(toFile: file, atomically: true, encoding: .utf8)
            let result = try await s.chime(["reschedule", "--file", file])
            #expect(result.status == 0, "\(result.stderr)")
        }

        // 3. ChimeKit's declarative API.
        let viaKit = try await Self.outcome { s, soon in
            await LocalNotifications.configure(.init(bus: .bus(s.bus.address), appID: Session.testAppID))
            var stand = ChimeCore.NotificationContent(summary: "Stand-up", body: "Room 4")
            stand.appName = "Standup"
            stand.icon = "dialog-information"
            stand.urgency = .critical
            stand.expireTimeout = 5000
            stand.actions = [NotificationAction(key: "ok", label: "OK")]
            var daily = ChimeCore.NotificationContent(summary: "Daily")
            daily.appName = "Standup"
            var later = ChimeCore.NotificationContent(summary: "Later")
            later.appName = "Standup"
            try await LocalNotifications.schedule(groupIdentifier: "standup") {
                ExactlyAt(soon).schedule(content: stand).identifier("soon")
                EveryDay().at(hour: 9, minute: 0).schedule(content: daily).identifier("daily")
                ExactlyAt(Self.farAhead).schedule(content: later).identifier("later")
            }
            await LocalNotifications.configure(.init())
        }

        #expect(viaDBus.0.count == 3)
        #expect(viaCLI.0 == viaDBus.0)
        #expect(viaKit.0 == viaDBus.0)
        #expect(viaDBus.1.count == 1)
        #expect(viaDBus.1.first?.summary == "Stand-up")
        #expect(viaDBus.1.first?.hints["urgency"] == .byte(2))
        #expect(viaCLI.1 == viaDBus.1)
        #expect(viaKit.1 == viaDBus.1)
    }
}

/// The D-Bus type of a record, `a{sv}`.
enum WireRecordType {
    static let type = DBusType.dictionary(key: .string, value: .variant)
}
