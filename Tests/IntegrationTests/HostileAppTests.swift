import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed against apps on the session bus that are sandboxed, buggy or hostile (issue 14, docs/security.md):
/// one test per attack. No program runs from the bus, no number from the wire crashes chimed, no call
/// waits on another caller's question or on a hung server, resources are bounded in bytes, apps see only
/// their own notifications and signals, and the state on disk is private and self-contained.
///
/// Where a message's exact text matters only loosely, a test checks the error's name and that the message
/// mentions the key; the names are docs/dbus-api.md's.
@Suite(.serialized) struct HostileAppTests {
    static let invalidArgument = "io.chime.Chime1.Error.InvalidArgument"
    static let invalidTime = "io.chime.Chime1.Error.InvalidTime"
    static let permissionDenied = "io.chime.Chime1.Error.PermissionDenied"
    static let limitsExceeded = "io.chime.Chime1.Error.LimitsExceeded"
    static let busLimitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"

    /// No rate limit and no flood digests, for tests that make many calls or deliveries.
    static let generous = """
        [limits]
        calls-per-second = 100000
        call-burst = 100000

        [flood]
        rate = 1000
        burst = 10000
        """

    /// The greatest instant the API takes: 9999-12-31T23:59:59.999999Z.
    static let latestInstant: Int64 = 253_402_300_799_999_999
    /// 2100-01-01, far enough for an item that must stay pending.
    static let farFuture: Int64 = 4_102_444_800_000_000

    static func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue { BusAPITests.record(pairs) }
    static let empty = BusAPITests.empty
    static let records = BusAPITests.recordType

    static func now(plus seconds: Double = 0) -> Int64 { Int64((Date().timeIntervalSince1970 + seconds) * 1_000_000) }

    /// Calls a member of io.chime.Chime1 on `connection`.
    static func call(
        _ connection: DBusConnection, _ member: String, _ arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        try await connection.call(
            destination: "io.chime.Chime1", path: "/io/chime/Chime1", interface: "io.chime.Chime1", member: member,
            arguments, timeout: timeout)
    }

    /// The error `body` fails with; records an issue when it succeeds.
    static func error(
        _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> [DBusValue]
    ) async -> DBusError? {
        do {
            let reply = try await body()
            Issue.record("\(what) succeeded: \(String(describing: reply).prefix(300))", sourceLocation: sourceLocation)
            return nil
        } catch let error as DBusError {
            return error
        } catch {
            Issue.record("\(what) failed with \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// Checks an error's name and (loosely: the text may change) that its message mentions `key`.
    static func expect(
        _ error: DBusError?, _ name: String, mentioning key: String? = nil, _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard let error else { return }
        #expect(error.name == name, "\(what): \(error.name): \(error.message)", sourceLocation: sourceLocation)
        if let key {
            #expect(
                error.message.contains(key), "\(what): the message does not mention \(key): \(error.message)",
                sourceLocation: sourceLocation)
        }
    }

    /// How long `body` took.
    static func timed<T: Sendable>(_ body: () async throws -> T) async rethrows -> (T, Duration) {
        let start = ContinuousClock.now
        let result = try await body()
        return (result, ContinuousClock.now - start)
    }

    static func schedule(_ connection: DBusConnection, _ content: DBusValue, _ trigger: DBusValue = empty)
        async throws(DBusError) -> UInt64
    {
        let reply = try await call(connection, "Schedule", [content, trigger])
        guard case .uint64(let id)? = reply.first else { throw DBusError(.failed, "Schedule gave no id") }
        return id
    }

    /// chimed's pid, checked to be the process this session started.
    static func chimedPID(_ s: Session) async throws -> UInt32 {
        let pid = try await s.observer.unixProcessID(of: "io.chime.Chime1")
        #expect(pid == UInt32(s.chimed!.pid))
        return pid
    }

    /// chimed is still the process `pid` and answers calls that read its state.
    static func expectSameChimedServing(_ s: Session, pid: UInt32, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        #expect(!s.chimed!.hasExited, "chimed died: \(s.chimed!.stderr.suffix(1500))", sourceLocation: sourceLocation)
        #expect(try await s.observer.unixProcessID(of: "io.chime.Chime1") == pid, sourceLocation: sourceLocation)
        _ = try await BusAPITests.call(s, "ListGroups")
        _ = try await BusAPITests.call(s, "ListPending", [empty])
        _ = try await BusAPITests.call(s, "Status")
    }

    /// Stops chimed cleanly, starts it again on the same state, and checks it serves: no stored row stops it.
    static func expectServingAfterRestart(_ s: Session, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        await s.chimed!.stop()
        s.chimed = try await s.startChimed()
        let pid = try await chimedPID(s)
        _ = try await BusAPITests.call(s, "ListGroups")
        let listed = try await s.chime(["groups"])
        #expect(listed.status == 0, "chime groups: \(listed.stderr)", sourceLocation: sourceLocation)
        try await expectSameChimedServing(s, pid: pid, sourceLocation: sourceLocation)
    }

    /// Schedules a probe due in `seconds` as this test process and waits until the server shows it, or
    /// chimed leaves the bus: whatever chimed would do before then (fire an item stored just now) has happened.
    static func awaitProbe(_ s: Session, in seconds: Double) async throws {
        let gone = Recorder<Bool>()
        let watch = try await s.observer.watchNameOwner("io.chime.Chime1") { if $0 == nil { gone.append(true) } }
        defer { watch.cancel() }
        let summary = "probe \(UUID().uuidString.prefix(8))"
        _ = try await FaultTests.schedule(s, summary, at: Date().addingTimeInterval(seconds))
        let calls = s.server!.notifyCalls
        let shown = Recorder<Bool>()
        let waiter = Task {
            try? await calls.wait("the probe was shown", timeout: .seconds(30)) {
                $0.contains { $0.summary == summary }
            }
            shown.append(true)
        }
        let gate = Task {
            try? await gone.wait("chimed left the bus", timeout: .seconds(30)) { !$0.isEmpty }
            shown.append(false)
        }
        try await shown.wait(forCount: 1, timeout: .seconds(31))
        waiter.cancel()
        gate.cancel()
        #expect(shown.elements.first == true, "chimed left the bus before the probe was shown")
    }

    /// chimed's signals as one app's connection receives them.
    final class AppSignals: Sendable {
        let delivered = Recorder<(item: UInt64, notification: UInt32)>()
        let actions = Recorder<(item: UInt64, action: String)>()
    }

    /// Subscribes `connection` to Delivered and ActionInvoked, without eavesdropping: what reaches the app.
    static func listen(_ connection: DBusConnection) async throws -> AppSignals {
        let signals = AppSignals()
        _ = try await connection.subscribe(
            DBusMatchRule(sender: "io.chime.Chime1", interface: "io.chime.Chime1", member: "Delivered")
        ) { message in
            guard message.body.count == 2, case .uint64(let item) = message.body[0],
                case .uint32(let notification) = message.body[1]
            else { return }
            signals.delivered.append((item, notification))
        }
        _ = try await connection.subscribe(
            DBusMatchRule(sender: "io.chime.Chime1", interface: "io.chime.Chime1", member: "ActionInvoked")
        ) { message in
            guard message.body.count == 5, case .uint64(let item) = message.body[0],
                case .string(let action) = message.body[3]
            else { return }
            signals.actions.append((item, action))
        }
        return signals
    }

    /// A copy of gdbus named `name`: an app known by that executable name, as any program can be.
    static func gdbusCopy(_ s: Session, named name: String) throws -> String {
        let directory = s.bus.directory.appendingPathComponent("bin-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let gdbus =
            (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
            .map { "\($0)/gdbus" }.first { FileManager.default.isExecutableFile(atPath: $0) } ?? "/usr/bin/gdbus"
        let copy = directory.appendingPathComponent(name).path
        try FileManager.default.copyItem(atPath: gdbus, toPath: copy)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: copy)
        return copy
    }

    /// Starts `executable call` (a gdbus copy) of io.chime.Chime1.`method` on the session's bus.
    static func gdbusCall(_ s: Session, _ executable: String, _ method: String, _ arguments: [String]) throws
        -> ManagedProcess
    {
        let process = try ManagedProcess(
            executable,
            [
                "call", "--session", "--timeout", "90", "--dest", "io.chime.Chime1", "--object-path",
                "/io/chime/Chime1", "--method", "io.chime.Chime1.\(method)",
            ] + arguments, environment: s.bus.environment, directory: s.bus.directory)
        s.extraProcesses.append(process)
        return process
    }

    /// A file a command would create; the test checks it never appears.
    static func marker(_ s: Session) -> String {
        s.bus.directory.appendingPathComponent("ran-\(UUID().uuidString.prefix(8))").path
    }

    static func touching(_ path: String) -> DBusValue {
        .array(element: .string, [.string("/bin/sh"), .string("-c"), .string("echo ran > '\(path)'")])
    }

    // MARK: - No program from the bus

    @Test func aCommandInARescheduleEntryIsRefusedAndNeverRuns() async throws {
        try await Session.run(settings: Self.generous) { s in
            let app = try await s.appConnection("org.example.A")
            let marker = Self.marker(s)
            let entry = Self.record([
                "id": .string("e"), "content": Self.record(["summary": .string("from a command")]),
                "command": Self.touching(marker),
            ])
            let refused = await Self.error("Reschedule with a command") {
                try await Self.call(
                    app, "Reschedule", [.string("g"), Self.empty, .array(element: Self.records, [entry]), Self.empty])
            }
            Self.expect(refused, Self.permissionDenied, mentioning: "command", "Reschedule with a command")
            // Due now had it been taken: by the time a later probe is shown, the command would have run.
            try await Self.awaitProbe(s, in: 1)
            #expect(!FileManager.default.fileExists(atPath: marker), "the command from the bus ran")
            #expect(!s.server!.notifyCalls.elements.contains { $0.summary == "from a command" })
        }
    }

    @Test func aCommandInARegisteredActionIsRefusedAndNeverRuns() async throws {
        try await Session.run(settings: Self.generous) { s in
            let app = try await s.appConnection("org.example.A")
            let signals = try await Self.listen(app)
            let marker = Self.marker(s)
            let category = Self.record([
                "id": .string("c"),
                "actions": .array(
                    element: Self.records,
                    [Self.record(["id": .string("run"), "title": .string("Run"), "command": Self.touching(marker)])]),
            ])
            let refused = await Self.error("RegisterCategories with a command") {
                try await Self.call(app, "RegisterCategories", [.array(element: Self.records, [category])])
            }
            Self.expect(refused, Self.permissionDenied, mentioning: "command", "RegisterCategories with a command")

            // The action chosen on the app's popup anyway: it is the app's own action, no program runs.
            let item = try await Self.schedule(
                app, Self.record(["summary": .string("Run?"), "category": .string("c")]))
            try await signals.delivered.wait("the app's popup was delivered") { $0.contains { $0.item == item } }
            let popup = try #require(signals.delivered.elements.first { $0.item == item }?.notification)
            try await s.choose("run", on: popup)
            try await s.chimed!.waitForStderr(containing: "action run chosen on notification \(popup)")
            // Either the app hears of it (no command) or chimed says what the command did.
            try await Await.condition("chimed handled the action", timeout: .seconds(20), watching: s.chimed!.stderrURL)
            {
                signals.actions.elements.contains { $0.action == "run" } || s.chimed!.stderr.contains("run: ")
            }
            #expect(!FileManager.default.fileExists(atPath: marker), "the action's command from the bus ran")
        }
    }

    @Test func anExecutableNamedChimeIsAnAppNotTheUser() async throws {
        try await Session.run { s in
            // The user's own item, which only the user sees.
            #expect(try await s.chime(["send", "--in", "1h", "the user's"]).status == 0)
            let fake = try Self.gdbusCopy(s, named: "chime")
            let apps = try Self.gdbusCall(s, fake, "ListApps", [])
            let status = await apps.waitForExit(timeout: .seconds(20))
            #expect(status != 0, "a gdbus named chime listed the apps: \(apps.stdout)")
            #expect(apps.stderr.contains(Self.permissionDenied), "\(apps.stderr)")

            // Allowed as the app "chime", it sees only its own items (none), not the user's.
            #expect(try await s.chime(["app", "allow", "chime"]).status == 0)
            let pending = try Self.gdbusCall(s, fake, "ListPending", ["{}"])
            #expect(await pending.waitForExit(timeout: .seconds(20)) == 0, "\(pending.stderr)")
            #expect(
                !pending.stdout.contains("the user's"), "a gdbus named chime sees the user's items: \(pending.stdout)")
            let consent = try Self.gdbusCall(s, fake, "SetAppConsent", ["org.example.Other", "allow"])
            #expect(await consent.waitForExit(timeout: .seconds(20)) != 0)
            #expect(consent.stderr.contains(Self.permissionDenied), "\(consent.stderr)")
        }
    }

    // MARK: - Numbers from the wire

    @Test func historySinceInt64MaxIsRefusedAndChimedLives() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            let refused = await Self.error("History since Int64.max") {
                try await BusAPITests.call(s, "History", [Self.record(["since": .int64(.max)])])
            }
            Self.expect(refused, Self.invalidArgument, mentioning: "since", "History since Int64.max")
            try await Self.expectSameChimedServing(s, pid: pid)
            try await Self.expectServingAfterRestart(s)
        }
    }

    @Test func historyItemOf2To63IsRefusedAndChimedLives() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            for item in [UInt64(1) << 63, .max] {
                let refused = await Self.error("History item \(item)") {
                    try await BusAPITests.call(s, "History", [Self.record(["item": .uint64(item)])])
                }
                Self.expect(refused, Self.invalidArgument, mentioning: "item", "History item \(item)")
            }
            try await Self.expectSameChimedServing(s, pid: pid)
            try await Self.expectServingAfterRestart(s)
        }
    }

    @Test func scheduleAtInt64MaxIsRefusedAndChimedLives() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            for at in [Int64.max, Self.latestInstant + 1, -1, .min] {
                let refused = await Self.error("Schedule at \(at)") {
                    try await BusAPITests.call(
                        s, "Schedule", [Self.record(["summary": .string("x")]), Self.record(["at": .int64(at)])])
                }
                Self.expect(refused, Self.invalidArgument, mentioning: "at", "Schedule at \(at)")
            }
            // The last instant of the range is a time like any other.
            _ = try await BusAPITests.call(
                s, "Schedule",
                [Self.record(["summary": .string("last")]), Self.record(["at": .int64(Self.latestInstant)])])
            try await Self.expectSameChimedServing(s, pid: pid)
            try await Self.expectServingAfterRestart(s)
        }
    }

    @Test func scheduleEveryUntilInt64MaxIsRefusedAndChimedLives() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            let refused = await Self.error("Schedule every with until Int64.max") {
                try await BusAPITests.call(
                    s, "Schedule",
                    [
                        Self.record(["summary": .string("forever")]),
                        Self.record(["every": .string("every 2 seconds"), "until": .int64(.max)]),
                    ])
            }
            Self.expect(refused, Self.invalidArgument, mentioning: "until", "Schedule every with until Int64.max")
            // Its first occurrence would have come by now.
            try await Self.awaitProbe(s, in: 2.5)
            try await Self.expectSameChimedServing(s, pid: pid)
            try await Self.expectServingAfterRestart(s)
            try await Self.awaitProbe(s, in: 2.5)
        }
    }

    @Test func aLateWindowOf1e19IsRefusedAndListGroupsWorks() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            let entry = Self.record([
                "id": .string("e"), "every": .string("every day at 9:00"),
                "content": Self.record(["summary": .string("x")]),
            ])
            for window in [1e19, 366 * 86400 + 1, .infinity, .nan, -1] {
                let refused = await Self.error("Reschedule late-window \(window)") {
                    try await BusAPITests.call(
                        s, "Reschedule",
                        [
                            .string("late"),
                            Self.record(["missed": .string("deliver-late"), "late-window": .double(window)]),
                            .array(element: Self.records, [entry]), Self.empty,
                        ])
                }
                Self.expect(refused, Self.invalidArgument, mentioning: "late-window", "late-window \(window)")
            }
            // The same checks hold for each cause's policy and window.
            for (settings, key) in [
                (Self.record(["missed-when-off": .string("later")]), "missed-when-off"),
                (
                    Self.record(["missed-when-suspended": .string("skip"), "late-window-when-suspended": .double(60)]),
                    "late-window-when-suspended"
                ),
                (
                    Self.record([
                        "missed-when-not-running": .string("deliver-late"),
                        "late-window-when-not-running": .double(1e19),
                    ]), "late-window-when-not-running"
                ),
                (Self.record(["missed-when-sleeping": .string("skip")]), "missed-when-sleeping"),
            ] {
                let refused = await Self.error("Reschedule \(key)") {
                    try await BusAPITests.call(
                        s, "Reschedule",
                        [.string("late"), settings, .array(element: Self.records, [entry]), Self.empty])
                }
                Self.expect(refused, Self.invalidArgument, mentioning: key, key)
            }
            try await Self.expectSameChimedServing(s, pid: pid)
            try await Self.expectServingAfterRestart(s)
        }
    }

    @Test func aHugeSnoozeChosenOnAPopupDoesNotKillChimed() async throws {
        try await Session.run { s in
            let pid = try await Self.chimedPID(s)
            let app = try await s.appConnection("org.example.A")
            let signals = try await Self.listen(app)
            let key = "snooze:999999999w"
            // A category refuses such an action id ("looks like a snooze but is not one"); the content's own
            // actions are the app's to name, so the key reaches the popup that way.
            let item = try await Self.schedule(
                app,
                Self.record([
                    "summary": .string("Snooze me"),
                    "actions": .array(
                        element: .structure([.string, .string]), [.structure([.string(key), .string("Later")])]),
                ]))
            try await signals.delivered.wait("the popup was delivered") { $0.contains { $0.item == item } }
            let popup = try #require(signals.delivered.elements.first { $0.item == item }?.notification)
            let gone = Recorder<Bool>()
            let watch = try await s.observer.watchNameOwner("io.chime.Chime1") { if $0 == nil { gone.append(true) } }
            defer { watch.cancel() }
            try await s.choose(key, on: popup)
            try await s.chimed!.waitForStderr(containing: "action \(key) chosen on notification \(popup)")
            // Not a built-in verb (over 366 days): the app's own action, which reaches the app.
            try await Await.condition("the action was handled", timeout: .seconds(20), watching: s.chimed!.stderrURL) {
                signals.actions.elements.contains { $0.action == key } || !gone.elements.isEmpty
                    || s.chimed!.hasExited
            }
            #expect(gone.elements.isEmpty, "chimed left the bus after \(key)")
            try await Self.expectSameChimedServing(s, pid: pid)
        }
    }

    // MARK: - Calls do not wait on each other

    /// What the user and the other apps do while a question is open: each is answered while the question
    /// still waits (chimed logs the question's end, "SUMMARY": …, only once it is answered or expires after
    /// a minute), and each well before that minute.
    static func expectOthersAnswerPromptly(
        _ s: Session, other: DBusConnection, what: String, question summary: String
    ) async throws {
        async let pending = Self.timed { try await s.chime(["pending"]) }
        async let scheduled = Self.timed {
            try await Self.call(
                other, "Schedule",
                [Self.record(["summary": .string("other app")]), Self.record(["at": .int64(Self.farFuture)])],
                timeout: .seconds(10))
        }
        async let status = Self.timed {
            try await BusAPITests.call(s, "Status")
        }
        let (listed, listTime) = try await pending
        #expect(listed.status == 0, "chime pending: \(listed.stderr)")
        let (_, scheduleTime) = try await scheduled
        let (_, statusTime) = try await status
        #expect(!s.chimed!.stderr.contains("\"\(summary)\": "), "\(what) ended before the others were answered")
        print(
            "while \(what) was open: chime pending \(listTime), another app's Schedule \(scheduleTime), Status \(statusTime)"
        )
        // The question waits up to a minute; these took a blink (well under a second on a quiet machine).
        for (call, time) in [
            ("chime pending", listTime), ("another app's Schedule", scheduleTime), ("Status", statusTime),
        ] {
            #expect(time < .seconds(10), "\(call) took \(time) while \(what) was open")
        }
    }

    @Test func aConsentQuestionDoesNotHoldUpOtherCallers() async throws {
        try await Session.run { s in
            let other = try await s.appConnection("org.example.Other")
            let asker = try await s.appConnection("org.example.New", allowed: false)
            let waiting = Task { () async throws -> [DBusValue] in
                try await Self.call(
                    asker, "Schedule", [Self.record(["summary": .string("hello")]), Self.empty], timeout: .seconds(90))
            }
            let calls = s.server!.notifyCalls
            try await calls.wait("the question was shown") {
                $0.contains { $0.summary == "org.example.New wants to schedule notifications" }
            }
            try await s.chimed!.waitForStderr(containing: "asking \"org.example.New wants")
            let question = try #require(calls.elements.firstIndex { $0.summary?.hasPrefix("org.example.New") == true })

            try await Self.expectOthersAnswerPromptly(
                s, other: other, what: "a consent question", question: "org.example.New wants to schedule notifications"
            )

            try await s.choose("deny", on: UInt32(question + 1))
            let answer = await waiting.result
            if case .failure(let error) = answer {
                Self.expect(
                    error as? DBusError, Self.permissionDenied, mentioning: "deniedOnSystemLevel", "the asking app")
            } else {
                Issue.record("the app scheduled after Don't Allow")
            }
        }
    }

    @Test func aGroupQuestionDoesNotHoldUpOtherCallers() async throws {
        try await Session.run { s in
            let other = try await s.appConnection("org.example.Other")
            let asker = try await s.appConnection("org.example.Quotes")
            let waiting = Task { () async throws -> [DBusValue] in
                try await Self.call(
                    asker, "RequestPermission",
                    [
                        .string("morning"),
                        Self.record([
                            "permission": .string("group=ask-once,system=ask"),
                            "prompt-title": .string("Daily quotes?"),
                        ]),
                    ], timeout: .seconds(90))
            }
            let calls = s.server!.notifyCalls
            try await calls.wait("the group question was shown") { $0.contains { $0.summary == "Daily quotes?" } }
            try await s.chimed!.waitForStderr(containing: "asking \"Daily quotes?\"")
            let question = try #require(calls.elements.firstIndex { $0.summary == "Daily quotes?" })

            try await Self.expectOthersAnswerPromptly(
                s, other: other, what: "a group question", question: "Daily quotes?")

            try await s.choose("deny", on: UInt32(question + 1))
            let result = BusAPITests.fields(try await waiting.value.first)
            #expect(result["outcome"] == .string("deniedOnGroupLevel"), "\(result)")
        }
    }

    /// Two calls of one app not yet allowed, from two connections at once: one question, one answer for both.
    @Test func twoConcurrentCallsOfAnUnallowedAppShareOneQuestion() async throws {
        try await Session.run { s in
            let twin = try Self.gdbusCopy(s, named: "twinapp")
            // dbus-monitor shows when the bus has handed each call to chimed.
            let monitor = try ManagedProcess(
                "/usr/bin/dbus-monitor",
                [
                    "--address", s.bus.address, "--profile",
                    "type='method_call',interface='io.chime.Chime1',member='Schedule'",
                ],
                directory: s.bus.directory)
            s.extraProcesses.append(monitor)
            try await monitor.waitForStdout(containing: "NameAcquired")
            let first = try Self.gdbusCall(s, twin, "Schedule", ["{'summary': <'one'>}", "{}"])
            let second = try Self.gdbusCall(s, twin, "Schedule", ["{'summary': <'two'>}", "{}"])
            try await Await.condition("both calls reached chimed", timeout: .seconds(20), watching: monitor.stdoutURL) {
                monitor.stdout.split(separator: "\n").filter { $0.hasSuffix("\tSchedule") }.count >= 2
            }
            let calls = s.server!.notifyCalls
            let summary = "twinapp wants to schedule notifications"
            try await calls.wait("the question was shown") { $0.contains { $0.summary == summary } }
            try await s.chimed!.waitForStderr(containing: "asking \"twinapp wants")
            let question = try #require(calls.elements.firstIndex { $0.summary == summary })
            try await s.choose("deny", on: UInt32(question + 1))

            for (name, process) in [("first", first), ("second", second)] {
                let status = await process.waitForExit(timeout: .seconds(10))
                #expect(status != nil, "the \(name) call still waits (for a question of its own?)")
                #expect(status != 0, "the \(name) call scheduled after Don't Allow")
                #expect(process.stderr.contains(Self.permissionDenied), "\(name): \(process.stderr)")
                #expect(process.stderr.contains("deniedOnSystemLevel"), "\(name): \(process.stderr)")
            }
            #expect(calls.elements.filter { $0.summary == summary }.count == 1, "one question for both calls")
        }
    }

    @Test func aStoppedServerDoesNotHoldUpStatusOrPaused() async throws {
        try await Session.run { s in
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            let other = try await s.appConnection("org.example.Other")
            let server = s.server!.process
            server.kill(SIGSTOP)
            do {
                async let status = Self.timed { try await BusAPITests.call(s, "Status") }
                async let paused = Self.timed { try await BusAPITests.property(s, "Paused") }
                async let listed = Self.timed {
                    try await Self.call(other, "ListPending", [Self.empty], timeout: .seconds(15))
                }
                let (statusReply, statusTime) = try await status
                #expect(statusTime < .seconds(1), "Status took \(statusTime) with the server stopped")
                #expect(BusAPITests.fields(statusReply.first)["version"] != nil)
                let (pausedValue, pausedTime) = try await paused
                #expect(pausedTime < .seconds(1), "Paused took \(pausedTime) with the server stopped")
                #expect(pausedValue == .boolean(false))
                let (_, listTime) = try await listed
                #expect(listTime < .seconds(1), "another app's ListPending took \(listTime) with the server stopped")
            } catch {
                server.kill(SIGCONT)
                throw error
            }
            server.kill(SIGCONT)
        }
    }

    // MARK: - Wrong answers

    @Test func aNonFiniteDoubleHintIsInvalidArgument() async throws {
        try await Session.run { s in
            for value in [Double.nan, .infinity, -.infinity] {
                let refused = await Self.error("a d hint of \(value)") {
                    try await BusAPITests.call(
                        s, "Schedule",
                        [
                            Self.record(["summary": .string("x"), "hints": Self.record(["x-level": .double(value)])]),
                            Self.empty,
                        ])
                }
                Self.expect(refused, Self.invalidArgument, mentioning: "x-level", "a d hint of \(value)")
            }
            // A finite one is stored and sent.
            _ = try await BusAPITests.call(
                s, "Schedule",
                [
                    Self.record(["summary": .string("finite"), "hints": Self.record(["x-level": .double(0.5)])]),
                    Self.empty,
                ])
            try await s.server!.notifyCalls.wait("the finite hint was sent") { $0.contains { $0.summary == "finite" } }
        }
    }

    @Test func badPromptOptionsAreRefusedEvenWhenNoQuestionIsAsked() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.A")
            let noQuestion = "group=allow-automatically,system=if-already-allowed"
            let cases: [(String, String, DBusValue)] = [
                ("a byte as the title", "prompt-title", Self.record(["prompt-title": .byte(7)])),
                ("an empty title", "prompt-title", Self.record(["prompt-title": .string("")])),
                (
                    "a title of 201 bytes", "prompt-title",
                    Self.record([
                        "permission": .string(noQuestion), "prompt-title": .string(String(repeating: "t", count: 201)),
                    ])
                ),
                (
                    "a message of 1001 bytes", "prompt-message",
                    Self.record(["prompt-message": .string(String(repeating: "m", count: 1001))])
                ),
                (
                    "allow equal to deny", "prompt-",
                    Self.record([
                        "permission": .string(noQuestion), "prompt-allow": .string("Yes"),
                        "prompt-deny": .string("Yes"),
                    ])
                ),
                (
                    "a label of 201 bytes", "prompt-deny",
                    Self.record(["prompt-deny": .string(String(repeating: "d", count: 201))])
                ),
            ]
            for (what, key, options) in cases {
                let requested = await Self.error("RequestPermission with \(what)") {
                    try await Self.call(app, "RequestPermission", [.string("g"), options])
                }
                Self.expect(requested, Self.invalidArgument, mentioning: key, "RequestPermission with \(what)")
                // The same options on a Reschedule, a dry run that would ask nothing.
                guard case .dictionary(_, _, var entries) = options else { continue }
                entries.append(DBusDictEntry(.string("dry-run"), .variant(.boolean(true))))
                let rescheduled = await Self.error("Reschedule with \(what)") {
                    try await Self.call(
                        app, "Reschedule",
                        [
                            .string("g"), Self.empty, .array(element: Self.records, []),
                            .dictionary(key: .string, value: .variant, entries),
                        ])
                }
                Self.expect(rescheduled, Self.invalidArgument, mentioning: key, "Reschedule with \(what)")
            }
            #expect(s.server!.notifyCalls.elements.isEmpty, "a question was asked")
        }
    }

    /// An app's group `g` with one entry far away.
    static func makeGroup(_ app: DBusConnection) async throws {
        let entry = Self.record([
            "id": .string("e"), "at": .int64(Self.farFuture), "content": Self.record(["summary": .string("later")]),
        ])
        _ = try await Self.call(
            app, "Reschedule", [.string("g"), Self.empty, .array(element: Self.records, [entry]), Self.empty])
    }

    @Test func anAppTurnsBackOnAGroupItTurnedOffItself() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.A")
            try await Self.makeGroup(app)
            _ = try await Self.call(app, "SetGroupEnabled", [.string("g"), .boolean(false)])
            do {
                _ = try await Self.call(app, "SetGroupEnabled", [.string("g"), .boolean(true)])
            } catch {
                Issue.record("the app could not turn its own group back on: \(error)")
            }
            let groups = try await Self.call(app, "ListGroups")
            guard case .array(_, let listed)? = groups.first else { throw TestFailure("no groups") }
            #expect(listed.map { BusAPITests.fields($0)["enabled"] } == [.boolean(true)])
        }
    }

    @Test func anAppCannotTurnBackOnAGroupTheUserTurnedOff() async throws {
        try await Session.run { s in
            let app = try await s.appConnection("org.example.A")
            try await Self.makeGroup(app)
            let disabled = try await s.chime(["group", "disable", "org.example.A/g"])
            #expect(disabled.status == 0, "\(disabled.stderr)")
            let refused = await Self.error("turning on the user's choice") {
                try await Self.call(app, "SetGroupEnabled", [.string("g"), .boolean(true)])
            }
            Self.expect(refused, Self.permissionDenied, mentioning: "g", "turning on a group the user turned off")
            let groups = try await Self.call(app, "ListGroups")
            guard case .array(_, let listed)? = groups.first else { throw TestFailure("no groups") }
            #expect(listed.map { BusAPITests.fields($0)["enabled"] } == [.boolean(false)])
        }
    }

    @Test func aRescheduleEntryDueAfterItsUntilIsInvalidTime() async throws {
        try await Session.run { s async throws in
            let content = Self.record(["summary": .string("never")])
            let entries = [
                Self.record([
                    "id": .string("rule"), "every": .string("every day at 9:00"), "until": .int64(1_000_000),
                    "content": content,
                ]),
                Self.record([
                    "id": .string("once"), "at": .int64(Self.farFuture), "until": .int64(Self.farFuture - 1_000_000),
                    "content": content,
                ]),
            ]
            for entry in entries {
                for dryRun in [true, false] {
                    let refused = await Self.error("an entry due after its until (dry run \(dryRun))") {
                        try await BusAPITests.call(
                            s, "Reschedule",
                            [
                                .string("g"), Self.empty, .array(element: Self.records, [entry]),
                                Self.record(["dry-run": .boolean(dryRun)]),
                            ])
                    }
                    Self.expect(refused, Self.invalidTime, mentioning: "until", "an entry due after its until")
                }
            }
            #expect(try await s.client().groups().isEmpty)
        }
    }

    // MARK: - Bounded resources

    /// Content of about `bytes` bytes: a body of 16,000 and hints of 16,000 each.
    static func bigContent(_ summary: String, hints: Int) -> DBusValue {
        let text = String(repeating: "b", count: 16_000)
        let hintEntries = (0..<hints).map { DBusDictEntry(.string("x-hint-\($0)"), .variant(.string(text))) }
        return .dictionary(
            key: .string, value: .variant,
            [
                DBusDictEntry(.string("summary"), .variant(.string(summary))),
                DBusDictEntry(.string("body"), .variant(.string(text))),
                DBusDictEntry(.string("hints"), .variant(.dictionary(key: .string, value: .variant, hintEntries))),
            ])
    }

    @Test func anItemOverTheContentLimitIsInvalidArgument() async throws {
        try await Session.run { s in
            // 16,000 + 4 × 16,000 bytes: every string within its own limit, the item over 65,536.
            let refused = await Self.error("an item of 80,000 bytes") {
                try await BusAPITests.call(s, "Schedule", [Self.bigContent("big", hints: 4), Self.empty])
            }
            Self.expect(refused, Self.invalidArgument, mentioning: "bytes", "an item of 80,000 bytes")
            // 64,000 bytes fit.
            _ = try await BusAPITests.call(
                s, "Schedule", [Self.bigContent("fits", hints: 3), Self.record(["at": .int64(Self.farFuture)])])
            #expect(try await FaultTests.pendingSummaries(s) == ["fits"])
        }
    }

    @Test func anAppOverItsBytesLimitGetsLimitsExceeded() async throws {
        try await Session.run(settings: "[limits]\nbytes-per-app = 200000\n") { s in
            let app = try await s.appConnection("org.example.Big")
            var ids: [UInt64] = []
            for n in 0..<3 {
                ids.append(
                    try await Self.schedule(
                        app, Self.bigContent("big \(n)", hints: 3), Self.record(["at": .int64(Self.farFuture)])))
            }
            let refused = await Self.error("a fourth item of 64,000 bytes") {
                try await Self.call(
                    app, "Schedule",
                    [Self.bigContent("one too many", hints: 3), Self.record(["at": .int64(Self.farFuture)])])
            }
            Self.expect(refused, Self.limitsExceeded, mentioning: "bytes", "a fourth item of 64,000 bytes")
            // Cancelling gives the bytes back.
            _ = try await Self.call(app, "Cancel", [.uint64(ids[0])])
            _ = try await Self.schedule(
                app, Self.bigContent("fits again", hints: 3), Self.record(["at": .int64(Self.farFuture)]))
            // Another app has bytes of its own.
            let other = try await s.appConnection("org.example.Other")
            _ = try await Self.schedule(
                other, Self.bigContent("other", hints: 3), Self.record(["at": .int64(Self.farFuture)]))
        }
    }

    @Test func aFloodOfCallsGetsLimitsExceededAndOthersAreServed() async throws {
        try await Session.run(settings: "[limits]\ncalls-per-second = 20\ncall-burst = 40\n") { s in
            let pid = try await Self.chimedPID(s)
            let flooder = try await s.appConnection("org.example.Flood")
            let other = try await s.appConnection("org.example.Other")
            let names = Recorder<String>()
            async let flood: Void = withTaskGroup(of: Void.self) { group in
                for _ in 0..<1000 {
                    group.addTask {
                        do {
                            _ = try await Self.call(flooder, "ListPending", [Self.empty], timeout: .seconds(30))
                            names.append("ok")
                        } catch {
                            names.append((error as? DBusError)?.name ?? "\(error)")
                        }
                    }
                }
            }
            try await names.wait("the flood met the limit") { $0.contains { $0 != "ok" } }
            let (_, otherTime) = try await Self.timed {
                try await Self.call(other, "ListPending", [Self.empty], timeout: .seconds(10))
            }
            #expect(otherTime < .seconds(1), "another app waited \(otherTime) during the flood")
            await flood
            let counts = Dictionary(names.elements.map { ($0, 1) }, uniquingKeysWith: +)
            print("HostileAppTests: flood of 1000 calls: \(counts)")
            #expect(counts[Self.limitsExceeded, default: 0] > 0, "\(counts)")
            #expect(
                Set(counts.keys).isSubset(of: ["ok", Self.limitsExceeded, Self.busLimitsExceeded]), "\(counts)")
            try await Self.expectSameChimedServing(s, pid: pid)
        }
    }

    /// An app that calls in a loop however often it is refused gets each refusal when its next call would
    /// be allowed: over two seconds at two calls a second, a handful of refusals, not the hundreds chimed
    /// answered at once before (each costing it and the bus a round trip).
    @Test func refusedCallsInALoopAreAnsweredAtTheAppsRate() async throws {
        try await Session.run(settings: "[limits]\ncalls-per-second = 2\ncall-burst = 2\n") { s in
            let pid = try await Self.chimedPID(s)
            let looper = try await s.appConnection("org.example.Loop", allowed: false)
            var answered = 0
            var refused = 0
            let end = ContinuousClock.now + .seconds(2)
            while ContinuousClock.now < end {
                do {
                    _ = try await Self.call(looper, "Status", timeout: .seconds(10))
                    answered += 1
                } catch let error as DBusError where error.name == Self.limitsExceeded {
                    refused += 1
                }
            }
            #expect(refused > 0, "the loop was never refused")
            #expect(refused <= 10, "\(refused) refusals in 2 s at 2 calls a second")
            #expect(answered <= 8, "\(answered) calls answered in 2 s at 2 calls a second")
            // The user's tool is served, by the same chimed.
            #expect(try await s.chime(["status"]).status == 0)
            #expect(!s.chimed!.hasExited)
            #expect(try await s.observer.unixProcessID(of: "io.chime.Chime1") == pid)
        }
    }

    /// The size of every file in `directory`.
    static func files(in directory: String) throws -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            sizes[name] = (attributes[.size] as? Int) ?? 0
        }
        return sizes
    }

    @Test func aThousandCancelledBigItemsLeaveASmallCheckpointedStateFolder() async throws {
        try await Session.run(settings: Self.generous) { s in
            let app = try await s.appConnection("org.example.Big")
            let start = ContinuousClock.now
            for n in 0..<1000 {
                let id = try await Self.schedule(
                    app, Self.bigContent("big \(n)", hints: 3), Self.record(["at": .int64(Self.farFuture)]))
                _ = try await Self.call(app, "Cancel", [.uint64(id)])
            }
            _ = try await Self.schedule(
                app, Self.record(["summary": .string("kept")]), Self.record(["at": .int64(Self.farFuture)]))
            print("HostileAppTests: 1000 items of 64 kB scheduled and cancelled in \(ContinuousClock.now - start)")
            let status = await s.chimed!.stop()
            #expect(status == 0, "chimed's clean stop: \(status)")
            let sizes = try Self.files(in: s.stateDirectory)
            let total = sizes.values.reduce(0, +)
            print("HostileAppTests: state folder after a clean stop: \(sizes)")
            #expect(total < 20_000_000, "the state folder holds \(total) bytes: \(sizes)")
            #expect((sizes["chime.sqlite-wal"] ?? 0) == 0, "the WAL was not checkpointed: \(sizes)")

            // The database file alone is a full backup: chimed on a copy of it knows the kept item.
            let backup = s.bus.directory.appendingPathComponent("backup").path
            try FileManager.default.createDirectory(atPath: backup, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: s.stateDirectory + "/chime.sqlite", toPath: backup + "/chime.sqlite")
            s.stateDirectory = backup
            s.chimed = try await s.startChimed()
            // The app's connection stays on the bus while chimed restarts.
            let pending = try await Self.call(app, "ListPending", [Self.empty])
            guard case .array(_, let items)? = pending.first else { throw TestFailure("no list") }
            #expect(items.map { BusAPITests.fields($0)["summary"] } == [.string("kept")])
        }
    }

    // MARK: - Private, self-contained state

    @Test func theStateFolderIsPrivateUnderUmask022() async throws {
        try await Session.run(startChimed: false) { s in
            let previous = umask(0o022)
            do {
                s.chimed = try await s.startChimed()
            } catch {
                umask(previous)
                throw error
            }
            umask(previous)
            _ = try await FaultTests.schedule(s, "private", at: Date(timeIntervalSince1970: 4_102_444_800))
            func mode(_ path: String) throws -> Int {
                ((try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int ?? -1) & 0o777
            }
            let folder = try mode(s.stateDirectory)
            #expect(folder == 0o700, "the state folder is \(String(folder, radix: 8))")
            let names = try FileManager.default.contentsOfDirectory(atPath: s.stateDirectory)
            #expect(names.contains("chime.sqlite"))
            for name in names {
                let path = s.stateDirectory + "/" + name
                let file = try mode(path)
                #expect(file == 0o600, "\(name) is \(String(file, radix: 8))")
            }
        }
    }

    @Test func aCorruptDatabaseIsMovedAsideKeptAndChimedServes() async throws {
        try await Session.run(startChimed: false) { s in
            try FileManager.default.createDirectory(atPath: s.stateDirectory, withIntermediateDirectories: true)
            var garbage = Data()
            var random = SplitMix64(seed: 14)
            for _ in 0..<8192 { withUnsafeBytes(of: random.next()) { garbage.append(contentsOf: $0) } }
            let database = s.stateDirectory + "/chime.sqlite"
            try garbage.write(to: URL(fileURLWithPath: database))
            s.chimed = try await s.startChimed()

            let names = try FileManager.default.contentsOfDirectory(atPath: s.stateDirectory)
            let aside = names.filter {
                $0.hasPrefix("chime.sqlite.corrupt-") && !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm")
            }
            #expect(aside.count == 1, "\(names)")
            if let kept = aside.first {
                #expect(
                    FileManager.default.contents(atPath: s.stateDirectory + "/" + kept) == garbage,
                    "the broken file was not kept as it was")
            }
            // chimed serves on an empty state, and says where the file went.
            _ = try await FaultTests.schedule(s, "after the corruption")
            try await s.server!.notifyCalls.wait("the new item was shown") {
                $0.contains { $0.summary == "after the corruption" }
            }
            #expect(
                s.server!.notifyCalls.elements.contains { "\($0.summary ?? "") \($0.body ?? "")".contains("corrupt") },
                "no notification said where the broken database went")
            _ = try await BusAPITests.call(s, "ListGroups")
        }
    }

    // MARK: - Apps see only their own

    @Test func anAppDoesNotReceiveAnotherAppsDeliveredSignal() async throws {
        try await Session.run { s in
            let a = try await s.appConnection("org.example.A")
            let b = try await s.appConnection("org.example.B")
            let aSignals = try await Self.listen(a)
            let bSignals = try await Self.listen(b)
            let aItem = try await Self.schedule(a, Self.record(["summary": .string("A's")]))
            try await aSignals.delivered.wait("A heard of its delivery") { $0.contains { $0.item == aItem } }
            // B's own delivery comes after A's: had A's reached B, it would be there first.
            let bItem = try await Self.schedule(b, Self.record(["summary": .string("B's")]))
            try await bSignals.delivered.wait("B heard of its delivery") { $0.contains { $0.item == bItem } }
            #expect(bSignals.delivered.elements.map(\.item) == [bItem], "B received A's Delivered")
            #expect(!aSignals.delivered.elements.contains { $0.item == bItem }, "A received B's Delivered")
        }
    }

    @Test func replacesIDOfAnotherAppsPopupIsRefusedAndItsActionsStayWithTheOwner() async throws {
        try await Session.run { s in
            let a = try await s.appConnection("org.example.A")
            let b = try await s.appConnection("org.example.B")
            let aSignals = try await Self.listen(a)
            let bSignals = try await Self.listen(b)
            let item = try await Self.schedule(
                a,
                Self.record([
                    "summary": .string("A's popup"),
                    "actions": .array(
                        element: .structure([.string, .string]), [.structure([.string("open"), .string("Open")])]),
                ]))
            try await aSignals.delivered.wait("A's popup was shown") { $0.contains { $0.item == item } }
            let popup = try #require(aSignals.delivered.elements.first { $0.item == item }?.notification)
            let refused = await Self.error("B replacing A's popup") {
                try await Self.call(
                    b, "Schedule",
                    [
                        Self.record([
                            "summary": .string("B's takeover"),
                            "actions": .array(
                                element: .structure([.string, .string]),
                                [.structure([.string("open"), .string("Open")])]),
                        ]),
                        Self.record(["replaces-id": .uint32(popup)]),
                    ])
            }
            Self.expect(refused, Self.permissionDenied, mentioning: "replaces-id", "B replacing A's popup")
            #expect(!s.server!.notifyCalls.elements.contains { $0.summary == "B's takeover" })

            try await s.choose("open", on: popup)
            let both = Recorder<String>()
            let aWait = Task {
                try? await aSignals.actions.wait("A got its action") { !$0.isEmpty }
                both.append("A")
            }
            let bWait = Task {
                try? await bSignals.actions.wait("B got an action") { !$0.isEmpty }
                both.append("B")
            }
            try await both.wait(forCount: 1)
            aWait.cancel()
            bWait.cancel()
            #expect(aSignals.actions.elements.map(\.item) == [item], "A's action did not reach A")
            #expect(bSignals.actions.elements.isEmpty, "B received an action chosen on A's popup")
        }
    }

    @Test func replacesIDOfAPermissionQuestionIsRefused() async throws {
        try await Session.run { s in
            let b = try await s.appConnection("org.example.B")
            let bSignals = try await Self.listen(b)
            let asker = try await s.appConnection("org.example.New", allowed: false)
            let waiting = Task { () async throws -> [DBusValue] in
                try await Self.call(
                    asker, "Schedule", [Self.record(["summary": .string("hello")]), Self.empty], timeout: .seconds(90))
            }
            let calls = s.server!.notifyCalls
            let summary = "org.example.New wants to schedule notifications"
            try await calls.wait("the question was shown") { $0.contains { $0.summary == summary } }
            try await s.chimed!.waitForStderr(containing: "asking \"org.example.New wants")
            let question = UInt32(try #require(calls.elements.firstIndex { $0.summary == summary }) + 1)

            let refused = await Self.error("B replacing the question's popup") {
                try await Self.call(
                    b, "Schedule",
                    [
                        Self.record([
                            "summary": .string("Click Allow for a prize"),
                            "actions": .array(
                                element: .structure([.string, .string]),
                                [.structure([.string("allow"), .string("Win")])]),
                        ]),
                        Self.record(["replaces-id": .uint32(question)]),
                    ], timeout: .seconds(10))
            }
            Self.expect(refused, Self.permissionDenied, mentioning: "replaces-id", "B replacing the question's popup")
            #expect(!calls.elements.contains { $0.summary == "Click Allow for a prize" })

            try await s.choose("deny", on: question)
            let answer = await waiting.result
            if case .success = answer { Issue.record("the app scheduled after Don't Allow") }
            #expect(bSignals.actions.elements.isEmpty, "B received the answer to another app's question")
        }
    }
}
