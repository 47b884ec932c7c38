import ChimeCore
import Foundation

// UserNotifications' requests, triggers, actions and categories.

/// When a request fires. Subclasses: `UNCalendarNotificationTrigger`, `UNTimeIntervalNotificationTrigger`.
open class UNNotificationTrigger: NSObject, @unchecked Sendable {
    public let repeats: Bool

    init(repeats: Bool) {
        self.repeats = repeats
        super.init()
    }

    /// The trigger as chimed takes it.
    func resolved(now: Date, timeZone: TimeZone) throws(UNError) -> ResolvedTrigger {
        throw UNError(.notificationInvalidNoDate, "this kind of trigger is not supported")
    }
}

/// Fires when the clock matches date components (weekday 1 is Sunday); with `repeats`, at every match.
public final class UNCalendarNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let dateComponents: DateComponents

    public init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.dateComponents = dateComponents
        super.init(repeats: repeats)
    }

    /// The next date that matches, after now, as chimed computes it (from the system's tz database); nil
    /// when none does, or for components chimed does not match (`weekOfYear`, …).
    public func nextTriggerDate() -> Date? {
        let now = Date()
        let zone = dateComponents.timeZone ?? .current
        guard
            let resolved = try? CalendarNotificationTrigger(dateMatching: dateComponents, repeats: repeats)
                .resolve(now: now, timeZone: zone)
        else { return nil }
        return try? resolved.occurrences(after: now, until: Recurrence.latestOccurrence, limit: 1, timeZone: zone).first
    }

    override func resolved(now: Date, timeZone: TimeZone) throws(UNError) -> ResolvedTrigger {
        do {
            return try CalendarNotificationTrigger(dateMatching: dateComponents, repeats: repeats)
                .resolve(now: now, timeZone: timeZone)
        } catch {
            throw UNError(.notificationInvalidNoDate, error.message, chimeError: error)
        }
    }
}

/// Fires `timeInterval` seconds after it is added; with `repeats`, again every `timeInterval` seconds,
/// which must then be at least 60, as iOS requires.
public final class UNTimeIntervalNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    public let timeInterval: TimeInterval
    let added = Date()

    public init(timeInterval: TimeInterval, repeats: Bool) {
        self.timeInterval = timeInterval
        super.init(repeats: repeats)
    }

    /// When it fires next: `timeInterval` after it was made.
    public func nextTriggerDate() -> Date? {
        guard timeInterval.isFinite, timeInterval > 0 else { return nil }
        guard repeats else { return added.addingTimeInterval(timeInterval) }
        let elapsed = Date().timeIntervalSince(added)
        return added.addingTimeInterval((floor(max(0, elapsed) / timeInterval) + 1) * timeInterval)
    }

    override func resolved(now: Date, timeZone: TimeZone) throws(UNError) -> ResolvedTrigger {
        guard timeInterval.isFinite, timeInterval > 0 else {
            throw UNError(.notificationInvalidNoDate, "time interval must be greater than 0")
        }
        if repeats, timeInterval < 60 {
            throw UNError(.notificationInvalidNoDate, "time interval must be at least 60 if repeating")
        }
        do {
            return try TimeIntervalNotificationTrigger(timeInterval: timeInterval, repeats: repeats)
                .resolve(now: now, timeZone: timeZone)
        } catch {
            throw UNError(.notificationInvalidNoDate, error.message, chimeError: error)
        }
    }
}

/// A request as chimed reported it pending: its next date and, for a repeating one, its rule.
public final class UNChimeNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {
    /// The next occurrence.
    public let date: Date
    /// The rule as it was given, for a repeating request.
    public let rule: String?

    init(date: Date, rule: String?) {
        self.date = date
        self.rule = rule
        super.init(repeats: rule != nil)
    }

    public func nextTriggerDate() -> Date? { date }
}

/// A remote (push) notification's trigger. The desktop has no push service, so none is ever made: a
/// response's `trigger is UNPushNotificationTrigger` is always false.
public final class UNPushNotificationTrigger: UNNotificationTrigger, @unchecked Sendable {}

/// One notification to show: an identifier of the app's choosing (adding another with the same one replaces
/// it), the content, and when (nil: now).
public final class UNNotificationRequest: NSObject, @unchecked Sendable {
    public let identifier: String
    public let content: UNNotificationContent
    public let trigger: UNNotificationTrigger?

    public init(identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger?) {
        self.identifier = identifier
        self.content = content.copy() as? UNNotificationContent ?? content
        self.trigger = trigger
        super.init()
    }
}

/// A notification that was delivered.
public final class UNNotification: NSObject, @unchecked Sendable {
    public let date: Date
    public let request: UNNotificationRequest
    /// The notification server's id for its popup.
    public let notificationID: UInt32

    init(date: Date, request: UNNotificationRequest, notificationID: UInt32 = 0) {
        self.date = date
        self.request = request
        self.notificationID = notificationID
    }
}

/// What the user did with a notification: `actionIdentifier` is an action's identifier,
/// `UNNotificationDefaultActionIdentifier` (the notification was clicked) or
/// `UNNotificationDismissActionIdentifier` (it was dismissed; reported for categories with
/// `.customDismissAction`, as iOS does).
open class UNNotificationResponse: NSObject, @unchecked Sendable {
    public let notification: UNNotification
    public let actionIdentifier: String

    init(notification: UNNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
    }
}

/// The response of a text-input action: what the user typed.
public final class UNTextInputNotificationResponse: UNNotificationResponse, @unchecked Sendable {
    public let userText: String

    init(notification: UNNotification, actionIdentifier: String, userText: String) {
        self.userText = userText
        super.init(notification: notification, actionIdentifier: actionIdentifier)
    }
}

public let UNNotificationDefaultActionIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
public let UNNotificationDismissActionIdentifier = "com.apple.UNNotificationDismissActionIdentifier"

/// How an action behaves.
public struct UNNotificationActionOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Only while the session is unlocked; chosen on a locked screen, it waits for the unlock.
    public static let authenticationRequired = UNNotificationActionOptions(rawValue: 1 << 0)
    /// Shown last, marked where the server can.
    public static let destructive = UNNotificationActionOptions(rawValue: 1 << 1)
    /// Brings the app forward (activates it through its desktop entry when it is not running).
    public static let foreground = UNNotificationActionOptions(rawValue: 1 << 2)
}

/// An action's icon. On a server with the `action-icons` capability a category whose actions all have icons
/// is shown as icons; elsewhere the titles are shown. A template image name is a freedesktop icon name
/// (`mail-reply-sender`); an SF Symbol name is mapped to the icon of the same meaning where one is known
/// (`trash` → `user-trash`), else used as it is.
public final class UNNotificationActionIcon: NSObject, @unchecked Sendable {
    /// The freedesktop icon name the server is asked to show (a desktop addition).
    public let iconName: String

    init(iconName: String) {
        self.iconName = iconName
        super.init()
    }

    /// An icon from the app's images: on the desktop, an icon name of the icon theme.
    public convenience init(templateImageName: String) { self.init(iconName: templateImageName) }

    /// An SF Symbol: its freedesktop counterpart where known.
    public convenience init(systemImageName: String) {
        self.init(iconName: Self.symbols[systemImageName] ?? systemImageName)
    }

    /// SF Symbols and the Icon Naming Specification's names of the same meaning.
    static let symbols: [String: String] = [
        "trash": "user-trash", "trash.fill": "user-trash", "xmark": "window-close", "xmark.circle": "window-close",
        "checkmark": "object-select", "checkmark.circle": "object-select", "bell": "preferences-system-notifications",
        "bell.slash": "notifications-disabled", "clock": "appointment-soon", "alarm": "alarm",
        "arrowshape.turn.up.left": "mail-reply-sender", "envelope": "mail-message-new", "star": "starred",
        "star.fill": "starred", "heart": "emblem-favorite", "heart.fill": "emblem-favorite",
        "square.and.arrow.up": "document-send", "gear": "preferences-system", "magnifyingglass": "edit-find",
        "phone": "call-start", "phone.down": "call-stop", "play": "media-playback-start",
        "pause": "media-playback-pause", "stop": "media-playback-stop", "info.circle": "dialog-information",
        "exclamationmark.triangle": "dialog-warning", "calendar": "x-office-calendar",
        "pencil": "document-edit", "square.and.pencil": "document-edit", "plus": "list-add", "minus": "list-remove",
    ]

    public override func isEqual(_ object: Any?) -> Bool { (object as? UNNotificationActionIcon)?.iconName == iconName }
    public override var hash: Int { iconName.hashValue }
}

/// A button on a notification.
open class UNNotificationAction: NSObject, @unchecked Sendable {
    public let identifier: String
    public let title: String
    public let options: UNNotificationActionOptions
    /// The icon shown instead of the title on servers with the `action-icons` capability.
    public let icon: UNNotificationActionIcon?

    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = nil
    }

    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?
    ) {
        self.identifier = identifier
        self.title = title
        self.options = options
        self.icon = icon
    }

    var categoryAction: CategoryAction {
        var set: Set<CategoryAction.Option> = []
        if options.contains(.authenticationRequired) { set.insert(.authenticationRequired) }
        if options.contains(.destructive) { set.insert(.destructive) }
        if options.contains(.foreground) { set.insert(.foreground) }
        return CategoryAction(id: identifier, title: title, options: set, icon: icon?.iconName)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAction else { return false }
        return identifier == other.identifier && title == other.title && options == other.options
            && icon == other.icon
    }

    open override var hash: Int { identifier.hashValue }
}

/// An action that asks for a line of text (an inline reply, where the server has one).
public final class UNTextInputNotificationAction: UNNotificationAction, @unchecked Sendable {
    public let textInputButtonTitle: String
    public let textInputPlaceholder: String

    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [],
        textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.textInputButtonTitle = textInputButtonTitle
        self.textInputPlaceholder = textInputPlaceholder
        super.init(identifier: identifier, title: title, options: options, icon: nil)
    }

    public init(
        identifier: String, title: String, options: UNNotificationActionOptions = [], icon: UNNotificationActionIcon?,
        textInputButtonTitle: String, textInputPlaceholder: String
    ) {
        self.textInputButtonTitle = textInputButtonTitle
        self.textInputPlaceholder = textInputPlaceholder
        super.init(identifier: identifier, title: title, options: options, icon: icon)
    }

    override var categoryAction: CategoryAction {
        var action = super.categoryAction
        action.options.insert(.textInput)
        return action
    }
}

/// How a category behaves.
public struct UNNotificationCategoryOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Report a dismissal to the delegate as `UNNotificationDismissActionIdentifier`.
    public static let customDismissAction = UNNotificationCategoryOptions(rawValue: 1 << 0)
    /// Accepted for compatibility; no desktop has a car.
    public static let allowInCarPlay = UNNotificationCategoryOptions(rawValue: 1 << 1)
    public static let hiddenPreviewsShowTitle = UNNotificationCategoryOptions(rawValue: 1 << 2)
    public static let hiddenPreviewsShowSubtitle = UNNotificationCategoryOptions(rawValue: 1 << 3)
    public static let allowAnnouncement = UNNotificationCategoryOptions(rawValue: 1 << 4)
}

/// A set of actions a notification shows when its content's `categoryIdentifier` names it.
public final class UNNotificationCategory: NSObject, @unchecked Sendable {
    public let identifier: String
    public let actions: [UNNotificationAction]
    public let intentIdentifiers: [String]
    public let options: UNNotificationCategoryOptions
    /// Accepted; the desktop shows previews always (`UNNotificationSettings.showPreviewsSetting`).
    public let hiddenPreviewsBodyPlaceholder: String
    /// Accepted; servers that stack notifications word their summaries themselves.
    public let categorySummaryFormat: String

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
            hiddenPreviewsBodyPlaceholder: nil, categorySummaryFormat: nil, options: options)
    }

    public convenience init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        self.init(
            identifier: identifier, actions: actions, intentIdentifiers: intentIdentifiers,
            hiddenPreviewsBodyPlaceholder: .some(hiddenPreviewsBodyPlaceholder), categorySummaryFormat: nil,
            options: options)
    }

    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String?, categorySummaryFormat: String?,
        options: UNNotificationCategoryOptions = []
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder ?? ""
        self.categorySummaryFormat = categorySummaryFormat ?? ""
    }

    /// The category as chimed registers it: a click on the notification (the specification's `default`
    /// action, which chimed adds) is reported to the delegate as `UNNotificationDefaultActionIdentifier`.
    var actionCategory: ActionCategory {
        let category = ActionCategory(
            id: identifier, actions: actions.map(\.categoryAction), defaultAction: "default")
        guard category.actions.contains(where: { $0.icon != nil }), (try? category.validate()) == nil else {
            return category
        }
        // Icons chimed cannot use (not icon names, or two actions alike) are left out rather than the category.
        var plain = category
        for i in plain.actions.indices { plain.actions[i].icon = nil }
        return (try? plain.validate()) == nil ? category : plain
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationCategory else { return false }
        return identifier == other.identifier && actions == other.actions && options == other.options
    }

    public override var hash: Int { identifier.hashValue }
}

/// What `requestAuthorization` asks for; every option is granted together, as the desktop has one consent
/// per app.
public struct UNAuthorizationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNAuthorizationOptions(rawValue: 1 << 0)
    public static let sound = UNAuthorizationOptions(rawValue: 1 << 1)
    public static let alert = UNAuthorizationOptions(rawValue: 1 << 2)
    public static let carPlay = UNAuthorizationOptions(rawValue: 1 << 3)
    public static let criticalAlert = UNAuthorizationOptions(rawValue: 1 << 4)
    public static let providesAppNotificationSettings = UNAuthorizationOptions(rawValue: 1 << 5)
    public static let provisional = UNAuthorizationOptions(rawValue: 1 << 6)
    @available(*, deprecated, message: "announcement is always included on iOS 15 and later")
    public static let announcement = UNAuthorizationOptions(rawValue: 1 << 7)
    @available(*, deprecated, message: "time-sensitive notifications need no authorization on iOS 15 and later")
    public static let timeSensitive = UNAuthorizationOptions(rawValue: 1 << 8)
}

/// Whether the app may notify: chimed's consent for the app.
public enum UNAuthorizationStatus: Int, Sendable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}

/// A setting that is on, off, or not offered.
public enum UNNotificationSetting: Int, Sendable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}

/// How the app's notifications appear: the desktop's popups are banners (they go away by themselves unless
/// critical).
public enum UNAlertStyle: Int, Sendable {
    case none = 0
    case banner = 1
    case alert = 2
}

/// When a notification's text is shown.
public enum UNShowPreviewsSetting: Int, Sendable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}

/// The app's notification settings: what chimed's consent for the app says, and what the desktop offers.
/// docs/chimekit.md has the table.
public final class UNNotificationSettings: NSObject, @unchecked Sendable {
    public let authorizationStatus: UNAuthorizationStatus
    public let soundSetting: UNNotificationSetting
    public let badgeSetting: UNNotificationSetting
    public let alertSetting: UNNotificationSetting
    public let notificationCenterSetting: UNNotificationSetting
    public let lockScreenSetting: UNNotificationSetting
    /// `.notSupported`: no desktop has a car.
    public let carPlaySetting: UNNotificationSetting
    /// `.banner` when authorized, else `.none`.
    public let alertStyle: UNAlertStyle
    /// `.always`: servers show the text (hiding it on a locked screen is the desktop's, not the app's).
    public let showPreviewsSetting: UNShowPreviewsSetting
    /// Critical notifications are shown with critical urgency and heard through do-not-disturb.
    public let criticalAlertSetting: UNNotificationSetting
    /// True when the app asked for `.providesAppNotificationSettings`.
    public let providesAppNotificationSettings: Bool
    /// `.notSupported`: nothing reads notifications aloud.
    public let announcementSetting: UNNotificationSetting
    /// `.disabled` when authorized: a time-sensitive notification has normal urgency and waits out
    /// do-not-disturb and quiet hours, as only critical ones do not.
    public let timeSensitiveSetting: UNNotificationSetting
    /// `.disabled`: chimed delivers each notification when due (its quiet hours hold them into one digest,
    /// which is the user's setting, not the app's).
    public let scheduledDeliverySetting: UNNotificationSetting
    /// `.notSupported`: the desktop has no communication notifications.
    public let directMessagesSetting: UNNotificationSetting

    init(authorizationStatus: UNAuthorizationStatus, providesAppNotificationSettings: Bool = false) {
        self.authorizationStatus = authorizationStatus
        let on: UNNotificationSetting = authorizationStatus == .authorized ? .enabled : .disabled
        soundSetting = on
        badgeSetting = on
        alertSetting = on
        notificationCenterSetting = on
        lockScreenSetting = on
        carPlaySetting = .notSupported
        alertStyle = authorizationStatus == .authorized ? .banner : .none
        showPreviewsSetting = .always
        criticalAlertSetting = on
        self.providesAppNotificationSettings = providesAppNotificationSettings
        announcementSetting = .notSupported
        timeSensitiveSetting = .disabled
        scheduledDeliverySetting = .disabled
        directMessagesSetting = .notSupported
    }
}

/// How a notification due while the app runs is presented; what the delegate's `willPresent` returns.
public struct UNNotificationPresentationOptions: OptionSet, Hashable, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}
