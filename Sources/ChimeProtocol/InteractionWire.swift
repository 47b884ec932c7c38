import ChimeCore
import DBusKit
import Foundation

/// A category of actions as `RegisterCategories` takes it: `id` (s), `actions` (aa{sv}: `id` s, `title`
/// s, `options` as: destructive, foreground, authentication-required, text-input; `command` as; `icon` s, an
/// icon name shown instead of the title where the server has `action-icons`), `default`
/// (s, the action a click on the notification means), `minimal` (as, at most two: the actions for servers
/// that show few buttons).
public enum CategoryWire {
    public static func encode(_ category: ActionCategory) -> DBusValue {
        var record = WireRecord()
        record.set("id", category.id)
        record.set(
            "actions",
            records: category.actions.map { action in
                var r = WireRecord()
                r.set("id", action.id)
                r.set("title", action.title)
                if !action.options.isEmpty { r.set("options", strings: action.options.map(\.rawValue).sorted()) }
                if let command = action.command { r.set("command", strings: command) }
                if let icon = action.icon { r.set("icon", icon) }
                return r
            })
        record.set("default", category.defaultAction)
        if let minimal = category.minimalActions { record.set("minimal", strings: minimal) }
        return record.value
    }

    public static func decode(_ value: DBusValue, index: Int) throws(DBusError) -> ActionCategory {
        let fields = try WireFields(value, what: "category \(index + 1)")
        try fields.refuseUnknown(known: ["id", "actions", "default", "minimal"])
        guard let id = try fields.string("id") else { throw invalid("category \(index + 1) has no \"id\"") }
        var actions: [CategoryAction] = []
        for action in try fields.records("actions") ?? [] {
            try action.refuseUnknown(known: ["id", "title", "options", "command", "icon"])
            var options = Set<CategoryAction.Option>()
            for name in try action.strings("options") ?? [] {
                guard let option = CategoryAction.Option(rawValue: name) else {
                    throw invalid(
                        "category \(id): unknown action option \"\(name)\"; use destructive, foreground, "
                            + "authentication-required or text-input")
                }
                options.insert(option)
            }
            actions.append(
                CategoryAction(
                    id: try action.string("id") ?? "", title: try action.string("title") ?? "", options: options,
                    command: try action.strings("command"), icon: try action.string("icon")))
        }
        let category = ActionCategory(
            id: id, actions: actions, defaultAction: try fields.string("default"),
            minimalActions: try fields.strings("minimal"))
        do {
            try category.validate()
        } catch {
            throw invalid(error.message)
        }
        return category
    }
}

/// One app as `ListApps` returns it: `app` (s), `consent` (s: allowed, denied, undetermined), `items` (u,
/// pending), `groups` (u), `connected` (b).
public struct AppInfo: Hashable, Sendable {
    public var app: String
    public var consent: String
    public var items: Int
    public var groups: Int
    public var connected: Bool

    public init(app: String, consent: String, items: Int, groups: Int, connected: Bool) {
        self.app = app
        self.consent = consent
        self.items = items
        self.groups = groups
        self.connected = connected
    }

    public var encoded: WireRecord {
        var r = WireRecord()
        r.set("app", app)
        r.set("consent", consent)
        r.set("items", .uint32(UInt32(clamping: items)))
        r.set("groups", .uint32(UInt32(clamping: groups)))
        r.set("connected", connected)
        return r
    }

    public init(_ fields: WireFields) throws(DBusError) {
        guard let app = try fields.string("app") else { throw invalid("an app record must name the app") }
        self.init(
            app: app, consent: try fields.string("consent") ?? "", items: Int(try fields.uint32("items") ?? 0),
            groups: Int(try fields.uint32("groups") ?? 0), connected: try fields.bool("connected") ?? false)
    }
}
