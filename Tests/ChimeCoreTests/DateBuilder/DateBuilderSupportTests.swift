import Foundation
import Testing

@testable import ChimeCore

/// Fixed inputs for the DateBuilder tests: the README's "today" (2021-01-31, a Sunday) in Berlin.
enum DateBuilderFixture {
    /// 2021-01-31T10:00:00+01:00.
    static let now = Date(timeIntervalSince1970: 1_612_083_600)
    /// `account.createdAt` in the README examples: 2021-03-20T10:30:00+01:00 (a Saturday).
    static let createdAt = Date(timeIntervalSince1970: 1_616_232_600)
    static let berlin = Zone(identifier: "Europe/Berlin")!

    static func iso(_ date: Date?, in zone: Zone = berlin) -> String {
        date.map { WallClock.iso8601($0, in: zone) } ?? "nil"
    }

    static func iso(_ value: DateBuilder.Moment, zone: Zone = berlin) -> [String] {
        [iso(value.date(now: now, systemTimeZone: zone), in: zone)]
    }

    static func iso(_ value: DateBuilder.ResolvedDates, limit: Int = 400, zone: Zone = berlin) -> [String] {
        value.dates(now: now, systemTimeZone: zone).prefix(limit).map { iso($0, in: zone) }
    }

    static func ymd(_ value: DateBuilder.Day, zone: Zone = berlin) -> [String] {
        [components(value.dateComponents(now: now, systemTimeZone: zone))]
    }

    /// A day that may not exist ("nil" when it does not).
    static func ymd(_ value: DateBuilder.Day?, zone: Zone = berlin) -> [String] {
        value.map { ymd($0, zone: zone) } ?? ["nil"]
    }

    /// DateBuilder's lists of days, each resolved.
    static func ymd(_ value: [DateBuilder.Day], zone: Zone = berlin) -> [String] {
        value.flatMap { ymd($0, zone: zone) }
    }

    static func ymd(_ value: DateBuilder.Days, limit: Int = 400, zone: Zone = berlin) -> [String] {
        value.dateComponents(now: now, systemTimeZone: zone).prefix(limit).map(components)
    }

    static func components(_ c: DateComponents?) -> String {
        guard let c, let y = c.year, let m = c.month, let d = c.day else { return "nil" }
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        var text = "\(y)-\(two(m))-\(two(d))"
        if let h = c.hour, let mi = c.minute, let s = c.second { text += "T\(two(h)):\(two(mi)):\(two(s))" }
        return text
    }

    /// Independent expectation: `count` days from `first` (yyyy-MM-dd), `step` days apart, at `time`
    /// (HH:mm:ss) in `zone`, computed with Foundation's Calendar and ISO8601DateFormatter.
    static func foundationDaily(
        from first: String, count: Int, step: Int = 1, time: String, zone: Zone = berlin
    ) -> [String] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: zone.identifier)!
        let parser = DateFormatter()
        parser.locale = Locale(identifier: "en_US_POSIX")
        parser.timeZone = TimeZone(identifier: zone.identifier)!
        parser.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: zone.identifier)!
        guard let start = parser.date(from: "\(first)T\(time)") else { return ["bad fixture"] }
        return (0..<count).map { index in
            let date = calendar.date(byAdding: .day, value: index * step, to: start) ?? start
            return formatter.string(from: date)
        }
    }

    /// Independent expectation: `count` consecutive days as yyyy-MM-dd, via Foundation's Calendar.
    static func foundationDays(from first: String, count: Int) -> [String] {
        foundationDaily(from: first, count: count, time: "12:00:00", zone: Zone(identifier: "UTC")!)
            .map { String($0.prefix(10)) }
    }
}

/// One DSL example with its hand-computed (or independently computed) expected output.
struct DateBuilderExample: Sendable, CustomStringConvertible {
    let description: String
    let expected: [String]
    let evaluate: @Sendable () -> [String]

    init(_ description: String, _ expected: [String], _ evaluate: @escaping @Sendable () -> [String]) {
        self.description = description
        self.expected = expected
        self.evaluate = evaluate
    }
}
