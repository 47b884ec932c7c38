import Synchronization

extension DateBuilder {
    /// The counted runs that DateBuilder's lists were made from, so that a list scheduled whole travels as
    /// its run's one rule: `EveryMonth(forMonths: 12, starting: .thisMonth).first(.friday).at(hour: 20,
    /// minute: 15)` is twelve dates here, as in DateBuilder, and one rule ("…, 12 times") in chimed, which
    /// "Stop Repeat" ends as a whole.
    ///
    /// A list is remembered by value when a counted `Every…` list form makes it (evenly spaced, the
    /// `.normal` distribution) and when each step of its chain has a counterpart on the run. A list of
    /// resolved dates is fixed when made while its run stays words ("this month"), so whoever schedules the
    /// run checks first that, resolved then, it still gives the list's dates. Only the latest lists are kept
    /// (`memberBudget`); a list not found (built by hand, filtered, or forgotten) is scheduled as its dates,
    /// which are the same occurrences.
    public enum ListRuns {
        /// How many members the remembered lists have together at most; the oldest lists are forgotten first.
        /// A list longer than this is not remembered.
        public static let memberBudget = 20_000

        enum Key: Hashable, Sendable {
            case days([Day])
            case weeks([Week])
            case months([Month])
            case years([Year])
            case dates([ResolvedDate])
        }

        enum Run: Hashable, Sendable {
            case days(Days)
            case weeks(Weeks)
            case months(Months)
            case years(Years)
            case dates(ResolvedDates)
        }

        /// Lists and their runs, oldest first, within a budget of members.
        struct Memory {
            let budget: Int
            var runs: [Key: (run: Run, members: Int)] = [:]
            var order: [Key] = []
            var members = 0

            init(budget: Int) { self.budget = budget }

            mutating func record(_ key: Key, members count: Int, as run: Run) {
                guard count > 0, count <= budget else { return }
                if let old = runs.updateValue((run, count), forKey: key) {
                    members -= old.members
                    order.removeAll { $0 == key }
                }
                order.append(key)
                members += count
                var dropped = 0
                while members > budget, dropped < order.count {
                    let key = order[dropped]
                    members -= runs.removeValue(forKey: key)?.members ?? 0
                    dropped += 1
                }
                order.removeFirst(dropped)
            }

            func run(of key: Key) -> Run? { runs[key]?.run }
        }

        static let memory = Mutex(Memory(budget: memberBudget))

        static func record(_ key: Key, _ count: Int, as run: Run?) {
            guard let run, count > 0, count <= memberBudget else { return }
            memory.withLock { $0.record(key, members: count, as: run) }
        }

        static func run(of key: Key, _ count: Int) -> Run? {
            guard count > 0, count <= memberBudget else { return nil }
            return memory.withLock { $0.run(of: key) }
        }

        /// The counted run `dates` was made from, when it was made whole by a counted `Every…` list form
        /// and is still remembered.
        public static func run(of dates: [ResolvedDate]) -> ResolvedDates? {
            guard case .dates(let run)? = run(of: .dates(dates), dates.count) else { return nil }
            return run
        }

        static func days(of list: [Day]) -> Days? {
            guard case .days(let run)? = run(of: .days(list), list.count) else { return nil }
            return run
        }

        static func weeks(of list: [Week]) -> Weeks? {
            guard case .weeks(let run)? = run(of: .weeks(list), list.count) else { return nil }
            return run
        }

        static func months(of list: [Month]) -> Months? {
            guard case .months(let run)? = run(of: .months(list), list.count) else { return nil }
            return run
        }

        static func years(of list: [Year]) -> Years? {
            guard case .years(let run)? = run(of: .years(list), list.count) else { return nil }
            return run
        }

        /// `list`, remembered as made by `run` (nil: not remembered).
        static func days(_ list: [Day], from run: Days?) -> [Day] {
            record(.days(list), list.count, as: run.map(Run.days))
            return list
        }

        static func weeks(_ list: [Week], from run: Weeks?) -> [Week] {
            record(.weeks(list), list.count, as: run.map(Run.weeks))
            return list
        }

        static func months(_ list: [Month], from run: Months?) -> [Month] {
            record(.months(list), list.count, as: run.map(Run.months))
            return list
        }

        static func years(_ list: [Year], from run: Years?) -> [Year] {
            record(.years(list), list.count, as: run.map(Run.years))
            return list
        }

        static func dates(_ list: [ResolvedDate], from run: ResolvedDates?) -> [ResolvedDate] {
            record(.dates(list), list.count, as: run.map(Run.dates))
            return list
        }
    }
}
