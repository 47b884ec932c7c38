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
/// bounded horizon (`ChimeNotifications.Configuration.horizon`, at most `materializationLimit`
/// occurrences per entry) and sends each as a one-off with the content made for it; while the app runs,
/// ChimeKit reschedules the group again before the horizon runs out.
public struct NotificationsTimeline: Sendable {
    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(@NotificationsTimelineBuilder _ build: () -> [Entry]) { self.entries = build() }

    /// One line of a timeline: a trigger and its content; what `.schedule(...)` returns.
    public struct Entry: Sendable {
        /// The entry's id in its group (`entry-N` by position when not given). Keep ids stable: an entry
        /// whose id and definition are unchanged keeps its state when the group is rescheduled.
        public var identifier: String?
        public var trigger: any NotificationTrigger
        var content: Content
        /// The category of actions its notifications show.
        public var category: String?

        enum Content: Sendable {
            case fixed(NotificationContent)
            /// Made per occurrence, from its fire date; nil means no notification that time.
            case made(@Sendable (Date) async -> NotificationContent?)
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

        /// The same entry showing the actions of `category` (registered with `registerCategories`).
        public func category(_ id: String) -> Entry {
            var copy = self
            copy.category = id
            return copy
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
            let id = entry.identifier ?? "entry-\(index + 1)"
            guard seen.insert(id).inserted else {
                throw ChimeError(.rejected, "two timeline entries have the id \"\(id)\"; ids must be unique in a group")
            }
            let resolved = try entry.trigger.resolve(now: now, timeZone: timeZone)
            switch entry.content {
            case .fixed(let content):
                result.append(
                    TimelineEntry(
                        id: id, trigger: resolved.trigger, content: .fixed(content), category: entry.category,
                        endDate: resolved.endDate, maximumOccurrences: resolved.count))
            case .made(let make):
                let end = now.addingTimeInterval(horizon)
                let dates = try resolved.occurrences(after: now, until: end, limit: limit, timeZone: timeZone)
                for date in dates {
                    guard let content = await make(date) else { continue }
                    result.append(
                        TimelineEntry(
                            id: "\(id).\(Int64(date.timeIntervalSince1970))", trigger: .at(date),
                            content: .fixed(content), category: entry.category))
                }
                // Refresh when the horizon ends or the last materialised occurrence is near, whichever is first.
                if case .rule = resolved.trigger {
                    let until = dates.count == limit ? dates.last ?? end : end
                    refreshBy = min(refreshBy ?? until, until)
                }
            }
        }
        return (result, refreshBy)
    }
}

/// Builds a timeline from `.schedule(...)` lines, with `if`, `if`/`else` and `for` allowed.
@resultBuilder
public enum NotificationsTimelineBuilder {
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
    public static func buildArray(_ parts: [[NotificationsTimeline.Entry]]) -> [NotificationsTimeline.Entry] {
        parts.flatMap { $0 }
    }
}

// The `.schedule(...)` overloads of NiceNotifications, on every trigger.
extension NotificationTrigger {
    /// Fixed content: a title, and optionally a subtitle, a body and a sound name.
    public func schedule(title: String, subtitle: String? = nil, body: String = "", sound: String? = nil)
        -> NotificationsTimeline.Entry
    {
        var content = NotificationContent(summary: title, body: body)
        content.subtitle = subtitle
        content.sound = sound
        return schedule(content: content)
    }

    /// Fixed content, fully specified.
    public func schedule(content: NotificationContent) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(trigger: self, content: .fixed(content))
    }

    /// Content made for each occurrence; nil skips that occurrence.
    public func schedule(with make: @escaping @Sendable () -> NotificationContent?) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(trigger: self, content: .made { _ in make() })
    }

    /// Content made for each occurrence from its fire date; nil skips that occurrence.
    public func schedule(with make: @escaping @Sendable (Date) -> NotificationContent?) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(trigger: self, content: .made { date in make(date) })
    }

    /// Content made asynchronously for each occurrence; nil skips that occurrence.
    public func schedule(with make: @escaping @Sendable () async -> NotificationContent?)
        -> NotificationsTimeline.Entry
    {
        NotificationsTimeline.Entry(trigger: self, content: .made { _ in await make() })
    }

    /// Content made asynchronously for each occurrence from its fire date; nil skips that occurrence.
    public func schedule(with make: @escaping @Sendable (Date) async -> NotificationContent?)
        -> NotificationsTimeline.Entry
    {
        NotificationsTimeline.Entry(trigger: self, content: .made(make))
    }

    /// Content made by a maker that calls back, as `makeRandomQuote(completion:)` does; only the first call
    /// of the completion counts.
    public func schedule(
        with make: @escaping @Sendable (@escaping @Sendable (NotificationContent?) -> Void) -> Void
    ) -> NotificationsTimeline.Entry {
        NotificationsTimeline.Entry(
            trigger: self,
            content: .made { _ in
                await withCheckedContinuation { continuation in
                    let once = OnceFlag()
                    make { content in if once.claim() { continuation.resume(returning: content) } }
                }
            })
    }
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
