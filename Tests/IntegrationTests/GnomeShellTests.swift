import ChimeKit
import DBusKit
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// chimed against GNOME Shell (`gnome-shell --headless`, Debian 12's 43), the desktop of Ubuntu, Fedora
/// and Debian's default: its banners captured (`org.gnome.Shell.Screenshot`), its notifications read from
/// the shell's own objects (`org.gnome.Shell.Eval` in `--unsafe-mode`), and their buttons clicked with a
/// virtual pointer of the shell's.
@Suite(.serialized) struct GnomeShellTests {
    /// Runs `body` with GNOME Shell as the test bus's notification server and chimed talking to it, the
    /// server's signals overheard. chimed reads what the shell reads (its home's settings and desktop
    /// files); `settings` and `applications` are as `GnomeShellServer.start` takes them.
    static func withShell(
        settings: String? = nil, applications: [String: String] = [:],
        _ body: (Session, GnomeShellServer, ServerSignals) async throws -> Void
    ) async throws {
        try await Session.run(withServer: false, startChimed: false, allowOtherUsers: getuid() == 0) { s in
            let shell = try await GnomeShellServer.start(
                on: s.bus, observer: s.observer, settings: settings, applications: applications)
            s.gnomeShell = shell
            let signals = try await s.overhearServerSignals()
            for (key, value) in shell.environment { s.chimedEnvironment[key] = value }
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
            #expect(
                capabilities == ["actions", "body", "body-markup", "icon-static", "persistence", "sound"],
                "\(capabilities)")

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

            try await shell.click("Open", onBannerTitled: "Shell")
            try await signals.invoked.wait("the shell's ActionInvoked") {
                $0.contains { $0.notification == id && $0.key == "open" }
            }
            try await s.chimed!.waitForStderr(containing: "action open chosen on notification \(id)")
            // The shell closes the popup itself, as dismissed by the user, and takes it from its tray.
            try await signals.closed.wait("the popup closed") { $0.contains { $0.notification == id } }
            #expect(signals.closed.elements.first { $0.notification == id }?.reason == 2)
            #expect(try await shell.notifications().isEmpty)

            // A click on a banner (not on a button): dismissed by the user, no action.
            #expect(try await s.chime(["send", "-p", "Dismissed", "by a click"]).status == 0)
            try await s.delivered.wait(forCount: 2)
            let dismissed = s.delivered.elements[1].notification
            try await shell.click(onBannerTitled: "Dismissed")
            try await signals.closed.wait("the popup dismissed") { $0.contains { $0.notification == dismissed } }
            #expect(signals.closed.elements.first { $0.notification == dismissed }?.reason == 2)
            #expect(!signals.invoked.elements.contains { $0.notification == dismissed })

            // A resident one stays, in the tray, after a button is clicked (the shell's click handler
            // closes any other before the next call is answered).
            let resident = try await s.chime([
                "send", "-h", "boolean:resident:true", "-A", "open=Open", "-p", "Resident", "stays",
            ])
            #expect(resident.status == 0, "\(resident.stderr)")
            try await s.delivered.wait(forCount: 3)
            let stays = s.delivered.elements[2].notification
            try await shell.click("Open", onBannerTitled: "Resident")
            try await signals.invoked.wait("its ActionInvoked") { $0.contains { $0.notification == stays } }
            #expect(try await shell.notifications().map(\.title) == ["Resident"])
            #expect(!signals.closed.elements.contains { $0.notification == stays })
        }
    }

    /// A banner on screen (the shell's screenshots, before and after): the image sent with it drawn (a
    /// 48×48 red PNG by `image-path`) and its text. Of the body's markup GNOME Shell reads `<b>`, `<i>`
    /// and `<u>` and shows any other tag as written: chimed sends it a link as its text, an image as its
    /// alt text and a numeric entity as its character, so the banner shows no tag. A themed icon
    /// (`app_icon`) is the banner's icon.
    @Test func aBannerIsDrawnWithItsImageAndTheMarkupTheShellReads() async throws {
        try await Self.withShell { s, shell, signals in
            let image = s.bus.directory.appendingPathComponent("red.png")
            _ = try await ManagedProcess.run(
                "/usr/bin/convert", ["-size", "48x48", "xc:red", image.path], directory: s.bus.directory)
            let before = try await shell.screenshot(named: "before.png")
            let sent = try await s.chime([
                "send", "-h", "string:image-path:\(image.path)", "Banner",
                "<b>bold</b> <i>it</i> <a href=\"https://example.org/\">a link</a> &#233; <img src=\"/x.png\" alt=\"a picture\"/>",
            ])
            #expect(sent.status == 0, "\(sent.stderr)")
            let banner = try await shell.banner(titled: "Banner")
            #expect(banner.markup == "<b>bold</b> <i>it</i> a link é a picture", "\(banner)")
            #expect(banner.body == "bold it a link é a picture", "\(banner)")
            #expect(banner.icon == image.path, "\(banner)")
            let after = try await shell.screenshot(named: "after.png")
            try DunstTests.keep(after, as: "gnome-shell-banner.png")
            let red = "r > 0.8 && g < 0.25 && b < 0.25"
            // The banner's text is light on its dark grey.
            let light = "r > 0.6 && g > 0.6 && b > 0.6"
            let region = banner.region
            let (redBefore, redAfter) = (
                try await GnomeShellServer.count(red, in: region, of: before),
                try await GnomeShellServer.count(red, in: region, of: after)
            )
            let (lightBefore, lightAfter) = (
                try await GnomeShellServer.count(light, in: region, of: before),
                try await GnomeShellServer.count(light, in: region, of: after)
            )
            #expect(redBefore < 20 && redAfter > 400, "red pixels: \(redBefore) before, \(redAfter) with the banner")
            #expect(lightAfter > lightBefore + 100, "text pixels: \(lightBefore) before, \(lightAfter) with the banner")
            print(
                "gnome-shell banner \(region): \(redAfter) red pixels (\(redBefore) before), \(lightAfter) light (\(lightBefore) before)"
            )

            // Closed, its banner goes; the next one shows its themed icon.
            try await s.delivered.wait(forCount: 1)
            let id = s.delivered.elements[0].notification
            #expect(try await s.chime(["close", "\(id)"]).status == 0)
            try await signals.closed.wait("the shell reported the close") { $0.contains { $0.notification == id } }
            let icon = try await s.chime(["send", "-i", "dialog-information", "-p", "Icon", "themed"])
            #expect(icon.status == 0, "\(icon.stderr)")
            #expect(try await shell.banner(titled: "Icon").icon == "dialog-information")
        }
    }

    /// Closing, replacing, expiry and the message tray. GNOME Shell keeps a notification in its tray after
    /// its banner has gone (unless it is `transient`: then it goes with its banner, reported expired),
    /// replaces one in place, and reports a close by `CloseNotification` with reason 3. It keeps no
    /// expiry time: chimed closes a popup at its expiry itself, and records it as expired.
    @Test func closingReplacingExpiryAndTheTray() async throws {
        try await Self.withShell { s, shell, signals in
            func inTray(_ title: String) async throws -> [GnomeShellServer.Notification] {
                try await shell.notifications().filter { $0.title == title }
            }
            #expect(try await s.chime(["send", "-t", "0", "-p", "Tray", "first"]).status == 0)
            try await s.delivered.wait(forCount: 1)
            let id = s.delivered.elements[0].notification
            _ = try await shell.banner(titled: "Tray")

            // Replaced: the same entry, its text changed.
            #expect(try await s.chime(["send", "-t", "0", "-r", "\(id)", "-p", "Tray", "second"]).status == 0)
            try await s.delivered.wait(forCount: 2)
            #expect(s.delivered.elements[1].notification == id)
            try await Await.polling("the tray's entry replaced") { try await inTray("Tray").map(\.body) == ["second"] }

            // Its banner goes as it goes once the user is active again (its time is up): it stays in the tray.
            _ = try await shell.eval("Main.messageTray._expireNotification()")
            try await Await.polling("the banner gone") { try await shell.banner() == nil }
            #expect(try await inTray("Tray").count == 1)
            #expect(!signals.closed.elements.contains { $0.notification == id })

            // A transient one goes with its banner, reported expired.
            #expect(try await s.chime(["send", "-t", "0", "-e", "-p", "Passing", "by"]).status == 0)
            try await s.delivered.wait(forCount: 3)
            let passing = s.delivered.elements[2].notification
            _ = try await shell.banner(titled: "Passing")
            _ = try await shell.eval("Main.messageTray._expireNotification()")
            try await signals.closed.wait("the transient one closed") { $0.contains { $0.notification == passing } }
            #expect(signals.closed.elements.first { $0.notification == passing }?.reason == 1)
            #expect(try await inTray("Passing").isEmpty)

            // Closed by a call: reason 3, gone from the tray.
            #expect(try await s.chime(["close", "\(id)"]).status == 0)
            try await signals.closed.wait("the close reported") { $0.contains { $0.notification == id } }
            #expect(signals.closed.elements.first { $0.notification == id }?.reason == 3)
            #expect(try await inTray("Tray").isEmpty)

            // Replacing a popup it closed already (as a snooze coming back does): a new one, a new id.
            #expect(try await s.chime(["send", "-t", "0", "-r", "\(id)", "-p", "Tray", "again"]).status == 0)
            try await s.delivered.wait(forCount: 4)
            #expect(s.delivered.elements[3].notification != id)
            try await Await.polling("the new entry in the tray") { try await inTray("Tray").map(\.body) == ["again"] }

            // A close of an id it does not know: no error, and no signal.
            _ = try await s.observer.call(
                destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
                interface: "org.freedesktop.Notifications", member: "CloseNotification", [.uint32(4_000_000)])

            // An expiry time, which the shell does not keep: chimed closes the popup then.
            _ = try await ServerMatrixTests.sendExpiring(s, signals, as: 5)
            #expect(try await inTray("Expiring").isEmpty)
            #expect(s.chimed!.stderr.contains("which the server does not keep"))
            #expect(!signals.closed.elements.contains { $0.notification == 4_000_000 })
        }
    }

    /// An app's notifications carry its desktop entry, which the shell files them under (the app's name
    /// from its desktop file, its per-app settings). An app the user turned off in GNOME's settings
    /// (`org.gnome.desktop.notifications.application`, `enable=false`, in dconf as on a desktop): the
    /// shell takes its notification and keeps it out of sight (no banner, not in the tray) without a
    /// word to chimed, and chimed's history says it was not shown, and why.
    @Test func appsAreKnownByTheirDesktopEntryAndOneTurnedOffIsSaidSoInTheHistory() async throws {
        func desktopFile(_ name: String) -> String {
            "[Desktop Entry]\nType=Application\nName=\(name)\nExec=/bin/true\n"
        }
        try await Self.withShell(
            settings: "[org/gnome/desktop/notifications/application/org-example-muted]\nenable=false\n",
            applications: [
                "org.example.Shown.desktop": desktopFile("Shown App"),
                "org.example.Muted.desktop": desktopFile("Muted App"),
            ]
        ) { s, shell, signals in
            let muted = try await s.app("org.example.Muted")
            let shown = try await s.app("org.example.Shown")
            let mutedItem = try await muted.schedule(
                ChimeCore.NotificationContent(summary: "From Muted"), trigger: TriggerWire(at: Date()))
            try await s.delivered.wait(forCount: 1)
            // An app name of its own, which the shell would not find a desktop file by (it tries the app
            // name too): only the desktop entry chimed sends leads it to the app.
            var content = ChimeCore.NotificationContent(summary: "From Shown")
            content.appName = "Shown"
            _ = try await shown.schedule(content, trigger: TriggerWire(at: Date()))
            try await s.delivered.wait(forCount: 2)
            var tray: [GnomeShellServer.Notification] = []
            try await Await.polling("the shown app's notification in the tray") {
                tray = try await shell.notifications()
                return tray.contains { $0.title == "From Shown" }
            }
            #expect(tray.first { $0.title == "From Shown" }?.source == "Shown App", "\(tray)")
            // The shell has the muted one, filed under its app, out of its tray.
            #expect(!tray.contains { $0.title == "From Muted" }, "\(tray)")
            let held = try await shell.eval(
                """
                Main.notificationDaemon._fdoNotificationDaemon._sources
                    .filter(s => !Main.messageTray.contains(s))
                    .flatMap(s => s.notifications.map(n => s.title + ': ' + n.title)).join('\\n')
                """)
            #expect(held == "\"Muted App: From Muted\"")
            try await InteractionTests.awaitListing(s, ["history", "--item", "\(mutedItem)"], "the delivery") {
                $0.contains {
                    $0["event"] as? String == "delivered"
                        && ($0["detail"] as? String)?.contains(
                            "not shown: org.example.Muted's notifications are turned off in GNOME's settings") == true
                }
            }
            #expect(signals.closed.elements.isEmpty)
        }
    }
}
