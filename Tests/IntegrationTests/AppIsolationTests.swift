import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What one app can do to another through chimed (issue 30, docs/security.md): nothing. Each test is an
/// attack that worked before: bytes stored without being counted, one app's flood delaying or folding
/// another's notifications, a look-alike replacing another app's popup or chimed's own question, errors
/// that told whose an item is, badges on another app's icon, and a made-up Flatpak sandbox.
@Suite(.serialized) struct AppIsolationTests {
    static let permissionDenied = HostileAppTests.permissionDenied
    static let limitsExceeded = HostileAppTests.limitsExceeded
    static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    static let farFuture = HostileAppTests.farFuture

    static func record(_ pairs: KeyValuePairs<String, DBusValue>) -> DBusValue { BusAPITests.record(pairs) }
    static let empty = BusAPITests.empty

    // MARK: - Identity

    /// `gdbus call … Schedule` of a one-off far in the future, as a shell command.
    static func gdbusSchedule(_ summary: String) -> String {
        "/usr/bin/gdbus call --session --timeout 30 --dest io.chime.Chime1 --object-path /io/chime/Chime1 "
            + "--method io.chime.Chime1.Schedule \"{'summary': <'\(summary)'>}\" \"{'at': <int64 \(farFuture)>}\""
    }

    /// A `.flatpak-info` as Flatpak writes one (the part chimed reads).
    static func flatpakInfo(name: String, instance: String) -> String {
        """
        [Application]
        name=\(name)
        runtime=runtime/org.freedesktop.Platform/x86_64/24.08

        [Instance]
        instance-id=\(instance)
        app-path=/var/lib/flatpak/app/\(name)/current/active/files

        [Context]
        sockets=wayland;
        """
    }

    /// Runs `script` with /bin/sh on the session's bus; its status, output and errors.
    static func shell(_ s: Session, _ script: String) async throws -> ManagedProcess.Outcome {
        try await ManagedProcess.run(
            "/bin/sh", ["-c", script], environment: s.bus.environment, directory: s.bus.directory,
            timeout: .seconds(60), check: false)
    }

    /// A process in a real sandbox, started as Flatpak starts one (bubblewrap with a private root, the
    /// `.flatpak-info` bound into it, its first process recorded in `bwrapinfo.json` in the user's
    /// runtime folder) is the app its `.flatpak-info` names.
    @Test func aProcessInABubblewrapSandboxFlatpakRecordedIsItsApp() async throws {
        try await Session.run(startChimed: false) { s in
            let runtime = s.bus.directory.appendingPathComponent("runtime").path
            s.chimedEnvironment["XDG_RUNTIME_DIR"] = runtime
            s.chimed = try await s.startChimed()
            #expect(try await s.chime(["app", "allow", "org.example.Sandboxed"]).status == 0)
            let info = s.bus.directory.appendingPathComponent("flatpak-info").path
            try Self.flatpakInfo(name: "org.example.Sandboxed", instance: "4242")
                .write(toFile: info, atomically: true, encoding: .utf8)
            let sandboxed = try await Self.shell(
                s,
                """
                set -e
                mkdir -p '\(runtime)/.flatpak/4242'
                exec bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
                    --symlink usr/bin /bin --ro-bind /etc /etc --bind /tmp /tmp --proc /proc --dev /dev \
                    --unshare-pid --ro-bind-data 4 /.flatpak-info --info-fd 3 \
                    -- \(Self.gdbusSchedule("from the sandbox")) \
                    3>'\(runtime)/.flatpak/4242/bwrapinfo.json' 4<'\(info)'
                """)
            #expect(sandboxed.status == 0, "\(sandboxed.stderr)")
            let apps = try await s.chimeJSON(["apps"])
            #expect(
                apps.contains { $0["app"] as? String == "org.example.Sandboxed" && $0["items"] as? Int == 1 }, "\(apps)"
            )
        }
    }

    /// A `.flatpak-info` in a root the caller made (unshare and chroot, as a container sharing the
    /// session bus could) is not believed: with another app's name, with an empty name, or with an
    /// instance recorded for a process the caller does not descend from, the call is refused, and the
    /// caller is neither that app nor the user.
    @Test func aFlatpakInfoInARootTheCallerMadeIsRefusedNeverTheUserOrTheAppItNames() async throws {
        try await Session.run(startChimed: false) { s in
            let runtime = s.bus.directory.appendingPathComponent("runtime").path
            s.chimedEnvironment["XDG_RUNTIME_DIR"] = runtime
            s.chimed = try await s.startChimed()
            let victim = try await s.app("org.example.Victim")
            let victimItem = try await victim.schedule(
                ChimeCore.NotificationContent(summary: "the victim's"), at: Date(timeIntervalSince1970: 4_102_444_800))
            let chimedPID = s.chimed!.pid
            let cases: [(what: String, name: String, recordedPID: Int32?)] = [
                ("another app's name", "org.example.Victim", nil),
                ("an empty name", "", nil),
                ("an instance whose process is not its own", "org.example.Victim", chimedPID),
            ]
            for (index, fake) in cases.enumerated() {
                let root = s.bus.directory.appendingPathComponent("fakeroot-\(index)").path
                let instance = "\(5000 + index)"
                var record = ""
                if let pid = fake.recordedPID {
                    record =
                        "mkdir -p '\(runtime)/.flatpak/\(instance)' && "
                        + "echo '{\"child-pid\": \(pid)}' > '\(runtime)/.flatpak/\(instance)/bwrapinfo.json'"
                }
                try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
                try Self.flatpakInfo(name: fake.name, instance: instance)
                    .write(toFile: root + "/.flatpak-info", atomically: true, encoding: .utf8)
                let outcome = try await Self.shell(
                    s,
                    """
                    set -e
                    \(record)
                    cd '\(root)'
                    mkdir -p usr etc tmp proc dev
                    ln -sfn usr/lib lib; ln -sfn usr/lib64 lib64; ln -sfn usr/bin bin
                    exec unshare --map-root-user --mount --fork sh -c "mount --rbind /usr usr && mount --rbind /etc etc && \
                        mount --rbind /tmp tmp && exec chroot . \(Self.gdbusSchedule("from a fake root")
                        .replacingOccurrences(of: "\"", with: "\\\""))"
                    """)
                #expect(outcome.status != 0, "\(fake.what): the call was taken")
                #expect(outcome.stderr.contains(Self.accessDenied), "\(fake.what): \(outcome.stderr)")
            }
            // Nothing was scheduled, neither as the user nor as the victim, whose item is still its own.
            let pending = try await s.chimeJSON(["pending"])
            #expect(!pending.contains { $0["summary"] as? String == "from a fake root" }, "\(pending)")
            #expect(try await victim.pending().map(\.id) == [victimItem])
        }
    }

    // MARK: - Facts of other apps

    /// The error of a call, or nil when it succeeded.
    static func outcome(_ body: () async throws -> [DBusValue]) async -> (name: String, message: String)? {
        do {
            _ = try await body()
            return nil
        } catch let error as DBusError {
            return (error.name, error.message)
        } catch {
            return ("not a D-Bus error", "\(error)")
        }
    }

    /// Another app's item or popup reads exactly as one that does not exist: Cancel and Snooze give the
    /// same error name and message (the id aside), History's `item` the same empty list, `replaces-id`
    /// the same refusal, CloseDelivered the same silence; so no app can learn who else uses chimed.
    @Test func anotherAppsItemReadsExactlyAsAMissingOne() async throws {
        try await Session.run { s in
            let victim = try await s.appConnection("org.signal.Signal")
            let probe = try await s.appConnection("org.example.Probe")
            let pending = try await HostileAppTests.schedule(
                victim, Self.record(["summary": .string("secret")]), Self.record(["at": .int64(Self.farFuture)]))
            let shownItem = try await HostileAppTests.schedule(victim, Self.record(["summary": .string("shown")]))
            try await s.awaitDelivered(notification: 1)
            let missing: UInt64 = 999_999
            let missingPopup: UInt32 = 999

            /// The outcome of `member` with `arguments(id)`, the id in its message written as ID.
            func compare(_ what: String, _ member: String, _ theirs: [DBusValue], _ none: [DBusValue], ids: [String])
                async
            {
                let a = await Self.outcome { try await HostileAppTests.call(probe, member, theirs) }
                let b = await Self.outcome { try await HostileAppTests.call(probe, member, none) }
                // Each id, as a whole number in the message, written as ID.
                func masked(_ o: (name: String, message: String)?) -> String? {
                    o.map { o in
                        ids.reduce("\(o.name): \(o.message)") {
                            $0.replacingOccurrences(of: "\\b\($1)\\b", with: "ID", options: .regularExpression)
                        }
                    }
                }
                #expect(
                    masked(a) == masked(b),
                    "\(what): another app's reads \(String(describing: a)), a missing one \(String(describing: b))")
                #expect(!(a?.message.contains("org.signal.Signal") ?? false), "\(what) names the owner: \(a!.message)")
            }
            await compare(
                "Cancel", "Cancel", [.uint64(pending)], [.uint64(missing)], ids: ["\(pending)", "\(missing)"])
            await compare(
                "Snooze of a pending item", "Snooze", [.uint64(pending), .uint32(60)], [.uint64(missing), .uint32(60)],
                ids: ["\(pending)", "\(missing)"])
            await compare(
                "Snooze of a shown item", "Snooze", [.uint64(shownItem), .uint32(60)],
                [.uint64(missing), .uint32(60)], ids: ["\(shownItem)", "\(missing)"])
            await compare(
                "History item", "History", [Self.record(["item": .uint64(pending)])],
                [Self.record(["item": .uint64(missing)])], ids: [])
            let theirHistory = try await HostileAppTests.call(
                probe, "History", [Self.record(["item": .uint64(pending)])])
            #expect(theirHistory == [.array(element: BusAPITests.recordType, [])])
            await compare(
                "replaces-id", "Schedule",
                [Self.record(["summary": .string("look-alike")]), Self.record(["replaces-id": .uint32(1)])],
                [Self.record(["summary": .string("look-alike")]), Self.record(["replaces-id": .uint32(missingPopup)])],
                ids: ["\(missingPopup)", "1"])
            await compare(
                "CloseDelivered", "CloseDelivered",
                [Self.record(["notifications": .array(element: .uint32, [.uint32(1)])])],
                [Self.record(["notifications": .array(element: .uint32, [.uint32(missingPopup)])])], ids: [])
            // Nothing of the victim's changed.
            #expect(try await HostileAppTests.call(victim, "ListPending", [Self.empty]).description.contains("secret"))
            #expect(s.server!.closeCalls.elements.isEmpty)
        }
    }

    // MARK: - Popups of other apps

    /// Content with an app name, a summary and (optionally) a stack tag.
    static func content(
        _ summary: String, appName: String? = nil, tag: String? = nil, body: String = "",
        actions: [NotificationAction] = []
    ) -> ChimeCore.NotificationContent {
        var content = ChimeCore.NotificationContent(summary: summary, body: body)
        if let appName { content.appName = appName }
        if let tag { content.hints["x-dunst-stack-tag"] = .string(tag) }
        content.actions = actions
        return content
    }

    /// On dunst, another app's popup with the same `app-name` and `x-dunst-stack-tag` (or its other
    /// spellings) is a popup of its own: the first app's stays, and hears of no closing. The first app's
    /// own tag still replaces its own popup, as with notify-send.
    @Test func aLookAlikeAppNameAndStackTagNeverReplaceAnotherAppsPopup() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            let dunst = try await DunstServer.start(on: s.bus, observer: s.observer)
            s.dunst = dunst
            s.chimed = try await s.startChimed()
            let victim = try await s.app("org.signal.Signal")
            var closed = try await victim.closedEvents().makeAsyncIterator()
            let first = try await victim.schedule(Self.content("Alice: lunch?", appName: "Signal", tag: "chat"))
            try await dunst.waitForDisplayed(atLeast: 1)
            // dunst reads all three as the stack tag: one attacker each, so none replaces another's.
            for (index, hint) in ["x-dunst-stack-tag", "x-canonical-private-synchronous", "synchronous"].enumerated() {
                let attacker = try await s.app("org.example.Attacker\(index)")
                var lookAlike = Self.content("Alice: never mind", appName: "Signal")
                lookAlike.hints[hint] = .string("chat")
                _ = try await attacker.schedule(lookAlike)
                try await dunst.waitForDisplayed(atLeast: index + 2, timeout: .seconds(10))
            }
            #expect(try await dunst.displayedCount() == 4)
            // The victim's own tag replaces its own popup: the first closes (as dunst closes a replaced one).
            let second = try await victim.schedule(Self.content("Alice: 12:30?", appName: "Signal", tag: "chat"))
            let event = try #require(await closed.next())
            #expect(event.itemID == first, "the victim's first popup closed for another reason: \(event)")
            #expect(try await dunst.displayedCount() == 4)
            #expect(second != first)
        }
    }

    /// chimed's own question cannot be imitated: `app-name` "chime" is refused to apps, and a popup with
    /// the question's very text from another app is that app's popup (dunst's stacking of duplicates
    /// leaves the question alone), so the question stays open and its answer reaches chimed.
    @Test func aLookAlikeOfChimedsQuestionCanNeitherReplaceNorCloseIt() async throws {
        try await Session.run(withServer: false, startChimed: false) { s in
            // dunst's default: identical popups are stacked into one.
            let dunst = try await DunstServer.start(
                on: s.bus, observer: s.observer, extraConfig: "[global]\n    stack_duplicates = true\n")
            s.dunst = dunst
            s.chimed = try await s.startChimed()
            let asker = try await s.app("org.example.Asker", allowed: false)
            async let asked = asker.schedule(ChimeCore.NotificationContent(summary: "after the question"))
            try await dunst.waitForDisplayed(atLeast: 1)
            let attacker = try await s.appConnection("org.example.Attacker")
            let question = "org.example.Asker wants to schedule notifications"
            let body = "Allow org.example.Asker to show you notifications at the times it chooses?"
            for name in ["chime", "Chime", " chime "] {
                let refused = await HostileAppTests.error("app-name \(name)") {
                    try await HostileAppTests.call(
                        attacker, "Schedule",
                        [
                            Self.record([
                                "app-name": .string(name), "summary": .string(question), "body": .string(body),
                            ]), Self.empty,
                        ])
                }
                HostileAppTests.expect(refused, HostileAppTests.invalidArgument, mentioning: "app-name", name)
            }
            // The same text under the attacker's own name: a popup beside the question, not in its place.
            _ = try await HostileAppTests.schedule(
                attacker, Self.record(["summary": .string(question), "body": .string(body)]))
            try await dunst.waitForDisplayed(atLeast: 2, timeout: .seconds(10))
            // The question (the one popup with an Allow button) is still open, and its answer reaches chimed.
            try await dunst.invokeAction(key: "allow")
            let id = try await asked
            #expect(id > 0)
            let apps = try await s.chimeJSON(["apps"])
            #expect(apps.first { $0["app"] as? String == "org.example.Asker" }?["consent"] as? String == "allowed")
        }
    }

    /// A badge is set on the caller's own launcher icon only: a desktop entry of another app is refused
    /// (its count can be neither set nor cleared), one of its own (its id, or its id and a dot first) is
    /// used, and without one the badge goes to the app's own id.
    @Test func aBadgeIsSetOnlyOnTheAppsOwnIcon() async throws {
        try await Session.run { s in
            let (updates, subscription) = try await LauncherEntryTests.listen(s)
            defer { subscription.cancel() }
            let app = try await s.appConnection("org.example.Mail")
            for foreign in ["org.mozilla.Thunderbird", "org.mozilla.Thunderbird.desktop", "org.example.MailX"] {
                let refused = await HostileAppTests.error("desktop-entry \(foreign)") {
                    try await HostileAppTests.call(
                        app, "Schedule",
                        [
                            Self.record([
                                "summary": .string("0 unread"), "badge": .uint32(0), "desktop-entry": .string(foreign),
                            ]), Self.empty,
                        ])
                }
                HostileAppTests.expect(refused, Self.permissionDenied, mentioning: "desktop-entry", foreign)
            }
            _ = try await HostileAppTests.schedule(
                app,
                Self.record([
                    "summary": .string("2 unread"), "badge": .uint32(2),
                    "desktop-entry": .string("org.example.Mail.Client.desktop"),
                ]))
            _ = try await HostileAppTests.schedule(
                app, Self.record(["summary": .string("1 unread"), "badge": .uint32(1)]))
            try await updates.wait("two badges") { $0.count == 2 }
            #expect(
                updates.elements.map(\.appURI) == [
                    "application://org.example.Mail.Client.desktop", "application://org.example.Mail.desktop",
                ])
            #expect(!updates.elements.contains { $0.appURI.contains("Thunderbird") })
        }
    }

    // MARK: - Bytes

    /// A quota of `bytes`, and no limit on calls or deliveries.
    static func quota(_ bytes: Int) -> String {
        """
        [limits]
        calls-per-second = 100000
        call-burst = 100000
        bytes-per-app = \(bytes)

        [flood]
        rate = 1000
        burst = 10000
        """
    }

    /// An RRULE of about 14 KB, most of it EXDATE values, that fires every day of 2031.
    static let longRule: String = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let start = calendar.date(from: DateComponents(year: 2030, month: 1, day: 2))!
        let formatter = DateFormatter()
        formatter.timeZone = calendar.timeZone
        formatter.dateFormat = "yyyyMMdd'T'090000"
        let days = (0..<880).map { formatter.string(from: start.addingTimeInterval(Double($0) * 86_400)) }
        return "DTSTART:20300101T090000\nRRULE:FREQ=DAILY\nEXDATE:" + days.joined(separator: ",")
    }()

    /// What an app stores counts in its byte quota whatever holds it: items whose content is one byte
    /// but whose rule is 14 KB, a timeline whose entry ids are 200 bytes, and categories on top of a quota
    /// that items fill are refused with LimitsExceeded at 1 MB, where before only the content counted.
    @Test func rulesIdsAndCategoriesCountInAnAppsBytes() async throws {
        try await Session.run(settings: Self.quota(1_000_000)) { s in
            let app = try await s.appConnection("org.example.Hoarder")
            var refusal: DBusError?
            var stored = 0
            for _ in 0..<200 {
                do {
                    _ = try await HostileAppTests.schedule(
                        app, Self.record(["summary": .string("x")]), Self.record(["rrule": .string(Self.longRule)]))
                    stored += 1
                } catch let error as DBusError {
                    refusal = error
                    break
                }
            }
            HostileAppTests.expect(refusal, Self.limitsExceeded, mentioning: "bytes", "items with 14 KB rules")
            #expect((1..<72).contains(stored), "\(stored) items of a 14 KB rule fit in 1 MB")

            // With the quota all but full of those items, 100 categories of ten 190-byte titles do not fit.
            let title = String(repeating: "t", count: 190)
            let categories = (0..<100).map { c in
                Self.record([
                    "id": .string("c\(c)"),
                    "actions": .array(
                        element: BusAPITests.recordType,
                        (0..<10).map { a in Self.record(["id": .string("a\(a)"), "title": .string(title)]) }),
                ])
            }
            let registered = await HostileAppTests.error("200 KB of categories on a full quota") {
                try await HostileAppTests.call(
                    app, "RegisterCategories", [.array(element: BusAPITests.recordType, categories)])
            }
            HostileAppTests.expect(registered, Self.limitsExceeded, mentioning: "bytes", "categories on a full quota")
            _ = try await HostileAppTests.call(app, "CancelAll", [Self.empty])

            // 6,000 entries whose ids take 200 bytes each, their content one byte.
            let entries = (0..<6000).map { n in
                Self.record([
                    "id": .string(String(format: "%06d", n) + String(repeating: "e", count: 194)),
                    "content": Self.record(["summary": .string("x")]), "at": .int64(Self.farFuture),
                ])
            }
            let timeline = await HostileAppTests.error("a timeline of 6,000 entries with 200-byte ids") {
                try await HostileAppTests.call(
                    app, "Reschedule",
                    [.string("g"), Self.empty, .array(element: BusAPITests.recordType, entries), Self.empty])
            }
            HostileAppTests.expect(timeline, Self.limitsExceeded, mentioning: "bytes", "entries with 200-byte ids")
            // Within the quota, both are taken.
            _ = try await HostileAppTests.call(
                app, "Reschedule",
                [
                    .string("g"), Self.empty, .array(element: BusAPITests.recordType, Array(entries.prefix(100))),
                    Self.empty,
                ])
            _ = try await HostileAppTests.call(
                app, "RegisterCategories", [.array(element: BusAPITests.recordType, categories)])
        }
    }

    /// Actions kept for an app while it is away count in its bytes: once the user's choices on its
    /// popups (each with 15 KB of user info) fill its quota, it can schedule no more until it takes them.
    @Test func actionsKeptForAnAppCountInItsBytes() async throws {
        try await Session.run(settings: Self.quota(200_000)) { s in
            let userInfo = String(repeating: "u", count: 15_000)
            // Shown while the app is connected; then it goes away and the user answers its popups.
            let app = try await s.appConnection("org.example.Away")
            for n in 0..<12 {
                _ = try await HostileAppTests.schedule(
                    app,
                    Self.record([
                        "summary": .string("message \(n)"),
                        "actions": .array(
                            element: .structure([.string, .string]), [.structure([.string("reply"), .string("Reply")])]),
                        "user-info": Self.record(["text": .string(userInfo)]),
                    ]))
            }
            try await s.awaitDelivered(notification: 12)
            app.close()
            try await InteractionTests.awaitListing(s, ["apps"], "the app gone") { apps in
                apps.contains { $0["app"] as? String == "org.example.Away" && $0["connected"] as? Bool == false }
            }
            for id in 1...12 { try await s.choose("reply", on: UInt32(id)) }
            // Each kept action is stored before its record in the history.
            try await InteractionTests.awaitListing(s, ["history", "--limit", "100"], "12 actions kept") { entries in
                entries.filter { ($0["detail"] as? String)?.contains("kept for org.example.Away") == true }.count == 12
            }
            // 12 × 15 KB kept: a 30 KB item no longer fits in 200,000 bytes.
            let back = try await s.appConnection("org.example.Away")
            let big = Self.record([
                "summary": .string("big"), "body": .string(String(repeating: "b", count: 16_000)),
                "user-info": Self.record(["a": .string(String(repeating: "b", count: 15_000))]),
            ])
            let refused = await HostileAppTests.error("an item of 30 KB with 180 KB of actions kept") {
                try await HostileAppTests.call(back, "Schedule", [big, Self.record(["at": .int64(Self.farFuture)])])
            }
            HostileAppTests.expect(refused, Self.limitsExceeded, mentioning: "bytes", "with 180 KB of actions kept")
            let taken = try await HostileAppTests.call(back, "TakeActions")
            guard case .array(_, let actions)? = taken.first else { throw TestFailure("TakeActions gave no list") }
            #expect(actions.count == 12)
            _ = try await HostileAppTests.call(back, "Schedule", [big, Self.record(["at": .int64(Self.farFuture)])])
        }
    }

    // MARK: - Flood control

    /// No limit on calls; flood control as chime.toml's default (5 a second, bursts of 10).
    static let defaultFlood = """
        [limits]
        calls-per-second = 100000
        call-burst = 100000
        """

    /// Schedules `count` one-offs of `connection` due at `at`, `urgency` each.
    static func scheduleMany(
        _ connection: DBusConnection, _ count: Int, _ prefix: String, at: Date, urgency: UInt8 = 1
    ) async throws {
        let due = Int64(at.timeIntervalSince1970 * 1_000_000)
        for n in 0..<count {
            _ = try await HostileAppTests.schedule(
                connection, Self.record(["summary": .string("\(prefix) \(n)"), "urgency": .byte(urgency)]),
                Self.record(["at": .int64(due)]))
        }
    }

    /// 200 critical one-offs of one app, due at once, do not keep another app's notification waiting
    /// behind them: it goes on the next token, among the first dozen notifications, not after all 200
    /// (before: 37.7 s late).
    @Test func criticalOneOffsOfOneAppDoNotStarveAnotherApp() async throws {
        try await Session.run(settings: Self.defaultFlood) { s in
            let loud = try await s.appConnection("org.example.Loud")
            let quiet = try await s.appConnection("org.example.Quiet")
            let at = Date().addingTimeInterval(6)
            try await Self.scheduleMany(loud, 200, "critical", at: at, urgency: 2)
            _ = try await HostileAppTests.schedule(
                quiet, Self.record(["summary": .string("the quiet app's")]),
                Self.record(["at": .int64(Int64((at.timeIntervalSince1970 + 0.1) * 1_000_000))]))
            let calls = s.server!.notifyCalls
            try await calls.wait("the quiet app's notification, or 40 of the loud one's", timeout: .seconds(60)) {
                $0.count >= 40 || $0.contains { $0.summary == "the quiet app's" }
            }
            let index = calls.elements.firstIndex { $0.summary == "the quiet app's" }
            #expect(index != nil, "the quiet app's notification waited behind \(calls.elements.count) critical ones")
            #expect((index ?? .max) <= 12, "the quiet app's notification came \(index ?? -1)th")
        }
    }

    /// One app's burst costs its own share: another app's notification due at the same instant is
    /// shown on its own with its buttons, never folded into the first app's digest, which holds only that
    /// app's items and whose owner hears Delivered for each of them.
    @Test func oneAppsBurstNeverFoldsAnotherAppsNotificationIntoItsDigest() async throws {
        try await Session.run(settings: Self.defaultFlood) { s in
            let loud = try await s.appConnection("org.example.Loud")
            let quiet = try await s.appConnection("org.example.Quiet")
            let loudSignals = try await HostileAppTests.listen(loud)
            let quietSignals = try await HostileAppTests.listen(quiet)
            let at = Date().addingTimeInterval(6)
            let due = Int64(at.timeIntervalSince1970 * 1_000_000)
            try await Self.scheduleMany(loud, 190, "burst", at: at)
            let quietItem = try await HostileAppTests.schedule(
                quiet,
                Self.record([
                    "summary": .string("the quiet app's"),
                    "actions": .array(
                        element: .structure([.string, .string]), [.structure([.string("open"), .string("Open")])]),
                ]), Self.record(["at": .int64(due)]))
            let calls = s.server!.notifyCalls
            try await calls.wait("a flood digest", timeout: .seconds(30)) {
                $0.contains { $0.summary?.hasSuffix("more notifications") == true }
            }
            let digest = try #require(calls.elements.first { $0.summary?.hasSuffix("more notifications") == true })
            #expect(digest.appName == "org.example.Loud")
            #expect(!(digest.body ?? "").contains("the quiet app's"))
            try await calls.wait("the quiet app's own popup") { $0.contains { $0.summary == "the quiet app's" } }
            let own = try #require(calls.elements.first { $0.summary == "the quiet app's" })
            #expect(own.actions == ["open", "Open"])
            try await quietSignals.delivered.wait("the quiet app heard of its delivery") {
                $0.contains { $0.item == quietItem }
            }
            // Each of the loud app's 190 items is told, on its own or by the digest's id.
            try await loudSignals.delivered.wait("the loud app heard of all 190") { $0.count >= 190 }
            let digestID = try #require(loudSignals.delivered.elements.last?.notification)
            #expect(loudSignals.delivered.elements.filter { $0.notification == digestID }.count >= 2)
        }
    }

    /// Questions go through flood control: one process with many bus names (100 apps) shows one
    /// question at a time, not 100 at once (before: 100 popups in 0.17 s), while another process's
    /// question and the user's notification are shown meanwhile.
    @Test func oneProcessWithManyNamesShowsOneQuestionAtATime() async throws {
        try await Session.run(settings: Self.defaultFlood) { s in
            var tasks: [Task<Void, Never>] = []
            for n in 0..<30 {
                let app = try await s.appConnection("org.example.Name\(n)", allowed: false)
                tasks.append(
                    Task {
                        _ = try? await HostileAppTests.call(
                            app, "Schedule", [Self.record(["summary": .string("asked \(n)")]), Self.empty],
                            timeout: .seconds(90))
                    })
            }
            defer { for task in tasks { task.cancel() } }
            let calls = s.server!.notifyCalls
            let isQuestion: @Sendable (MockNotificationServer.Call) -> Bool = {
                $0.summary?.hasSuffix("wants to schedule notifications") == true
            }
            try await calls.wait("the first question") { $0.contains(where: isQuestion) }
            // Another process's question is shown beside it, and the user's notification goes out.
            let other = try HostileAppTests.gdbusCopy(s, named: "otherapp")
            let asking = try HostileAppTests.gdbusCall(s, other, "Schedule", ["{'summary': <'other'>}", "{}"])
            _ = asking
            #expect(try await s.chime(["send", "the user's"]).status == 0)
            try await calls.wait("the other process's question and the user's notification") { calls in
                calls.contains { $0.summary == "otherapp wants to schedule notifications" }
                    && calls.contains { $0.summary == "the user's" }
            }
            // Still one question of the many-named process.
            let many = calls.elements.filter { isQuestion($0) && $0.summary?.hasPrefix("org.example.Name") == true }
            #expect(many.count == 1, "\(many.count) questions of one process on screen")
            // Answering it brings the next one, never two.
            let first = try #require(many.first)
            let firstID = try #require(
                calls.elements.firstIndex { $0.summary == first.summary }.map { UInt32($0 + 1) })
            try await s.choose("deny", on: firstID)
            try await calls.wait("the next question") { calls in
                calls.filter { isQuestion($0) && $0.summary?.hasPrefix("org.example.Name") == true }.count == 2
            }
        }
    }
}
