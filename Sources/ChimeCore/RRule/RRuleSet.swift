import Foundation
import Synchronization

/// A recurrence set: a start (`DTSTART`), rules (`RRULE`), extra dates (`RDATE`) and excluded dates
/// (`EXDATE`), expanded on naive wall-clock time exactly as python-dateutil's `rruleset` does.
///
/// Semantics worth knowing (all dateutil's):
/// - DTSTART is an occurrence only if it matches the rules; it fills every BYxxx part a rule leaves out
///   (`FREQ=MONTHLY` alone fires on DTSTART's day of the month, `FREQ=WEEKLY` on its weekday, and the
///   time of day comes from DTSTART unless BYHOUR/BYMINUTE/BYSECOND say otherwise).
/// - Dates that do not exist are skipped, not moved (`FREQ=MONTHLY` from January 31 skips February).
/// - COUNT counts a rule's occurrences from DTSTART, before EXDATE removes any; UNTIL is inclusive.
/// - RDATEs are occurrences even when they come before DTSTART; EXDATE removes exact matches only.
///
/// Expansion is lazy: ``nextOccurrence(after:inclusive:)`` starts near `after` instead of at DTSTART
/// (unless a rule has COUNT), and a set that can never fire is recognised within one 400-year calendar
/// cycle of empty periods, so every query finishes quickly even for rules dateutil would scan until 9999.
/// Each query works within a ``SearchBudget`` and says when it ran out. Like dateutil, nothing is
/// produced after year 9999.
public struct RRuleSet: Codable, Hashable, Sendable {
    /// The start; occurrences of the rules are never earlier than this.
    public var dtstart: LocalDateTime { didSet { compiled = CompiledRules() } }
    /// The rules whose occurrences make up the set.
    public var rules: [RRule] { didSet { compiled = CompiledRules() } }
    /// Extra occurrences.
    public var rdates: [LocalDateTime]
    /// Removed occurrences (exact wall-clock matches).
    public var exdates: [LocalDateTime]
    /// The zone DTSTART was given in (`DTSTART;TZID=…` or `UTC` for a trailing `Z`), or nil for floating
    /// time. Expansion is on wall-clock time either way, like dateutil's; the zone only says how a rule's
    /// UTC UNTIL maps onto that wall clock, and how the set serialises.
    public var timeZoneIdentifier: String? { didSet { compiled = CompiledRules() } }
    /// The rules compiled against the start, made by the first query and shared by the set's copies: a
    /// rule is compiled once, not at every query (a scheduler asks a set for its next occurrence each
    /// time it fires).
    private var compiled = CompiledRules()

    private enum CodingKeys: String, CodingKey {
        case dtstart, rules, rdates, exdates, timeZoneIdentifier
    }

    /// Builds a set, checking what dateutil would reject for this start: a UTC UNTIL on a floating start,
    /// a floating UNTIL on a zoned start, out-of-range values, and BYHOUR/BYMINUTE/BYSECOND values that
    /// steps of INTERVAL from DTSTART can never reach.
    ///
    /// - Throws: ``RuleSyntaxError`` whose input is the set's ``rfcString``.
    public init(
        dtstart: LocalDateTime, rules: [RRule], rdates: [LocalDateTime] = [], exdates: [LocalDateTime] = [],
        timeZoneIdentifier: String? = nil
    ) throws(RuleSyntaxError) {
        self.dtstart = dtstart
        self.rules = rules
        self.rdates = rdates
        self.exdates = exdates
        self.timeZoneIdentifier = timeZoneIdentifier
        if let problem = validationProblem() {
            let text = rfcString
            let offset = text.range(of: problem.part).map { text.distance(from: text.startIndex, to: $0.lowerBound) }
            throw RuleSyntaxError(
                grammar: RRuleScanner.grammar, input: text, offset: offset ?? 0, token: problem.part,
                expected: problem.expected)
        }
    }

    /// The first reason this set cannot be expanded, if any.
    func validationProblem() -> RRuleCompileProblem? {
        guard (1...RRuleExpander.maxYear).contains(dtstart.year), LocalDateTime(iso: dtstart.description) != nil else {
            return RRuleCompileProblem(part: "DTSTART", expected: "a valid date and time in years 1 to 9999")
        }
        for rule in rules {
            if case .failure(let problem) = compile(rule) { return problem }
        }
        return nil
    }

    /// The wall-clock zone, when the set has one.
    var zone: Zone? { timeZoneIdentifier.flatMap { Zone(identifier: $0) } }

    /// The rules that compile, compiled against this set's start (once; see `compiled`).
    var compiledRules: [RRuleCompiled] {
        compiled.rules.withLock { rules in
            if let rules { return rules }
            let made = self.rules.compactMap { rule in try? compile(rule).get() }
            rules = made
            return made
        }
    }

    /// Normalises one rule against this set's start, mapping a UTC UNTIL onto the set's wall clock.
    func compile(_ rule: RRule) -> Result<RRuleCompiled, RRuleCompileProblem> {
        var until: LocalDateTime?
        switch rule.until {
        case .none:
            until = nil
        case .utc(let t)?:
            guard let zone else {
                return .failure(
                    RRuleCompileProblem(
                        part: "UNTIL",
                        expected:
                            "a floating UNTIL (YYYYMMDDTHHMMSS, no Z) when DTSTART is floating; dateutil rejects "
                            + "a UTC UNTIL here (or parse with a time zone to convert it)"
                    ))
            }
            until = RRuleSet.wallClock(ofUTC: t, in: zone)
        case let value?:
            if timeZoneIdentifier != nil {
                return .failure(
                    RRuleCompileProblem(
                        part: "UNTIL",
                        expected:
                            "a UTC UNTIL (YYYYMMDDTHHMMSSZ) because DTSTART has a time zone "
                            + "(RFC 5545 section 3.3.10; dateutil rejects anything else)"
                    ))
            }
            until = value.localValue
        }
        do {
            return .success(try RRuleCompiled(rule: rule, dtstart: dtstart, until: until))
        } catch {
            return .failure(error)
        }
    }

    /// The wall-clock time in `zone` of a UTC time.
    static func wallClock(ofUTC t: LocalDateTime, in zone: Zone) -> LocalDateTime {
        let instant = Date(timeIntervalSince1970: TimeInterval(t.secondsSinceEpoch))
        return t.adding(seconds: WallClock.utcOffset(at: instant, in: zone))
    }

    /// The UTC time of a wall-clock time in `zone` (the earlier reading when the time is ambiguous).
    static func utc(ofWallClock t: LocalDateTime, in zone: Zone) -> LocalDateTime {
        let guess = Date(timeIntervalSince1970: TimeInterval(t.secondsSinceEpoch))
        var offset = WallClock.utcOffset(at: guess, in: zone)
        offset = WallClock.utcOffset(at: guess.addingTimeInterval(TimeInterval(-offset)), in: zone)
        return t.adding(seconds: -offset)
    }

    // MARK: - Queries

    /// A lazy iterator over the set's occurrences after `after` (all of them when nil), whose work is taken
    /// from `budget` (one search's by default): see ``RRuleSetIterator/exhausted``.
    public func makeIterator(
        after: LocalDateTime? = nil, inclusive: Bool = false, budget: SearchBudget = SearchBudget()
    ) -> RRuleSetIterator {
        RRuleSetIterator(set: self, after: after, inclusive: inclusive, budget: budget)
    }

    /// Up to `limit` occurrences in order, those after `after` (or at it, when `inclusive`); from the
    /// beginning when `after` is nil. This is dateutil's `xafter(after, count=limit, inc=inclusive)`.
    /// Each occurrence is searched for within one search's budget; the list ends early where a search ran
    /// out.
    public func occurrences(after: LocalDateTime? = nil, inclusive: Bool = false, limit: Int) -> [LocalDateTime] {
        var result: [LocalDateTime] = []
        result.reserveCapacity(min(max(limit, 0), 1024))
        var cursor = after
        var cursorInclusive = inclusive
        while result.count < limit {
            // One iterator for as long as its budget lasts; a new one (and budget) from the last found.
            var iterator = makeIterator(after: cursor, inclusive: cursorInclusive)
            var found = false
            while result.count < limit, let next = iterator.next() {
                result.append(next)
                found = true
            }
            guard iterator.exhausted, found, let last = result.last else { break }
            (cursor, cursorInclusive) = (last, false)
        }
        return result
    }

    /// The first occurrence strictly after `after` (or at it, when `inclusive`), nil when there is none.
    /// This is dateutil's `after(after, inc=inclusive)`.
    ///
    /// - Throws: ``SearchBudgetExhausted`` when the search needed more than `budget` allows.
    public func nextOccurrence(
        after: LocalDateTime, inclusive: Bool = false, budget: inout SearchBudget
    ) throws(SearchBudgetExhausted) -> LocalDateTime? {
        var iterator = makeIterator(after: after, inclusive: inclusive, budget: budget)
        let next = iterator.next()
        budget = iterator.budget
        if iterator.exhausted { throw SearchBudgetExhausted(steps: budget.limit) }
        return next
    }

    /// The first occurrence strictly after `after` (or at it, when `inclusive`), nil when there is none or
    /// one search's budget was not enough to find it.
    public func nextOccurrence(after: LocalDateTime, inclusive: Bool = false) -> LocalDateTime? {
        var budget = SearchBudget()
        return try? nextOccurrence(after: after, inclusive: inclusive, budget: &budget)
    }

    /// True when the set has no occurrence at all: no RDATE survives EXDATE and no rule ever fires
    /// (e.g. `FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31`). Answers within one calendar cycle of empty periods,
    /// and within one search's budget: false when that was not enough to tell.
    public var neverFires: Bool {
        var iterator = makeIterator()
        return iterator.next() == nil && !iterator.exhausted
    }
}

/// Lazily merges a set's rules and RDATEs in order, dropping duplicates and EXDATEs, like dateutil's
/// `rruleset._iter`. Each rule is expanded on demand, so forever-rules are fine.
///
/// Every step of the work is taken from `budget`; when it runs out, `next()` returns nil with `exhausted`
/// set (it is not the end of the set).
public struct RRuleSetIterator: IteratorProtocol, Sendable {
    private var expanders: [RRuleExpander]
    private var heads: [Int?]
    private let rdates: [Int]
    private var rdateIndex: Int
    private let exdates: Set<Int>
    private let lowerBound: Int?
    private let inclusive: Bool
    /// What is left of the work the iterator may do.
    public private(set) var budget: SearchBudget
    /// The budget ran out: the set was not exhausted, the search was.
    public private(set) var exhausted = false

    init(set: RRuleSet, after: LocalDateTime?, inclusive: Bool, budget: SearchBudget) {
        self.budget = budget
        let bound = after?.secondsSinceEpoch
        lowerBound = bound
        self.inclusive = inclusive
        var expanders: [RRuleExpander] = []
        for compiled in set.compiledRules {
            var expander = RRuleExpander(rule: compiled)
            if let bound { expander.fastForward(to: bound) }
            expanders.append(expander)
        }
        self.expanders = expanders
        heads = Array(repeating: nil, count: expanders.count)
        rdates = set.rdates.map(\.secondsSinceEpoch).sorted()
        var index = 0
        if let bound {
            while index < rdates.count && (inclusive ? rdates[index] < bound : rdates[index] <= bound) { index += 1 }
        }
        rdateIndex = index
        exdates = Set(set.exdates.map(\.secondsSinceEpoch))
        for i in expanders.indices { heads[i] = pull(i) }
    }

    /// Rule `i`'s next occurrence, its work taken from the budget.
    private mutating func pull(_ i: Int) -> Int? {
        guard !exhausted else { return nil }
        let before = expanders[i].stepsTaken
        expanders[i].stepLimit = before + budget.remaining
        let key = expanders[i].nextKey()
        do {
            try budget.spend(expanders[i].stepsTaken - before)
        } catch {
            exhausted = true
        }
        if expanders[i].exhausted { exhausted = true }
        return exhausted ? nil : key
    }

    /// Takes `steps` of the caller's own work on the occurrences (converting them to instants) from the
    /// budget; false, and `exhausted`, when it ran out.
    public mutating func charge(_ steps: Int) -> Bool {
        do {
            try budget.spend(steps)
            return true
        } catch {
            exhausted = true
            return false
        }
    }

    /// The next occurrence, or nil when the set is exhausted or the budget ran out (`exhausted`).
    public mutating func next() -> LocalDateTime? {
        while !exhausted {
            var smallest: Int?
            for head in heads { if let head, smallest.map({ head < $0 }) ?? true { smallest = head } }
            if rdateIndex < rdates.count, smallest.map({ rdates[rdateIndex] < $0 }) ?? true {
                smallest = rdates[rdateIndex]
            }
            guard let key = smallest else { return nil }
            for i in heads.indices {
                while let head = heads[i], head <= key { heads[i] = pull(i) }
            }
            while rdateIndex < rdates.count && rdates[rdateIndex] <= key { rdateIndex += 1 }
            // An occurrence EXDATE removes, or one before the bound, was work too.
            do {
                try budget.spend()
            } catch {
                exhausted = true
                return nil
            }
            if exhausted { return nil }
            if exdates.contains(key) { continue }
            if let lowerBound, inclusive ? key < lowerBound : key <= lowerBound { continue }
            return LocalDateTime(daysSinceEpoch: rrFloorDiv(key, 86_400), secondsIntoDay: rrFloorMod(key, 86_400))
        }
        return nil
    }
}

/// A set's compiled rules, made once and shared by its copies until one of them changes its start, rules
/// or zone. It takes no part in the set's equality, hash or encoding: it is only what they determine.
final class CompiledRules: Hashable, Sendable {
    let rules = Mutex<[RRuleCompiled]?>(nil)

    static func == (_: CompiledRules, _: CompiledRules) -> Bool { true }
    func hash(into _: inout Hasher) {}
}
