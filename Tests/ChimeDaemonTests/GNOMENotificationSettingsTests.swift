import Foundation
import Testing

@testable import ChimeDaemon

/// GNOME's per-app notification settings read from a dconf database, as GNOME Shell reads them.
@Suite struct GNOMENotificationSettingsTests {
    /// `dconf compile` of a keyfile turning `org-example-muted` off and `org-example-loud` on (dconf 0.40).
    static let database = Data(
        base64Encoded: [
            "R1ZhcmlhbnQAAAAAAAAAABgAAABUAQAAAAAAKAsAAAAAAAAAAQAAAAEAAAACAAAABAAAAAUAAAAGAAAACAAAAAkAAAAKAAAA",
            "CwAAALmI/doBAAAAVAEAAAgATABcAQAAYAEAALC3JDAFAAAAYAEAAAYATABoAQAAbAEAANS1AgD/////bAEAAAEATABwAQAA",
            "dAEAAMg521sEAAAAdAEAAAYAdgCAAQAAgwEAACF2gsoJAAAAgwEAABIATACYAQAAoAEAAEtQkAsCAAAAoAEAAAQATACkAQAA",
            "qAEAAD1YOroKAAAAqAEAAAYAdgCwAQAAswEAAMIdjIUAAAAAswEAAA4ATADEAQAAyAEAAM8/G/EEAAAAyAEAAA4AdgDYAQAA",
            "9AEAAIVyAoYHAAAA9AEAAAwATAAAAgAACAIAANYgHUQJAAAACAIAABEATAAcAgAAIAIAAGRlc2t0b3AvBwAAAGdub21lLwAA",
            "AAAAAC8AAAAFAAAAZW5hYmxlAAAAAAAAAABib3JnLWV4YW1wbGUtbXV0ZWQvAAAACAAAAAMAAABvcmcvAQAAAGVuYWJsZQAA",
            "AQBibm90aWZpY2F0aW9ucy8AAAAJAAAAYXBwbGljYXRpb24taWQAAG9yZy5leGFtcGxlLk11dGVkLmRlc2t0b3AAAHNhcHBs",
            "aWNhdGlvbi8KAAAABAAAAG9yZy1leGFtcGxlLWxvdWQvAAAABgAAAA==",
        ].joined())!

    @Test func theAppsTurnedOffAreReadFromTheDatabase() {
        #expect(GNOMENotificationSettings.disabledApps(inDatabase: Self.database) == ["org-example-muted"])
    }

    @Test(arguments: [
        ("org.example.Muted", "org-example-muted"), ("org.example.Muted.desktop", "org-example-muted"),
        ("Org_Example--App", "org-example-app"), ("firefox-esr", "firefox-esr"),
    ])
    func anAppsSettingsAreNamedAsTheShellNamesThem(entry: String, name: String) {
        #expect(GNOMENotificationSettings.settingsName(ofDesktopEntry: entry) == name)
    }

    /// Every truncation and every single changed byte is read without a crash: nothing or some values.
    @Test func aDamagedDatabaseIsReadSafely() {
        let bytes = [UInt8](Self.database)
        for length in 0..<bytes.count {
            _ = GNOMENotificationSettings.disabledApps(inDatabase: Data(bytes[0..<length]))
        }
        for index in bytes.indices {
            for value: UInt8 in [0x00, 0x7F, 0xFF] {
                var damaged = bytes
                damaged[index] = value
                _ = GNOMENotificationSettings.disabledApps(inDatabase: Data(damaged))
            }
        }
        #expect(GNOMENotificationSettings.disabledApps(inDatabase: Data("not a database".utf8)) == nil)
    }

    /// Off only where the shell would find the app (its desktop file), and on again once the file says so.
    @Test func anAppIsOffWhenItsSettingSaysSoAndTheShellFindsIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gnome-settings-\(UUID())")
        defer { try? FileManager.default.removeItem(at: folder) }
        let applications = folder.appendingPathComponent("applications")
        try FileManager.default.createDirectory(at: applications, withIntermediateDirectories: true)
        let database = folder.appendingPathComponent("user")
        try Self.database.write(to: database)
        let settings = GNOMENotificationSettings(database: database, applications: [applications])
        #expect(!settings.turnedOff(desktopEntry: "org.example.Muted"))
        try Data().write(to: applications.appendingPathComponent("org.example.Muted.desktop"))
        try Data().write(to: applications.appendingPathComponent("org.example.Loud.desktop"))
        #expect(settings.turnedOff(desktopEntry: "org.example.Muted"))
        #expect(!settings.turnedOff(desktopEntry: "org.example.Loud"))
        #expect(!settings.turnedOff(desktopEntry: "../org.example.Muted"))
        try FileManager.default.removeItem(at: database)
        #expect(!settings.turnedOff(desktopEntry: "org.example.Muted"))
    }

    @Test func theDatabaseIsFoundByTheXDGBaseDirectories() {
        let settings = GNOMENotificationSettings.user(environment: [
            "HOME": "/home/u", "XDG_DATA_DIRS": "/usr/share:relative:/var/lib/flatpak/exports/share",
        ])
        #expect(settings?.database.path == "/home/u/.config/dconf/user")
        #expect(
            settings?.applications.map(\.path) == [
                "/home/u/.local/share/applications", "/usr/share/applications",
                "/var/lib/flatpak/exports/share/applications",
            ])
        #expect(
            GNOMENotificationSettings.user(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/c"])?.database.path
                == "/c/dconf/user")
        #expect(GNOMENotificationSettings.user(environment: [:]) == nil)
    }
}
