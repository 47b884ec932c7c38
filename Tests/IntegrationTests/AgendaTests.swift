import ChimeCore
import ChimeKit
import Foundation
import TestSupport
import Testing

/// `chime agenda`: next month drawn as a grid and day by day, with a first-Friday, a weekday and a
/// one-off item, checked against Foundation's calendar; colors only when asked; items with more
/// occurrences than a listing holds say so.
@Suite(.serialized) struct AgendaTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin")!

    static var calendar: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        calendar.locale = Locale(identifier: "en_US_POSIX")
        return calendar
    }

    /// The first day of next month in Berlin, and its name for `--month`.
    static func nextMonth() -> (start: Date, name: String) {
        let calendar = Self.calendar
        let thisMonth = calendar.date(from: calendar.dateComponents([.year, .month], from: Date()))!
        let start = calendar.date(byAdding: .month, value: 1, to: thisMonth)!
        let c = calendar.dateComponents([.year, .month], from: start)
        return (start, String(format: "%04d-%02d", c.year!, c.month!))
    }

    @Test func aMonthWithAFirstFridayAWeekdayAndAOneOffItemReadsAsExpected() async throws {
        try await Session.run { s in
            let (start, name) = Self.nextMonth()
            let calendar = Self.calendar
            for (rule, summary) in [
                ("every month on the first friday at 20:15", "First Friday"), ("every weekday at 9:00", "Stand-up"),
            ] {
                let sent = try await s.chime(["send", "--every", rule, "--tz", "Europe/Berlin", summary])
                #expect(sent.status == 0, "\(sent.stderr)")
            }
            let dentist = calendar.date(byAdding: DateComponents(day: 14, hour: 10), to: start)!
            _ = try await s.client().schedule(ChimeCore.NotificationContent(summary: "Dentist"), at: dentist)

            let result = try await s.chime(["agenda", "--month", name, "--tz", "Europe/Berlin"])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(!result.stdout.contains("\u{1B}["), "no colors into a pipe")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)

            // The oracle: Foundation's calendar, day by day.
            let days = calendar.range(of: .day, in: .month, for: start)!.count
            var weekdays: Set<Int> = []
            var firstFriday = 0
            for day in 1...days {
                let date = calendar.date(byAdding: .day, value: day - 1, to: start)!
                let weekday = calendar.component(.weekday, from: date)
                if (2...6).contains(weekday) { weekdays.insert(day) }
                if weekday == 6, firstFriday == 0 { firstFriday = day }
            }

            // The grid: a title, the weekday names from Monday, then rows of 7 cells, `DD*` for a busy day.
            let monthName = calendar.monthSymbols[calendar.component(.month, from: start) - 1]
            #expect(
                lines[0].trimmingCharacters(in: .whitespaces)
                    == "\(monthName) \(calendar.component(.year, from: start))")
            #expect(lines[1] == "Mo  Tu  We  Th  Fr  Sa  Su")
            let rows = Array(lines[2...].prefix { !$0.isEmpty })
            var marked: Set<Int> = []
            var seen: [Int] = []
            for (rowIndex, row) in rows.enumerated() {
                for column in 0..<7 {
                    let from = column * 4
                    guard from < row.count else { continue }
                    let cell = String(Array(row)[from..<min(from + 3, row.count)])
                    guard let day = Int(cell.prefix(2).trimmingCharacters(in: .whitespaces)) else { continue }
                    seen.append(day)
                    if cell.hasSuffix("*") { marked.insert(day) }
                    // Monday first: the column is the weekday.
                    let date = calendar.date(byAdding: .day, value: day - 1, to: start)!
                    #expect((calendar.component(.weekday, from: date) + 5) % 7 == column, "day \(day), row \(rowIndex)")
                }
            }
            #expect(seen == Array(1...days))
            #expect(marked == weekdays.union([15]))

            // Day by day: the first Friday has both repeating items, the 15th the one-off, a weekend day
            // nothing (unless it is the 15th).
            func section(_ day: Int) -> [String] {
                let date = calendar.date(byAdding: .day, value: day - 1, to: start)!
                let heading =
                    "\(calendar.shortWeekdaySymbols[calendar.component(.weekday, from: date) - 1]) \(day) \(monthName) "
                    + "\(calendar.component(.year, from: start))"
                guard let index = lines.firstIndex(of: heading) else { return [] }
                return Array(lines[(index + 1)...].prefix { $0.hasPrefix("  ") })
            }
            let friday = section(firstFriday)
            #expect(friday.count == 2, "\(friday)")
            #expect(friday.first?.hasPrefix("  09:00  Stand-up") == true)
            #expect(friday.first?.hasSuffix("-  repeats (every weekday at 9:00)") == true)
            #expect(friday.last?.hasPrefix("  20:15  First Friday") == true)
            #expect(friday.last?.hasSuffix("repeats (every month on the first friday at 20:15)") == true)
            #expect(section(15).contains { $0.hasPrefix("  10:00  Dentist") && $0.hasSuffix("-  once") })
            let weekend = try #require((1...days).first { !weekdays.contains($0) && $0 != 15 })
            #expect(section(weekend) == ["  nothing due"])

            // The same as JSON, for scripts.
            let json = try await s.chimeJSON(["agenda", "--month", name, "--tz", "Europe/Berlin", "--json"])
            #expect(json.count == weekdays.count + 2)
            #expect(json.filter { $0["repeats"] as? Bool == false }.map { $0["summary"] as? String } == ["Dentist"])
        }
    }

    @Test func colorsWhenAskedAndItemsCutShort() async throws {
        try await Session.run { s in
            let sent = try await s.chime(["send", "--every", "every 2 minutes", "-p", "Tick"])
            #expect(sent.status == 0, "\(sent.stderr)")
            let id = sent.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let result = try await s.chime(["agenda", "--days", "3", "--color", "always"])
            #expect(result.status == 0, "\(result.stderr)")
            // Headings bold, times dim.
            #expect(result.stdout.contains("\u{1B}[1m"))
            #expect(result.stdout.contains("\u{1B}[2m"))
            // 3 days of a two-minute rule are 2160 occurrences: the listing holds 1000, and says so.
            #expect(result.stdout.hasSuffix("Tick (item \(id)): more not shown\n"), "\(result.stdout.suffix(200))")
            let plain = try await s.chime(["agenda", "--days", "2", "--color", "never"])
            #expect(!plain.stdout.contains("\u{1B}["))
            let bad = try await s.chime(["agenda", "--month", "2026-13"])
            #expect(bad.status == 2)
            #expect(bad.stderr.contains("--month: cannot read \"2026-13\""))
        }
    }
}
