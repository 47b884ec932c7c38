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

    /// The next date that matches, after now.
    public func nextTriggerDate() -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = dateComponents.timeZone ?? .current
        var components = dateComponents
        components.calendar = nil
        components.timeZone = nil
        return calendar.nextDate(after: Date(), matching: components, matchingPolicy: .strict)
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

/// A button on a notification.
open class UNNotificationAction: NSObject, @unchecked Sendable {
    public let identifier: String
    public let title: String
    public let options: UNNotificationActionOptions

    public init(identifier: String, title: String, options: UNNotificationActionOptions = []) {
        self.identifier = identifier
        self.title = title
        self.options = options
    }

    var categoryAction: CategoryAction {
        var set: Set<CategoryAction.Option> = []
        if options.contains(.authenticationRequired) { set.insert(.authenticationRequired) }
        if options.contains(.destructive) { set.insert(.destructive) }
        if options.contains(.foreground) { set.insert(.foreground) }
        return CategoryAction(id: identifier, title: title, options: set)
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UNNotificationAction else { return false }
        return identifier == other.identifier && title == other.title && options == other.options
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
        super.init(identifier: identifier, title: title, options: options)
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
    public let hiddenPreviewsBodyPlaceholder: String

    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        options: UNNotificationCategoryOptions = []
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.hiddenPreviewsBodyPlaceholder = ""
    }

    public init(
        identifier: String, actions: [UNNotificationAction], intentIdentifiers: [String],
        hiddenPreviewsBodyPlaceholder: String, options: UNNotificationCategoryOptions = []
    ) {
        self.identifier = identifier
        self.actions = actions
        self.intentIdentifiers = intentIdentifiers
        self.options = options
        self.hiddenPreviewsBodyPlaceholder = hiddenPreviewsBodyPlaceholder
    }

    /// The category as chimed registers it: a click on the notification (the specification's `default`
    /// action, which chimed adds) is reported to the delegate as `UNNotificationDefaultActionIdentifier`.
    var actionCategory: ActionCategory {
        ActionCategory(id: identifier, actions: actions.map(\.categoryAction), defaultAction: "default")
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

/// The app's notification settings.
public final class UNNotificationSettings: NSObject, @unchecked Sendable {
    public let authorizationStatus: UNAuthorizationStatus
    public let soundSetting: UNNotificationSetting
    public let badgeSetting: UNNotificationSetting
    public let alertSetting: UNNotificationSetting
    public let notificationCenterSetting: UNNotificationSetting
    public let lockScreenSetting: UNNotificationSetting

    init(authorizationStatus: UNAuthorizationStatus) {
        self.authorizationStatus = authorizationStatus
        let on: UNNotificationSetting = authorizationStatus == .authorized ? .enabled : .disabled
        soundSetting = on
        badgeSetting = on
        alertSetting = on
        notificationCenterSetting = on
        lockScreenSetting = on
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
