import ChimeCore
import ChimeProtocol
import DBusKit
import Foundation

/// The launcher icon's badge: Unity's `com.canonical.Unity.LauncherEntry` signal, which docks and panels
/// (Dash to Dock, Plank, KDE's task manager, …) follow for every app.
extension Daemon {
    static let launcherEntryPath: DBusObjectPath = "/io/chime/Chime1/LauncherEntry"
    static let launcherEntryInterface = "com.canonical.Unity.LauncherEntry"

    /// Emits `Update(s app_uri, a{sv} properties)` for a delivered notification whose content sets a
    /// badge: `count` (x) and `count-visible` (b, false for 0), for `application://ID.desktop` where ID is
    /// the content's desktop entry when it is the owner's own (`OwnNames`), else the owner's app id: an
    /// app sets the count on its own icon only. Nothing is emitted when neither is a desktop file id. The
    /// signal goes to everyone on the bus, as the launchers that show it expect.
    func announceBadge(of content: NotificationContent, owner: String) {
        guard let badge = content.badge else { return }
        let own = content.desktopEntry.flatMap { OwnNames.isOwn(desktopEntry: $0, appID: owner) ? $0 : nil }
        guard let id = DesktopFileID.parse(own) ?? DesktopFileID.parse(owner) else {
            logger.debug("not showing badge \(badge): no desktop entry to show it on", metadata: ["owner": "\(owner)"])
            return
        }
        let properties = DBusValue.dictionary(
            key: .string, value: .variant,
            [
                DBusDictEntry(.string("count"), .variant(.int64(Int64(badge)))),
                DBusDictEntry(.string("count-visible"), .variant(.boolean(badge > 0))),
            ])
        do {
            try connection?.emitSignal(
                path: Self.launcherEntryPath, interface: Self.launcherEntryInterface, member: "Update",
                [.string("application://\(id).desktop"), properties])
        } catch {
            logger.warning("cannot announce badge \(badge) of \(id): \(error)")
        }
    }
}
