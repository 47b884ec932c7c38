import ChimeKit
import Foundation
import Testing

/// `UNCalendarNotificationTrigger.nextTriggerDate()` is computed as chimed computes it, from the system's
/// tz database; an app reading it gets the date Foundation's calendar gives for the same components.
@Suite struct CalendarTriggerDates {
    static func components(_ zone: String?, _ fill: (inout DateComponents) -> Void) -> DateComponents {
        var components = DateComponents()
        components.timeZone = zone.flatMap { TimeZone(identifier: $0) }
        fill(&components)
        return components
    }

    /// Foundation's next match after `now`, in the components' zone (else the process's).
    static func foundationNext(_ components: DateComponents, after now: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = components.timeZone ?? .current
        var matching = components
        matching.timeZone = nil
        return calendar.nextDate(after: now, matching: matching, matchingPolicy: .strict)
    }

    @Test(arguments: [
        components(nil) {
            $0.hour = 9; $0.minute = 30
        },
        components("Europe/Berlin") {
            $0.weekday = 2; $0.hour = 11; $0.minute = 30
        },
        components("America/New_York") {
            $0.month = 12; $0.day = 25; $0.hour = 8; $0.minute = 0
        },
        components("Asia/Tokyo") {
            $0.day = 31; $0.hour = 12; $0.minute = 0
        },
        components("Australia/Lord_Howe") {
            $0.month = 4; $0.day = 5; $0.hour = 1; $0.minute = 45
        },
        components("Europe/Berlin") {
            $0.year = 2020; $0.month = 1; $0.day = 1; $0.hour = 0; $0.minute = 0
        },
    ])
    func nextTriggerDateIsFoundationsNextMatch(_ components: DateComponents) {
        let now = Date()
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        #expect(trigger.nextTriggerDate() == Self.foundationNext(components, after: now), "\(components)")
    }
}
