import ChimeCore
import Foundation

// UserNotifications' content vocabulary, so code written for `import UserNotifications` builds with
// `import ChimeKit`. docs/chimekit.md has the table of what the desktop makes of each field.

/// A sound played with a notification: `.default` is the sound theme's `message-new-instant`; a name is a
/// freedesktop sound theme name (`bell`, `complete`, …) or, when it is a path, a sound file.
public final class UNNotificationSound: NSObject, NSCopying, @unchecked Sendable {
    /// The theme name or file the notification server is asked to play (a desktop addition).
    public let name: UNNotificationSoundName
    /// True for the critical sounds, which also make the notification critical (it stays until dismissed,
    /// and its sound is heard while the server's do-not-disturb is on). A desktop addition.
    public let isCritical: Bool
    /// The volume a critical sound was asked for, 0 to 1 (a desktop addition): chimed plays the sound that
    /// much quieter than the sound server's volume for event sounds (0: no sound); a server that plays sounds
    /// itself plays it at its own volume.
    public let audioVolume: Float?

    init(name: UNNotificationSoundName, isCritical: Bool = false, audioVolume: Float? = nil) {
        self.name = name
        self.isCritical = isCritical
        self.audioVolume = audioVolume.map { $0.isFinite ? min(max($0, 0), 1) : 1 }
    }

    /// A sound theme name (`bell`) or the path of a sound file (`/usr/share/sounds/…/bell.oga`).
    public convenience init(named name: UNNotificationSoundName) { self.init(name: name) }

    /// The sound theme's sound for a new message.
    public static let `default` = UNNotificationSound(name: UNNotificationSoundName("message-new-instant"))
    /// The theme's ringing phone (`phone-incoming-call`): the nearest thing to iOS's ringtone.
    public static let defaultRingtone = UNNotificationSound(name: UNNotificationSoundName("phone-incoming-call"))
    /// The theme's alarm (`alarm-clock-elapsed`), for a critical notification.
    public static let defaultCritical = UNNotificationSound(
        name: UNNotificationSoundName("alarm-clock-elapsed"), isCritical: true)

    /// The theme's alarm for a critical notification, played at `volume` (0 to 1; see `audioVolume`).
    public static func defaultCriticalSound(withAudioVolume volume: Float) -> UNNotificationSound {
        UNNotificationSound(name: defaultCritical.name, isCritical: true, audioVolume: volume)
    }

    /// A critical notification with a named sound.
    public static func criticalSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(name: name, isCritical: true)
    }

    /// A critical notification with a named sound, played at `volume` (0 to 1; see `audioVolume`).
    public static func criticalSoundNamed(_ name: UNNotificationSoundName, withAudioVolume volume: Float)
        -> UNNotificationSound
    {
        UNNotificationSound(name: name, isCritical: true, audioVolume: volume)
    }

    /// A named sound played as a ringtone: on the desktop, the named sound as any other (no sound loops).
    public static func ringtoneSoundNamed(_ name: UNNotificationSoundName) -> UNNotificationSound {
        UNNotificationSound(name: name)
    }

    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationSound else { return false }
        return name == other.name && isCritical == other.isCritical && audioVolume == other.audioVolume
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

/// The attachment option whose value (a `String`) is the file's type as a uniform type identifier
/// (`public.png`), for a file whose name does not say it.
public let UNNotificationAttachmentOptionsTypeHintKey = "UNNotificationAttachmentOptionsTypeHintKey"
/// The attachment option whose value (a `Bool`) hides the image: true sends no image to the server.
public let UNNotificationAttachmentOptionsThumbnailHiddenKey = "UNNotificationAttachmentOptionsThumbnailHiddenKey"
/// The attachment option for the part of the image to show; accepted, no effect (servers show the whole image).
public let UNNotificationAttachmentOptionsThumbnailClippingRectKey =
    "UNNotificationAttachmentOptionsThumbnailClippingRectKey"
/// The attachment option for the frame of a movie to show; accepted, no effect (only images are sent).
public let UNNotificationAttachmentOptionsThumbnailTimeKey = "UNNotificationAttachmentOptionsThumbnailTimeKey"

/// A file shown with a notification. Images (PNG, JPEG, GIF, SVG, WebP, BMP) are sent as the
/// specification's `image-path` hint, which servers show beside the text; a notification carries one image.
/// Sounds and movies are accepted, as on iOS, and not sent.
public final class UNNotificationAttachment: NSObject, @unchecked Sendable {
    public let identifier: String
    public let url: URL
    /// The file's uniform type identifier (`public.png`), from `UNNotificationAttachmentOptionsTypeHintKey` or
    /// the file's extension.
    public let type: String
    /// False when `UNNotificationAttachmentOptionsThumbnailHiddenKey` was true: the image is not sent.
    let showsThumbnail: Bool

    /// An attachment of a local image, sound or movie file; throws `attachmentInvalidURL` when `url` is not
    /// a readable file and `attachmentUnrecognizedType` when its type is none of those.
    public init(identifier: String, url: URL, options: [AnyHashable: Any]? = nil) throws {
        guard url.isFileURL else {
            throw UNError(.attachmentInvalidURL, "attachment \(identifier): \(url) is not a file URL")
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw UNError(.attachmentInvalidURL, "attachment \(identifier): \(url.path) is not a readable file")
        }
        let hint = options?[UNNotificationAttachmentOptionsTypeHintKey] as? String
        guard let type = hint ?? Self.types[url.pathExtension.lowercased()] else {
            throw UNError(
                .attachmentUnrecognizedType,
                "attachment \(identifier): \(url.lastPathComponent) is not an image, sound or movie; name it with its "
                    + "extension or pass UNNotificationAttachmentOptionsTypeHintKey")
        }
        self.identifier = identifier.isEmpty ? UUID().uuidString : identifier
        self.url = url
        self.type = type
        self.showsThumbnail = (options?[UNNotificationAttachmentOptionsThumbnailHiddenKey] as? Bool) != true
    }

    init(restoring identifier: String, url: URL) {
        self.identifier = identifier
        self.url = url
        self.type = Self.types[url.pathExtension.lowercased()] ?? "public.image"
        self.showsThumbnail = true
    }

    /// File extensions and their uniform type identifiers: the images servers show, and iOS's sounds and movies.
    static let types: [String: String] = [
        "png": "public.png", "jpg": "public.jpeg", "jpeg": "public.jpeg", "gif": "com.compuserve.gif",
        "svg": "public.svg-image", "webp": "org.webmproject.webp", "bmp": "com.microsoft.bmp",
        "aiff": "public.aiff-audio", "aif": "public.aiff-audio", "wav": "com.microsoft.waveform-audio",
        "mp3": "public.mp3", "m4a": "com.apple.m4a-audio", "ogg": "org.xiph.ogg", "oga": "org.xiph.ogg-audio",
        "mpg": "public.mpeg", "mpeg": "public.mpeg", "mp4": "public.mpeg-4", "m4v": "com.apple.m4v-video",
        "mov": "com.apple.quicktime-movie", "avi": "public.avi",
    ]
    static let imageTypes: Set<String> = [
        "public.png", "public.jpeg", "com.compuserve.gif", "public.svg-image", "org.webmproject.webp",
        "com.microsoft.bmp", "public.image",
    ]
    var isImage: Bool { showsThumbnail && Self.imageTypes.contains(type) }
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
        var filterCriteria: String?
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
    /// The Focus filter's criteria: kept and handed back (the `x-chime-filter-criteria` hint); the desktop has
    /// no Focus filters.
    open var filterCriteria: String? { storage.filterCriteria }
    /// The app's name as the notification server shows it (a desktop addition; empty: chimed's default).
    open var appName: String { storage.appName }
    /// An icon name from the theme, a path or a `file://` URI (a desktop addition).
    open var icon: String { storage.icon }

    /// Content updated by a communication object (an `INSendMessageIntent` on iOS). The desktop has no
    /// Intents, so no object provides content: it throws `contentProvidingObjectNotAllowed`, as iOS does for
    /// an object it does not take.
    open func updating(from provider: any UNNotificationContentProviding) throws -> UNNotificationContent {
        throw UNError(
            .contentProvidingObjectNotAllowed,
            "\(type(of: provider)) cannot provide notification content: the desktop has no communication intents")
    }

    open func copy(with zone: NSZone? = nil) -> Any { UNNotificationContent(fields: storage) }
    open func mutableCopy(with zone: NSZone? = nil) -> Any { UNMutableNotificationContent(fields: storage) }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationContent else { return false }
        return (try? wire()) == (try? other.wire())
    }

    open override var hash: Int { title.hashValue ^ body.hashValue }
}

/// An object that provides notification content (Intents' message and call intents on iOS).
public protocol UNNotificationContentProviding: NSObjectProtocol {}

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
    open override var filterCriteria: String? {
        get { storage.filterCriteria }
        set { storage.filterCriteria = newValue }
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

/// The domain of `UNError`s, as `NSError` has it.
public let UNErrorDomain = "UNErrorDomain"

/// An error of the UserNotifications vocabulary, shaped like Apple's bridged error: a `code` with Apple's raw
/// values, matched with `catch UNError.notificationsNotAllowed`; `localizedDescription` says what was wrong.
public struct UNError: CustomNSError, LocalizedError, Hashable, Sendable, CustomStringConvertible {
    public enum Code: Int, Sendable, Equatable {
        case notificationsNotAllowed = 1
        case attachmentInvalidURL = 100
        case attachmentUnrecognizedType = 101
        case attachmentInvalidFileSize = 102
        case attachmentNotInDataStore = 103
        case attachmentMoveIntoDataStoreFailed = 104
        case attachmentCorrupt = 105
        case notificationInvalidNoDate = 1400
        case notificationInvalidNoContent = 1401
        case contentProvidingObjectNotAllowed = 1500
        case contentProvidingInvalid = 1501
        case badgeInputInvalid = 1600
        /// chimed refused the request or could not be reached; `chimeError` has the details (a ChimeKit code).
        case chimeFailed = 9000
    }

    public static let notificationsNotAllowed = Code.notificationsNotAllowed
    public static let attachmentInvalidURL = Code.attachmentInvalidURL
    public static let attachmentUnrecognizedType = Code.attachmentUnrecognizedType
    public static let attachmentInvalidFileSize = Code.attachmentInvalidFileSize
    public static let attachmentNotInDataStore = Code.attachmentNotInDataStore
    public static let attachmentMoveIntoDataStoreFailed = Code.attachmentMoveIntoDataStoreFailed
    public static let attachmentCorrupt = Code.attachmentCorrupt
    public static let notificationInvalidNoDate = Code.notificationInvalidNoDate
    public static let notificationInvalidNoContent = Code.notificationInvalidNoContent
    public static let contentProvidingObjectNotAllowed = Code.contentProvidingObjectNotAllowed
    public static let contentProvidingInvalid = Code.contentProvidingInvalid
    public static let badgeInputInvalid = Code.badgeInputInvalid
    public static let chimeFailed = Code.chimeFailed

    public var code: Code
    /// What was wrong (a desktop addition; `localizedDescription` is the same text).
    public var message: String
    /// chimed's error, when the failure was chimed's answer (a desktop addition).
    public var chimeError: ChimeError?

    public init(_ code: Code, _ message: String, chimeError: ChimeError? = nil) {
        self.code = code
        self.message = message
        self.chimeError = chimeError
    }

    /// The error of `code`, as `NSError` makes it; `NSLocalizedDescriptionKey` in `userInfo` is its message.
    public init(_ code: Code, userInfo: [String: Any] = [:]) {
        self.init(code, userInfo[NSLocalizedDescriptionKey] as? String ?? "\(UNErrorDomain) error \(code.rawValue)")
    }

    init(_ error: ChimeError) {
        self.init(
            error.isPermissionDenied ? .notificationsNotAllowed : .chimeFailed, error.message, chimeError: error)
    }

    public static var errorDomain: String { UNErrorDomain }
    public var errorCode: Int { code.rawValue }
    public var errorUserInfo: [String: Any] { [NSLocalizedDescriptionKey: message] }
    /// The `NSError` user info, as Apple's bridged errors have it.
    public var userInfo: [String: Any] { errorUserInfo }
    public var errorDescription: String? { message }
    public var description: String { message }
}

extension UNError.Code {
    /// Lets `catch UNError.notificationsNotAllowed` match a `UNError` of this code, as with Apple's errors.
    public static func ~= (code: UNError.Code, error: any Error) -> Bool {
        (error as? UNError)?.code == code
    }
}
