import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Items that ask to wake the machine (`wake`): chimed arms a `CLOCK_REALTIME_ALARM` timer for the
/// earliest of them when it holds `CAP_WAKE_ALARM`, and says in `chime status` and its log when it does
/// not. The timer is seen as the kernel shows it (`/proc/PID/fdinfo`); a real suspend and resume cannot be
/// had in a VM (docs/wake.md).
@Suite(.serialized) struct WakeAlarmTests {
    /// Starts `chime status` (the copy at `program`, through `launcher`) against a bus address where a
    /// socket listens and never answers, so that the command waits for the bus, and reads its
    /// capabilities meanwhile: none permitted, none effective.
    static func expectNoCapabilities(inChime program: String, launcher: [String], folder: URL) async throws {
        let path = folder.appendingPathComponent("silent-bus").path
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        try #require(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)))
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(listener, 4) == 0 && chmod(path, 0o777) == 0)
        #expect(chmod(folder.path, 0o755) == 0)
        let command = try ManagedProcess(
            launcher.first ?? program, Array(launcher.dropFirst()) + [program, "status"],
            environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(path)", "PATH": "/usr/bin:/bin"],
            directory: folder)
        defer { command.kill(SIGKILL) }
        // Its connection is waiting in the backlog: chime is past its start, and waits for the bus.
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        try #require(poll(&ready, 1, 20_000) == 1, "chime status did not connect: \(command.stderr)")
        let status = try String(contentsOfFile: "/proc/\(command.pid)/status", encoding: .utf8)
        #expect(status.contains("\nUid:\t\(getpwnam("nobody").pointee.pw_uid)\t"), "\(status)")
        for set in ["CapPrm:", "CapEff:"] {
            let line = status.split(separator: "\n").first { $0.hasPrefix(set) }
            #expect(line.flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) } == 0, "\(status)")
        }
    }

    /// The timers on clock 8 (`CLOCK_REALTIME_ALARM`) that process `pid` holds: each one's `it_value`
    /// (seconds and nanoseconds until it fires; (0, 0) when disarmed).
    static func wakeAlarms(of pid: Int32) throws -> [(seconds: Int, nanoseconds: Int)] {
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fdinfo")
        return descriptors.compactMap { fd -> (Int, Int)? in
            // A descriptor closed meanwhile has no info any more.
            guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                info.split(separator: "\n").contains(where: { $0.hasPrefix("clockid:") && $0.hasSuffix(" 8") }),
                let line = info.split(separator: "\n").first(where: { $0.hasPrefix("it_value:") })
            else { return nil }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
        }
    }

    /// The expiry times (nanoseconds since 1970) of the alarm timers the kernel has queued, from
    /// `/proc/timer_list` (root only): each `alarmtimer_fired` entry with its `expires at` line. The
    /// timerfd's own `it_value` cannot tell a disarmed alarm timer: the kernel keeps showing its last
    /// expiry there (`alarm_expires_remaining` does not look whether the alarm is queued).
    static func kernelAlarms() throws -> [Int64] {
        // Read to its end: a file of /proc has no size to go by.
        let handle = try #require(FileHandle(forReadingAtPath: "/proc/timer_list"))
        defer { try? handle.close() }
        let lines = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self).split(separator: "\n")
        return lines.indices.dropLast().compactMap { index in
            guard lines[index].contains("alarmtimer_fired") else { return nil }
            let words = lines[index + 1].split(separator: " ")
            guard let at = words.firstIndex(of: "at"), at + 1 < words.count else { return nil }
            return Int64(words[at + 1].split(separator: "-").first ?? "")
        }
    }

    /// Whether the kernel has an alarm queued for `microseconds` since 1970 (within a millisecond).
    static func kernelHasAlarm(at microseconds: Int64) throws -> Bool {
        try kernelAlarms().contains { abs($0 / 1_000 - microseconds) < 1_000 }
    }

    /// `wake-at` of chimed's `Status`, in microseconds since 1970.
    static func wakeAt(_ s: Session) async throws -> Int64? {
        let reply = try await BusAPITests.call(s, "Status")
        guard case .int64(let usec)? = BusAPITests.fields(reply.first)["wake-at"] else { return nil }
        return usec
    }

    static func status(_ s: Session) async throws -> [String: Any] {
        let result = try await s.chime(["status", "--json"])
        guard result.status == 0 else { throw TestFailure("chime status failed: \(result.stderr)") }
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test func withTheCapabilityTheAlarmIsArmedForTheEarliestWakeItemAndDisarmedWhenNoneIsLeft() async throws {
        try await Session.run { s in
            let pid = try #require(s.chimed?.pid)
            // Created at start, disarmed while nothing asks to wake the machine.
            #expect(try Self.wakeAlarms(of: pid).map(\.seconds) == [0])
            #expect(try await Self.status(s)["wake-alarm"] as? String == "idle")
            // An item that does not ask to wake the machine leaves it disarmed.
            let plain = try await s.chime(["send", "--in", "10m", "Plain"])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(try Self.wakeAlarms(of: pid).map(\.seconds) == [0])

            let later = try await s.chime(["send", "--wake", "--in", "2h", "--print-id", "Later"])
            let sooner = try await s.chime(["send", "--wake", "--in", "1h", "--print-id", "Sooner"])
            #expect(later.status == 0 && sooner.status == 0, "\(later.stderr)\(sooner.stderr)")
            let alarms = try Self.wakeAlarms(of: pid)
            #expect(alarms.count == 1)
            // Armed for the sooner one: about an hour from now.
            #expect(alarms.first.map { (3000...3600).contains($0.seconds) } == true, "\(alarms)")
            // The kernel has queued an alarm for the very time chimed says.
            let soonerWake = try #require(try await Self.wakeAt(s))
            let queued = try Self.kernelAlarms()
            #expect(try Self.kernelHasAlarm(at: soonerWake), "\(queued) \(soonerWake)")
            let status = try await Self.status(s)
            #expect(status["wake-alarm"] as? String == "armed" && status["wake-items"] as? Int == 2)
            #expect(status["wake-at"] != nil && status["wake-problem"] == nil)
            let plainStatus = try await s.chime(["status"])
            #expect(plainStatus.stdout.contains("wake alarm: armed for "), "\(plainStatus.stdout)")
            // The listing says which items wake the machine.
            let pending = try await s.chime(["pending"])
            #expect(pending.stdout.split(separator: "\n").filter { $0.contains("(wakes the machine)") }.count == 2)
            #expect(!pending.stdout.contains("Plain\t(wakes"))

            // Cancelling the sooner one moves the alarm to the later one; cancelling both disarms it.
            let soonerID = sooner.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await s.chime(["cancel", soonerID]).status == 0)
            #expect(try Self.wakeAlarms(of: pid).first.map { (6600...7200).contains($0.seconds) } == true)
            let laterWake = try #require(try await Self.wakeAt(s))
            #expect(try Self.kernelHasAlarm(at: laterWake))
            #expect(try !Self.kernelHasAlarm(at: soonerWake))
            let laterID = later.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await s.chime(["cancel", laterID]).status == 0)
            #expect(try !Self.kernelHasAlarm(at: laterWake))
            let idle = try await Self.status(s)
            #expect(idle["wake-items"] as? Int == 0 && idle["wake-alarm"] as? String == "idle")
        }
    }

    @Test func aSnoozeOfAnItemThatWakesTheMachineWakesItToo() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "--wake", "--in", "1h", "--print-id", "Alarm"])
            let id = sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(sent.status == 0, "\(sent.stderr)")
            let snoozed = try await s.chime(["snooze", id, "10m"])
            #expect(snoozed.status == 0, "\(snoozed.stderr)")
            let pending = try await s.chimeJSON(["pending"])
            #expect(pending.count == 2 && pending.allSatisfy { $0["wake"] as? Bool == true }, "\(pending)")
            // The snooze comes first: the alarm is set for it, ten minutes from now.
            let alarms = try Self.wakeAlarms(of: try #require(s.chimed?.pid))
            #expect(alarms.first.map { (500...600).contains($0.seconds) } == true, "\(alarms)")
            #expect(try await Self.status(s)["wake-items"] as? Int == 2)
        }
    }

    @Test func aWakeItemOfAGroupFileArmsTheAlarmAfterARestart() async throws {
        let group = """
            [[entry]]
            id = "alarm"
            every = "every day at 06:30"
            wake = true
            summary = "Get up"
            """
        try await Session.run(groups: ["mornings.toml": group]) { s in
            let alarms = try Self.wakeAlarms(of: try #require(s.chimed?.pid))
            #expect(alarms.count == 1 && alarms.first.map { $0.seconds > 0 } == true, "\(alarms)")
            // Read back from the store at the next start, without its definition decoded.
            _ = await s.chimed?.stop()
            s.chimed = try await s.startChimed()
            let again = try Self.wakeAlarms(of: try #require(s.chimed?.pid))
            #expect(again.count == 1 && again.first.map { $0.seconds > 0 } == true, "\(again)")
            #expect(try await Self.status(s)["wake-items"] as? Int == 1)
        }
    }

    @Test func withoutTheCapabilityChimedSaysSoAndStillDelivers() async throws {
        try await Session.run(startChimed: false) { s in
            // Neither in the bounding set nor inheritable: chimed (root here) runs without CAP_WAKE_ALARM.
            s.chimedLauncher = ["/usr/bin/setpriv", "--bounding-set", "-wake_alarm", "--inh-caps", "-wake_alarm"]
            let chimed = try await s.startChimed()
            s.chimed = chimed
            let capabilities = try String(contentsOfFile: "/proc/\(chimed.pid)/status", encoding: .utf8)
            #expect(capabilities.contains("CapBnd:"))
            #expect(try Self.wakeAlarms(of: chimed.pid).isEmpty)
            // Nothing asks yet: nothing logged (a user who never asks hears nothing of it), Status says it.
            let quiet = try String(contentsOf: chimed.stderrURL, encoding: .utf8)
            #expect(!quiet.contains("CAP_WAKE_ALARM"))
            #expect(try await Self.status(s)["wake-alarm"] as? String == "unavailable")

            let pending = try await s.chime(["send", "--wake", "--in", "1h", "Later"])
            #expect(pending.status == 0, "\(pending.stderr)")
            let now = try await s.chime(["send", "--wake", "--print-id", "Now"])
            #expect(now.status == 0, "\(now.stderr)")
            let id = try #require(UInt64(now.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            try await s.delivered.wait("the wake item was delivered without the alarm") {
                $0.contains { $0.item == id }
            }
            #expect(try Self.wakeAlarms(of: chimed.pid).isEmpty)

            let status = try await Self.status(s)
            #expect(status["wake-alarm"] as? String == "unavailable")
            #expect(status["wake-items"] as? Int == 1)
            let problem = status["wake-problem"] as? String ?? ""
            #expect(problem.contains("CAP_WAKE_ALARM") && problem.contains("docs/wake.md"), "\(problem)")
            let lines = try await s.chime(["status"])
            #expect(
                lines.stdout.contains("wake alarm: unavailable (1 items ask to wake the machine)"), "\(lines.stdout)")
            // Logged once, as a warning, when the first item asked.
            let log = try String(contentsOf: chimed.stderrURL, encoding: .utf8)
            #expect(log.components(separatedBy: "CAP_WAKE_ALARM").count - 1 == 1, "\(log)")
        }
    }

    /// The grant docs/wake.md gives, on the program as it is installed (`chime`, with `chimed` a link to
    /// it): a copy of chime with `cap_wake_alarm+ep`, started as chimed by an ordinary user (nobody), arms
    /// the alarm for a group file's wake entry; it runs in glibc's secure mode (`AT_SECURE`), and still
    /// serves the bus. Started as chime, the same program gives the capability up first thing.
    @Test func aFileCapabilityLetsAnOrdinaryUsersChimedWakeTheMachine() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chime-wake-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let program = folder.appendingPathComponent("chime").path
        let chimed = folder.appendingPathComponent("chimed").path
        try FileManager.default.copyItem(atPath: Binaries.chime, toPath: program)
        try FileManager.default.createSymbolicLink(atPath: chimed, withDestinationPath: "chime")
        try FileManager.default.createSymbolicLink(
            atPath: folder.appendingPathComponent("chime-relay").path,
            withDestinationPath: Binaries.directory.appendingPathComponent("chime-relay").path)
        let setcap = try ManagedProcess("/usr/sbin/setcap", ["cap_wake_alarm+ep", program], environment: [:])
        #expect(await setcap.waitForExit() == 0)
        let nobody = getpwnam("nobody").pointee
        let asNobody = ["/usr/bin/setpriv", "--reuid=\(nobody.pw_uid)", "--regid=\(nobody.pw_gid)", "--clear-groups"]
        try await Self.expectNoCapabilities(inChime: program, launcher: asNobody, folder: folder)
        let state = folder.appendingPathComponent("state").path
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        #expect(chown(state, nobody.pw_uid, nobody.pw_gid) == 0)
        let group = "[[entry]]\nid = \"alarm\"\nevery = \"every day at 06:30\"\nwake = true\nsummary = \"Up\"\n"
        try await Session.run(
            withServer: false, groups: ["mornings.toml": group], startChimed: false, allowOtherUsers: true
        ) { s in
            s.chimedExecutable = chimed
            s.chimedLauncher = asNobody
            s.stateDirectory = state
            // The user's chime is the one beside chimed's executable, not the test's: nobody allows no app.
            s.allowTestApp = false
            let process = try await s.startChimed()
            s.chimed = process
            let status = try String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8)
            #expect(status.contains("\nUid:\t\(nobody.pw_uid)\t"))
            // CAP_WAKE_ALARM is capability 35: bit 35 of the effective set.
            let effective = status.split(separator: "\n").first { $0.hasPrefix("CapEff:") }
                .flatMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
            #expect(effective == 1 << 35)
            // glibc's secure-execution mode: the kernel passes AT_SECURE (23) = 1 in the auxiliary vector.
            let auxv = try #require(FileManager.default.contents(atPath: "/proc/\(process.pid)/auxv"))
            let pairs = auxv.withUnsafeBytes { Array($0.bindMemory(to: UInt64.self)) }
            let secure = stride(from: 0, to: pairs.count - 1, by: 2).first { pairs[$0] == 23 }.map { pairs[$0 + 1] }
            #expect(secure == 1)
            let alarms = try Self.wakeAlarms(of: process.pid)
            #expect(alarms.count == 1 && alarms.first.map { $0.seconds > 0 } == true, "\(alarms)")
            let log = try String(contentsOf: process.stderrURL, encoding: .utf8)
            #expect(!log.contains("CAP_WAKE_ALARM"), "\(log)")
        }
    }

    @Test func aChimeKitEntryWakesTheMachine() async throws {
        try await Session.run { s in
            try await ChimeKitTests.withKit(s) {
                let group = try await LocalNotifications.schedule(groupIdentifier: nil) {
                    EveryDay(forDays: 30, starting: .today).at(hour: 6, minute: 30)
                        .schedule(title: "Get up")
                        .wakingTheMachine()
                    EveryDay(forDays: 30, starting: .today).at(hour: 9, minute: 0)
                        .schedule(title: "Coffee")
                }
                let pending = try await LocalNotifications.client().pending(next: 1, group: group.groupIdentifier)
                #expect(pending.map(\.summary).sorted() == ["Coffee", "Get up"])
                #expect(pending.filter(\.wake).map(\.summary) == ["Get up"])
            }
            #expect(try await Self.status(s)["wake-items"] as? Int == 1)
        }
    }

    @Test func aWakeThatIsNotABooleanIsRefusedWithWhatItMustBe() async throws {
        try await Session.run { s in
            let content = BusAPITests.record(["summary": .string("x")])
            let error = await #expect(throws: DBusError.self) {
                _ = try await BusAPITests.call(
                    s, "Schedule", [content, BusAPITests.record(["wake": .string("yes")])])
            }
            #expect(error?.name == BusAPITests.invalidArgument)
            #expect(error?.message == "trigger key \"wake\" must have type b, not s", "\(error?.message ?? "")")
            let entry = BusAPITests.record(["id": .string("e"), "wake": .uint32(1), "content": content])
            let refused = await #expect(throws: DBusError.self) {
                _ = try await BusAPITests.call(
                    s, "Reschedule",
                    [
                        .string("g"), BusAPITests.empty, .array(element: BusAPITests.recordType, [entry]),
                        BusAPITests.empty,
                    ])
            }
            #expect(refused?.name == BusAPITests.invalidArgument)
            #expect(
                refused?.message.contains("entry e key \"wake\" must have type b, not u") == true,
                "\(refused?.message ?? "")")
            #expect(try await s.client().pending().isEmpty)
            // As a boolean it is taken, and the listing gives it back.
            let inAnHour = Int64((Date().timeIntervalSince1970 + 3600) * 1_000_000)
            _ = try await BusAPITests.call(
                s, "Schedule", [content, BusAPITests.record(["at": .int64(inAnHour), "wake": .boolean(true)])])
            let listed = try await s.client().pending()
            #expect(listed.count == 1 && listed.first?.wake == true, "\(listed)")
        }
    }
}
