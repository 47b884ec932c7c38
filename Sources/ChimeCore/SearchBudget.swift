import Foundation

/// How much work one occurrence search may do, counted in steps: a period expanded, a candidate day or
/// time examined, a zone compared at one instant. ChimeCore never reads the clock, so the bound is a
/// count, the same on every machine; a search that would need more stops and says so
/// (``SearchBudgetExhausted``) instead of going on.
///
/// Every rule form spends from it: RRULE sets (each expander step, each candidate a set's EXDATEs drop),
/// systemd calendar events (each step of systemd's search), DateBuilder rules and phrases (each period
/// and day visited), occurrence offsets (every search of the base rule, the bisection's included) and
/// the time-zone matching of `chime import`.
public struct SearchBudget: Hashable, Sendable {
    /// The steps one search may take: 100,000, at most about 4 ms in a release build on the machine of
    /// docs/performance.md (the time-engine benchmark's "whole budget" rows measure it; most kinds of work
    /// take under 1 ms). Legitimate rules need far fewer: an occurrence of every rule the tests compare
    /// with python-dateutil, systemd and the phrase corpus is found within a few thousand.
    public static let stepsPerSearch = 100_000

    /// What one period of an RRULE costs (a day, an hour, a second of a sub-daily rule), besides its
    /// candidates: the step to the next period, and a year's tables when the year changes.
    static let periodCost = 4

    /// What one conversion between wall-clock time and an instant costs, in steps: a few look-ups in the
    /// zone's data.
    static let wallClockCost = 10

    /// The steps left.
    public private(set) var remaining: Int
    /// The steps it started with.
    public let limit: Int

    /// A budget of `steps` (one search's, unless a caller shares one among several).
    public init(steps: Int = SearchBudget.stepsPerSearch) {
        remaining = max(0, steps)
        limit = max(0, steps)
    }

    /// The steps taken so far.
    public var spent: Int { limit - remaining }

    /// Nothing is left.
    public var isExhausted: Bool { remaining <= 0 }

    /// Takes `steps` from the budget.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when fewer were left (the budget is then empty).
    public mutating func spend(_ steps: Int = 1) throws(SearchBudgetExhausted) {
        guard steps <= remaining else {
            remaining = 0
            throw SearchBudgetExhausted(steps: limit)
        }
        remaining -= steps
    }
}

/// A search ran out of its ``SearchBudget`` before it knew the answer: the rule is too sparse for its
/// form (a second-by-second rule that fires once in 28 years), or needs more work than chimed gives one
/// search.
public struct SearchBudgetExhausted: Error, Hashable, Sendable, CustomStringConvertible {
    /// The budget that ran out, in steps.
    public var steps: Int

    public init(steps: Int) { self.steps = steps }

    public var description: String {
        "its occurrences cannot be found within the search budget (\(steps) steps per occurrence)"
    }
}
