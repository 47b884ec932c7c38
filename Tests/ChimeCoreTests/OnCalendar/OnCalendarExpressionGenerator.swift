import Foundation

@testable import ChimeCore

/// Builds random OnCalendar expressions — mostly valid, some deliberately broken — to compare with systemd.
struct OnCalendarExpressionGenerator {
    var rng: SplitMix64

    static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let zones = [
        "UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia",
    ]
    static let shorthands = [
        "minutely", "hourly", "daily", "monthly", "weekly", "yearly", "annually", "quarterly", "semiannually",
        "semi-annually", "biannually", "Daily", "WEEKLY",
    ]

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(0...(items.count - 1))] }

    mutating func expression() -> String {
        var text: String
        let shape = int(0...99)
        if shape < 6 {
            text = pick(Self.shorthands)
        } else if shape < 8 {
            text = "@\(int(0...2_000_000_000))"
        } else {
            var parts: [String] = []
            if chance(0.4) { parts.append(weekdays()) }
            switch int(0...9) {
            case 0...2: break
            case 3...5: parts.append("\(chain(.month))\(chance(0.2) ? "~" : "-")\(chain(.day))")
            default: parts.append("\(chain(.year))-\(chain(.month))\(chance(0.15) ? "~" : "-")\(chain(.day))")
            }
            switch int(0...9) {
            case 0...1: break
            case 2...5: parts.append("\(chain(.hour)):\(chain(.minute))")
            default: parts.append("\(chain(.hour)):\(chain(.minute)):\(chain(.second))")
            }
            if parts.isEmpty { parts.append("\(chain(.hour)):\(chain(.minute))") }
            text = parts.joined(separator: " ")
        }
        if chance(0.25) { text += " " + pick(Self.zones) }
        if chance(0.07) { text = mutate(text) }
        return text
    }

    mutating func weekdays() -> String {
        var items: [String] = []
        for _ in 0..<int(1...3) {
            let a = int(0...6)
            let name = { (i: Int, g: inout OnCalendarExpressionGenerator) -> String in
                let base = g.chance(0.7) ? Self.shortDays[i] : Self.longDays[i]
                switch g.int(0...5) {
                case 0: return base.lowercased()
                case 1: return base.uppercased()
                default: return base
                }
            }
            if chance(0.4) {
                let b = chance(0.9) ? int(a...6) : int(0...6)
                items.append(name(a, &self) + (chance(0.85) ? ".." : "-") + name(b, &self))
            } else {
                items.append(name(a, &self))
            }
        }
        return items.joined(separator: ",") + (chance(0.05) ? "," : "")
    }

    mutating func chain(_ field: OnCalendarField) -> String {
        if chance(field == .year ? 0.55 : 0.3) { return "*" }
        return (0..<(chance(0.7) ? 1 : int(2...3))).map { _ in component(field) }.joined(separator: ",")
    }

    mutating func component(_ field: OnCalendarField) -> String {
        let (low, high): (Int, Int)
        switch field {
        case .year: (low, high) = chance(0.3) ? (0, 99) : (1995, 2080)
        case .month: (low, high) = (1, 12)
        case .day: (low, high) = (1, 31)
        case .hour: (low, high) = (0, 23)
        case .minute, .second: (low, high) = (0, 59)
        }
        let broken = chance(0.03)
        func value(_ g: inout OnCalendarExpressionGenerator, _ v: Int) -> String {
            var s = field == .year && v >= 100 ? String(v) : (g.chance(0.5) && v < 10 ? "0\(v)" : String(v))
            if field == .second && g.chance(0.25) { s += "." + String(g.int(0...999_999)).prefix(g.int(1...7)) }
            return s
        }
        let start = broken ? high + int(1...30) : int(low...high)
        switch int(0...9) {
        case 0...4:
            return value(&self, start)
        case 5...6:
            return value(&self, start) + "/" + repetition(field, span: high - low)
        case 7...8:
            let stop = chance(0.9) ? int(start...max(start, high)) : int(low...high)
            return value(&self, start) + ".." + value(&self, stop)
        default:
            let stop = int(start...max(start, high))
            return value(&self, start) + ".." + value(&self, stop) + "/" + repetition(field, span: high - low)
        }
    }

    mutating func repetition(_ field: OnCalendarField, span: Int) -> String {
        if field == .second && chance(0.3) {
            return pick(["0.5", "0.25", "1.5", "2.5", "0.1", "7.25", "0"])
        }
        return String(chance(0.9) ? int(1...max(1, span / 3)) : int(0...(span + 5)))
    }

    /// Small damage: drop, duplicate or replace one character.
    mutating func mutate(_ text: String) -> String {
        var chars = Array(text)
        guard !chars.isEmpty else { return text }
        let i = int(0...(chars.count - 1))
        switch int(0...2) {
        case 0: chars.remove(at: i)
        case 1: chars.insert(chars[i], at: i)
        default: chars[i] = pick(Array("*-~:.,/ 0123456789aZ@"))
        }
        return String(chars)
    }

    /// Expressions aimed at the hours a DST change skips or repeats (and the days around it), optionally
    /// ending in one of the system zone's abbreviations (which pins tm_isdst in systemd).
    mutating func daylightSavingExpression(abbreviations: [String]) -> String {
        var parts: [String] = []
        if chance(0.15) { parts.append(weekdays()) }
        if chance(0.3) { parts.append(pick(["*-*-*", "*-03,04,09,10,11-*", "*-*~01", "*-*-01..07", "*-12-29..31"])) }
        let hour = pick(["*", "0..4", "1", "2", "3", "0,1,2,3", "1..3/1", "2/1", "0/2", "23,0,1", "2,3", "1/2"])
        let minute = pick(["*", "0", "30", "0/5", "0/10", "0/15", "0/20", "0/30", "15,45", "5..55/25", "59", "45"])
        var time = "\(hour):\(minute)"
        if chance(0.3) { time += ":" + pick(["0", "30", "*", "0/20", "59", "0/0.5"]) }
        parts.append(time)
        var text = parts.joined(separator: " ")
        if chance(0.15), let name = abbreviations.randomElement(using: &rng) { text += " " + name }
        return text
    }
}
