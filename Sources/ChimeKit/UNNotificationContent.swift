import ChimeCore
import Foundation

// UserNotifications' content vocabulary, so code written for `import UserNotifications` builds with
// `import ChimeKit`. docs/chimekit.md has the table of what the desktop makes of each field.

/// A sound played with a notification: `.default` is the sound theme's `message-new-instant`; a name is a
/// freedesktop sound theme name (`bell`, `complete`, …) or, when it is a path, a sound file.
public final class UNNotificationSound: NSObject, @unchecked Sendable {
    /// The theme name or file the notification server is asked to play.
    public let name: UNNotificationSoundName
    /// True for the critical sounds, which also make the notification critical (it stays until dismissed).
    public let isCritical: Bool

    init(name: UNNotificationSoundName, isCritical: Bool = false) {
        self.name = name
        self.isCritical = isCritical
    }

    /// A sound theme name (`bell`) or the path of a sound file (`/usr/share/sounds/…/bell.oga`).
    public convenience init(named name: UNNotificationSoundName) { self.init(name: name) }

    /// The sound theme's sound for a new message.
    public static let `default` = UNNotificationSound(name: UNNotificationSoundName("message-new-instant"))
    /// The theme's alarm (`alarm-clock-elapsed`), for a critical notification.
    public static let defaultCritical = UNNotificationSound(
        name: UNNotificationSoundName("alarm-clock-elapsed"), isCritical: true)

    /// A critical notification with a named sound.
    public static func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(name: name, isCritical: true)
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationSound else { return false }
        return name == other.name && isCritical == other.isCritical
    }

    public override var hash: Int { name.rawValue.hashValue ^ (isCritical ? 1 : 0) }

    /// Whether the name is a file rather than a theme name.
    var isFile: Bool { name.rawValue.contains("/") }
}

/// The name of a sound: a sound theme name or a file's path.
public struct UNNotificationSoundName: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
}

/// A file shown with a notification. Images (PNG, JPEG, GIF, SVG, WebP, BMP) are sent as the
/// specification's `image-path` hint, which servers show beside the text; a notification carries one image.
public final class UNNotificationAttachment: NSObject, @unchecked Sendable {
    public let identifier: String
    public let url: URL
    public let type: String

    /// An attachment of a local file; throws when `url` is not a readable file.
    public init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL else {
            throw UNError(.attachmentInvalidURL, "attachment \(identifier): \(url) is not a file URL")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw UNError(.attachmentInvalidURL, "attachment \(identifier): \(url.path) is not a readable file")
        }
        self.identifier = identifier.isEmpty ? UUID().uuidString : identifier
        self.url = url
        self.type = url.pathExtension.lowercased()
    }

    init(restoring identifier: String, url: URL) {
        self.identifier = identifier
        self.url = url
        self.type = url.pathExtension.lowercased()
    }

    static let imageTypes: Set<String> = ["png", "jpg", "jpeg", "gif", "svg", "webp", "bmp"]
    var isImage: Bool { Self.imageTypes.contains(type) }
}

/// What a notification shows and carries, as UserNotifications has it. Use `UNMutableNotificationContent`
/// (or NiceNotifications' `NotificationContent`) to make one.
open class UNNotificationContent: NSObject, NSCopying, NSMutableCopying, @unchecked Sendable {
    var storage = Fields()

    struct Fields {
        var title = ""
        var subtitle = ""
        var body = ""
        var badge: NSNumber?
        var sound: UNNotificationSound?
        var userInfo: [AnyHashable: Any] = [:]
        var categoryIdentifier = ""
        var threadIdentifier = ""
        var attachments: [UNNotificationAttachment] = []
        var launchImageName = ""
        var targetContentIdentifier: String?
        var summaryArgument = ""
        var summaryArgumentCount = 0
        var interruptionLevel: UNNotificationInterruptionLevel = .active
        var relevanceScore: Double = 0
        var appName = ""
        var icon = ""
    }

    public override init() { super.init() }

    init(fields: Fields) {
        self.storage = fields
        super.init()
    }

    open var title: String { storage.title }
    open var subtitle: String { storage.subtitle }
    open var body: String { storage.body }
    /// The count the app's launcher icon shows (0 clears it); sent to docks as
    /// `com.canonical.Unity.LauncherEntry`.
    open var badge: NSNumber? { storage.badge }
    open var sound: UNNotificationSound? { storage.sound }
    /// Property-list values (strings, numbers, booleans, dates, data, arrays and dictionaries of them) under
    /// string keys, handed back to the app with its responses.
    open var userInfo: [AnyHashable: Any] { storage.userInfo }
    /// A category set with `setNotificationCategories`: its actions are shown.
    open var categoryIdentifier: String { storage.categoryIdentifier }
    open var threadIdentifier: String { storage.threadIdentifier }
    open var attachments: [UNNotificationAttachment] { storage.attachments }
    open var launchImageName: String { storage.launchImageName }
    open var targetContentIdentifier: String? { storage.targetContentIdentifier }
    open var summaryArgument: String { storage.summaryArgument }
    open var summaryArgumentCount: Int { storage.summaryArgumentCount }
    /// `.critical` and `.timeSensitive` raise the notification's urgency; `.passive` lowers it.
    open var interruptionLevel: UNNotificationInterruptionLevel { storage.interruptionLevel }
    open var relevanceScore: Double { storage.relevanceScore }
    /// The app's name as the notification server shows it (a desktop addition; empty: chimed's default).
    open var appName: String { storage.appName }
    /// An icon name from the theme, a path or a `file://` URI (a desktop addition).
    open var icon: String { storage.icon }

    open func copy(with zone: NSZone? = nil) -> Any { UNNotificationContent(fields: storage) }
    open func mutableCopy(with zone: NSZone? = nil) -> Any { UNMutableNotificationContent(fields: storage) }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        return (try? wire()) == (try? other.wire())
    }

    open override var hash: Int { title.hashValue ^ body.hashValue }
}

/// Content whose fields can be set, as in UserNotifications.
open class UNMutableNotificationContent: UNNotificationContent, @unchecked Sendable {
    open override var title: String {
        get { storage.title }
        set { storage.title = newValue }
    }
    open override var subtitle: String {
        get { storage.subtitle }
        set { storage.subtitle = newValue }
    }
    open override var body: String {
        get { storage.body }
        set { storage.body = newValue }
    }
    open override var badge: NSNumber? {
        get { storage.badge }
        set { storage.badge = newValue }
    }
    open override var sound: UNNotificationSound? {
        get { storage.sound }
        set { storage.sound = newValue }
    }
    open override var userInfo: [AnyHashable: Any] {
        get { storage.userInfo }
        set { storage.userInfo = newValue }
    }
    open override var categoryIdentifier: String {
        get { storage.categoryIdentifier }
        set { storage.categoryIdentifier = newValue }
    }
    open override var threadIdentifier: String {
        get { storage.threadIdentifier }
        set { storage.threadIdentifier = newValue }
    }
    open override var attachments: [UNNotificationAttachment] {
        get { storage.attachments }
        set { storage.attachments = newValue }
    }
    open override var launchImageName: String {
        get { storage.launchImageName }
        set { storage.launchImageName = newValue }
    }
    open override var targetContentIdentifier: String? {
        get { storage.targetContentIdentifier }
        set { storage.targetContentIdentifier = newValue }
    }
    open override var summaryArgument: String {
        get { storage.summaryArgument }
        set { storage.summaryArgument = newValue }
    }
    open override var summaryArgumentCount: Int {
        get { storage.summaryArgumentCount }
        set { storage.summaryArgumentCount = newValue }
    }
    open override var interruptionLevel: UNNotificationInterruptionLevel {
        get { storage.interruptionLevel }
        set { storage.interruptionLevel = newValue }
    }
    open override var relevanceScore: Double {
        get { storage.relevanceScore }
        set { storage.relevanceScore = newValue }
    }
    open override var appName: String {
        get { storage.appName }
        set { storage.appName = newValue }
    }
    open override var icon: String {
        get { storage.icon }
        set { storage.icon = newValue }
    }
}

/// NiceNotifications' content: UserNotifications' mutable content made in one call, with the default sound
/// unless told otherwise.
public final class NotificationContent: UNMutableNotificationContent, @unchecked Sendable {
    public init(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, sound: UNNotificationSound? = .default
    ) {
        super.init(
            fields: Fields(title: title ?? "", subtitle: subtitle ?? "", body: body ?? "", sound: sound))
    }

    /// Content without a sound.
    public static func muted(title: String? = nil, subtitle: String? = nil, body: String? = nil)
        -> NotificationContent
    {
        NotificationContent(title: title, subtitle: subtitle, body: body, sound: nil)
    }

    /// NiceNotifications' archive initialiser; content is not archived here, so it always fails.
    public required init?(coder: NSCoder) { return nil }
}

/// How much a notification may interrupt: mapped to the freedesktop urgency.
public enum UNNotificationInterruptionLevel: UInt, Sendable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}

/// An error of the UserNotifications vocabulary; `localizedDescription` says what was wrong.
public struct UNError: Error, LocalizedError, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Int, Sendable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case notificationInvalidNoDate = 1401
        case notificationInvalidNoContent = 1402
        case contentProvidingInvalid = 1500
        case badgeInputInvalid = 1600
        /// chimed refused the request or could not be reached; `chimeError` has the details.
        case chimeFailed = 9000
    }

    public var code: Code
    public var message: String
    /// chimed's error, when the failure was chimed's answer.
    public var chimeError: ChimeError?

    public init(_ code: Code, _ message: String, chimeError: ChimeError? = nil) {
        self.code = code
        self.message = message
        self.chimeError = chimeError
    }

    init(_ error: ChimeError) {
        self.init(
            error.isPermissionDenied ? .notificationsNotAllowed : .chimeFailed, error.message, chimeError: error)
    }

    public var errorDescription: String? { message }
    public var description: String { message }
}
