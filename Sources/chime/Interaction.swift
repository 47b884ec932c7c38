import ArgumentParser
import ChimeKit
import DBusKit
import Foundation

struct Snooze: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show an item's notification again after a while.",
        discussion: """
            The latest notification of the item is closed and comes back after DURATION with the same \
            actions, replacing its own popup. Prints the snooze's item id.
            """)

    @Argument(help: "The item id, as `chime pending` or `chime history` shows it.")
    var id: UInt64

    @Argument(help: ArgumentHelp("How long: 90s, 10m, 1h30m, 1d …", valueName: "DURATION"))
    var duration: String

    func run() async throws {
        let seconds: TimeInterval
        do {
            seconds = try TimeInput.parseDuration(duration)
        } catch {
            throw fail("\(error)", .badInput)
        }
        let snooze = try await withClient { (client) throws(ChimeError) in
            try await client.snooze(id, seconds: UInt32(clamping: Int(seconds)))
        }
        print(snooze)
    }
}

struct GroupSwitch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Turn a group on or off.",
        discussion: """
            Off removes everything the group has pending and blocks the app from rescheduling it until it is \
            on again; on puts its entries back. GROUP is an id from `chime groups`, or APP/GROUP when several \
            apps have a group of that id.
            """)

    enum Switch: String, ExpressibleByArgument, CaseIterable {
        case enable, disable
    }

    @Argument(help: "enable or disable.")
    var change: Switch

    @Argument(help: "The group.")
    var group: String

    func run() async throws {
        try await withClient { (client) throws(ChimeError) in
            try await client.setGroupEnabled(group, change == .enable)
        }
    }
}

struct Apps: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the apps that schedule notifications, with their permission.",
        discussion: "Each line: app, permission (allowed, denied, undetermined), pending items, groups, connected.")

    @Flag(help: "Print a JSON array instead of lines.")
    var json = false

    func run() async throws {
        let apps = try await withClient { (client) throws(ChimeError) in try await client.apps() }
        if json {
            try printJSON(
                apps.map {
                    [
                        "app": $0.app, "consent": $0.consent, "items": $0.items, "groups": $0.groups,
                        "connected": $0.connected,
                    ]
                })
            return
        }
        for app in apps {
            print(
                "\(app.app)\t\(app.consent)\t\(app.items) pending\t\(app.groups) groups"
                    + (app.connected ? "\tconnected" : ""))
        }
    }
}

struct AppSwitch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Allow or deny an app to schedule notifications, or forget the choice.",
        discussion: "reset forgets the choice: the app's next request asks again.")

    enum Choice: String, ExpressibleByArgument, CaseIterable {
        case allow, deny, reset
    }

    @Argument(help: "allow, deny or reset.")
    var choice: Choice

    @Argument(help: "The app id, as `chime apps` shows it.")
    var app: String

    func run() async throws {
        try await withClient { (client) throws(ChimeError) in try await client.setConsent(choice.rawValue, app: app) }
    }
}

struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the notification server and what chimed holds.",
        discussion: """
            The server's name, version and capabilities, whether it is paused, and counts; whether chimed can \
            wake the machine for items scheduled with --wake, and for when its alarm is set (docs/wake.md).
            """)

    @Flag(help: "Print a JSON object instead of lines.")
    var json = false

    func run() async throws {
        let status = try await withClient { (client) throws(ChimeError) in try await client.status() }
        var object: [String: Any] = [:]
        for (key, value) in status {
            switch value {
            case .string(let s): object[key] = s
            case .boolean(let b): object[key] = b
            case .uint32(let u): object[key] = Int(u)
            case .int64(let usec) where key == "wake-at":
                object[key] = iso(Date(timeIntervalSince1970: Double(usec) / 1_000_000))
            case .array(_, let items):
                object[key] = items.compactMap { if case .string(let s) = $0 { s } else { nil } }
            default: break
            }
        }
        if json {
            let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
            print(String(decoding: data, as: UTF8.self))
            return
        }
        if object["server-present"] as? Bool == true {
            print(
                "server: \(object["server-name"] ?? "?") \(object["server-version"] ?? "") "
                    + "(\(object["server-vendor"] ?? ""), specification \(object["spec-version"] ?? ""))")
            print("capabilities: \((object["capabilities"] as? [String] ?? []).joined(separator: " "))")
            if let paused = object["paused"] as? Bool { print("paused: \(paused ? "yes" : "no")") }
        } else {
            print("server: none on the bus (notifications wait until one appears)")
        }
        print(
            "pending: \(object["pending"] ?? 0), groups: \(object["groups"] ?? 0), "
                + "to deliver: \(object["to-deliver"] ?? 0), apps: \(object["apps"] ?? 0)")
        if let count = object["set-aside"] as? Int, count > 0 {
            print("set aside: \(count) stored rows chimed could not read, kept in the table set_aside of chime.sqlite")
        }
        let wakeItems = object["wake-items"] as? Int ?? 0
        switch object["wake-alarm"] as? String {
        case "armed": print("wake alarm: armed for \(object["wake-at"] ?? "?") (\(wakeItems) items wake the machine)")
        case "unavailable":
            print(
                "wake alarm: unavailable (\(wakeItems) items ask to wake the machine): \(object["wake-problem"] ?? "")")
        case "idle": print("wake alarm: available, not armed (no item asks to wake the machine)")
        default: break
        }
    }
}
