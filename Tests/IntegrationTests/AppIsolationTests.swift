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
                    exec unshare --mount --fork sh -c "mount --rbind /usr usr && mount --rbind /etc etc && \
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
                func masked(_ o: (name: String, message: String)?) -> String? {
                    o.map { o in ids.reduce("\(o.name): \(o.message)") { $0.replacingOccurrences(of: $1, with: "ID") } }
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
}
