import ChimeCore
import Foundation

// The time engine measured against its reference: the same RRULE set expanded by ChimeCore and by
// python-dateutil in one run, with the ratio; then next-occurrence rates for simple daily rules.
// Prints a table and a JSON summary.

/// A fixed, seeded rule set: realistic rules (daily, weekly, monthly, yearly, with BY-parts).
func ruleSet() -> [(rule: String, dtstart: String)] {
    let rules = [
        "FREQ=DAILY", "FREQ=DAILY;INTERVAL=3", "FREQ=DAILY;BYHOUR=9,18;BYMINUTE=0",
        "FREQ=WEEKLY;BYDAY=MO,WE,FR", "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH", "FREQ=WEEKLY;BYDAY=SA;BYHOUR=10",
        "FREQ=MONTHLY;BYDAY=1FR", "FREQ=MONTHLY;BYDAY=-1FR", "FREQ=MONTHLY;BYMONTHDAY=-1",
        "FREQ=MONTHLY;BYMONTHDAY=1,15", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=YEARLY;BYMONTH=11;BYDAY=4TH",
        "FREQ=YEARLY;BYWEEKNO=20;BYDAY=MO", "FREQ=YEARLY;BYYEARDAY=1,100,200", "FREQ=HOURLY;INTERVAL=6",
        "FREQ=MINUTELY;INTERVAL=90", "FREQ=MONTHLY;INTERVAL=3;BYDAY=2WE",
    ]
    let starts = ["2026-01-01T09:00:00", "2026-11-22T20:15:00", "2027-02-28T23:30:00", "2024-02-29T12:00:00"]
    return rules.flatMap { rule in starts.map { (rule, $0) } }
}

let occurrencesPerRule = 50
let rounds = 20

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted[sorted.count / 2]
}

func timeChimeCore() throws -> (seconds: Double, total: Int) {
    let sets = try ruleSet().map { item in
        try RRuleSet.parse(item.rule, dtstart: LocalDateTime(iso: item.dtstart)!, timeZone: nil)
    }
    var total = 0
    var samples: [Double] = []
    for _ in 0..<rounds {
        let start = ContinuousClock.now
        total = 0
        for set in sets { total += set.occurrences(limit: occurrencesPerRule).count }
        let elapsed = ContinuousClock.now - start
        samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return (median(samples), total)
}

func timeDateutil() throws -> (seconds: Double, total: Int, version: String) {
    let script = """
        import json, sys, time, itertools, dateutil
        from dateutil.rrule import rrulestr
        from datetime import datetime
        items, n, rounds = json.load(sys.stdin)
        rules = [rrulestr(r, dtstart=datetime.fromisoformat(d)) for r, d in items]
        samples = []
        for _ in range(rounds):
            t = time.perf_counter()
            total = sum(len(list(itertools.islice(r, n))) for r in rules)
            samples.append(time.perf_counter() - t)
        samples.sort()
        print(json.dumps({"seconds": samples[len(samples) // 2], "total": total, "version": dateutil.__version__}))
        """
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    process.arguments = ["-c", script]
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    try process.run()
    let payload: [Any] = [ruleSet().map { [$0.rule, $0.dtstart] }, occurrencesPerRule, rounds]
    input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: payload))
    try input.fileHandleForWriting.close()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
        let seconds = json["seconds"] as? Double, let total = json["total"] as? Int
    else { throw CocoaError(.coderReadCorrupt) }
    return (seconds, total, json["version"] as? String ?? "?")
}

/// Next-occurrence computations per second, chaining each answer into the next query.
func rate(_ label: String, count: Int, _ next: (Date) -> Date?) -> (String, Double) {
    var cursor = Date(timeIntervalSince1970: 1_795_305_600)
    let start = ContinuousClock.now
    for _ in 0..<count {
        guard let n = next(cursor) else { break }
        cursor = n
    }
    let elapsed = ContinuousClock.now - start
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    return (label, Double(count) / seconds)
}

let zone = Zone(identifier: "Europe/Berlin")!
let swift = try timeChimeCore()
let python = try timeDateutil()
precondition(swift.total == python.total, "the two engines expanded different numbers of occurrences")
let ratio = python.seconds / swift.seconds

let dailyRule = try PhraseParser.rule(
    "every day at 9:00", now: Date(timeIntervalSince1970: 1_795_305_600), systemTimeZone: zone)
let dailyRRule = try RRuleSet.parse(
    "FREQ=DAILY;BYHOUR=9;BYMINUTE=0;BYSECOND=0", dtstart: LocalDateTime(iso: "2026-11-22T00:00:00")!, timeZone: zone)
let dailyCalendar = try CalendarSpec.parse("*-*-* 09:00:00")
let rates = [
    rate("phrase 'every day at 9:00'", count: 100_000) { dailyRule.nextOccurrence(after: $0, systemTimeZone: zone) },
    rate("RRULE FREQ=DAILY;BYHOUR=9", count: 100_000) { d in
        dailyRRule.nextOccurrence(after: WallClock.localDateTime(for: d, in: zone))
            .flatMap { WallClock.instants(for: $0, in: zone).first }
    },
    rate("OnCalendar *-*-* 09:00:00", count: 100_000) { dailyCalendar.nextElapse(after: $0, defaultTimeZone: zone) },
]

/// What a search that spends its whole budget costs: rules that run out of it, each searched 20 times with
/// a fresh budget; the median time of one search, in milliseconds. docs/security.md quotes these.
func budgetCost(_ label: String, _ rule: Recurrence) -> (String, Double) {
    var samples: [Double] = []
    let after = Date(timeIntervalSince1970: 1_795_305_600)
    for _ in 0..<20 {
        var budget = SearchBudget()
        let start = ContinuousClock.now
        _ = try? rule.nextOccurrence(after: after, systemTimeZone: zone, budget: &budget)
        let elapsed = ContinuousClock.now - start
        precondition(budget.isExhausted, "\(label) did not run out of its budget")
        samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
    }
    return (label, median(samples))
}

func rrule(_ text: String, dtstart: String) throws -> Recurrence {
    .rrule(
        try RRuleSet.parse(text, dtstart: LocalDateTime(iso: dtstart)!, timeZone: zone),
        timeZone: .named(zone.identifier))
}

func list(_ range: ClosedRange<Int>) -> String { range.map(String.init).joined(separator: ",") }
let budgetCosts = [
    budgetCost(
        "RRULE, candidates",
        try rrule(
            "FREQ=MONTHLY;BYMONTHDAY=\(list(1...31));BYHOUR=\(list(0...23));BYMINUTE=\(list(0...59));BYSECOND=\(list(0...59))",
            dtstart: "2026-11-22T00:00:00")),
    budgetCost("RRULE, COUNT from DTSTART", try rrule("FREQ=SECONDLY;COUNT=1000000", dtstart: "2026-11-01T00:00:00")),
    budgetCost(
        "RRULE, weeks without a match",
        try rrule(
            "FREQ=SECONDLY;INTERVAL=7;BYDAY=FR;BYHOUR=13;BYMINUTE=13;BYSECOND=13", dtstart: "2026-11-12T13:13:00")),
    budgetCost(
        "RRULE with an offset",
        try rrule("FREQ=SECONDLY;COUNT=1000000", dtstart: "2026-11-01T00:00:00")
            .shifted(by: OccurrenceOffset(days: -1))),
]

/// `chime import` of a file with 1,000 made-up VTIMEZONEs, each named by an event: milliseconds.
func importOfMadeUpZones() throws -> (String, Double) {
    var lines = ["BEGIN:VCALENDAR", "VERSION:2.0"]
    for n in 0..<1000 {
        lines += [
            "BEGIN:VTIMEZONE", "TZID:Made Up \(n)", "BEGIN:STANDARD", "DTSTART:16011104T020000",
            "RRULE:FREQ=YEARLY;BYDAY=1SU;BYMONTH=11", "TZOFFSETFROM:+0\(n % 9)17", "TZOFFSETTO:+0\(n % 9)07",
            "END:STANDARD", "BEGIN:DAYLIGHT", "DTSTART:16010311T020000", "RRULE:FREQ=YEARLY;BYDAY=2SU;BYMONTH=3",
            "TZOFFSETFROM:+0\(n % 9)07", "TZOFFSETTO:+0\(n % 9)17", "END:DAYLIGHT", "END:VTIMEZONE",
        ]
    }
    for n in 0..<1000 {
        lines += [
            "BEGIN:VEVENT", "UID:\(n)@bench", "SUMMARY:Event", "DTSTART;TZID=Made Up \(n):20270301T090000",
            "BEGIN:VALARM", "ACTION:DISPLAY", "TRIGGER:-PT15M", "END:VALARM", "END:VEVENT",
        ]
    }
    let text = (lines + ["END:VCALENDAR"]).joined(separator: "\r\n")
    let start = ContinuousClock.now
    _ = try CalendarImport.read(text, now: Date(timeIntervalSince1970: 1_795_305_600), systemTimeZone: zone)
    let elapsed = ContinuousClock.now - start
    return (
        "import, 1000 made-up VTIMEZONEs",
        Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
    )
}
let importCost = try importOfMadeUpZones()

/// An entry's definition encoded and decoded as the store keeps it (binary) and as it kept it before
/// (JSON with sorted keys), 10,000 entries like a group's, median of 9 rounds: microseconds an entry.
func definitionCosts() throws -> [(String, Double)] {
    var content = NotificationContent(summary: "Stand up", body: "Ten minutes, then back to it")
    content.userInfo = ["room": .string("B2"), "attendees": .integer(4)]
    let entries = (0..<10_000).map { n in
        TimelineEntry(
            id: "e\(n)", trigger: .at(Date(timeIntervalSince1970: 2_000_000_000 + Double(n) * 60)),
            content: .fixed(content), category: n % 2 == 0 ? "meeting" : nil)
    }
    func perEntry(_ body: () throws -> Void) rethrows -> Double {
        var samples: [Double] = []
        for _ in 0..<9 {
            let start = Date()
            try body()
            samples.append(Date().timeIntervalSince(start) / Double(entries.count) * 1_000_000)
        }
        return median(samples)
    }
    var binary: [[UInt8]] = []
    var json: [String] = []
    let binaryEncode = perEntry { binary = entries.map { DefinitionCoding.encode($0) } }
    let jsonEncode = perEntry { json = entries.map { DefinitionCoding.encodeJSON($0) } }
    let binaryDecode = try perEntry {
        for bytes in binary { _ = try DefinitionCoding.decode(TimelineEntry.self, bytes) }
    }
    let jsonDecode = try perEntry {
        for text in json { _ = try DefinitionCoding.decodeJSON(TimelineEntry.self, Array(text.utf8)) }
    }
    return [
        ("encode, binary", binaryEncode), ("encode, JSON", jsonEncode), ("decode, binary", binaryDecode),
        ("decode, JSON", jsonDecode), ("bytes, binary", Double(binary[1].count)),
        ("bytes, JSON", Double(json[1].utf8.count)),
    ]
}
let definitions = try definitionCosts()

print("Time engine benchmark (\(ProcessInfo.processInfo.activeProcessorCount) cores)")
print("")
print(
    "RRULE set: \(ruleSet().count) rules x \(occurrencesPerRule) occurrences = \(swift.total), median of \(rounds) rounds"
)
func row(_ label: String, _ value: String) -> String {
    "  " + label.padding(toLength: 32, withPad: " ", startingAt: 0)
        + String(repeating: " ", count: max(0, 14 - value.count))
        + value
}
print(row("ChimeCore", String(format: "%.3f ms", swift.seconds * 1000)))
print(row("python-dateutil \(python.version)", String(format: "%.3f ms", python.seconds * 1000)))
print(row("ratio (dateutil / ChimeCore)", String(format: "%.1fx", ratio)))
print("")
print("Next occurrence, chained, 100000 calls each")
for (label, perSecond) in rates {
    print(row(label, String(format: "%.0f /s", perSecond)))
}
print("")
print("One search that spends its whole budget (\(SearchBudget.stepsPerSearch) steps), median of 20")
for (label, milliseconds) in budgetCosts {
    print(row(label, String(format: "%.2f ms", milliseconds)))
}
print(row(importCost.0, String(format: "%.1f ms", importCost.1)))
print("")
print("An entry's stored definition, 10,000 entries, median of 9 (µs an entry; bytes of one)")
for (label, value) in definitions {
    print(row(label, label.hasPrefix("bytes") ? String(format: "%.0f", value) : String(format: "%.2f µs", value)))
}
let summary: [String: Any] = [
    "budget_search_milliseconds": Dictionary(uniqueKeysWithValues: (budgetCosts + [importCost]).map { ($0.0, $0.1) }),
    "rrule_set": [
        "rules": ruleSet().count, "occurrences": swift.total, "chimecore_seconds": swift.seconds,
        "dateutil_seconds": python.seconds, "dateutil_version": python.version, "ratio": ratio,
    ],
    "next_occurrence_per_second": Dictionary(uniqueKeysWithValues: rates.map { ($0.0, $0.1) }),
    "definition": Dictionary(uniqueKeysWithValues: definitions.map { ($0.0, $0.1) }),
]
print("")
print(String(decoding: try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys]), as: UTF8.self))
