import ChimeProtocol
import DBusKit
import Foundation

/// The notification server as the core knows it (`ServerPresence`, a part of `DeliveryCore`).
extension Daemon {
    /// The unique name of the server's connection; nil when no one owns the name.
    var serverOwner: String? { core.presence.owner }
    /// Set when Notify found no server; cleared when one appears.
    var serverMissing: Bool { core.presence.missing }
    /// The present server's name and capabilities, as it gave them.
    var serverInfo: ServerInfo { core.presence.info }
    /// Whether the present server said it is paused; nil: it has not said (or there is none).
    var serverPausedState: Bool? { core.presence.paused }
}

/// The properties that describe the notification server (`NotificationServerPresent`,
/// `ServerInformation`, `Paused`), and the PropertiesChanged signals that keep a listener up to date.
extension Daemon {
    /// The `Paused` property: whether the present server said it is paused (dunst's `paused` or an
    /// `Inhibited` property), false when there is no server or it tells neither. From what chimed knows,
    /// so a server that hangs delays no one.
    var pausedProperty: Bool { core.presence.pausedProperty }

    /// Announces the server properties as chimed knows them now.
    func announceServerProperties() {
        announce(Self.serverProperties(of: serverOwner != nil ? serverInfo : nil, paused: pausedProperty))
    }

    /// The server properties: `NotificationServerPresent`, `ServerInformation` (`present` (b), and while a
    /// server is present `name`, `vendor`, `version`, `spec-version` (s, from GetServerInformation) and
    /// `capabilities` (as)) and `Paused`, for the present server's `info` (nil: none).
    static func serverProperties(of info: ServerInfo?, paused: Bool) -> [String: DBusValue] {
        var r = WireRecord()
        r.set("present", info != nil)
        if let info {
            r.set("name", info.name)
            r.set("vendor", info.vendor)
            r.set("version", info.version)
            r.set("spec-version", info.specVersion)
            r.set("capabilities", strings: info.capabilities)
        }
        return [
            "NotificationServerPresent": .boolean(info != nil), "ServerInformation": r.value,
            "Paused": .boolean(paused),
        ]
    }

    /// The server properties before anything is known of a server.
    static let initialServerProperties = serverProperties(of: nil, paused: false)

    /// A server property as last announced, read without visiting the daemon's queue (a `Get` from any
    /// app is answered from what the daemon published, however busy it is).
    nonisolated func serverProperty(_ name: String) -> DBusValue {
        published.withLock { $0.serverProperties[name] } ?? Self.initialServerProperties[name]!
    }

    /// Publishes the values in `values` for `Get`, and emits PropertiesChanged for those that differ from
    /// what was last announced.
    func announce(_ values: [String: DBusValue]) {
        let changed: [String: DBusValue] = published.withLock { state in
            let changed = values.filter { state.serverProperties[$0.key] != $0.value }
            state.serverProperties.merge(changed) { $1 }
            return changed
        }
        guard !changed.isEmpty, let connection else { return }
        do {
            try connection.emitPropertiesChanged(path: ChimeBus.path, interface: ChimeBus.interface, changed: changed)
        } catch {
            logger.warning("cannot announce changed properties: \(error.message)")
        }
    }

    /// Follows the server's own pause switch: dunst and servers with an `Inhibited` property emit
    /// PropertiesChanged when it flips.
    nonisolated func subscribeToServerPause(on connection: DBusConnection) async throws {
        let rule = DBusMatchRule(
            sender: NotificationServer.name, interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged", path: NotificationServer.path)
        _ = try await connection.subscribe(rule) { [weak self] message in
            guard let self, message.body.count >= 2, case .string(let interface) = message.body[0],
                case .dictionary(_, _, let entries) = message.body[1]
            else { return }
            let property = Self.pauseProperties.first { $0.interface == interface }?.property
            for entry in entries {
                guard case .string(let name) = entry.key, name == property,
                    case .variant(.boolean(let paused)) = entry.value
                else { continue }
                self.onQueue { $0.handle(.serverPausedChanged(paused)) }
            }
        }
    }

    /// Where servers say they are paused, asked in this order: dunst's switch, then the `Inhibited`
    /// property some servers add to the specification's interface.
    static let pauseProperties: [(interface: String, property: String)] = [
        ("org.dunstproject.cmd0", "paused"), (NotificationServer.interface, "Inhibited"),
    ]
}
