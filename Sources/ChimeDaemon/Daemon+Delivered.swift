import ChimeCore
import ChimeProtocol
import ChimeStore
import DBusKit
import Foundation

/// The notifications chimed showed that are still on the server: listed and closed by their owner.
extension Daemon {
    /// The most notifications `ListDelivered` returns (the newest): each carries its content, up to 64 KiB.
    static let maximumDeliveredListed = 256

    /// The most ids one `CloseDelivered` takes: as many as chimed remembers shown notifications.
    static let maximumClosedAtOnce = ScheduleStore.shownLimit

    /// `owner`'s notifications that are shown now (delivered, and neither closed nor being closed by
    /// chimed), newest first, at most `maximumDeliveredListed`. The content of one shown without its own
    /// is its item's, read from the store on the caller's time.
    public func deliveredNotifications(owner: String) async -> [DeliveredNotification] {
        let shown = self.shown.all.filter {
            $0.owner == owner && !core.router.closing.contains($0.notificationID)
        }
        .sorted {
            ($0.shownAt ?? $0.occurrence, $0.notificationID) > ($1.shownAt ?? $1.occurrence, $1.notificationID)
        }
        .prefix(Self.maximumDeliveredListed)
        let items = shown.filter { $0.content == nil }.compactMap { scheduler.item($0.itemID) }
        let entries = await definitions(of: items)
        return shown.map { shown in
            DeliveredNotification(
                notificationID: shown.notificationID, itemID: shown.itemID, group: shown.group,
                entry: shown.entryID, deliveredAt: shown.shownAt ?? shown.occurrence,
                content: shown.content ?? entries[shown.itemID]?.content.base ?? NotificationContent(summary: ""))
        }
    }

    /// Asks the server to close `owner`'s notifications `ids` (all of its shown ones when nil). An id
    /// that is not one of the owner's shown notifications is ignored, another owner's as one chimed does
    /// not know: an app learns nothing of other apps' notifications. The owner hears `NotificationClosed`
    /// for each, as the server closes it.
    public func closeDelivered(_ ids: [UInt32]?, owner: String) throws {
        let targets: [UInt32]
        if let ids {
            targets = ids.filter { shown[$0]?.owner == owner }
        } else {
            targets = shown.all.filter { $0.owner == owner }.map(\.notificationID)
        }
        for id in Set(targets).sorted() where !core.router.closing.contains(id) {
            logger.info("closing notification \(id) as its app asked", metadata: ["owner": "\(owner)"])
            closeNotification(id)
        }
    }
}
