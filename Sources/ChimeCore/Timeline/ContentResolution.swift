import Foundation

/// What an entry's content source yields when it fires: the content itself, or the I/O the daemon must
/// do to get it (ChimeCore does none).
public enum ContentResolution: Hashable, Sendable {
    /// Show this.
    case ready(NotificationContent)
    /// Run the command, then show `CommandSource.content(fromOutput:)`, or its `base` when that is nil or
    /// the command fails.
    case runCommand(CommandSource)
    /// Call the app as `CallbackSource` describes; show its `fallback` when the app does not answer.
    case askApp(CallbackSource)
}

extension ContentSource {
    /// The content for one occurrence.
    ///
    /// - Parameters:
    ///   - date: when the occurrence was due; placeholders are filled from it.
    ///   - number: the occurrence's 1-based number, for `{n}`.
    ///   - timeZone: the wall clock placeholders read.
    ///   - state: the entry's memory; pools advance `poolPosition` (in order) or `poolBag` (shuffled).
    ///     `occurrences` and `lastFired` are left to the scheduler.
    ///   - random: the only source of randomness, so a seeded generator replays the same choices.
    public func resolve<R: RandomNumberGenerator>(
        occurrence date: Date, number: Int, timeZone: Zone, state: inout EntryState, random: inout R
    ) -> ContentResolution {
        switch self {
        case .fixed(let content):
            return .ready(content)
        case .template(let content):
            return .ready(ContentTemplate.fill(content, date: date, timeZone: timeZone, occurrence: number))
        case .pool(let pool):
            // A pool with nothing enabled fails validation; should one be stored anyway, its base is shown.
            let content = pool.chooseItem(state: &state, random: &random).map(pool.content(ofItem:)) ?? pool.base
            guard pool.fillsPlaceholders else { return .ready(content) }
            return .ready(ContentTemplate.fill(content, date: date, timeZone: timeZone, occurrence: number))
        case .command(let command):
            return .runCommand(command)
        case .callback(let callback):
            return .askApp(callback)
        }
    }
}

extension ContentPool {
    /// The content that shows item `index`: the base with the item's body, and its summary when it has
    /// one. Placeholders are not filled.
    public func content(ofItem index: Int) -> NotificationContent {
        var content = base
        content.summary = items[index].summary ?? base.summary
        content.body = items[index].body
        return content
    }

    /// The indices of the items that may be chosen.
    var enabledIndices: [Int] { items.indices.filter { items[$0].enabled } }

    /// The index of the item to show next, advancing `state` for the pool's order; nil when no item is
    /// enabled (then `state` is left alone).
    func chooseItem<R: RandomNumberGenerator>(state: inout EntryState, random: inout R) -> Int? {
        switch order {
        case .random:
            return enabledIndices.randomElement(using: &random)
        case .inOrder:
            // A position past the end (the pool shrank) starts over, as reaching the end does.
            let start = (0..<items.count).contains(state.poolPosition) ? state.poolPosition : 0
            for step in 0..<items.count {
                let index = (start + step) % items.count
                if items[index].enabled {
                    state.poolPosition = (index + 1) % items.count
                    return index
                }
            }
            return nil
        case .shuffled:
            return drawFromBag(state: &state, random: &random)
        }
    }

    /// Shuffled order: the bag holds this round's indices not yet shown, drawn from its end.
    ///
    /// The bag is refilled as soon as a round ends, while the item just shown is known, so the new round
    /// can avoid starting with it; the stored state needs no field for "the last one shown". Indices the
    /// pool no longer allows (disabled, removed, repeated) are dropped first, so an edited pool recovers
    /// at once; items added mid-round join at the next round.
    func drawFromBag<R: RandomNumberGenerator>(state: inout EntryState, random: inout R) -> Int? {
        let enabled = enabledIndices
        guard !enabled.isEmpty else { return nil }
        var seen = Set<Int>()
        var bag = state.poolBag.filter { index in
            (0..<items.count).contains(index) && items[index].enabled && seen.insert(index).inserted
        }
        if bag.isEmpty { bag = Self.round(of: enabled, avoiding: nil, random: &random) }
        let drawn = bag.removeLast()
        if bag.isEmpty { bag = Self.round(of: enabled, avoiding: drawn, random: &random) }
        state.poolBag = bag
        return drawn
    }

    /// A random permutation of `enabled` whose first draw (its last element) is not `previous`, when
    /// there is another item to draw instead.
    static func round<R: RandomNumberGenerator>(of enabled: [Int], avoiding previous: Int?, random: inout R) -> [Int] {
        var bag = enabled.shuffled(using: &random)
        if bag.count > 1, bag[bag.count - 1] == previous {
            // Swapping with a uniformly chosen other slot keeps the first draw uniform over the others.
            bag.swapAt(bag.count - 1, Int.random(in: 0..<(bag.count - 1), using: &random))
        }
        return bag
    }
}

extension CommandSource {
    /// Content from the program's standard output; nil when the output is empty (show `base`).
    ///
    /// The output is trimmed of surrounding white space. `.body` makes all of it the body;
    /// `.summaryAndBody` makes the first line the summary and the rest the body (empty when there is no
    /// more). Text longer than `NotificationContent.maximumSummaryLength` or `maximumBodyLength` bytes
    /// is cut on a character boundary, so a chatty program still yields valid content.
    public func content(fromOutput output: String) -> NotificationContent? {
        let text = output.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { return nil }
        var content = base
        switch self.output {
        case .body:
            content.body = text.prefix(utf8Bytes: NotificationContent.maximumBodyLength)
        case .summaryAndBody:
            let lineEnd = text.firstIndex(where: \.isNewline) ?? text.endIndex
            let summary = text[..<lineEnd].trimmingCharacters(in: .whitespaces)
            let body = text[lineEnd...].trimmingCharacters(in: .whitespacesAndNewlines)
            content.summary = summary.prefix(utf8Bytes: NotificationContent.maximumSummaryLength)
            content.body = body.prefix(utf8Bytes: NotificationContent.maximumBodyLength)
        }
        return content
    }
}

extension String {
    /// The longest prefix of at most `limit` UTF-8 bytes that ends on a character boundary, so a cut
    /// never splits a multi-byte character or a cluster such as a flag or an accented letter.
    func prefix(utf8Bytes limit: Int) -> String {
        guard utf8.count > limit else { return self }
        var used = 0
        var end = startIndex
        for position in indices {
            let size = self[position].utf8.count
            guard used + size <= limit else { break }
            used += size
            end = index(after: position)
        }
        return String(self[..<end])
    }
}
