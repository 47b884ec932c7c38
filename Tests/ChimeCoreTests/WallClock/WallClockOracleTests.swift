import Foundation
import Testing

@testable import ChimeCore

/// Zones with ordinary, 30-minute, 45-minute, southern-hemisphere and historical irregular changes.
let wallClockOracleZones = [
    "Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu", "Pacific/Apia",
    "America/St_Johns", "Australia/Sydney", "America/Santiago", "Europe/London", "Asia/Tehran",
    "Pacific/Chatham", "America/Sao_Paulo", "Africa/Casablanca", "Europe/Moscow", "Pacific/Kiritimati",
    "America/Caracas", "Asia/Kolkata", "Antarctica/Troll", "UTC",
]

/// Random local times (half of them within 90 minutes of a real offset change) and random instants,
/// checked against python's zoneinfo (the system's tzdata, like WallClock) in one process.
@Test func wallClockAgreesWithPythonZoneinfo() throws {
    var random = SplitMix64(seed: 0xC0FFEE)
    var lines: [String] = []
    var checks: [(String, (String) -> String?)] = []
    for index in 0..<3000 {
        let name = wallClockOracleZones[index % wallClockOracleZones.count]
        let zone = try #require(Zone(identifier: name))
        let rules = try ZoneInfoDirectory().rules(named: name)
        // 1990-01-01 … 2035-12-31
        let base = Int.random(in: 631_152_000...2_082_672_000, using: &random)
        if index % 3 == 2 {
            lines.append("L \(name) \(base)")
            let local = WallClock.localDateTime(for: Date(timeIntervalSince1970: TimeInterval(base)), in: zone)
            let offset = WallClock.utcOffset(at: Date(timeIntervalSince1970: TimeInterval(base)), in: zone)
            checks.append(("L \(name) \(base)", { $0 == "\(local) \(offset)" ? nil : "\(local) \(offset)" }))
            continue
        }
        var wall = base
        if index % 3 == 1, let t = rules.transitions(from: base, through: base + 800 * 86_400).first {
            wall = t + rules.utcOffset(at: t - 1) + Int.random(in: -5400...5400, using: &random)
        }
        let local = LocalDateTime(
            daysSinceEpoch: WallClock.floorDiv(wall, 86_400),
            secondsIntoDay: wall - WallClock.floorDiv(wall, 86_400) * 86_400)
        lines.append("R \(name) \(local)")
        let got: String
        switch WallClock.resolve(local, in: zone) {
        case .unique(let d): got = "\(Int(d.timeIntervalSince1970))"
        case .overlap(let a, let b): got = "\(Int(a.timeIntervalSince1970)) \(Int(b.timeIntervalSince1970))"
        case .gap(let t): got = "gap \(Int(t.timeIntervalSince1970))"
        }
        checks.append(("R \(name) \(local)", { $0 == got ? nil : got }))
    }
    let output = try WallClockOracle.run(
        WallClockOracle.python, [WallClockOracle.sibling("oracle_wallclock.py")],
        input: lines.joined(separator: "\n") + "\n")
    try #require(output.count == checks.count, "oracle answered \(output.count) of \(checks.count) cases")
    // WallClock reads the system's tzdata, as python's zoneinfo does: every zone agrees, none is set aside.
    var disagreements: [String] = []
    for (expected, (query, check)) in zip(output, checks) {
        if let got = check(expected) { disagreements.append("\(query): expected \(expected), got \(got)") }
    }
    #expect(
        disagreements.isEmpty,
        "\(disagreements.count) disagreements:\n\(disagreements.prefix(40).joined(separator: "\n"))")
}
