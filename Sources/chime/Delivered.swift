import ArgumentParser
import ChimeKit
import Foundation

struct Delivered: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List your notifications that are shown now, newest first.",
        discussion: """
            Your notifications (those sent with chime or from group files) that the notification server \
            shows: delivered and not yet closed. Each line: notification id, item id, delivered at, \
            group/entry (or -), summary. At most the newest 256.
            """)

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        let shown = try await withClient { (client) throws(ChimeError) in try await client.delivered() }
        if json {
            try printJSON(
                shown.map { notification in
                    var object: [String: Any] = [
                        "notification": notification.notificationID, "item": notification.itemID,
                        "delivered": iso(notification.deliveredAt), "summary": notification.content.summary,
                    ]
                    if !notification.content.body.isEmpty { object["body"] = notification.content.body }
                    if let group = notification.group { object["group"] = group }
                    if let entry = notification.entry { object["entry"] = entry }
                    return object
                })
            return
        }
        for notification in shown {
            let place = notification.group.map { "\($0)/\(notification.entry ?? "")" } ?? "-"
            print(
                "\(notification.notificationID)\t\(notification.itemID)\t\(iso(notification.deliveredAt))\t\(place)\t"
                    + notification.content.summary)
        }
    }
}

struct Close: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Close notifications that are shown now, by notification id, or all of yours with --all.",
        discussion: "The ids are the notification ids `chime delivered` lists; ids no longer shown are ignored.")

    @Argument(help: "Notification ids, as `chime delivered` shows them.")
    var ids: [UInt32] = []

    @Flag(help: "Close all of your notifications that are shown now.")
    var all = false

    func validate() throws {
        if all, !ids.isEmpty { throw ValidationError("give notification ids or --all, not both") }
        if !all, ids.isEmpty { throw ValidationError("give notification ids, or --all") }
    }

    func run() async throws {
        try await withClient { (client) throws(ChimeError) in
            if all { try await client.closeAllDelivered() } else { try await client.closeDelivered(ids) }
        }
    }
}
