import ArgumentParser
import ChimeCore
import ChimeKit
import ChimeProtocol
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct Agenda: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Draw the coming days: a timeline of what is due, or a month grid.",
        discussion: """
            Without --month: the next --days days (7 by default), day by day, each occurrence with its \
            time, summary, group/entry (or -) and whether it repeats (with its rule) or comes once. With \
            --month YYYY-MM: that month as a grid, Monday first, each day that has something due marked \
            with *, then the month's occurrences day by day. Colors (today reversed, busy days bold) when standard output \
            is a terminal and NO_COLOR is not set; --color always or never decides. An item with more \
            occurrences than one listing holds (1000 an item) ends with "(more not shown)".
            """)

    @Option(help: ArgumentHelp("How many days to show, from today (1 to 366).", valueName: "N"))
    var days = 7

    @Option(help: ArgumentHelp("Show this month as a grid.", valueName: "YYYY-MM"))
    var month: String?

    @Option(help: "Only this group's items.")
    var group: String?

    @Option(help: ArgumentHelp("Draw on this zone's clock (default: the system zone).", valueName: "ZONE"))
    var tz: String?

    @Option(help: ArgumentHelp("Color: auto (a terminal without NO_COLOR), always or never.", valueName: "WHEN"))
    var color = "auto"

    @Flag(help: "Print a JSON array of the occurrences instead.")
    var json = false

    func run() async throws {
        let zone: Zone
        if let tz {
            guard let named = Zone(identifier: tz) else {
                throw fail("--tz: unknown time zone \"\(tz)\"; use an IANA name such as Europe/Berlin", .badInput)
            }
            zone = named
        } else {
            zone = .current
        }
        let colored: Bool
        switch color {
        case "always": colored = true
        case "never": colored = false
        case "auto":
            colored =
                isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
                && ProcessInfo.processInfo.environment["TERM"] != "dumb"
        default: throw fail("--color must be auto, always or never, not \"\(color)\"", .badInput)
        }
        let now = Date()
        let (start, end) = try range(zone: zone, now: now)
        let items = try await withClient { (client) throws(ChimeError) in
            try await client.pending(next: 1000, group: group, until: end)
        }
        let occurrences = AgendaLayout.occurrences(of: items, from: start, to: end)
        if json {
            try printJSON(
                occurrences.map { occurrence in
                    var object: [String: Any] = [
                        "at": iso(occurrence.date), "id": occurrence.item.id, "summary": occurrence.item.summary,
                        "repeats": occurrence.item.rule != nil,
                    ]
                    if let group = occurrence.item.group { object["group"] = group }
                    if let entry = occurrence.item.entry { object["entry"] = entry }
                    if let rule = occurrence.item.rule { object["rule"] = rule }
                    return object
                })
            return
        }
        let layout = AgendaLayout(zone: zone, colored: colored, today: now)
        var lines: [String] = []
        if month != nil { lines += layout.grid(from: start, occurrences: occurrences) + [""] }
        lines += layout.timeline(from: start, to: end, occurrences: occurrences, items: items)
        print(lines.joined(separator: "\n"))
    }

    /// The span drawn: the month asked for, or `days` days from the start of today, on `zone`'s clock.
    func range(zone: Zone, now: Date) throws -> (Date, Date) {
        if let month {
            let parts = month.split(separator: "-")
            guard parts.count == 2, parts[0].count == 4, parts[1].count == 2, let year = Int(parts[0]),
                let number = Int(parts[1]), (1...12).contains(number), (1970...9998).contains(year)
            else {
                throw fail("--month: cannot read \"\(month)\"; give a year and a month such as 2026-12", .badInput)
            }
            let first = LocalDateTime(year: year, month: number, day: 1)
            let next = first.adding(days: LocalDateTime.daysInMonth(year: year, month: number))
            return (
                AgendaLayout.start(of: first, in: zone),
                AgendaLayout.start(of: next, in: zone).addingTimeInterval(-0.001)
            )
        }
        guard (1...366).contains(days) else { throw fail("--days must be 1 to 366", .badInput) }
        let today = WallClock.localDateTime(for: now, in: zone)
        let start = AgendaLayout.start(of: today, in: zone)
        return (start, AgendaLayout.start(of: today.adding(days: days), in: zone).addingTimeInterval(-0.001))
    }
}

/// How the agenda is drawn: pure, on a zone's clock, from the listed items.
struct AgendaLayout {
    struct Occurrence {
        var date: Date
        var item: PendingItem
    }

    var zone: Zone
    var colored: Bool
    var today: Date

    /// Every listed occurrence within [start, end], soonest first (items in listing order when equal).
    static func occurrences(of items: [PendingItem], from start: Date, to end: Date) -> [Occurrence] {
        var result: [Occurrence] = []
        for item in items {
            for date in item.next where date >= start && date <= end {
                result.append(Occurrence(date: date, item: item))
            }
        }
        return result.enumerated().sorted { ($0.element.date, $0.offset) < ($1.element.date, $1.offset) }
            .map(\.element)
    }

    /// English names, whatever the locale: the agenda reads the same everywhere, like the rest of chime.
    static let weekdayNames = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]

    /// The first instant of the day `local` falls on, on `zone`'s clock (the end of the gap when daylight
    /// saving skips midnight).
    static func start(of local: LocalDateTime, in zone: Zone) -> Date {
        let midnight = LocalDateTime(year: local.year, month: local.month, day: local.day)
        return WallClock.instants(for: midnight, in: zone).first
            ?? Date(timeIntervalSince1970: TimeInterval(midnight.secondsSinceEpoch))
    }

    private func local(_ date: Date) -> LocalDateTime { WallClock.localDateTime(for: date, in: zone) }

    private func heading(_ day: Date) -> String {
        let c = local(day)
        return "\(Self.weekdayNames[c.isoWeekday - 1]) \(c.day) \(Self.monthNames[c.month - 1]) \(c.year)"
    }

    private func clock(_ date: Date) -> String {
        let c = local(date)
        return String(format: "%02d:%02d", c.hour, c.minute)
    }

    private func style(_ text: String, _ codes: String) -> String {
        colored ? "\u{1B}[\(codes)m\(text)\u{1B}[0m" : text
    }

    /// The month of `start` as a grid, Monday first: ` 4*` marks a day with something due.
    func grid(from start: Date, occurrences: [Occurrence]) -> [String] {
        let first = local(start)
        let busy = Set(occurrences.map { local($0.date).day })
        let title = "\(Self.monthNames[first.month - 1]) \(first.year)"
        let width = 7 * 4 - 1
        let padding = max(0, (width - title.count) / 2)
        var lines = [String(repeating: " ", count: padding) + title, "Mo  Tu  We  Th  Fr  Sa  Su"]
        let daysInMonth = LocalDateTime.daysInMonth(year: first.year, month: first.month)
        // Monday is column 0.
        let firstColumn = LocalDateTime(year: first.year, month: first.month, day: 1).isoWeekday - 1
        let now = local(today)
        let isThisMonth = now.year == first.year && now.month == first.month
        let todayNumber = now.day
        var cells = Array(repeating: "   ", count: firstColumn)
        for day in 1...daysInMonth {
            var number = day < 10 ? " \(day)" : "\(day)"
            if isThisMonth && day == todayNumber {
                number = style(number, "7")
            } else if busy.contains(day) {
                number = style(number, "1")
            }
            cells.append(number + (busy.contains(day) ? "*" : " "))
        }
        for row in stride(from: 0, to: cells.count, by: 7) {
            let line = cells[row..<min(row + 7, cells.count)].joined(separator: " ")
            lines.append(String(line.reversed().drop { $0 == " " }.reversed()))
        }
        return lines
    }

    /// Day by day from `start` to `end`: a heading for each day, then its occurrences; "nothing due" for
    /// an empty day.
    func timeline(from start: Date, to end: Date, occurrences: [Occurrence], items: [PendingItem]) -> [String] {
        var lines: [String] = []
        var day = start
        var index = 0
        let longest = occurrences.map(\.item.summary.count).max() ?? 0
        while day <= end {
            let next = Self.start(of: local(day).adding(days: 1), in: zone)
            lines.append(style(heading(day), "1"))
            var any = false
            while index < occurrences.count, occurrences[index].date < next {
                let occurrence = occurrences[index]
                let item = occurrence.item
                let place = item.group.map { "\($0)/\(item.entry ?? "")" } ?? "-"
                let kind = item.rule.map { "repeats (\($0))" } ?? "once"
                let summary = item.summary.padding(toLength: min(max(longest, 8), 40), withPad: " ", startingAt: 0)
                lines.append("  \(style(clock(occurrence.date), "2"))  \(summary)  \(place)  \(kind)")
                any = true
                index += 1
            }
            if !any { lines.append("  nothing due") }
            day = next
        }
        let cut = items.filter(\.more)
        if !cut.isEmpty {
            lines.append("")
            for item in cut { lines.append("\(item.summary) (item \(item.id)): more not shown") }
        }
        return lines
    }
}
