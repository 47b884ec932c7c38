import DBusKit

/// What chimed knows of the notification server: whether it is on the bus, what it is, whether it is
/// paused, and so whether a notification may be sent to it now. Pure: no bus, no clock; a part of
/// `DeliveryCore`, which feeds it events and passes its actions on.
///
/// States (`readiness`):
/// - `.waiting`: the first answer about the name's owner has not come, or a server owns the name and
///   its name and capabilities are still being asked (whether its body is markup decides how a body is
///   sent).
/// - `.missing`: a Notify found no server; nothing is sent until one appears (another call could only
///   fail again, or try to auto-start a server again and again).
/// - `.ready`: the owner's information is known, or no one owns the name (a Notify then either finds
///   none or starts a server).
///
/// Events: `ownerChanged(owner)`, `infoArrived(owner, info, paused)` (the answers to the questions asked
/// when `owner` appeared), `notifyFoundNoServer`, `pausedChanged`.
///
/// Actions: `serverAppeared(owner)` and `serverGone` (say so; delivery's retry ends when a server
/// appears), `learn(owner)` (ask the new owner its information and pause state), `learned` (the
/// present server's information is known: its body markup and quirks follow from it),
/// `announceProperties` / `announcePaused` (PropertiesChanged), and `readiness(_)` (delivery is told
/// whether it may send, after every event that can change it).
struct ServerPresence: Sendable {
    enum Readiness: Hashable, Sendable {
        case waiting
        case missing
        case ready
    }

    /// What `GetServerInformation` answers.
    typealias Identity = (name: String, vendor: String, version: String, specVersion: String)

    enum Event: Sendable {
        /// The bus's answer about who owns the server's name (nil: no one).
        case ownerChanged(String?)
        /// What `owner` said of itself when asked after it appeared: its capabilities (nil when it did not
        /// answer, in time or at all), its identity (nil when it did not say) and whether it is paused (nil
        /// when it did not say).
        case infoArrived(owner: String?, capabilities: [String]?, identity: Identity?, paused: Bool?)
        /// A Notify found no server on the bus.
        case notifyFoundNoServer
        /// The server's own pause switch flipped.
        case pausedChanged(Bool)
    }

    enum Action: Hashable, Sendable {
        case serverAppeared(String)
        case serverGone
        case learn(owner: String)
        case learned
        case announceProperties
        case announcePaused
        case readiness(Readiness)
    }

    /// Whether the first answer about the server's owner came; until then nothing is sent.
    private(set) var ownerKnown = false
    /// The unique name of the server's connection; nil when no one owns the name.
    private(set) var owner: String?
    /// Set when Notify found no server; cleared when one appears.
    private(set) var missing = false
    /// The owner whose name and capabilities `info` holds.
    private(set) var infoOwner: String?
    /// The name, vendor, version and capabilities the server gave.
    private(set) var info = ServerInfo()
    /// Whether the present server said it is paused; nil: it has not said (or there is none).
    private(set) var paused: Bool?

    var readiness: Readiness {
        if !ownerKnown { return .waiting }
        if missing { return .missing }
        if owner != nil, infoOwner != owner { return .waiting }
        return .ready
    }

    /// Whether a server owns the name.
    var present: Bool { owner != nil }
    /// The `Paused` property: the present server said it is paused.
    var pausedProperty: Bool { owner != nil && paused == true }
    /// Whether the present server said what it can (`GetCapabilities`); until then, and when it did not
    /// answer, a body is escaped (`NotificationServer.BodyFormat.unknown`).
    private(set) var capabilitiesKnown = false
    /// Whether the server reads a body as markup (its capability `body-markup`).
    var bodyMarkup: Bool { info.capabilities.contains("body-markup") }
    /// How the server reads a body.
    var bodyFormat: NotificationServer.BodyFormat {
        guard capabilitiesKnown else { return .unknown }
        guard bodyMarkup else { return .plain }
        return quirks.readsBasicMarkupOnly ? .basicMarkup : .markup
    }
    /// What the server does differently from the specification, by the name it gave.
    var quirks: ServerQuirks { ServerQuirks.of(info.name) }

    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .ownerChanged(let new):
            owner = new
            ownerKnown = true
            if let new {
                missing = false
                return [.serverAppeared(new), .learn(owner: new), .readiness(readiness)]
            }
            paused = nil
            return [.serverGone, .announceProperties, .readiness(readiness)]
        case .infoArrived(let from, let capabilities, let identity, let newPaused):
            // Another server took the name meanwhile: what it is will be asked again.
            guard from == owner else { return [] }
            infoOwner = from
            paused = newPaused
            capabilitiesKnown = capabilities != nil
            info.capabilities = capabilities ?? []
            if let identity {
                info.name = identity.name
                info.vendor = identity.vendor
                info.version = identity.version
                info.specVersion = identity.specVersion
            }
            return [.learned, .announceProperties, .readiness(readiness)]
        case .notifyFoundNoServer:
            missing = true
            return [.readiness(readiness)]
        case .pausedChanged(let new):
            paused = new
            return [.announcePaused]
        }
    }

    /// What a failed Notify means for delivery, given the server it was sent to (`sentTo`, the owner
    /// when it was sent) and the owner now.
    func classify(_ error: DBusError, sentTo: String?) -> DeliveryPipeline.SendFailure {
        if NotificationServer.meansNoServer(error) {
            // The bus told chimed that the server went before it answered this call, so a server owning
            // the name now is a new one: send to it. (Not when chimed's own connection is closed.)
            guard owner == nil || error.is(.disconnected) else { return .serverChanged }
            return .noServer(reason: "no notification server on the bus (\(error.name))")
        }
        if error.is(.noReply) {
            guard owner != nil, owner == sentTo else { return .serverChanged }
            return .noReply
        }
        return .refused(reason: error.description)
    }
}
