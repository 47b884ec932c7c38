import Foundation

/// Why a rule is not taken for scheduling, with a message that says what to do.
public struct RuleRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// No date matches the rule (February 31).
        case neverFires
        /// The rule has occurrences, none of them after `now` and up to ``Recurrence/latestOccurrence``.
        case noOccurrenceAfter
        /// Its occurrences cannot be found within the search budget.
        case tooSparse
        /// Its next occurrence is after ``Recurrence/latestOccurrence`` (the year 10000 in UTC).
        case afterLatest
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }
}

extension Recurrence {
    /// How many of a new rule's first occurrences must be found, each within one search's
    /// ``SearchBudget``, before it is scheduled: its first occurrence and the two after it, so that the
    /// first steps of the item are known to work and a rule that found one occurrence by luck of the
    /// starting point is still refused.
    public static let occurrencesChecked = 3

    /// Checks that chimed can follow the rule from `now` on and returns its first occurrence after `now`.
    /// Refused: a rule that never fires, has no occurrence after `now` (up to ``latestOccurrence``), or
    /// whose first ``occurrencesChecked`` occurrences cannot each be found within one search's budget; and
    /// an RRULE with COUNT whose whole expansion does not fit in one budget (a search for a later
    /// occurrence of such a rule expands it from DTSTART, since COUNT counts from there).
    ///
    /// - Throws: ``RuleRefusal``, whose message names the problem and what to do.
    public func admissionCheck(after now: Date, systemTimeZone: Zone) throws(RuleRefusal) -> Date {
        var total = SearchBudget(steps: Int.max)
        return try admissionCheck(after: now, systemTimeZone: systemTimeZone, budget: &total)
    }

    /// The same check, its work also taken from `budget`, which many checks share (all of an import's):
    /// each search gets one search's budget or what is left of `budget`, whichever is less.
    public func admissionCheck(after now: Date, systemTimeZone: Zone, budget total: inout SearchBudget)
        throws(RuleRefusal) -> Date
    {
        func searchBudget() -> SearchBudget { SearchBudget(steps: min(SearchBudget.stepsPerSearch, total.remaining)) }
        func account(_ used: SearchBudget) { try? total.spend(min(used.spent, total.remaining)) }
        let sparse = RuleRefusal(
            .tooSparse,
            "the rule's occurrences cannot be found within chimed's search budget (\(SearchBudget.stepsPerSearch) "
                + "steps for each of its first \(Self.occurrencesChecked)): it fires too rarely for its "
                + "frequency (such as FREQ=SECONDLY firing once in years); write it with a coarser frequency "
                + "(FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29 rather than FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=29) and "
                + "check it with `chime next`")
        var found: [Date] = []
        var cursor = now
        do {
            while found.count < Self.occurrencesChecked {
                var budget = searchBudget()
                defer { account(budget) }
                guard let next = try nextOccurrence(after: cursor, systemTimeZone: systemTimeZone, budget: &budget)
                else { break }
                found.append(next)
                cursor = next
            }
        } catch {
            throw sparse
        }
        guard let first = found.first else {
            var budget = searchBudget()
            defer { account(budget) }
            let never: Bool
            do {
                never = try neverFires(systemTimeZone: systemTimeZone, budget: &budget)
            } catch {
                throw sparse
            }
            if never {
                throw RuleRefusal(
                    .neverFires, "the rule never fires (no date matches it); check it with `chime next`")
            }
            var more = searchBudget()
            defer { account(more) }
            if let late = try? unboundedNext(after: now, systemTimeZone: systemTimeZone, budget: &more) {
                throw RuleRefusal(
                    .afterLatest,
                    "the rule's next occurrence (\(WallClock.iso8601(late, in: Zone.utc))) is after "
                        + "9999-12-31T23:59:59Z, the latest time chimed keeps; give it an earlier start or time zone")
            }
            throw RuleRefusal(
                .noOccurrenceAfter,
                "the rule has no occurrence after now up to 9999-12-31T23:59:59Z, the latest time chimed keeps; "
                    + "check it with `chime next`")
        }
        if !countedExpansionFits(systemTimeZone: systemTimeZone, total: &total) {
            throw RuleRefusal(
                .tooSparse,
                "the rule's COUNT is counted from DTSTART, so finding a later occurrence expands the rule from "
                    + "there, and that takes more than chimed's search budget (\(SearchBudget.stepsPerSearch) "
                    + "steps); give a smaller COUNT, or UNTIL instead")
        }
        return first
    }

    /// Whether every RRULE with COUNT in the rule expands to its end within one search's budget.
    private func countedExpansionFits(systemTimeZone: Zone, total: inout SearchBudget) -> Bool {
        switch self {
        case .rrule(let set, _):
            let counted = set.rules.filter { $0.count != nil }
            guard !counted.isEmpty else { return true }
            // Only the counted rules, past their last possible occurrence: each expands from DTSTART.
            guard
                let alone = try? RRuleSet(
                    dtstart: set.dtstart, rules: counted, timeZoneIdentifier: set.timeZoneIdentifier)
            else { return true }
            var budget = SearchBudget(steps: min(SearchBudget.stepsPerSearch, total.remaining))
            defer { try? total.spend(min(budget.spent, total.remaining)) }
            let end = LocalDateTime(year: RRuleExpander.maxYear, month: 12, day: 31, hour: 23, minute: 59, second: 59)
            do {
                _ = try alone.nextOccurrence(after: end, inclusive: true, budget: &budget)
                return true
            } catch {
                return false
            }
        case .shifted(let base, _):
            return base.countedExpansionFits(systemTimeZone: systemTimeZone, total: &total)
        case .onCalendar, .dateRule:
            return true
        }
    }
}
