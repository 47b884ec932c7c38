import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed against GNOME Shell (`gnome-shell --headless`, Debian 12's 43), the desktop of Ubuntu, Fedora
/// and Debian's default: its notifications read, and their actions chosen, through the shell's own
/// objects (`org.gnome.Shell.Eval` in `--unsafe-mode`), as a click on the banner's button would choose one.
@Suite(.serialized) struct GnomeShellTests {
    /// Runs `body` with GNOME Shell as the test bus's notification server and chimed talking to it, the
    /// server's signals overheard.
    static func withShell(_ body: (Session, GnomeShellServer, ServerSignals) async throws -> Void) async throws {
        try await Session.run(withServer: false, startChimed: false, allowOtherUsers: getuid() == 0) { s in
            let shell = try await GnomeShellServer.start(on: s.bus, observer: s.observer)
            s.gnomeShell = shell
            print("SHELL STARTED")
            let signals = try await s.overhearServerSignals()
            s.chimed = try await s.startChimed()
            try await s.chimed!.waitForStderr(containing: "capabilities:")
            try await body(s, shell, signals)
        }
    }

    @Test func aNotificationReachesTheShellAndAnActionChosenThereComesBack() async throws {
        try await Self.withShell { s, shell, signals in
            let status = try await s.chime(["status", "--json"])
            let fields = try #require(
                try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])
            #expect(fields["server-name"] as? String == "gnome-shell")
            let capabilities = Set(fields["capabilities"] as? [String] ?? [])
            #expect(capabilities.isSuperset(of: ["actions", "body", "body-markup", "persistence"]), "\(capabilities)")

            let sent = try await s.chime(["send", "-A", "open=Open", "-A", "later=Later", "Shell", "<b>bold</b> body"])
            #expect(sent.status == 0, "\(sent.stderr)")
            try await s.delivered.wait(forCount: 1)
            let id = s.delivered.elements[0].notification
            var shown: [GnomeShellServer.Notification] = []
            try await Await.polling("the notification in the shell's tray") {
                shown = try await shell.notifications()
                return shown.contains { $0.title == "Shell" }
            }
            let notification = try #require(shown.first { $0.title == "Shell" })
            #expect(notification.actions == ["Open", "Later"], "\(notification)")
            #expect(notification.body.contains("bold"), "\(notification)")

            try await shell.chooseAction("Open", onNotificationTitled: "Shell")
            try await signals.invoked.wait("the shell's ActionInvoked") {
                $0.contains { $0.notification == id && $0.key == "open" }
            }
            try await s.chimed!.waitForStderr(containing: "action open chosen on notification \(id)")
        }
    }
}
