import Foundation

extension Digest {
    /// The most entries a digest body lists, one line each, before "… and K more".
    public static let maximumListedEntries = 20

    /// The notification that stands for `entries`.
    ///
    /// The summary counts them ("3 reminders missed", "12 notifications during quiet hours",
    /// "490 more notifications"). The body lists them in the order given, one line each as
    /// `HH:MM  Summary` on the wall clock of `timeZone` (`YYYY-MM-DD HH:MM  Summary` when they fall on
    /// more than one day), at most `maximumListedEntries` lines and never more than
    /// `NotificationContent.maximumBodyLength` bytes, then "… and K more" for the rest. The app name is
    /// the entries' own when they all share one (not chimed's own, "chime"), else their owner's id when
    /// they share one (an app's digest holds its entries only), else "chime"; the urgency is normal,
    /// whatever theirs.
    public static func content(kind: Kind, entries: [OutboxEntry], timeZone: Zone) -> NotificationContent {
        NotificationContent(
            appName: appName(entries), summary: summary(kind: kind, count: entries.count),
            body: body(entries, timeZone: timeZone), urgency: .normal)
    }

    static func appName(_ entries: [OutboxEntry]) -> String {
        let owner = entries.first.map(\.owner).flatMap { owner in
            !owner.isEmpty && entries.allSatisfy { $0.owner == owner } ? owner : nil
        }
        // An app's digest never carries chimed's own name, which its questions have.
        if let name = commonAppName(entries), owner == nil || !NotificationContent.isChimedAppName(name) {
            return name
        }
        return owner ?? NotificationContent.chimedAppName
    }

    static func summary(kind: Kind, count: Int) -> String {
        switch kind {
        case .missed: count == 1 ? "1 reminder missed" : "\(count) reminders missed"
        case .quietHours:
            count == 1 ? "1 notification during quiet hours" : "\(count) notifications during quiet hours"
        case .flood: count == 1 ? "1 more notification" : "\(count) more notifications"
        }
    }

    static func commonAppName(_ entries: [OutboxEntry]) -> String? {
        guard let first = entries.first?.content.appName, !first.isEmpty,
            entries.allSatisfy({ $0.content.appName == first })
        else { return nil }
        return first
    }

    /// Bytes kept free for the closing "… and K more" line (and its newline), whatever K is.
    static let moreLineReserve = 48

    static func body(_ entries: [OutboxEntry], timeZone: Zone) -> String {
        let locals = entries.map { WallClock.localDateTime(for: $0.occurrence, in: timeZone) }
        let showsDate = Set(locals.map(\.daysSinceEpoch)).count > 1
        let budget = NotificationContent.maximumBodyLength - moreLineReserve
        var lines: [String] = []
        var used = 0
        for (entry, local) in zip(entries, locals) {
            guard lines.count < maximumListedEntries else { break }
            let line = self.line(entry, local: local, showsDate: showsDate).prefix(utf8Bytes: budget)
            let size = line.utf8.count + (lines.isEmpty ? 0 : 1)
            guard used + size <= budget else { break }
            lines.append(line)
            used += size
        }
        if lines.count < entries.count {
            lines.append("… and \(entries.count - lines.count) more")
        }
        return lines.joined(separator: "\n")
    }

    static func line(_ entry: OutboxEntry, local: LocalDateTime, showsDate: Bool) -> String {
        // "2026-12-04T20:15:00" → "2026-12-04 20:15" or "20:15".
        let stamp = local.description
        let time = stamp.dropFirst(11).prefix(5)
        let when = showsDate ? "\(stamp.prefix(10)) \(time)" : String(time)
        // One entry, one line: a summary's own line breaks would make the list unreadable.
        let summary = entry.content.summary.split(whereSeparator: \.isNewline).joined(separator: " ")
        return "\(when)  \(summary)"
    }
}

extension NotificationContent {
    /// The app name of chimed's own notifications: its questions, and digests of several apps' items.
    public static let chimedAppName = "chime"

    /// Whether `name` is chimed's own app name, however it is written (any case, spaces around).
    public static func isChimedAppName(_ name: String) -> Bool {
        name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == chimedAppName
    }
}
