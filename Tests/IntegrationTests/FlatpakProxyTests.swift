import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Flatpak apps reach chimed as `flatpak run` lets them: through a real `xdg-dbus-proxy` that Flatpak
/// starts in a bubblewrap of its own with the app's `/.flatpak-info` at its root, detached from the app's
/// sandbox and tied to it by a pipe (docs/flatpak.md, docs/security.md). The sandboxes are built with
/// bubblewrap and flatpak's own arguments (`launcher` below) rather than by `flatpak run`, which needs an
/// installed runtime: an OSTree repository with a runtime and an app, more than a test can build from
/// this machine's files.
@Suite(.serialized) struct FlatpakProxyTests {
    /// Starts a command the way `flatpak run` does (flatpak-run.c, flatpak-run-dbus.c): it records the
    /// instance in `$XDG_RUNTIME_DIR/.flatpak/INSTANCE/` (`info`, and `bwrapinfo.json` from bubblewrap's
    /// `--info-fd`); starts `xdg-dbus-proxy` with the given policy in a bubblewrap that binds the host's
    /// top folders and puts `info` at `/.flatpak-info`, detached by a double fork as GLib spawns it, and
    /// waits until it listens; then becomes the app's bubblewrap (`--unshare-pid`, `/.flatpak-info`, the
    /// proxy's socket at `/run/flatpak/bus`, `--sync-fd` with the read end of the pipe whose write end the
    /// proxy holds, so that the proxy ends with the sandbox). The proxy's bubblewrap's PID goes to
    /// `PIDFILE`. Arguments: RUNTIME INSTANCE APP-ID BUS-ADDRESS PIDFILE APP-FILE POLICY... -- COMMAND...
    static let launcher = #"""
        import os, sys
        runtime, instance, app_id, bus, pidfile, app_file = sys.argv[1:7]
        rest = sys.argv[7:]
        policy, command = rest[:rest.index("--")], rest[rest.index("--") + 1:]
        if "--filter" in policy:
            # What flatpak adds to every filtered app's policy: its own id and the portals.
            policy += [f"--own={app_id}", f"--own={app_id}.*", "--talk=org.freedesktop.portal.*",
                       "--call=org.freedesktop.portal.*=*",
                       "--broadcast=org.freedesktop.portal.*=@/org/freedesktop/portal/*"]
        instance_dir = f"{runtime}/.flatpak/{instance}"
        os.makedirs(instance_dir, exist_ok=True)
        os.makedirs(f"{runtime}/.dbus-proxy", exist_ok=True)
        info = f"{instance_dir}/info"
        with open(info, "w") as f:
            f.write(f"[Application]\nname={app_id}\nruntime=runtime/org.freedesktop.Platform/x86_64/24.08\n\n"
                    f"[Instance]\ninstance-id={instance}\napp-path=/var/lib/flatpak/app/{app_id}/current/active/files\n"
                    "session-bus-proxy=true\n\n[Context]\nshared=ipc;\n")
        socket = f"{runtime}/.dbus-proxy/session-bus-proxy-{instance}"
        ready, proxy_end = os.pipe()
        wrapper = ["bwrap"]
        for entry in sorted(os.scandir("/"), key=lambda e: e.name):
            if entry.name == ".flatpak-info":
                continue
            if entry.is_symlink():
                wrapper += ["--symlink", os.readlink(entry.path), "/" + entry.name]
            elif entry.is_dir():
                mode = "--bind" if entry.name in ("tmp", "var", "run") else "--ro-bind"
                wrapper += [mode, "/" + entry.name, "/" + entry.name]
        wrapper += ["--bind", f"{runtime}/.dbus-proxy", f"{runtime}/.dbus-proxy"]
        if os.fork() == 0:
            os.setsid()
            child = os.fork()
            if child == 0:
                info_fd = os.open(info, os.O_RDONLY)
                os.set_inheritable(info_fd, True)
                os.set_inheritable(proxy_end, True)
                os.close(ready)
                os.execvp("bwrap", wrapper + ["--file", str(info_fd), "/.flatpak-info", "--",
                                              "xdg-dbus-proxy", f"--fd={proxy_end}", bus, socket] + policy)
            with open(pidfile, "w") as f:
                f.write(str(child))
            os._exit(0)
        os.wait()
        os.close(proxy_end)
        if os.read(ready, 1) != b"x":
            sys.exit("the proxy did not start")
        bwrapinfo = os.open(f"{instance_dir}/bwrapinfo.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        info_data = os.open(info, os.O_RDONLY)
        for fd in (ready, bwrapinfo, info_data):
            os.set_inheritable(fd, True)
        os.execvp("bwrap", [
            "bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc", "/etc", "--proc", "/proc", "--dev", "/dev",
            "--tmpfs", "/tmp", "--dir", "/run/flatpak", "--ro-bind", app_file, "/app/app.py",
            "--bind", socket, "/run/flatpak/bus",
            "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/flatpak/bus",
            "--ro-bind-data", str(info_data), "/.flatpak-info",
            "--info-fd", str(bwrapinfo), "--sync-fd", str(ready), "--"] + command)
        """#

    /// The app in the sandbox, with dbus-python: `notify` schedules a one-off far ahead (`later ID`) and
    /// one with an action due in two seconds (`item ID`), then `delivered ID NOTIFICATION` and `action ID KEY` as the signals
    /// reach it; `look ID` prints what it sees of item ID (pending items, `Cancel`'s error) next to a
    /// missing item's; `call` schedules one far ahead and prints `reached`; each prints `error NAME` when a call fails.
    static let app = #"""
        import sys, time, dbus, dbus.mainloop.glib
        from gi.repository import GLib
        dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
        def say(*words):
            print(*words, flush=True)
        def record(**values):
            return dbus.Dictionary(values, signature="sv")
        def error(call):
            try:
                call()
                return "none"
            except dbus.DBusException as e:
                return e.get_dbus_name()
        try:
            bus = dbus.SessionBus()
            chime = dbus.Interface(bus.get_object("io.chime.Chime1", "/io/chime/Chime1", introspect=False),
                                   "io.chime.Chime1")
            mode = sys.argv[1]
            if mode == "notify":
                loop = GLib.MainLoop()
                bus.add_signal_receiver(lambda item, notification: say("delivered", int(item), int(notification)),
                                        "Delivered", "io.chime.Chime1")
                def acted(item, group, entry, key, info):
                    say("action", int(item), key)
                    loop.quit()
                bus.add_signal_receiver(acted, "ActionInvoked", "io.chime.Chime1")
                content = record(summary="from the proxied sandbox",
                                 actions=dbus.Array([("open", "Open")], signature="(ss)"))
                say("later", int(chime.Schedule(record(summary="later"), record(at=dbus.Int64(4102444800000000)))))
                say("item", int(chime.Schedule(content, record(at=dbus.Int64(int(time.time() * 1000000) + 2000000)))))
                loop.run()
            elif mode == "look":
                item = dbus.UInt64(int(sys.argv[2]))
                say("pending", sorted(int(i["id"]) for i in chime.ListPending(record())))
                say("cancel", error(lambda: chime.Cancel(item)))
                say("cancel-missing", error(lambda: chime.Cancel(dbus.UInt64(9_000_000_000))))
            elif mode == "call":
                chime.Schedule(record(summary="through no talk"), record(at=dbus.Int64(4102444800000000)))
                say("reached")
        except dbus.DBusException as e:
            say("error", e.get_dbus_name())
            sys.exit(3)
        """#

    /// One sandboxed app: its bubblewrap (the launcher became it) and its proxy's bubblewrap.
    struct Sandbox {
        var process: ManagedProcess
        var proxyPIDFile: String
    }

    /// Starts the app in `mode` as Flatpak app `appID`, instance `instance`, its proxy given `policy`.
    static func start(
        _ s: Session, _ appID: String, instance: String, policy: [String], _ mode: [String]
    ) throws -> Sandbox {
        let directory = s.bus.directory
        let launcher = directory.appendingPathComponent("flatpak-run.py").path
        let app = directory.appendingPathComponent("app.py").path
        try Self.launcher.write(toFile: launcher, atomically: true, encoding: .utf8)
        try Self.app.write(toFile: app, atomically: true, encoding: .utf8)
        let pidFile = directory.appendingPathComponent("proxy-\(instance).pid").path
        let process = try ManagedProcess(
            "/usr/bin/python3",
            [
                launcher, directory.appendingPathComponent("runtime").path, instance, appID, s.bus.address, pidFile,
                app,
            ] + policy + ["--", "/usr/bin/python3", "/app/app.py"] + mode,
            directory: directory)
        s.extraProcesses.append(process)
        return Sandbox(process: process, proxyPIDFile: pidFile)
    }

    /// Waits until the app printed `text`, or an error, or ended; fails with what it printed unless `text`.
    static func expect(_ s: Session, _ sandbox: Sandbox, printed text: String) async throws {
        let process = sandbox.process
        try? await Await.condition(
            "the sandboxed app printed \(text)", timeout: .seconds(30), watching: process.stdoutURL
        ) {
            process.stdout.contains(text) || process.stdout.contains("error ") || process.stdout.contains("Error")
        }
        let log = s.chimed.flatMap { try? String(contentsOf: $0.stderrURL, encoding: .utf8) } ?? ""
        try #require(process.stdout.contains(text), "\(process.stdout) \(process.stderr) LOG \(log.suffix(3000))")
    }

    /// Waits for the sandbox to end, and for its proxy to end with it, as Flatpak's does when the pipe
    /// closes; stops either by PID if it does not. (A test that fails before this stops the sandbox with
    /// the session, which closes the pipe and so ends the proxy.)
    static func finish(_ sandbox: Sandbox) async -> (status: Int32?, proxyEnded: Bool) {
        let status = await sandbox.process.waitForExit(timeout: .seconds(60))
        if status == nil { await sandbox.process.stop() }
        guard let text = try? String(contentsOfFile: sandbox.proxyPIDFile, encoding: .utf8),
            let pid = Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return (status, true) }
        let ended: Bool
        do {
            try await Await.polling("the proxy's bubblewrap \(pid) ended") { !isRunning(pid) }
            ended = true
        } catch {
            _ = Glibc.kill(pid, SIGKILL)
            ended = false
        }
        return (status, ended)
    }

    /// Whether process `pid` exists and is not a zombie.
    static func isRunning(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    /// An app in a Flatpak sandbox whose proxy lets it talk to `io.chime.Chime1` is known by its Flatpak
    /// id (the user is asked about it by that id), and its delivery and its action reach it through the
    /// proxy; an app whose proxy does not let it
    /// cannot reach chimed; another sandboxed app sees nothing of the first's item.
    @Test func aFlatpakAppReachesChimedThroughItsProxyAndOnlyWithTheTalkPermission() async throws {
        try await Session.run(startChimed: false) { s in
            s.chimedEnvironment["XDG_RUNTIME_DIR"] = s.bus.directory.appendingPathComponent("runtime").path
            s.chimed = try await s.startChimed()
            for app in ["io.example.Other", "io.example.NoTalk"] {
                #expect(try await s.chime(["app", "allow", app]).status == 0)
            }
            let talk = ["--filter", "--talk=io.chime.Chime1"]

            // The first app's first Schedule asks the user, by its Flatpak id, and waits for the answer.
            let first = try Self.start(s, "io.example.Sandboxed", instance: "3101", policy: talk, ["notify"])
            let calls = s.server!.notifyCalls
            let question = "io.example.Sandboxed wants to schedule notifications"
            try await calls.wait("the question naming the Flatpak id") { $0.contains { $0.summary == question } }
            let asked = try #require(calls.elements.firstIndex { $0.summary == question })
            try await s.choose("allow", on: UInt32(asked + 1))
            try await Self.expect(s, first, printed: "delivered")
            let words = first.process.stdout.split(whereSeparator: \.isWhitespace)
            let item = words.firstIndex(of: "item").flatMap { UInt64(words[$0 + 1]) }
            let notification = words.firstIndex(of: "delivered").flatMap { UInt32(words[$0 + 2]) }
            #expect(item != nil && words.firstIndex(of: "delivered").map { UInt64(words[$0 + 1]) } == item)
            let apps = try await s.chimeJSON(["apps"])
            #expect(
                apps.contains {
                    $0["app"] as? String == "io.example.Sandboxed" && $0["consent"] as? String == "allowed"
                },
                "\(apps)")
            #expect(!apps.contains { $0["app"] as? String == "python3" }, "\(apps)")

            // A process with that instance's very `/.flatpak-info` at its root, as the proxy has, but
            // neither in the sandbox nor holding the pipe Flatpak gave the proxy, is not that app.
            let runtime = s.bus.directory.appendingPathComponent("runtime").path
            let lookAlike = try await AppIsolationTests.shell(
                s,
                "exec bwrap --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin "
                    + "--ro-bind /etc /etc --bind /tmp /tmp --proc /proc --dev /dev --file 3 /.flatpak-info -- "
                    + AppIsolationTests.gdbusSchedule("from a look-alike proxy") + " 3<'\(runtime)/.flatpak/3101/info'")
            #expect(lookAlike.status != 0)
            #expect(lookAlike.stderr.contains(AppIsolationTests.accessDenied), "\(lookAlike.stderr)")

            if let notification { try await s.choose("open", on: notification) }
            try await Self.expect(s, first, printed: "action \(item ?? 0) open")
            let firstEnd = await Self.finish(first)
            #expect(firstEnd.status == 0, "\(first.process.stdout) \(first.process.stderr)")
            #expect(firstEnd.proxyEnded)

            // The same app, its proxy without `--talk=io.chime.Chime1`: the proxy hides chimed from it.
            let refused = try Self.start(s, "io.example.NoTalk", instance: "3102", policy: ["--filter"], ["call"])
            let refusedEnd = await Self.finish(refused)
            #expect(refusedEnd.status == 3, "\(refused.process.stdout) \(refused.process.stderr)")
            #expect(
                refused.process.stdout.contains("error org.freedesktop.DBus.Error.ServiceUnknown"),
                "\(refused.process.stdout)")
            #expect(refusedEnd.proxyEnded)
            let appsAfter = try await s.chimeJSON(["apps"])
            #expect(
                appsAfter.contains { $0["app"] as? String == "io.example.NoTalk" && $0["items"] as? Int == 0 },
                "\(appsAfter)")

            // Another sandboxed app, allowed to talk to chimed, looks for the first app's pending item.
            let later = words.firstIndex(of: "later").flatMap { UInt64(words[$0 + 1]) }
            #expect(later != nil, "\(first.process.stdout)")
            let other = try Self.start(
                s, "io.example.Other", instance: "3103", policy: talk, ["look", String(later ?? 0)])
            let otherEnd = await Self.finish(other)
            #expect(otherEnd.status == 0, "\(other.process.stdout) \(other.process.stderr)")
            #expect(other.process.stdout.contains("pending []"), "\(other.process.stdout)")
            let lines = other.process.stdout.split(separator: "\n")
            let cancel = lines.first { $0.hasPrefix("cancel ") }?.dropFirst(7)
            let missing = lines.first { $0.hasPrefix("cancel-missing ") }?.dropFirst(15)
            #expect(cancel != nil && cancel != "none" && cancel == missing, "\(other.process.stdout)")
            #expect(otherEnd.proxyEnded)
            let pending = try await s.chimeJSON(["pending"])
            #expect(
                pending.contains {
                    ($0["id"] as? NSNumber)?.uint64Value == later && $0["summary"] as? String == "later"
                },
                "\(pending)")
        }
    }
}
