import Foundation

/// Showing a notification again while nobody reacts to it: every `every` seconds, each time one urgency
/// higher (low, normal, critical), at most `times` times, until an action is chosen on it or it is
/// dismissed (the medication-reminder case). A popup that expires unseen does not count as a reaction.
public struct Escalation: Codable, Hashable, Sendable {
    /// Seconds between one showing and the next.
    public var every: TimeInterval
    /// How many times it is shown again at most (after the first showing).
    public var times: Int

    /// The shortest interval: a minute.
    public static let shortestInterval: TimeInterval = 60
    /// The longest interval: a day.
    public static let longestInterval: TimeInterval = 86_400
    /// The most re-notifications of one occurrence.
    public static let maximumTimes = 10
    /// The re-notifications when only the interval is given.
    public static let defaultTimes = 3

    public init(every: TimeInterval, times: Int = Escalation.defaultTimes) {
        self.every = every
        self.times = times
    }

    /// Why the escalation cannot be used, in words that name the limits; nil when it can.
    public var problem: String? {
        guard every.isFinite, every >= Self.shortestInterval, every <= Self.longestInterval else {
            return "escalation interval must be from 1 minute to 1 day"
        }
        guard (1...Self.maximumTimes).contains(times) else {
            return "escalation times must be from 1 to \(Self.maximumTimes)"
        }
        return nil
    }

    /// The urgency of the showing after one at `urgency`: one level higher, up to critical.
    public static func raised(_ urgency: Urgency?) -> Urgency {
        switch urgency ?? .normal {
        case .low: .normal
        case .normal, .critical: .critical
        }
    }

    /// In words, as listings show it: "again every 5m, at most 3 times, until acknowledged".
    public var summary: String {
        "again every \(TimeInput.formatDuration(every)), at most \(times) time\(times == 1 ? "" : "s"), until acknowledged"
    }
}

/// Where one occurrence's escalation stands: what it escalates, which showing this is, and the policy.
/// Carried by the occurrence's outbox row (step 0, the occurrence itself) and by each re-notification
/// chimed schedules (steps 1 to `escalation.times`), so the escalation goes on after a restart.
public struct EscalationStep: Codable, Hashable, Sendable {
    /// The item whose occurrence is escalated.
    public var of: UInt64
    /// 0 for the occurrence itself, 1 for the first re-notification.
    public var step: Int
    public var escalation: Escalation
    /// The escalated item's group and entry, so that actions and signals name them.
    public var group: String?
    public var entry: String?

    public init(of: UInt64, step: Int, escalation: Escalation, group: String? = nil, entry: String? = nil) {
        self.of = of
        self.step = step
        self.escalation = escalation
        self.group = group
        self.entry = entry
    }

    /// The step after this one; nil after the last.
    public var next: EscalationStep? {
        guard step < escalation.times else { return nil }
        var next = self
        next.step += 1
        return next
    }
}
