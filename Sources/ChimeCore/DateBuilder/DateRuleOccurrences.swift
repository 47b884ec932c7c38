import Foundation

extension DateRule {
    /// A rule's occurrences as a lazy sequence (infinite for unbounded rules: take a `prefix`).
    public struct Occurrences: Sequence, Sendable {
        let rule: DateRule
        let after: Date?
        let systemTimeZone: Zone

        public func makeIterator() -> Iterator {
            Iterator(rule: rule, last: after, started: after != nil, systemTimeZone: systemTimeZone)
        }

        /// Produces each occurrence by one `nextOccurrence(after:)` step.
        public struct Iterator: IteratorProtocol, Sendable {
            let rule: DateRule
            var last: Date?
            var started: Bool
            let systemTimeZone: Zone

            public mutating func next() -> Date? {
                let next: Date?
                if started, let last {
                    next = rule.nextOccurrence(after: last, systemTimeZone: systemTimeZone)
                } else if started {
                    next = nil
                } else {
                    next = rule.firstOccurrence(systemTimeZone: systemTimeZone)
                }
                started = true
                last = next
                return next
            }
        }
    }

    /// A calendar rule's scheduled wall-clock times as a lazy sequence.
    public struct LocalOccurrences: Sequence, Sendable {
        let rule: DateRule

        public func makeIterator() -> Iterator { Iterator(rule: rule, nextDay: DateRule.earliestDay) }

        /// Produces each local occurrence (at most one per day) by one bounded search.
        public struct Iterator: IteratorProtocol, Sendable {
            let rule: DateRule
            var nextDay: Int?

            public mutating func next() -> LocalDateTime? {
                guard let from = nextDay else { return nil }
                var found: LocalDateTime?
                var budget = SearchBudget()
                try? rule.forEachLocalOccurrence(fromDay: from, budget: &budget) { local in
                    found = local
                    return true
                }
                nextDay = found.map { $0.daysSinceEpoch + 1 }
                return found
            }
        }
    }
}
