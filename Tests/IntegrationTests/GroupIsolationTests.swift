import ChimeCore
import ChimeKit
import ChimeProtocol
import DBusKit
import Foundation
import TestSupport
import Testing

/// Groups cost their app and stay bounded (issue "Isolation", docs/security.md): `ListGroupsPaged` (and the
/// first page `ListGroups` answers) hold at most `ChimeBus.maximumReplyBytes` and 1000 groups a page, read
/// off the daemon's queue, and the CLI and ChimeKit follow the pages; an app has at most `[limits]
/// groups-per-app` groups, and as many group authorizations, and one more is `LimitsExceeded` while chimed
/// serves on; a removed group's authorization goes with it, except the user's "no".
@Suite(.serialized) struct GroupIsolationTests {
    static func record(_ values: [String: DBusValue]) -> DBusValue { ListingIsolationTests.record(values) }
    static let limitsExceeded = HostileAppTests.limitsExceeded

    /// No rate limit, and `groups` groups per app.
    static func settings(groups: Int) -> String {
        "[limits]\ncalls-per-second = 100000\ncall-burst = 100000\ngroups-per-app = \(groups)\n"
    }

    /// A group id of 200 bytes that sorts by `index`.
    static func longID(_ index: Int) -> String {
        let head = String(format: "group-%05d-", index)
        return head + String(repeating: "x", count: 200 - head.utf8.count)
    }

    /// Replaces group `id` of `app` with one entry due at `at` (µs), with the permission strategy
    /// `permission` when given.
    static func reschedule(_ app: DBusConnection, _ id: String, at: Int64, permission: String? = nil)
        async throws(DBusError)
    {
        let entry = ListingIsolationTests.entry("e", summary: "s", trigger: ["at": .int64(at)])
        let options = permission.map { Self.record(["permission": .string($0)]) } ?? HostileAppTests.empty
        _ = try await HostileAppTests.call(
            app, "Reschedule",
            [.string(id), HostileAppTests.empty, .array(element: BusAPITests.recordType, [entry]), options],
            timeout: .seconds(120))
    }

    /// Makes `ids.count` groups of `app`, 32 calls at a time; group `ids[i]` has one entry due at
    /// `farFuture + i` µs.
    static func makeGroups(_ app: DBusConnection, _ ids: [String]) async throws {
        for start in stride(from: 0, to: ids.count, by: 32) {
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                for index in start..<min(start + 32, ids.count) {
                    tasks.addTask {
                        try await reschedule(app, ids[index], at: HostileAppTests.farFuture + Int64(index))
                    }
                }
                try await tasks.waitForAll()
            }
        }
    }

    /// Runs `call` for 0 to `count` - 1 at once: each one's error, nil where it succeeded.
    static func atOnce(_ count: Int, _ call: @escaping @Sendable (Int) async throws(DBusError) -> Void) async
        -> [DBusError?]
    {
        await withTaskGroup(of: DBusError?.self) { tasks in
            for index in 0..<count {
                tasks.addTask {
                    do throws(DBusError) {
                        try await call(index)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            return await tasks.reduce(into: []) { $0.append($1) }
        }
    }

    /// Every page of `ListGroupsPaged` for `app`, starting with `ListGroups()` when `legacy`: the groups'
    /// records and the number of pages. Each reply is checked against the reply limit and the page size.
    static func allPages(_ app: DBusConnection, legacy: Bool = false) async throws -> (groups: [WireFields], pages: Int)
    {
        var groups: [WireFields] = []
        var pages = 0
        var options: [String: DBusValue] = [:]
        while true {
            let reply =
                legacy && pages == 0
                ? try await HostileAppTests.call(app, "ListGroups")
                : try await HostileAppTests.call(app, "ListGroupsPaged", [Self.record(options)])
            #expect(try ListingIsolationTests.bytes(reply) <= ChimeBus.maximumReplyBytes)
            let (records, next) = try ListingIsolationTests.page(reply)
            #expect(records.count <= 1000, "a page of \(records.count) groups")
            groups += records
            pages += 1
            guard let next, pages < 20 else { break }
            options["after"] = .string(next)
        }
        return (groups, pages)
    }

    @Test func anAppsGroupsBeyondOnePageComeInPagesAndChimedLives() async throws {
        try await Session.run(settings: Self.settings(groups: 1500)) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Planner")
            let ids = (0..<1200).map(Self.longID)
            try await Self.makeGroups(app, ids)
            // Another app's groups are never on the first app's pages.
            let other = try await s.appConnection("io.example.Other")
            try await Self.makeGroups(other, ["mine-1", "mine-2", "mine-3"])

            for legacy in [true, false] {
                let (groups, pages) = try await Self.allPages(app, legacy: legacy)
                #expect(pages == 2, "1200 groups in \(pages) pages (legacy: \(legacy))")
                let listed = try groups.map { try #require(try $0.string("id")) }
                #expect(listed == ids, "every group once, by id, across the pages (legacy: \(legacy))")
                for (index, group) in groups.enumerated() {
                    #expect(try group.string("owner") == "io.example.Planner")
                    #expect(try group.uint32("entries") == 1 && group.uint32("pending") == 1)
                    let next = try #require(try group.date("next"))
                    #expect(WireTime.microseconds(next) == HostileAppTests.farFuture + Int64(index))
                }
            }
            // The user's chime follows the pages and sees every app's groups.
            let all = try await s.chimeJSON(["groups"])
            #expect(all.count == 1203)
            #expect(Set(all.compactMap { $0["id"] as? String }) == Set(ids + ["mine-1", "mine-2", "mine-3"]))
            let lines = try await s.chime(["groups"])
            #expect(lines.status == 0)
            #expect(lines.stdout.split(separator: "\n").count == 1203)
            // So does ChimeKit.
            let planner = try await ChimeClient.connect(.bus(s.bus.address), owning: "io.example.Planner2")
            defer { planner.close() }
            #expect(try await planner.groups().isEmpty)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    /// A group listing costs its app one call more for every 20 groups and every 200 items it counted: 40
    /// groups of one item are three calls of the app's budget.
    @Test func aGroupListingIsPaidForByTheGroupsItRead() async throws {
        let settings = "[limits]\ncalls-per-second = 0.01\ncall-burst = 49\n"
        try await Session.run(settings: settings) { s in
            let app = try await s.appConnection("io.example.Reader")
            try await Self.makeGroups(app, (0..<40).map { "g\($0)" })
            // 49 calls: 40 Reschedules, then three listings of three each.
            _ = try await HostileAppTests.call(app, "ListGroups")
            _ = try await HostileAppTests.call(app, "ListGroups")
            _ = try await HostileAppTests.call(app, "ListGroupsPaged", [HostileAppTests.empty])
            let error = await HostileAppTests.error("a fourth listing of 40 groups") {
                try await HostileAppTests.call(app, "ListGroups")
            }
            HostileAppTests.expect(error, Self.limitsExceeded, mentioning: "times a second", "fourth listing")
            // Another app is not charged for it.
            let other = try await s.appConnection("io.example.Other")
            _ = try await HostileAppTests.call(other, "ListGroups")
        }
    }

    @Test func aGroupCursorThatIsNotOneIsRefused() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("io.example.Cursor")
            for options in [Self.record(["after": .string("no-slash")]), Self.record(["after": .string("app/")])] {
                let error = await HostileAppTests.error("ListGroupsPaged after a bad cursor") {
                    try await HostileAppTests.call(app, "ListGroupsPaged", [options])
                }
                HostileAppTests.expect(error, HostileAppTests.invalidArgument, mentioning: "after", "ListGroupsPaged")
            }
            let error = await HostileAppTests.error("ListGroupsPaged with an unknown key") {
                try await HostileAppTests.call(app, "ListGroupsPaged", [Self.record(["limit": .uint32(5)])])
            }
            HostileAppTests.expect(error, HostileAppTests.invalidArgument, mentioning: "limit", "ListGroupsPaged")
        }
    }

    @Test func anAppBeyondItsGroupLimitGetsLimitsExceededAndChimedServes() async throws {
        let userGroups = Dictionary(
            uniqueKeysWithValues: (0..<7).map { ("user-\($0).toml", EscalationTests.pill("")) })
        try await Session.run(settings: Self.settings(groups: 5), groups: userGroups) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Many")
            try await Self.makeGroups(app, (0..<5).map { "g\($0)" })

            // A sixth group, by Reschedule and by Schedule into a group of a new id.
            let error = await HostileAppTests.error("a sixth group") {
                try await Self.reschedule(app, "g5", at: HostileAppTests.farFuture)
                return []
            }
            HostileAppTests.expect(error, Self.limitsExceeded, mentioning: "groups-per-app", "a sixth group")
            let trigger = Self.record(["at": .int64(HostileAppTests.farFuture), "group": .string("g6")])
            let scheduled = await HostileAppTests.error("an item in a sixth group") {
                try await HostileAppTests.call(
                    app, "Schedule", [Self.record(["summary": .string("s")]), trigger])
            }
            HostileAppTests.expect(scheduled, Self.limitsExceeded, mentioning: "groups-per-app", "Schedule")

            // The app's own groups still change, and a group it removes makes room for another.
            try await Self.reschedule(app, "g0", at: HostileAppTests.farFuture + 1)
            _ = try await HostileAppTests.call(
                app, "Schedule",
                [
                    Self.record(["summary": .string("s")]),
                    Self.record(["at": .int64(HostileAppTests.farFuture), "group": .string("g1")]),
                ])
            _ = try await HostileAppTests.call(app, "RemoveGroup", [.string("g4")])
            try await Self.reschedule(app, "g5", at: HostileAppTests.farFuture)
            #expect(try await Self.allPages(app).groups.count == 5)

            // Calls that make groups at once cannot pass the limit together.
            let racer = try await s.appConnection("io.example.Racer")
            let outcomes = await Self.atOnce(24) { (index) throws(DBusError) in
                try await Self.reschedule(racer, "r\(index)", at: HostileAppTests.farFuture)
            }
            #expect(outcomes.filter { $0 == nil }.count == 5)
            #expect(outcomes.compactMap { $0 }.allSatisfy { $0.name == Self.limitsExceeded })
            #expect(try await Self.allPages(racer).groups.count == 5)

            // Another app is not held to the first one's groups; the user's group files are not limited.
            let other = try await s.appConnection("io.example.Other")
            try await Self.reschedule(other, "g0", at: HostileAppTests.farFuture)
            let groups = try await s.chimeJSON(["groups"])
            #expect(groups.filter { $0["owner"] as? String == "" }.count == 7)
            // Five of each app at its limit, one of the other app, the seven files.
            #expect(groups.count == 18)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    /// A `Reschedule` whose changes do not fit in one reply (32,000 entries with 200-byte ids, about 9 MB
    /// of changes) is stored and answered: the changes other than `unchanged` first, as many as fit, then
    /// a record counting those left out; never a reply over the limit, which the bus would refuse after the
    /// group was stored.
    @Test func aRescheduleWithMoreChangesThanFitInAReplyIsAnsweredWithACount() async throws {
        try await Session.run(settings: Self.settings(groups: 10) + "bytes-per-app = 1073741824\n") { s in
            let pid = try await HostileAppTests.chimedPID(s)
            let count = 32_000
            let ids = (0..<count).map(Self.longID)
            let app = try await s.app("org.example.Many")
            let entries = ids.enumerated().map { index, id in
                TimelineEntry(
                    id: id, trigger: .at(Date(timeIntervalSince1970: 4_102_444_800 + Double(index))),
                    content: .fixed(ChimeCore.NotificationContent(summary: "s")))
            }
            let group = TimelineGroup(id: "many", entries: entries)
            let first = try await app.rescheduleReport(group)
            #expect(first.changes.allSatisfy { $0.kind == .added })
            #expect(first.unlisted[.added, default: 0] > 0)
            #expect(first.changes.count + first.unlisted.values.reduce(0, +) == count)
            // Everything was stored, listed or not.
            let status = try WireFields(
                try await HostileAppTests.call(s.observer, "Status").first ?? HostileAppTests.empty, what: "status")
            #expect(try status.uint32("pending") == UInt32(count))
            // Again with one entry moved: that change is listed first, the unchanged ones as far as they fit.
            var moved = entries
            moved[count - 1].trigger = .at(Date(timeIntervalSince1970: 4_102_444_800 + Double(2 * count)))
            let second = try await app.rescheduleReport(TimelineGroup(id: "many", entries: moved), dryRun: true)
            #expect(second.changes.first?.kind == .changed && second.changes.first?.entryID == ids[count - 1])
            #expect(second.unlisted[.unchanged, default: 0] > 0)
            #expect(second.changes.count + second.unlisted.values.reduce(0, +) == count)
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    // MARK: - Group authorizations

    /// A group level that stores the group as allowed without asking; the app is allowed already.
    static let allowAutomatically = "group=allow-automatically,system=if-already-allowed"

    /// `RequestPermission` of `app` for group `id` with `permission`: the result's fields.
    static func requestPermission(_ app: DBusConnection, _ id: String, _ permission: String = allowAutomatically)
        async throws(DBusError) -> [String: DBusValue]
    {
        let reply = try await HostileAppTests.call(
            app, "RequestPermission", [.string(id), Self.record(["permission": .string(permission)])])
        return BusAPITests.fields(reply.first)
    }

    /// Group `id`'s authorization as `GetAuthorization` tells `app`.
    static func groupStatus(_ app: DBusConnection, _ id: String) async throws -> DBusValue? {
        let reply = try await HostileAppTests.call(app, "GetAuthorization", [.string(id)])
        return BusAPITests.fields(reply.first)["group"]
    }

    /// `SetGroupEnabled` of `app`.
    static func setEnabled(_ app: DBusConnection, _ id: String, _ enabled: Bool) async throws(DBusError) {
        _ = try await HostileAppTests.call(app, "SetGroupEnabled", [.string(id), .boolean(enabled)])
    }

    @Test func anAppsGroupAuthorizationsAreBoundedAndChimedServes() async throws {
        try await Session.run(settings: Self.settings(groups: 5), groups: ["daily.toml": EscalationTests.pill("")]) {
            s in
            let pid = try await HostileAppTests.chimedPID(s)
            let app = try await s.appConnection("io.example.Switches")
            // Five groups decided about before they are made: allowed automatically, and off by the app's switch
            // (ChimeKit's in-app question stores its "no" so).
            for id in ["a0", "a1", "a2"] {
                #expect(try await Self.requestPermission(app, id)["outcome"] == .string("allowed"))
            }
            for id in ["off0", "off1"] { try await Self.setEnabled(app, id, false) }

            // A sixth, by each way an app stores one: refused, nothing asked, nothing made.
            let requested = await HostileAppTests.error("a sixth authorization by RequestPermission") {
                _ = try await Self.requestPermission(app, "n0")
                return []
            }
            HostileAppTests.expect(requested, Self.limitsExceeded, mentioning: "groups-per-app", "RequestPermission")
            let rescheduled = await HostileAppTests.error("a sixth authorization by Reschedule") {
                try await Self.reschedule(app, "n1", at: HostileAppTests.farFuture, permission: Self.allowAutomatically)
                return []
            }
            HostileAppTests.expect(rescheduled, Self.limitsExceeded, mentioning: "groups-per-app", "Reschedule")
            let switched = await HostileAppTests.error("a sixth authorization by the app's switch") {
                try await Self.setEnabled(app, "n2", false)
                return []
            }
            HostileAppTests.expect(switched, Self.limitsExceeded, mentioning: "RemoveGroup", "SetGroupEnabled")
            let asked = await HostileAppTests.error("a question whose answer has no room") {
                _ = try await Self.requestPermission(app, "n3", "group=ask-once,system=if-already-allowed")
                return []
            }
            HostileAppTests.expect(asked, Self.limitsExceeded, mentioning: "groups-per-app", "a question")
            #expect(s.server!.notifyCalls.elements.isEmpty, "a question was asked")
            for id in ["n0", "n1", "n2", "n3"] {
                #expect(try await Self.groupStatus(app, id) == .string("undetermined"), "\(id)")
            }
            #expect(try await Self.allPages(app).groups.isEmpty)

            // The app's decisions still change; a decision it forgets (RemoveGroup) makes room.
            #expect(try await Self.requestPermission(app, "a0")["outcome"] == .string("allowed"))
            try await Self.setEnabled(app, "a1", false)
            try await Self.setEnabled(app, "off0", true)
            #expect(try await Self.groupStatus(app, "a1") == .string("denied-previously"))
            #expect(try await Self.groupStatus(app, "off0") == .string("allowed"))
            _ = try await HostileAppTests.call(app, "RemoveGroup", [.string("a2")])
            #expect(try await Self.groupStatus(app, "a2") == .string("undetermined"))
            try await Self.reschedule(app, "n1", at: HostileAppTests.farFuture, permission: Self.allowAutomatically)
            #expect(try await Self.groupStatus(app, "n1") == .string("allowed"))

            // Calls at once cannot pass the bound together: from 24 connections of one app (this test
            // process), so that they are handled at the same time, not one after another.
            var racers: [DBusConnection] = []
            for _ in 0..<24 { racers.append(try await s.bus.connect()) }
            defer { for racer in racers { racer.close() } }
            let outcomes = await Self.atOnce(racers.count) { [racers] (index) throws(DBusError) in
                _ = try await Self.requestPermission(racers[index], "r\(index)")
            }
            #expect(outcomes.filter { $0 == nil }.count == 5)
            #expect(outcomes.compactMap { $0 }.allSatisfy { $0.name == Self.limitsExceeded })

            // Another app is not held to the first one's; the user's switches are not limited, and turn the
            // user's group file's group off and on as before.
            let other = try await s.appConnection("io.example.Other")
            #expect(try await Self.requestPermission(other, "a0")["outcome"] == .string("allowed"))
            let userOff = try await s.chime(["group", "disable", "io.example.Switches/by-the-user"])
            #expect(userOff.status == 0, "\(userOff.stderr)")
            #expect(try await Self.groupStatus(app, "by-the-user") == .string("denied-previously"))
            for (change, enabled) in [("disable", false), ("enable", true)] {
                let result = try await s.chime(["group", change, "daily"])
                #expect(result.status == 0, "\(result.stderr)")
                let daily = try await s.chimeJSON(["groups"]).first { $0["id"] as? String == "daily" }
                #expect(daily?["enabled"] as? Bool == enabled)
                #expect(try await s.chimeJSON(["pending", "--group", "daily"]).count == (enabled ? 1 : 0))
            }
            try await HostileAppTests.expectSameChimedServing(s, pid: pid)
        }
    }

    @Test func aRemovedGroupsAuthorizationGoesWithItButTheUsersNoStays() async throws {
        try await Session.run(settings: Self.settings(groups: 3)) { s in
            let app = try await s.appConnection("io.example.Daily")
            // A group a day, allowed automatically and removed: more groups over time than the bound.
            for day in 0..<8 {
                let id = "day-\(day)"
                try await Self.reschedule(app, id, at: HostileAppTests.farFuture, permission: Self.allowAutomatically)
                #expect(try await Self.groupStatus(app, id) == .string("allowed"))
                _ = try await HostileAppTests.call(app, "RemoveGroup", [.string(id)])
                #expect(try await Self.groupStatus(app, id) == .string("undetermined"), "\(id)")
            }
            // CancelAll removes the app's groups, their authorizations with them; the app's own "off" too.
            try await Self.reschedule(app, "c0", at: HostileAppTests.farFuture, permission: Self.allowAutomatically)
            try await Self.reschedule(app, "c1", at: HostileAppTests.farFuture)
            try await Self.setEnabled(app, "c1", false)
            _ = try await HostileAppTests.call(app, "CancelAll", [HostileAppTests.empty])
            #expect(try await Self.groupStatus(app, "c0") == .string("undetermined"))
            #expect(try await Self.groupStatus(app, "c1") == .string("undetermined"))

            // The user's "no" stays when the app removes the group, and holds when the app makes it again.
            try await Self.reschedule(app, "kept", at: HostileAppTests.farFuture)
            let off = try await s.chime(["group", "disable", "io.example.Daily/kept"])
            #expect(off.status == 0, "\(off.stderr)")
            _ = try await HostileAppTests.call(app, "RemoveGroup", [.string("kept")])
            #expect(try await Self.groupStatus(app, "kept") == .string("denied-previously"))
            let again = await HostileAppTests.error("making again a group the user turned off") {
                try await Self.reschedule(app, "kept", at: HostileAppTests.farFuture)
                return []
            }
            HostileAppTests.expect(
                again, HostileAppTests.permissionDenied, mentioning: "deniedOnGroupLevel", "Reschedule")
            // So after a restart.
            try await HostileAppTests.expectServingAfterRestart(s)
            #expect(try await Self.groupStatus(app, "kept") == .string("denied-previously"))
            #expect(try await Self.groupStatus(app, "day-0") == .string("undetermined"))
        }
    }
}
