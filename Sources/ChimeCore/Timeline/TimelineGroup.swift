import Foundation

/// A named set of timeline entries that one app (or the user's config file) owns and replaces as a whole.
///
/// The group is the unit of `Reschedule`: an app describes its whole notification experience once and
/// chimed keeps it running. Entry ids are stable within a group, so that a reschedule keeps each
/// unchanged entry's state (occurrences so far, pool position) and reports what changed.
public struct TimelineGroup: Codable, Hashable, Sendable {
    /// Unique per owner; letters, digits, `-`, `_` and `.`.
    public var id: String
    /// The owning app's id; empty for the user's own groups (config files, the `chime` CLI).
    public var owner: String
    public var settings: GroupSettings
    public var entries: [TimelineEntry]
    /// Categories of actions the group declares (group files do; apps register theirs over D-Bus).
    public var categories: [ActionCategory]

    public init(
        id: String, owner: String = "", settings: GroupSettings = GroupSettings(), entries: [TimelineEntry],
        categories: [ActionCategory] = []
    ) {
        self.id = id
        self.owner = owner
        self.settings = settings
        self.entries = entries
        self.categories = categories
    }

    /// The most entries one group may hold.
    public static let maximumEntries = 100_000

    /// Checks ids, sizes and every entry's content; the message says what to change.
    public func validate() throws(TimelineError) {
        try Self.validateIdentifier(id, what: "group id")
        guard entries.count <= Self.maximumEntries else {
            throw TimelineError(
                "group \(id) has \(entries.count) entries, more than the \(Self.maximumEntries) allowed")
        }
        var seen = Set<String>()
        for entry in entries {
            try Self.validateIdentifier(entry.id, what: "entry id in group \(id)")
            guard seen.insert(entry.id).inserted else {
                throw TimelineError("entry id \"\(entry.id)\" appears twice in group \(id); entry ids must be unique")
            }
            try entry.validate()
        }
    }

    /// Letters, digits, `-`, `_`, `.`; 1 to 200 bytes. `what` names the identifier in the error (it is
    /// only built for one).
    public static func validateIdentifier(_ text: String, what: @autoclosure () -> String) throws(TimelineError) {
        guard !text.isEmpty else { throw TimelineError("the \(what()) is empty") }
        guard text.utf8.count <= 200 else { throw TimelineError("the \(what()) is longer than 200 bytes") }
        // Checked byte by byte: a group of 10,000 entries checks 10,000 of these on every reschedule.
        guard !text.utf8.allSatisfy(isIdentifierByte) else { return }
        let bad = text.first { !$0.utf8.allSatisfy(isIdentifierByte) }.map(String.init) ?? ""
        throw TimelineError(
            "the \(what()) \"\(text)\" contains \"\(bad)\"; use letters, digits, '-', '_' and '.' only")
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }
}

/// How a group behaves, beyond its entries.
public struct GroupSettings: Codable, Hashable, Sendable {
    /// What to do with occurrences that passed while chimed could not deliver them; nil: the daemon's
    /// default from chime.toml.
    public var missedPolicy: MissedPolicy?
    /// Policies for occurrences missed for one cause (the machine was off, asleep, or chimed was not
    /// running), before `missedPolicy`; nil when there are none.
    public var missedPolicyByCause: [MissedCause: MissedPolicy]?
    /// A disabled group keeps its definition but has nothing pending.
    public var enabled: Bool

    public init(
        missedPolicy: MissedPolicy? = nil, missedPolicyByCause: [MissedCause: MissedPolicy] = [:], enabled: Bool = true
    ) {
        self.missedPolicy = missedPolicy
        self.missedPolicyByCause = missedPolicyByCause.isEmpty ? nil : missedPolicyByCause
        self.enabled = enabled
    }

    /// The group's policy for an occurrence missed for `cause` (nil: unknown, such as a clock set
    /// forward); nil when the group leaves it to chimed's default.
    public func missedPolicy(for cause: MissedCause?) -> MissedPolicy? {
        cause.flatMap { missedPolicyByCause?[$0] } ?? missedPolicy
    }
}

/// Why an occurrence was missed, as chimed tells when it comes to it late.
public enum MissedCause: String, Codable, CodingKeyRepresentable, Hashable, Sendable, CaseIterable {
    /// The machine was off (it started after the occurrence).
    case machineOff = "off"
    /// The machine was asleep (suspended or hibernated) at the occurrence.
    case suspended
    /// The machine was up, but chimed was not running (it started after the occurrence).
    case notRunning = "not-running"

    /// In words, for history: `the machine was off`.
    public var words: String {
        switch self {
        case .machineOff: "the machine was off"
        case .suspended: "the machine was asleep"
        case .notRunning: "chimed was not running"
        }
    }
}

/// When chimed could not deliver: the machine's start, chimed's start, and the machine's sleeps since. Tells
/// the cause of a missed occurrence by when it was due.
public struct Downtime: Hashable, Sendable {
    /// The most sleeps remembered (the latest).
    public static let sleepLimit = 64

    /// When the machine started.
    public var bootTime: Date?
    /// When chimed started.
    public var startTime: Date?
    /// The machine's sleeps while chimed ran, oldest first.
    public private(set) var sleeps: [DateInterval] = []

    public init(bootTime: Date? = nil, startTime: Date? = nil) {
        self.bootTime = bootTime
        self.startTime = startTime
    }

    /// The machine slept from `start` to `end`.
    public mutating func addSleep(from start: Date, to end: Date) {
        guard end > start else { return }
        sleeps.append(DateInterval(start: start, end: end))
        if sleeps.count > Self.sleepLimit { sleeps.removeFirst(sleeps.count - Self.sleepLimit) }
    }

    /// Why an occurrence due at `occurrence` was missed; nil when none of the causes covers it (the clock
    /// was set forward, or chimed was busy).
    public func cause(of occurrence: Date) -> MissedCause? {
        if let bootTime, occurrence < bootTime { return .machineOff }
        if sleeps.contains(where: { $0.start <= occurrence && occurrence <= $0.end }) { return .suspended }
        if let startTime, occurrence < startTime { return .notRunning }
        return nil
    }
}

/// When an entry fires, as written: kept in this form so that a reschedule compares definitions,
/// not computed dates.
public enum EntryTrigger: Codable, Hashable, Sendable {
    /// Once, at this instant.
    case at(Date)
    /// At every occurrence of a rule, on the wall clock of `timeZone` (an IANA name), or of the
    /// system zone when nil (the rule follows a user who travels).
    case rule(WrittenRule, timeZone: String?)
}

/// One line of a timeline: when, what, and how.
public struct TimelineEntry: Codable, Hashable, Sendable {
    /// Stable within its group.
    public var id: String
    public var trigger: EntryTrigger
    /// What the notification shows, resolved each time it fires.
    public var content: ContentSource
    /// The category of actions its notifications carry (registered by the app or its group file).
    public var category: String?
    /// After this instant the entry fires no more and its shown popup is closed.
    public var endDate: Date?
    /// Fire at most this many times.
    public var maximumOccurrences: Int?
    /// Show each occurrence again while nobody reacts to it.
    public var escalation: Escalation?
    /// Set by chimed on the re-notifications it schedules for an escalating entry.
    public var escalationStep: EscalationStep?
    /// Fire this long before (negative) or after each occurrence of the rule; a rule's entry only.
    public var offset: OccurrenceOffset?
    /// Wake the machine from suspend for each occurrence (chimed arms a `CLOCK_REALTIME_ALARM` timer when
    /// it holds `CAP_WAKE_ALARM`; docs/wake.md).
    public var wake: Bool {
        get { wakes ?? false }
        set { wakes = newValue ? true : nil }
    }
    /// Encoded only when set, so that the definitions of entries that do not wake encode as they did
    /// before the flag existed (a reschedule compares encodings).
    private var wakes: Bool?

    public init(
        id: String, trigger: EntryTrigger, content: ContentSource, category: String? = nil, endDate: Date? = nil,
        maximumOccurrences: Int? = nil, escalation: Escalation? = nil, offset: OccurrenceOffset? = nil,
        wake: Bool = false
    ) {
        self.wakes = wake ? true : nil
        self.offset = offset
        self.id = id
        self.trigger = trigger
        self.content = content
        self.category = category
        self.endDate = endDate
        self.maximumOccurrences = maximumOccurrences
        self.escalation = escalation
    }

    public func validate() throws(TimelineError) {
        do {
            try content.validate()
        } catch {
            throw TimelineError("entry \(id): \(error.message)")
        }
        if let maximumOccurrences, maximumOccurrences < 1 {
            throw TimelineError("entry \(id): count must be at least 1")
        }
        if let problem = escalation?.problem {
            throw TimelineError("entry \(id): \(problem)")
        }
        if let offset {
            if let problem = offset.problem { throw TimelineError("entry \(id): \(problem)") }
            if case .at = trigger {
                throw TimelineError("entry \(id): an offset moves a rule's occurrences; a one-off has none")
            }
        }
        if case .rule(_, let zone?) = trigger, Zone(identifier: zone) == nil {
            throw TimelineError("entry \(id): unknown time zone \"\(zone)\"; use an IANA name such as Europe/Berlin")
        }
    }
}

/// What to do with occurrences that passed while they could not be delivered: chimed was not running,
/// the machine was suspended, or the clock jumped forward.
public enum MissedPolicy: Codable, Hashable, Sendable {
    /// Deliver the latest missed occurrence of each entry, late, when no more than `window` seconds have
    /// passed since it was due; older ones are skipped.
    case deliverLate(window: TimeInterval)
    /// One digest notification for the group ("3 reminders missed: …").
    case coalesce
    /// Deliver nothing; the history says what was missed.
    case skip

    /// The default: deliver late within an hour.
    public static let `default` = MissedPolicy.deliverLate(window: 3600)

    /// The longest late window: a year. A missed occurrence older than that is no reminder any more.
    public static let longestLateWindow: TimeInterval = 366 * 86_400
}

/// A group or entry that cannot be used, with what to change.
public struct TimelineError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What is wrong, so that callers can answer each with its own error name.
    public enum Kind: Hashable, Sendable {
        /// An id, a size, a value.
        case invalid
        /// An entry's rule cannot be read, or never fires.
        case rule
    }

    public var kind: Kind
    public var message: String
    public init(_ message: String, kind: Kind = .invalid) {
        self.kind = kind
        self.message = message
    }
    public var description: String { message }
}
