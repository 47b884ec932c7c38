import DBusKit
import Foundation
import TestSupport
import Testing

/// A seeded stateful random campaign: four apps at once send tens of thousands of calls of the right
/// shape with random and edge values (the least and greatest of every integer type, empty and longest
/// strings and one byte over, unknown keys, NaN and infinite doubles, ids of other apps' items), each app
/// keeping a model of its own items and groups. Afterwards chimed is the same process, every app's
/// `ListPending` and `ListGroups` hold only its own, nothing acknowledged was lost (also across a clean
/// restart), and the database passes `PRAGMA integrity_check`.
///
/// `CHIME_CAMPAIGN_SEED=SEED` replays a run; `CHIME_CAMPAIGN_CALLS=N` changes its length (20,000).
@Suite(.serialized) struct HostileCampaignTests {
    static let apps = ["org.example.C0", "org.example.C1", "org.example.C2", "org.example.C3"]
    static let chimeError = "io.chime.Chime1.Error."
    /// The answers a call may get: chimed's documented errors, and the dispatcher's and bus's own refusals.
    static let expectedErrors: Set<String> = [
        "io.chime.Chime1.Error.InvalidArgument", "io.chime.Chime1.Error.InvalidRule",
        "io.chime.Chime1.Error.InvalidTime", "io.chime.Chime1.Error.NotFound",
        "io.chime.Chime1.Error.PermissionDenied", "io.chime.Chime1.Error.LimitsExceeded",
        "io.chime.Chime1.Error.Conflict", "org.freedesktop.DBus.Error.InvalidArgs",
        "org.freedesktop.DBus.Error.LimitsExceeded",
    ]

    /// One app's view of what it owns, and what it saw.
    struct Model: Sendable {
        var app: String
        /// Every item id chimed gave this app (Schedule, Snooze).
        var given: Set<UInt64> = []
        /// Items that must stay pending: far away, never cancelled or snoozed by the campaign.
        var keepers: Set<UInt64> = []
        /// Items the app may cancel or snooze.
        var loose: [UInt64] = []
        /// Every group id a Reschedule of this app was accepted for.
        var groups: Set<String> = []
        /// Ids of other apps' items that a call of this app changed (should stay empty).
        var changedUnknown: Set<UInt64> = []
        var answers: [String: Int] = [:]
        var violations: [String] = []
        var calls = 0
    }

    @Test func tensOfThousandsOfEdgeValuedCallsFromFourAppsAtOnce() async throws {
        let seed = SplitMix64.seed(from: "CHIME_CAMPAIGN_SEED")
        let total = ProcessInfo.processInfo.environment["CHIME_CAMPAIGN_CALLS"].flatMap { Int($0) } ?? 20_000
        print("HostileCampaignTests: seed \(seed) (CHIME_CAMPAIGN_SEED=\(seed) replays this run), \(total) calls")
        try await Session.run(settings: HostileAppTests.generous) { s in
            let pid = try await HostileAppTests.chimedPID(s)
            var connections: [DBusConnection] = []
            for app in Self.apps { connections.append(try await s.appConnection(app)) }
            let start = ContinuousClock.now
            let perApp = total / Self.apps.count
            let models = try await withThrowingTaskGroup(of: Model.self) { group in
                for (index, app) in Self.apps.enumerated() {
                    let connection = connections[index]
                    let appSeed = seed &+ UInt64(index) &* 0x9E37_79B9_7F4A_7C15
                    group.addTask {
                        var random = SplitMix64(seed: appSeed)
                        var model = Model(app: app)
                        for _ in 0..<perApp { await Self.step(&model, connection, &random) }
                        return model
                    }
                }
                var models: [Model] = []
                for try await model in group { models.append(model) }
                return models.sorted { $0.app < $1.app }
            }
            let elapsed = ContinuousClock.now - start
            var answers: [String: Int] = [:]
            for model in models { answers.merge(model.answers, uniquingKeysWith: +) }
            print(
                "HostileCampaignTests: \(models.map(\.calls).reduce(0, +)) calls in \(elapsed): "
                    + answers.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))

            for model in models {
                for violation in model.violations.prefix(20) { Issue.record("\(model.app): \(violation)") }
                if model.violations.count > 20 {
                    Issue.record("\(model.app): \(model.violations.count) violations in all")
                }
            }

            // The same chimed serves on.
            #expect(!s.chimed!.hasExited, "chimed died: \(s.chimed!.stderr.suffix(2000))")
            #expect(try await s.observer.unixProcessID(of: "io.chime.Chime1") == pid)

            // No item was given to two apps, and none changed another's.
            for (i, a) in models.enumerated() {
                for b in models[(i + 1)...] {
                    #expect(a.given.isDisjoint(with: b.given), "\(a.app) and \(b.app) were given the same item")
                }
                let others = models.filter { $0.app != a.app }.reduce(into: Set<UInt64>()) { $0.formUnion($1.given) }
                #expect(a.changedUnknown.isDisjoint(with: others), "\(a.app) changed another app's items")
            }
            try await Self.checkViews(models, connections)

            // A clean stop, then SQLite's own check of the file, then the same state after a restart.
            await s.chimed!.stop()
            #expect(try await FaultTests.integrity(of: s.stateDirectory + "/chime.sqlite") == "ok")
            s.chimed = try await s.startChimed()
            for connection in connections { connection.close() }
            var again: [DBusConnection] = []
            for app in Self.apps { again.append(try await s.appConnection(app, allowed: false)) }
            try await Self.checkViews(models, again)
        }
    }

    /// Each app's ListPending and ListGroups hold only its own items and groups, with every keeper.
    static func checkViews(_ models: [Model], _ connections: [DBusConnection]) async throws {
        for (model, connection) in zip(models, connections) {
            let pending = try await HostileAppTests.call(connection, "ListPending", [HostileAppTests.empty])
            guard case .array(_, let items)? = pending.first else { throw TestFailure("no list") }
            var ids: Set<UInt64> = []
            for item in items.map(BusAPITests.fields) {
                guard case .uint64(let id)? = item["id"] else { continue }
                ids.insert(id)
                #expect(
                    item["owner"] == .string(model.app),
                    "\(model.app) lists item \(id) of \(String(describing: item["owner"]))")
                if case .string(let group)? = item["group"], !group.isEmpty {
                    #expect(
                        model.groups.contains(group), "\(model.app) lists item \(id) of a group it never made: \(group)"
                    )
                } else {
                    #expect(model.given.contains(id), "\(model.app) lists item \(id), which it was never given")
                }
            }
            #expect(
                model.keepers.isSubset(of: ids), "\(model.app) lost items: \(model.keepers.subtracting(ids).sorted())")
            let groups = try await HostileAppTests.call(connection, "ListGroups")
            guard case .array(_, let listed)? = groups.first else { throw TestFailure("no groups") }
            for group in listed.map(BusAPITests.fields) {
                #expect(
                    group["owner"] == .string(model.app),
                    "\(model.app) lists a group of \(String(describing: group["owner"]))")
                if case .string(let id)? = group["id"] {
                    #expect(model.groups.contains(id), "\(model.app) lists a group it never made: \(id)")
                }
            }
        }
    }

    // MARK: - One call

    /// Makes one random call as `model.app` and updates the model from its answer.
    static func step(_ model: inout Model, _ connection: DBusConnection, _ r: inout SplitMix64) async {
        let (member, arguments, effect) = generate(&model, &r)
        model.calls += 1
        do {
            let reply = try await HostileAppTests.call(connection, member, arguments, timeout: .seconds(30))
            model.answers["ok", default: 0] += 1
            check(&model, member: member, arguments: arguments, reply: reply, effect: effect)
        } catch {
            model.answers[error.name, default: 0] += 1
            if !expectedErrors.contains(error.name) {
                model.violations.append("\(member): \(error.name): \(error.message.prefix(200))")
            }
        }
    }

    /// What a call that succeeds means for the model.
    enum Effect {
        case none
        case scheduled(keeper: Bool)
        case cancelled(UInt64)
        case snoozed(UInt64)
        case rescheduled(String, dryRun: Bool)
        case removedGroup(String)
        case userOnly
    }

    static func check(_ model: inout Model, member: String, arguments: [DBusValue], reply: [DBusValue], effect: Effect)
    {
        switch effect {
        case .scheduled(let keeper):
            guard case .uint64(let id)? = reply.first else { return }
            if !model.given.insert(id).inserted { model.violations.append("Schedule gave item \(id) twice") }
            if keeper { model.keepers.insert(id) } else { model.loose.append(id) }
        case .cancelled(let id):
            if model.keepers.contains(id) { model.violations.append("Cancel of keeper \(id) succeeded") }
            if !model.given.contains(id) { model.changedUnknown.insert(id) }
            model.loose.removeAll { $0 == id }
        case .snoozed(let id):
            if !model.given.contains(id) { model.changedUnknown.insert(id) }
            if case .uint64(let snooze)? = reply.first {
                if !model.given.insert(snooze).inserted { model.violations.append("Snooze gave item \(snooze) twice") }
                model.loose.append(snooze)
            }
        case .rescheduled(let group, let dryRun):
            if !dryRun { model.groups.insert(group) }
        case .removedGroup:
            break
        case .userOnly:
            model.violations.append("\(member) is for the user only, and an app's call succeeded")
        case .none:
            break
        }
        // Whatever an app reads is its own.
        if member == "ListPending" || member == "History" || member == "ListGroups",
            case .array(_, let records)? = reply.first
        {
            for record in records.map(BusAPITests.fields) {
                if let owner = record["owner"], owner != .string(model.app) {
                    model.violations.append("\(member) showed a record of \(owner)")
                }
            }
        }
    }

    // MARK: - Values

    static let now = Int64(Date().timeIntervalSince1970 * 1_000_000)
    static let farFuture = HostileAppTests.farFuture

    static func int64(_ r: inout SplitMix64) -> Int64 {
        r.pick([
            .min, .min + 1, -1, 0, 1, .max - 1, .max, HostileAppTests.latestInstant, HostileAppTests.latestInstant + 1,
            now + 3_600_000_000, farFuture, Int64(bitPattern: r.next()), now - 86_400_000_000,
        ])
    }
    static func uint64(_ r: inout SplitMix64) -> UInt64 {
        r.pick([0, 1, 2, UInt64(1) << 63, (UInt64(1) << 63) - 1, .max, .max - 1, r.next(), UInt64(r.int(1...3000))])
    }
    static func uint32(_ r: inout SplitMix64) -> UInt32 {
        r.pick([0, 1, 2, 100, 101, 31_622_400, 31_622_401, .max, .max - 1, UInt32(truncatingIfNeeded: r.next())])
    }
    static func int32(_ r: inout SplitMix64) -> Int32 { r.pick([.min, -2, -1, 0, 1, 5000, .max]) }
    static func byte(_ r: inout SplitMix64) -> UInt8 { r.pick([0, 1, 2, 3, 127, 255]) }
    static func double(_ r: inout SplitMix64) -> Double {
        r.pick([
            .nan, .infinity, -.infinity, 0, -0.0, -1, 0.5, 60, 300, 301, 86_400 * 366, 86_400 * 366 + 1, 1e19, 1e308,
            .greatestFiniteMagnitude, .leastNonzeroMagnitude, -1e19,
        ])
    }

    /// A string for a key with `limit` bytes: empty, short, the longest allowed, one byte over, or odd.
    static func string(_ r: inout SplitMix64, limit: Int) -> String {
        switch r.int(0...19) {
        case 0: return ""
        case 1: return String(repeating: "x", count: limit)
        case 2: return String(repeating: "y", count: limit + 1)
        case 3: return String(repeating: "é", count: limit / 2)
        case 4:
            return r.pick(["snooze:999999999w", "../../etc/passwd", "a/b", "org.example.C0/g0", "\u{202E}evil", "%s%n"])
        default: return MalformedCallTests.text(&r, bytes: r.int(1...min(limit, 24)))
        }
    }

    static func record(_ entries: [(String, DBusValue)]) -> DBusValue { MalformedCallTests.record(entries) }

    static func unknownKey(_ r: inout SplitMix64) -> (String, DBusValue) {
        (r.pick(["sumary", "x-unknown", "", "command", "owner"]), .string("?"))
    }

    static func content(_ r: inout SplitMix64, plain: Bool = false) -> DBusValue {
        var entries: [(String, DBusValue)] = [("summary", .string(plain ? "keeper" : string(&r, limit: 1000)))]
        if plain { return record(entries) }
        if r.chance(0.3) {
            entries.append(
                ("body", .string(r.chance(0.1) ? String(repeating: "b", count: 16_000) : string(&r, limit: 100))))
        }
        if r.chance(0.1) { entries.append(("app-name", .string(string(&r, limit: 1000)))) }
        if r.chance(0.1) { entries.append(("icon", .string(string(&r, limit: 4096)))) }
        if r.chance(0.1) { entries.append(("urgency", .byte(byte(&r)))) }
        if r.chance(0.1) { entries.append(("expire-timeout", .int32(int32(&r)))) }
        if r.chance(0.15) {
            let keys = [
                "snooze", "snooze:1s", "snooze:999999999w", "snooze:0s", "stop-repeat", "skip-next", "dismiss", "open",
                "",
            ]
            entries.append(
                (
                    "actions",
                    .array(
                        element: .structure([.string, .string]),
                        (0..<r.int(0...3)).map { _ in
                            .structure([.string(r.pick(keys)), .string(string(&r, limit: 1000))])
                        })
                ))
        }
        if r.chance(0.1) { entries.append(("category", .string(r.pick(["c0", "c1", string(&r, limit: 200)])))) }
        if r.chance(0.1) {
            entries.append(
                (
                    "user-info",
                    .dictionary(
                        key: .string, value: .string,
                        [DBusDictEntry(.string(string(&r, limit: 100)), .string(string(&r, limit: 100)))])
                ))
        }
        if r.chance(0.15) {
            let value: DBusValue = r.pick([
                .double(double(&r)), .int32(int32(&r)), .byte(byte(&r)), .boolean(r.chance(0.5)),
                .string(string(&r, limit: 100)),
            ])
            entries.append(("hints", record([(r.pick(["x-a", "x-b", "urgency", string(&r, limit: 200)]), value)])))
        }
        if r.chance(0.03) { entries.append(unknownKey(&r)) }
        return record(entries)
    }

    static func trigger(_ r: inout SplitMix64) -> DBusValue {
        var entries: [(String, DBusValue)] = []
        switch r.int(0...5) {
        case 0: entries.append(("at", .int64(int64(&r))))
        case 1:
            entries.append(
                (
                    "every",
                    .string(
                        r.pick([
                            "every day at 9:00", "every monday", "every 999999999 weeks", "every 0 seconds",
                            string(&r, limit: 1000),
                        ]))
                ))
        case 2:
            entries.append(
                (
                    "rrule",
                    .string(
                        r.pick([
                            "FREQ=YEARLY", "FREQ=SECONDLY;INTERVAL=4294967295", "FREQ=DAILY;COUNT=0",
                            string(&r, limit: 1000),
                        ]))
                ))
        case 3:
            entries.append(
                (
                    "on-calendar",
                    .string(r.pick(["*-12-25 10:00", "9999-12-31 23:59:59", "*-02-30", string(&r, limit: 1000)]))
                ))
        case 4: entries.append(("at", .int64(farFuture + Int64(r.int(0...1_000_000)))))
        default: break
        }
        if r.chance(0.3) { entries.append(("until", .int64(int64(&r)))) }
        if r.chance(0.2) { entries.append(("count", .uint32(uint32(&r)))) }
        if r.chance(0.1) {
            entries.append(
                ("tz", .string(r.pick(["Europe/Berlin", "UTC", "Mars/Olympus", "", string(&r, limit: 255)]))))
        }
        if r.chance(0.1) { entries.append(("replaces-id", .uint32(uint32(&r)))) }
        if r.chance(0.03) { entries.append(unknownKey(&r)) }
        return record(entries)
    }

    static func groupID(_ r: inout SplitMix64) -> String {
        r.chance(0.85) ? "g\(r.int(0...3))" : string(&r, limit: 200)
    }

    static func permissionOptions(_ r: inout SplitMix64, into entries: inout [(String, DBusValue)]) {
        // Only strategies that never ask: a question would wait for the user.
        if r.chance(0.3) {
            entries.append(
                (
                    "permission",
                    .string(
                        r.pick([
                            "schedule-if-system-allowed", "ask-system-permission-if-needed",
                            "group=allow-automatically,system=if-already-allowed", "group=bypass,system=ask",
                            "group=if-already-allowed,system=ask", "group=nonsense",
                        ]))
                ))
        }
        if r.chance(0.1) {
            let key = r.pick(["prompt-title", "prompt-message", "prompt-allow", "prompt-deny"])
            entries.append((key, r.chance(0.2) ? .byte(1) : .string(string(&r, limit: 200))))
        }
    }

    static func entry(_ r: inout SplitMix64, id: String) -> DBusValue {
        var entries: [(String, DBusValue)] = [("id", .string(id)), ("content", content(&r))]
        guard case .dictionary(_, _, let triggerEntries) = trigger(&r) else { return record(entries) }
        for e in triggerEntries where e.key != .string("replaces-id") {
            if case .string(let key) = e.key, case .variant(let value) = e.value { entries.append((key, value)) }
        }
        switch r.int(0...9) {
        case 0: entries.append(("command", .array(element: .string, [.string("/bin/true")])))
        case 1:
            entries.append(("callback", .string(string(&r, limit: 255))))
            entries.append(("callback-timeout", .double(double(&r))))
        case 2:
            entries.append(
                (
                    "pool",
                    .array(
                        element: BusAPITests.recordType,
                        (0..<r.int(0...2)).map { _ in record([("body", .string(string(&r, limit: 100)))]) })
                ))
        case 3: entries.append(("template", .boolean(true)))
        default: break
        }
        if r.chance(0.1) { entries.append(("category", .string(r.pick(["c0", "c1"])))) }
        if r.chance(0.03) { entries.append(unknownKey(&r)) }
        return record(entries)
    }

    /// A call of the right shape, and what it means for the model when it succeeds.
    static func generate(_ model: inout Model, _ r: inout SplitMix64) -> (String, [DBusValue], Effect) {
        let roll = r.int(0...99)
        switch roll {
        case 0..<4 where model.keepers.count < 25:
            return (
                "Schedule",
                [content(&r, plain: true), record([("at", .int64(farFuture + Int64(r.int(0...1_000_000))))])],
                .scheduled(keeper: true)
            )
        case 0..<28:
            return ("Schedule", [content(&r), trigger(&r)], .scheduled(keeper: false))
        case 28..<40:
            // Own items mostly; sometimes any id (another app's, or none); never a keeper.
            var id = !model.loose.isEmpty && r.chance(0.7) ? r.pick(model.loose) : uint64(&r)
            if model.keepers.contains(id) { id = 0 }
            return ("Cancel", [.uint64(id)], .cancelled(id))
        case 40..<45:
            var id = !model.loose.isEmpty && r.chance(0.6) ? r.pick(model.loose) : uint64(&r)
            if model.keepers.contains(id) { id = 0 }
            return ("Snooze", [.uint64(id), .uint32(uint32(&r))], .snoozed(id))
        case 45..<53:
            var entries: [(String, DBusValue)] = []
            if r.chance(0.5) { entries.append(("next", .uint32(uint32(&r)))) }
            if r.chance(0.2) { entries.append(("group", .string(groupID(&r)))) }
            if r.chance(0.03) { entries.append(unknownKey(&r)) }
            return ("ListPending", [record(entries)], .none)
        case 53..<60:
            var entries: [(String, DBusValue)] = []
            if r.chance(0.4) { entries.append(("limit", .uint32(uint32(&r)))) }
            if r.chance(0.4) { entries.append(("since", .int64(int64(&r)))) }
            if r.chance(0.3) { entries.append(("item", .uint64(uint64(&r)))) }
            if r.chance(0.2) { entries.append(("group", .string(groupID(&r)))) }
            return ("History", [record(entries)], .none)
        case 60..<72:
            let group = groupID(&r)
            var settings: [(String, DBusValue)] = []
            if r.chance(0.3) {
                settings.append(("missed", .string(r.pick(["deliver-late", "coalesce", "skip", "", "later"]))))
            }
            if r.chance(0.3) { settings.append(("late-window", .double(double(&r)))) }
            if r.chance(0.2) { settings.append(("enabled", .boolean(r.chance(0.5)))) }
            let count = r.int(0...3)
            let entries = (0..<count).map { n in entry(&r, id: r.chance(0.95) ? "e\(n)" : string(&r, limit: 200)) }
            var options: [(String, DBusValue)] = []
            let dryRun = r.chance(0.2)
            if dryRun { options.append(("dry-run", .boolean(true))) }
            permissionOptions(&r, into: &options)
            return (
                "Reschedule",
                [.string(group), record(settings), .array(element: BusAPITests.recordType, entries), record(options)],
                .rescheduled(group, dryRun: dryRun)
            )
        case 72..<76:
            return ("ListGroups", [], .none)
        case 76..<80:
            return ("SetGroupEnabled", [.string(groupID(&r)), .boolean(r.chance(0.5))], .none)
        case 80..<83:
            let group = groupID(&r)
            return ("RemoveGroup", [.string(group)], .removedGroup(group))
        case 83..<87:
            let keys = [
                "snooze:999999999w", "snooze:366d", "snooze:367d", "snooze", "open", "stop-repeat",
                string(&r, limit: 200),
            ]
            let categories = (0..<r.int(0...2)).map { n -> DBusValue in
                var actions: [DBusValue] = []
                for _ in 0..<r.int(0...2) {
                    var action: [(String, DBusValue)] = [
                        ("id", .string(r.pick(keys))), ("title", .string(string(&r, limit: 200))),
                    ]
                    if r.chance(0.2) { action.append(("command", .array(element: .string, [.string("/bin/true")]))) }
                    if r.chance(0.2) {
                        action.append(
                            (
                                "options",
                                .array(
                                    element: .string,
                                    [.string(r.pick(["destructive", "foreground", "text-input", "nope"]))])
                            ))
                    }
                    actions.append(record(action))
                }
                var category: [(String, DBusValue)] = [
                    ("id", .string("c\(n)")), ("actions", .array(element: BusAPITests.recordType, actions)),
                ]
                if r.chance(0.3) { category.append(("default", .string(r.pick(keys)))) }
                return record(category)
            }
            return ("RegisterCategories", [.array(element: BusAPITests.recordType, categories)], .none)
        case 87..<89:
            return ("TakeActions", [], .none)
        case 89..<91:
            return ("GetAuthorization", [.string(r.chance(0.3) ? "" : groupID(&r))], .none)
        case 91..<94:
            return ("Status", [], .none)
        case 94..<98:
            var options: [(String, DBusValue)] = []
            permissionOptions(&r, into: &options)
            if options.isEmpty || !options.contains(where: { $0.0 == "permission" }) {
                options.append(("permission", .string("schedule-if-system-allowed")))
            }
            return ("RequestPermission", [.string(r.chance(0.3) ? "" : groupID(&r)), record(options)], .none)
        case 98:
            return ("ListApps", [], .userOnly)
        default:
            return ("SetAppConsent", [.string(r.pick(apps)), .string(r.pick(["allow", "deny", "reset"]))], .userOnly)
        }
    }
}
