import Foundation

/// Where an entry's content comes from. It is resolved each time the entry fires, so that a rule that
/// repeats forever can still show something new every time.
public enum ContentSource: Codable, Hashable, Sendable {
    /// The same content every time.
    case fixed(NotificationContent)
    /// The content with its placeholders (`{date}`, `{weekday}`, …; see `ContentTemplate`) filled from
    /// the occurrence's date.
    case template(NotificationContent)
    /// One item of a pool each time: at random, in order, or shuffled without repeats.
    case pool(ContentPool)
    /// The output of a command, run when the entry fires.
    case command(CommandSource)
    /// A call back to the owning app over D-Bus, when the entry fires.
    case callback(CallbackSource)

    /// What the source takes, as quotas count it: its content, and a pool's texts, a command's arguments
    /// or a call back's name (see `NotificationContent.byteSize`).
    public var byteSize: Int {
        switch self {
        case .fixed(let content), .template(let content): content.byteSize
        case .pool(let pool):
            pool.items.reduce(pool.base.byteSize) { $0 + $1.body.utf8.count + ($1.summary?.utf8.count ?? 0) }
        case .command(let command):
            command.arguments.reduce(command.base.byteSize) { $0 + $1.utf8.count }
        case .callback(let callback): callback.fallback.byteSize + callback.busName.utf8.count
        }
    }

    /// The content's fixed part: what listings show, and what a failed command or call back falls
    /// back to.
    public var base: NotificationContent {
        switch self {
        case .fixed(let content), .template(let content): content
        case .pool(let pool): pool.base
        case .command(let command): command.base
        case .callback(let callback): callback.fallback
        }
    }

    /// Checks sizes and values; the message says what to change.
    public func validate() throws(ContentError) {
        try base.validate()
        switch self {
        case .fixed:
            break
        case .template(let content):
            try ContentTemplate.validate(content)
        case .pool(let pool):
            try pool.validate()
            if pool.fillsPlaceholders {
                try ContentTemplate.validate(pool.base)
                for index in pool.items.indices { try ContentTemplate.validate(pool.content(ofItem: index)) }
            }
        case .command(let command):
            guard !command.arguments.isEmpty, !command.arguments[0].isEmpty else {
                throw ContentError(
                    "the command is empty; give the program and its arguments, e.g. [\"fortune\", \"-s\"]")
            }
            guard command.timeout > 0, command.timeout <= 60 else {
                throw ContentError("the command timeout must be between 0 and 60 seconds")
            }
        case .callback(let callback):
            guard !callback.busName.isEmpty else { throw ContentError("the call back needs the app's bus name") }
            guard callback.timeout > 0, callback.timeout <= 10 else {
                throw ContentError("the call back timeout must be between 0 and 10 seconds")
            }
        }
    }
}

/// A list of texts to choose from each time an entry fires (the "quote of the day").
public struct ContentPool: Codable, Hashable, Sendable {
    public enum Order: String, Codable, Hashable, Sendable, CaseIterable {
        /// Any enabled item, each time independently.
        case random
        /// The enabled items in the order given, then from the start again.
        case inOrder = "in-order"
        /// Every enabled item once in a random order, then a new round.
        case shuffled
    }

    public struct Item: Codable, Hashable, Sendable {
        /// Replaces the base summary when set.
        public var summary: String?
        public var body: String
        /// A disabled item is never chosen; it stays in the pool so its position is kept.
        public var enabled: Bool

        public init(summary: String? = nil, body: String, enabled: Bool = true) {
            self.summary = summary
            self.body = body
            self.enabled = enabled
        }
    }

    /// Everything an item does not set: app name, icon, urgency, actions, and the summary.
    public var base: NotificationContent
    public var items: [Item]
    public var order: Order
    /// Fill `ContentTemplate` placeholders in the chosen item.
    public var fillsPlaceholders: Bool

    public init(base: NotificationContent, items: [Item], order: Order = .shuffled, fillsPlaceholders: Bool = false) {
        self.base = base
        self.items = items
        self.order = order
        self.fillsPlaceholders = fillsPlaceholders
    }

    public static let maximumItems = 10_000
    /// The most bytes a pool's texts may take together (see `ContentSource.byteSize`): 1 MiB.
    public static let maximumBytes = 1_048_576

    public func validate() throws(ContentError) {
        let bytes = ContentSource.pool(self).byteSize
        guard bytes <= Self.maximumBytes else {
            throw ContentError(
                "the pool takes \(bytes) bytes, more than the \(Self.maximumBytes) allowed; keep fewer or shorter texts"
            )
        }
        guard items.contains(where: \.enabled) else {
            throw ContentError("the pool has no enabled item; add one or enable one")
        }
        guard items.count <= Self.maximumItems else {
            throw ContentError("the pool has \(items.count) items, more than the \(Self.maximumItems) allowed")
        }
        for (index, item) in items.enumerated() {
            var content = base
            content.summary = item.summary ?? base.summary
            content.body = item.body
            do {
                try content.validate()
            } catch {
                throw ContentError("pool item \(index + 1): \(error.message)")
            }
        }
    }
}

/// Content made by running a program when the entry fires.
public struct CommandSource: Codable, Hashable, Sendable {
    /// How the program's standard output becomes content.
    public enum Output: String, Codable, Hashable, Sendable, CaseIterable {
        /// All of it is the body; the summary is the base's.
        case body
        /// The first line is the summary, the rest the body.
        case summaryAndBody = "summary-and-body"
    }

    /// The program (looked up on PATH) and its arguments; no shell is involved.
    public var arguments: [String]
    /// Seconds the program may run; after that it is killed and `base` is shown.
    public var timeout: TimeInterval
    public var output: Output
    /// The fields the output does not set, and the whole content when the program fails.
    public var base: NotificationContent

    public init(arguments: [String], timeout: TimeInterval = 5, output: Output = .body, base: NotificationContent) {
        self.arguments = arguments
        self.timeout = timeout
        self.output = output
        self.base = base
    }
}

/// Content asked of the owning app over D-Bus when the entry fires: chimed calls
/// `io.chime.ContentProvider1.MakeContent(group, entry, fire_time)` on `busName` at
/// `/io/chime/ContentProvider1` and shows the returned content, or `fallback` when the app does not
/// answer within `timeout`.
public struct CallbackSource: Codable, Hashable, Sendable {
    public var busName: String
    public var timeout: TimeInterval
    public var fallback: NotificationContent

    public init(busName: String, timeout: TimeInterval = 1, fallback: NotificationContent) {
        self.busName = busName
        self.timeout = timeout
        self.fallback = fallback
    }
}

/// What an entry remembers between firings; stored with it and kept across a reschedule that leaves the
/// entry unchanged.
public struct EntryState: Codable, Hashable, Sendable {
    /// How many times it fired (delivered, coalesced or missed).
    public var occurrences: Int
    /// `in-order` pools: the index of the next item to consider.
    public var poolPosition: Int
    /// `shuffled` pools: the indices not yet shown in this round.
    public var poolBag: [Int]
    /// The occurrence date of the last firing. (Last: the fields that follow it in an item take its
    /// optional's padding.)
    public var lastFired: Date?

    public init(occurrences: Int = 0, lastFired: Date? = nil, poolPosition: Int = 0, poolBag: [Int] = []) {
        self.occurrences = occurrences
        self.lastFired = lastFired
        self.poolPosition = poolPosition
        self.poolBag = poolBag
    }

    /// Takes the pool's place (position and bag) from `other`.
    public mutating func takePool(from other: EntryState) {
        poolPosition = other.poolPosition
        poolBag = other.poolBag
    }

    enum CodingKeys: String, CodingKey { case occurrences, lastFired, poolPosition, poolBag }

    // Stored with every step of its item: a value at its default is left out, and read back as it.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            occurrences: try c.decodeIfPresent(Int.self, forKey: .occurrences) ?? 0,
            lastFired: try c.decodeIfPresent(Date.self, forKey: .lastFired),
            poolPosition: try c.decodeIfPresent(Int.self, forKey: .poolPosition) ?? 0,
            poolBag: try c.decodeIfPresent([Int].self, forKey: .poolBag) ?? [])
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        if occurrences != 0 { try c.encode(occurrences, forKey: .occurrences) }
        try c.encodeIfPresent(lastFired, forKey: .lastFired)
        if poolPosition != 0 { try c.encode(poolPosition, forKey: .poolPosition) }
        if !poolBag.isEmpty { try c.encode(poolBag, forKey: .poolBag) }
    }
}
