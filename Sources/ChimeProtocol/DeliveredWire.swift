import ChimeCore
import DBusKit
import Foundation

/// One notification chimed showed that is still on the server (delivered and not closed), as
/// `ListDelivered` returns it: `notification` (u, the server's id), `item` (t), `group` (s) and `entry`
/// (s) for a group's entry, `delivered-at` (x), `content` (a{sv}, what was shown, as `Schedule` takes
/// content; a category's actions are not in it).
public struct DeliveredNotification: Hashable, Sendable {
    public var notificationID: UInt32
    public var itemID: UInt64
    public var group: String?
    public var entry: String?
    public var deliveredAt: Date
    public var content: NotificationContent

    public init(
        notificationID: UInt32, itemID: UInt64, group: String? = nil, entry: String? = nil, deliveredAt: Date,
        content: NotificationContent
    ) {
        self.notificationID = notificationID
        self.itemID = itemID
        self.group = group
        self.entry = entry
        self.deliveredAt = deliveredAt
        self.content = content
    }

    public var encoded: WireRecord {
        var record = WireRecord()
        record.set("notification", .uint32(notificationID))
        record.set("item", .uint64(itemID))
        record.set("group", group)
        record.set("entry", entry)
        record.set("delivered-at", deliveredAt)
        record.set("content", ContentWire.encode(content))
        return record
    }

    public init(_ fields: WireFields) throws(DBusError) {
        guard let notificationID = try fields.uint32("notification"), let itemID = try fields.uint64("item"),
            let deliveredAt = try fields.date("delivered-at"),
            let content = try fields.value("content", WireRecord.type)
        else { throw invalid("a delivered notification must have notification, item, delivered-at and content") }
        self.init(
            notificationID: notificationID, itemID: itemID, group: try fields.string("group"),
            entry: try fields.string("entry"), deliveredAt: deliveredAt,
            content: try ContentWire.decode(content, what: "notification \(notificationID) content"))
    }
}
