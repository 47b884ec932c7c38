import ChimeCore
import Foundation

/// A group's whole notification experience, written declaratively:
///
/// ```swift
/// NotificationsTimeline {
///     EveryDay(forDays: 50, starting: .today).at(hour: 9, minute: 0).schedule(with: makeRandomQuote)
///     EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20, minute: 15)
///         .schedule(title: "First Friday", body: "Pizza at eight")
/// }
/// ```
///
/// Fixed content travels to chimed as it is, with the rule, so a rule that repeats forever is one entry.
/// Content made by a closure cannot cross D-Bus: ChimeKit calls the closure for each occurrence within a
/// bounded horizon (`LocalNotifications.Configuration.horizon`, at most `materializationLimit`
/// occurrences per entry) and sends each as a one-off with the content made for it; while the app runs,
/// ChimeKit reschedules the group again before the horizon runs out. NiceNotifications' makers (not
/// `@Sendable`) are called on the main queue; ChimeKit's `async` makers wherever they run.
public struct NotificationsTimeline: Sendable {
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(@NotificationsTimelineBuilder _ build: () -> [Entry]) { self.entries = build() }

    /// The lines, as NiceNotifications names them (the same as `entries`).
    public var requests: [LocalNotifications.NotificationRequest] {
        get { entries }
        set { entries = newValue }
    }

    /// A timeline of these lines, as NiceNotifications names it.
    public init(requests: [LocalNotifications.NotificationRequest]) { self.entries = requests }

    /// The lines of every timeline, in order (timelines built from parts).
    public init(combining timelines: NotificationsTimeline...) { self.init(combining: timelines) }

    /// The lines of every timeline, in order.
    public init(combining timelines: [NotificationsTimeline]) { self.entries = timelines.flatMap(\.entries) }

    /// No lines: rescheduling a group with it leaves nothing of the group pending.
    public static var empty: NotificationsTimeline { NotificationsTimeline(entries: []) }

    /// One line of a timeline: a trigger and its content; what `.schedule(...)` returns.
    public struct Entry: Sendable {
        /// The entry's id in its group (`entry-N` by position when not given). Keep ids stable: an entry
        /// whose id and definition are unchanged keeps its state when the group is rescheduled.
        public var identifier: String?
        public var trigger: any NotificationTrigger
        var content: Content
        /// The category of actions its notifications show.
        public var category: String?
        /// Each occurrence shown again while nobody reacts to it (`escalate(every:times:)`).
        public var escalation: Escalation?
        /// Whether each occurrence wakes the machine from suspend (`wakingTheMachine()`).
        public var wake = false
        /// The content's `targetContentIdentifier` (`withTargetContentIdentifier(_:)`), over the content's own.
        public var targetContentIdentifier: String?

        enum Content: Sendable {
            case fixed(ChimeCore.NotificationContent)
            /// The same, as UserNotifications content: sent to chimed as it is when the timeline is scheduled.
            case fixedContent(UNNotificationContent)
            /// Made per occurrence; nil means no notification that time.
            case made(@Sendable (LocalNotifications.Trigger) async -> UNMutableNotificationContent?)
        }

        init(trigger: any NotificationTrigger, content: Content) {
            self.trigger = trigger
            self.content = content
        }

        /// The same entry with this id.
        public func identifier(_ id: String) -> Entry {
            var copy = self
            copy.identifier = id
            return copy
        }

        /// The same entry showing the actions of `category` (registered with `registerCategories` or
        /// `setNotificationCategories`).
        public func category(_ id: String) -> Entry {
            var copy = self
            copy.category = id
            return copy
        }

        /// The same entry, each of whose notifications is shown again every `interval` seconds (a minute
        /// to a day), one urgency higher each time, at most `times` times (1 to 10), until an action is
        /// chosen on it or it is dismissed: a medication reminder that does not let go.
        public func escalate(every interval: TimeInterval, times: Int = Escalation.defaultTimes) -> Entry {
            var copy = self
            copy.escalation = Escalation(every: interval, times: times)
            return copy
        }

        /// The same entry, each of whose occurrences wakes the machine from suspend when chimed holds
        /// `CAP_WAKE_ALARM` (`chime status` says whether it does; docs/wake.md). Chime's own: Apple's
        /// devices are never asleep in this sense.
        public func wakingTheMachine() -> Entry {
            var copy = self
            copy.wake = true
            return copy
        }

        /// The same entry showing the actions of `categoryIdentifier`, as NiceNotifications names it.
        public func withCategory(_ categoryIdentifier: String) -> Entry { category(categoryIdentifier) }

        /// The same entry whose content has this `targetContentIdentifier` (handed back with its responses;
        /// desktops have no windows of an app to bring forward by it).
        public func withTargetContentIdentifier(_ targetContentIdentifier: String) -> Entry {
            var copy = self
            copy.targetContentIdentifier = targetContentIdentifier
            return copy
        }

        /// Content made by the app's `maker`, which calls back with it: `call` runs the maker on the main queue,
        /// and the maker may call back from any thread; only its first call counts.
        static func callBack<Maker>(
            _ maker: MainQueueClosure<Maker>,
            _ call: @escaping @Sendable (Maker, @escaping @Sendable (UNMutableNotificationContent?) -> Void) -> Void
        ) async -> UNMutableNotificationContent? {
            await withCheckedContinuation { continuation in
                let once = OnceFlag()
                maker.async { make in
                    call(make) { content in if once.claim() { continuation.resume(returning: content) } }
                }
            }
        }

        /// The line's trigger as the parts scheduled: itself, or each member of a trigger set (with its
        /// identifier). The parts' triggers are what content makers are asked for.
        func parts(now: Date, timeZone: TimeZone) throws(ChimeError) -> [(
            suffix: String?, resolved: ResolvedTrigger, occurrence: @Sendable (Date) -> LocalNotifications.Trigger
        )] {
            if let list = trigger as? [DateBuilder.ResolvedDate] {
                let resolved = try list.resolvedParts(now: now, timeZone: timeZone)
                return resolved.enumerated().map { index, part in
                    (
                        resolved.count > 1 ? String(index + 1) : nil, part,
                        { LocalNotifications.Trigger($0, line: list, timeZone: timeZone) }
                    )
                }
            }
            guard let set = trigger as? LocalNotifications.NotificationTriggerSet else {
                let line = trigger
                return [
                    (
                        nil, try line.resolve(now: now, timeZone: timeZone),
                        { LocalNotifications.Trigger($0, line: line, timeZone: timeZone) }
                    )
                ]
            }
            var seen: Set<String> = []
            var parts: [(String?, ResolvedTrigger, @Sendable (Date) -> LocalNotifications.Trigger)] = []
            for member in set.triggers where seen.insert(member.identifier.rawValue).inserted {
                // A one-off member already past schedules nothing, as in NiceNotifications.
                if !member.rawTrigger.repeats, member.nextTriggerDate <= now { continue }
                let resolved = try LocalNotifications.NotificationTriggerSet.resolve(
                    member, now: now, timeZone: timeZone)
                parts.append(
                    (
                        member.identifier.rawValue, resolved,
                        { date in
                            var occurrence = member
                            occurrence.nextTriggerDate = date
                            return occurrence
                        }
                    ))
            }
            return parts
        }
    }

    /// The timeline as chimed's entries, evaluated at `now`: closures are called for each occurrence up to
    /// `now + horizon` (at most `limit` per entry). Also returns when the earliest materialised entry's
    /// horizon runs out (nil when nothing was materialised), which is when the group needs refreshing.
    public func materialize(now: Date, timeZone: TimeZone, horizon: TimeInterval, limit: Int) async throws(ChimeError)
        -> (entries: [TimelineEntry], refreshBy: Date?)
    {
        var result: [TimelineEntry] = []
        var refreshBy: Date?
        var seen: Set<String> = []
        for (index, entry) in entries.enumerated() {
            let lineID = entry.identifier ?? "entry-\(index + 1)"
            guard seen.insert(lineID).inserted else {
                throw ChimeError(
                    .rejected, "two timeline entries have the id \"\(lineID)\"; ids must be unique in a group")
            }
            var fixed: ChimeCore.NotificationContent?
            switch entry.content {
            case .fixed(let content): fixed = content
            case .fixedContent(let content): fixed = try LocalNotifications.fixedContent(content)
            case .made: break
            }
            for part in try entry.parts(now: now, timeZone: timeZone) {
                let id = part.suffix.map { "\(lineID).\($0)" } ?? lineID
                let resolved = part.resolved
                switch entry.content {
                case .fixed, .fixedContent:
                    guard let content = fixed.map({ entry.targeted($0) }) else { continue }
                    result.append(
                        TimelineEntry(
                            id: id, trigger: resolved.trigger, content: .fixed(content),
                            category: entry.category ?? content.category,
                            endDate: resolved.endDate, maximumOccurrences: resolved.count,
                            escalation: entry.escalation, wake: entry.wake))
                case .made(let make):
                    let end = now.addingTimeInterval(horizon)
                    let dates = try resolved.occurrences(after: now, until: end, limit: limit, timeZone: timeZone)
                    for date in dates {
                        guard let made = await make(part.occurrence(date)) else { continue }
                        let content = entry.targeted(try LocalNotifications.fixedContent(made))
                        // A one-off set member keeps its own id; a line's occurrences are named by their date.
                        let occurrenceID =
                            part.suffix != nil && dates.count == 1 && !isRule(resolved)
                            ? id : "\(id).\(Int64(date.timeIntervalSince1970))"
                        result.append(
                            TimelineEntry(
                                id: occurrenceID, trigger: .at(date),
                                content: .fixed(content), category: entry.category ?? content.category,
                                escalation: entry.escalation, wake: entry.wake))
                    }
                    // A one-off beyond the horizon is made when a refresh brings it within.
                    if case .at(let date) = resolved.trigger, date > end { refreshBy = min(refreshBy ?? end, end) }
                    // Refresh when the horizon ends or the last materialised occurrence is near, whichever is first.
                    if isRule(resolved) {
                        let until = dates.count == limit ? dates.last ?? end : end
                        refreshBy = min(refreshBy ?? until, until)
                    }
                }
            }
        }
        return (result, refreshBy)
    }

    private func isRule(_ resolved: ResolvedTrigger) -> Bool {
        if case .rule = resolved.trigger { return true }
        return false
    }
}

extension NotificationsTimeline.Entry {
    /// The content with the line's `targetContentIdentifier`, when it has one.
    func targeted(_ content: ChimeCore.NotificationContent) -> ChimeCore.NotificationContent {
        guard let targetContentIdentifier else { return content }
        var copy = content
        copy.hints[UNNotificationContent.targetHint] = .string(targetContentIdentifier)
        return copy
    }
}

/// NiceNotifications' name for the timeline builder (`@TimelineBuilder`).
public typealias TimelineBuilder = NotificationsTimelineBuilder

/// Builds a timeline from `.schedule(...)` lines, with `if`, `if`/`else` and `for` allowed.
@resultBuilder
public enum NotificationsTimelineBuilder {
    /// A line, as NiceNotifications' `TimelineBuilder` names it.
    public typealias Expression = LocalNotifications.NotificationRequest
    /// Lines, as NiceNotifications' `TimelineBuilder` names them.
    public typealias Component = [LocalNotifications.NotificationRequest]

    /// A line that may be nil (`optionalLine`), which adds nothing when it is.
    public static func buildExpression(_ entry: NotificationsTimeline.Entry?) -> [NotificationsTimeline.Entry] {
        entry.map { [$0] } ?? []
    }
    public static func buildExpression(_ entry: NotificationsTimeline.Entry) -> [NotificationsTimeline.Entry] {
        [entry]
    }
    public static func buildExpression(_ entries: [NotificationsTimeline.Entry]) -> [NotificationsTimeline.Entry] {
        entries
    }
    public static func buildBlock(_ parts: [NotificationsTimeline.Entry]...) -> [NotificationsTimeline.Entry] {
        parts.flatMap { $0 }
    }
    public static func buildOptional(_ part: [NotificationsTimeline.Entry]?) -> [NotificationsTimeline.Entry] {
        part ?? []
    }
    public static func buildEither(first: [NotificationsTimeline.Entry]) -> [NotificationsTimeline.Entry] { first }
    public static func buildEither(second: [NotificationsTimeline.Entry]) -> [NotificationsTimeline.Entry] { second }
    public static func buildBlock(_ component: [NotificationsTimeline.Entry]) -> [NotificationsTimeline.Entry] {
        component
    }
    public static func buildArray(_ parts: [[NotificationsTimeline.Entry]]) -> [NotificationsTimeline.Entry] {
        parts.flatMap { $0 }
    }
}

// The `.schedule(...)` overloads of NiceNotifications, on everything that gives a trigger set: ChimeKit's own
// triggers are scheduled as themselves (a rule stays one rule), any other value (an app's own
// `NotificationsScheduling` type) as its trigger set.
extension NotificationsScheduling {
    /// What a timeline line made from this value schedules: ChimeKit's own triggers as themselves (a list of
    /// DateBuilder dates is one: each time the line is scheduled, its run while that still gives the list's
    /// dates, else its dates), anything else as its trigger set.
    var line: any NotificationTrigger { (self as? any NotificationTrigger) ?? triggerSet }

    /// Fixed content: a title, and optionally a subtitle, a body and a sound (the default sound unless told
    /// otherwise, as NiceNotifications has it).
    public func schedule(
        title: String? = nil, subtitle: String? = nil, body: String? = nil, sound: UNNotificationSound? = .default
    ) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(
            trigger: line,
            content: .fixedContent(NotificationContent(title: title, subtitle: subtitle, body: body, sound: sound)))
    }

    /// Fixed content as chimed takes it.
    public func schedule(content: ChimeCore.NotificationContent) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(trigger: line, content: .fixed(content))
    }

    /// Fixed content (evaluated once, when the line is built).
    public func schedule(with content: @autoclosure @escaping () -> UNMutableNotificationContent?)
        -> NotificationsTimeline.Entry
    {
        guard let made = content() else {
            return NotificationsTimeline.Entry(trigger: line, content: .made { _ in nil })
        }
        return NotificationsTimeline.Entry(
            trigger: line, content: .fixedContent(made.copy() as? UNNotificationContent ?? made))
    }

    /// Content made for each occurrence, on the main queue; nil skips that occurrence.
    public func schedule(with maker: @escaping () -> UNMutableNotificationContent?) -> NotificationsTimeline.Entry {
        let maker = MainQueueClosure(maker)
        return NotificationsTimeline.Entry(trigger: line, content: .made { _ in await maker.run { $0() } })
    }

    /// Content made for each occurrence from its trigger, on the main queue; nil skips that occurrence.
    public func schedule(with maker: @escaping (LocalNotifications.Trigger) -> UNMutableNotificationContent?)
        -> NotificationsTimeline.Entry
    {
        let maker = MainQueueClosure(maker)
        return NotificationsTimeline.Entry(trigger: line, content: .made { trigger in await maker.run { $0(trigger) } })
    }

    /// Content made for each occurrence from its fire date, on the main queue; nil skips that occurrence.
    public func schedule(with maker: @escaping (_ nextTriggerDate: Date) -> UNMutableNotificationContent?)
        -> NotificationsTimeline.Entry
    {
        let maker = MainQueueClosure(maker)
        return NotificationsTimeline.Entry(
            trigger: line, content: .made { trigger in await maker.run { $0(trigger.nextTriggerDate) } })
    }

    /// Content made asynchronously for each occurrence; nil skips that occurrence.
    public func schedule(with maker: @escaping @Sendable () async -> UNMutableNotificationContent?)
        -> NotificationsTimeline.Entry
    {
        NotificationsTimeline.Entry(trigger: line, content: .made { _ in await maker() })
    }

    /// Content made asynchronously for each occurrence from its fire date; nil skips that occurrence.
    public func schedule(with maker: @escaping @Sendable (Date) async -> UNMutableNotificationContent?)
        -> NotificationsTimeline.Entry
    {
        NotificationsTimeline.Entry(trigger: line, content: .made { trigger in await maker(trigger.nextTriggerDate) })
    }

    /// Content made by a maker that calls back with it, from the occurrence's trigger; the maker runs on the main
    /// queue, and only the first call of the completion counts.
    public func schedule(
        with asyncMaker:
            @escaping (
                _ trigger: LocalNotifications.Trigger, _ completion: @escaping (UNMutableNotificationContent?) -> Void
            ) -> Void
    ) -> NotificationsTimeline.Entry {
        let maker = MainQueueClosure(asyncMaker)
        return NotificationsTimeline.Entry(
            trigger: line,
            content: .made { trigger in await NotificationsTimeline.Entry.callBack(maker) { $0(trigger, $1) } })
    }

    /// Content made by a maker that calls back with it, from the occurrence's fire date; the maker runs on the
    /// main queue.
    public func schedule(
        with asyncMaker:
            @escaping (_ nextTriggerDate: Date, _ completion: @escaping (UNMutableNotificationContent?) -> Void)
            -> Void
    ) -> NotificationsTimeline.Entry {
        let maker = MainQueueClosure(asyncMaker)
        return NotificationsTimeline.Entry(
            trigger: line,
            content: .made { trigger in
                await NotificationsTimeline.Entry.callBack(maker) { $0(trigger.nextTriggerDate, $1) }
            }
        )
    }

    /// Content made by a maker that calls back with it, as `makeRandomQuote(completion:)` does; the maker runs
    /// on the main queue.
    public func schedule(
        with asyncMaker: @escaping (_ completion: @escaping (UNMutableNotificationContent?) -> Void) -> Void
    ) -> NotificationsTimeline.Entry {
        let maker = MainQueueClosure(asyncMaker)
        return NotificationsTimeline.Entry(
            trigger: line, content: .made { _ in await NotificationsTimeline.Entry.callBack(maker) { $0($1) } })
    }
}

extension LocalNotifications {
    /// A line of a timeline, as NiceNotifications names it.
    public typealias NotificationRequest = NotificationsTimeline.Entry
}

/// True for the first caller of `claim()` only.
final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false

    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }
}
