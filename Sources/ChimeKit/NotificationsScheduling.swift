import ChimeCore
import Foundation

// NiceNotifications' trigger vocabulary: `NotificationsScheduling` (what gives a trigger set), trigger sets, and
// the trigger a content maker is asked for. ChimeKit's own triggers (`NotificationTrigger`) keep rules
// whole; a trigger set is a list of UserNotifications triggers, scheduled one by one.

extension LocalNotifications {
    /// One occurrence a content maker is asked for, or one member of a trigger set.
    public struct Trigger: Sendable {
        /// The occurrence as a UserNotifications trigger: the timeline line's own when it is one
        /// (`UNTimeIntervalNotificationTrigger(…).schedule(…)`), otherwise a one-off calendar trigger matching
        /// the occurrence's date and time in its zone.
        public var rawTrigger: UNNotificationTrigger
        /// The occurrence's identifier, unique in its line (made from its date, so it is the same each time the
        /// group is rescheduled).
        public var identifier: NotificationContentIdentifier
        /// When it fires.
        public var nextTriggerDate: Date

        /// A trigger-set member; its date is the raw trigger's next date (`Date.distantFuture` when it has none).
        public init(rawTrigger: UNNotificationTrigger, identifier: NotificationContentIdentifier) {
            self.rawTrigger = rawTrigger
            self.identifier = identifier
            self.nextTriggerDate = Self.nextDate(of: rawTrigger) ?? .distantFuture
        }

        /// The occurrence at `date` of a timeline line.
        init(_ date: Date, line: any NotificationTrigger, timeZone: TimeZone = .current) {
            if let raw = line as? UNNotificationTrigger {
                rawTrigger = raw
            } else {
                let local = WallClock.localDateTime(for: date, in: Zone(resolving: timeZone))
                var components = DateComponents(
                    year: local.year, month: local.month, day: local.day, hour: local.hour, minute: local.minute,
                    second: local.second)
                components.timeZone = timeZone
                rawTrigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
            }
            identifier = NotificationContentIdentifier(rawValue: String(Int64(date.timeIntervalSince1970)))
            nextTriggerDate = date
        }

        static func nextDate(of trigger: UNNotificationTrigger) -> Date? {
            switch trigger {
            case let calendar as UNCalendarNotificationTrigger: calendar.nextTriggerDate()
            case let interval as UNTimeIntervalNotificationTrigger: interval.nextTriggerDate()
            case let pending as UNChimeNotificationTrigger: pending.nextTriggerDate()
            default: nil
            }
        }
    }

    /// The identifier of one occurrence's content.
    public struct NotificationContentIdentifier: Hashable, Sendable {
        public var rawValue: String

        public init(rawValue: String) { self.rawValue = rawValue }

        /// A fresh random identifier (a UUID).
        public static func makeRandom() -> NotificationContentIdentifier {
            NotificationContentIdentifier(rawValue: UUID().uuidString)
        }
    }

    /// Several UserNotifications triggers as one timeline line: each member is scheduled as a notification of
    /// its own (a one-off member at its date, a repeating one as its rule), made with the line's content.
    public struct NotificationTriggerSet: NotificationsScheduling, NotificationTrigger {
        public var triggers: [LocalNotifications.Trigger]

        public init(triggers: [LocalNotifications.Trigger]) { self.triggers = triggers }

        public static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet { { $0 } }

        /// No triggers: the line schedules nothing.
        public static var empty: NotificationTriggerSet { NotificationTriggerSet(triggers: []) }

        public static func single(trigger: LocalNotifications.Trigger) -> NotificationTriggerSet {
            NotificationTriggerSet(triggers: [trigger])
        }

        /// A set of one member resolves as that member; a timeline schedules a larger set member by member.
        public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
            guard triggers.count == 1, let only = triggers.first else {
                throw ChimeError(
                    .rejected, "a set of \(triggers.count) triggers is scheduled member by member, in a timeline")
            }
            return try Self.resolve(only, now: now, timeZone: timeZone)
        }

        /// A member as chimed takes it: a one-off at its date, or its repeating trigger's rule.
        static func resolve(_ member: LocalNotifications.Trigger, now: Date, timeZone: TimeZone) throws(ChimeError)
            -> ResolvedTrigger
        {
            guard member.rawTrigger.repeats else { return ResolvedTrigger(.at(member.nextTriggerDate)) }
            return try member.rawTrigger.resolve(now: now, timeZone: timeZone)
        }
    }
}

/// What NiceNotifications' `.schedule(...)` is called on: anything that gives a trigger set. Every ChimeKit
/// trigger is one too (`NotificationTrigger` refines it) and is scheduled as itself; a list of dates is one
/// item (its counted run, or its dates); an app's own conforming type is scheduled as its trigger set.
public protocol NotificationsScheduling {
    static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet { get }
}

extension NotificationsScheduling {
    /// The value's trigger set, made now.
    public var triggerSet: LocalNotifications.NotificationTriggerSet { Self.keyPathForTriggerSet(self) }
}

extension Array: NotificationsScheduling where Element == DateBuilder.ResolvedDate {
    /// One one-off member per date still ahead, each resolved now in `DateBuilder.calendar`.
    public static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet {
        { LocalNotifications.NotificationTriggerSet(triggers: $0.flatMap(\.triggerSet.triggers)) }
    }
}

extension DateBuilder.ResolvedDate: NotificationsScheduling {
    /// A one-off member at the date, resolved now in `DateBuilder.calendar`; empty when the date is past or
    /// does not exist.
    public static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet {
        { LocalNotifications.NotificationTriggerSet.oneOff(at: $0.date(), line: $0) }
    }
}

extension DateBuilder.Moment: NotificationsScheduling {
    /// A one-off member at the moment, resolved now in `DateBuilder.calendar`; empty when it is past or does
    /// not exist.
    public static var keyPathForTriggerSet: (Self) -> LocalNotifications.NotificationTriggerSet {
        { LocalNotifications.NotificationTriggerSet.oneOff(at: $0.date(), line: $0) }
    }
}

extension LocalNotifications.NotificationTriggerSet {
    /// A one-off member at `date` (made from `line`), or empty when `date` is not ahead.
    static func oneOff(at date: Date, line: any NotificationTrigger) -> Self {
        guard date > Date() else { return .empty }
        return .single(trigger: LocalNotifications.Trigger(date, line: line, timeZone: DateBuilder.calendar.timeZone))
    }
}

extension UNNotificationTrigger: NotificationsScheduling, NotificationTrigger {
    /// The trigger as the only member, with a random identifier.
    public static var keyPathForTriggerSet: (UNNotificationTrigger) -> LocalNotifications.NotificationTriggerSet {
        { .single(trigger: LocalNotifications.Trigger(rawTrigger: $0, identifier: .makeRandom())) }
    }

    /// As `UNUserNotificationCenter.add` reads it, when the timeline is scheduled: a time interval counts from
    /// then.
    public func resolve(now: Date, timeZone: TimeZone) throws(ChimeError) -> ResolvedTrigger {
        do {
            return try resolved(now: now, timeZone: timeZone)
        } catch {
            throw error.chimeError ?? ChimeError(.rejected, error.message)
        }
    }
}
