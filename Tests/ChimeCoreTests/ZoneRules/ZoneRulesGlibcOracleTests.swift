import Foundation
import Testing

@testable import ChimeCore

/// glibc's `localtime_r` as an oracle: python's `time.localtime` is a thin wrapper around it, and runs in a
/// process of its own so that setting `TZ` there cannot disturb tests running beside this one. Each input
/// line is `<TZ value> <epoch second>`; each output line `<UT offset> <isdst> <abbreviation>`.
enum GlibcLocaltime {
    static let script = """
        import os, sys, time
        current = None
        for line in sys.stdin:
            zone, instant = line.rsplit(" ", 1)
            if zone != current:
                os.environ["TZ"] = zone
                time.tzset()
                current = zone
            tm = time.localtime(int(instant))
            print(tm.tm_gmtoff, tm.tm_isdst, tm.tm_zone)
        """

    /// glibc's answers for `queries` (`TZ` value, instant), in order.
    static func answers(_ queries: [(tz: String, instant: Int)], environment: [String: String]? = nil) throws
        -> [String]
    {
        let input = queries.map { "\($0.tz) \($0.instant)" }.joined(separator: "\n") + "\n"
        return try WallClockOracle.run(WallClockOracle.python, ["-c", script], input: input)
    }

    static func describe(_ type: ZoneRules.LocalTimeType) -> String {
        "\(type.utcOffset) \(type.isDaylightSaving ? 1 : 0) \(type.abbreviation)"
    }
}

/// Every zone file of the system's tzdata, by name (`Europe/Berlin`): what glibc would read for `TZ=name`.
func systemZoneNames(in directory: String = ZoneInfoDirectory.defaultPath) -> [String] {
    ZoneInfoDirectory(path: directory).zoneNames()
}

/// 1900-01-01 and 2100-01-01, UTC.
let oracleRange = -2_208_988_800..<4_102_444_800

@Test func everySystemZoneAgreesWithGlibcFrom1900To2100() throws {
    let names = systemZoneNames()
    try #require(names.count > 300, "found only \(names.count) zones under \(ZoneInfoDirectory.defaultPath)")
    let directory = ZoneInfoDirectory()
    var random = SplitMix64(seed: 0x7A1F)
    var queries: [(tz: String, instant: Int)] = []
    var expected: [String] = []
    for name in names {
        let rules = try directory.rules(named: name)
        var instants = (0..<40).map { _ in Int.random(in: oracleRange, using: &random) }
        // Both sides of every change in the range, the table's and the footer's.
        for transition in rules.transitions(from: oracleRange.lowerBound, through: oracleRange.upperBound - 1) {
            instants += [transition - 1, transition]
        }
        for instant in instants {
            queries.append((":" + name, instant))
            expected.append(GlibcLocaltime.describe(rules.localTimeType(at: instant)))
        }
    }
    let answers = try GlibcLocaltime.answers(queries)
    try #require(answers.count == queries.count, "glibc answered \(answers.count) of \(queries.count) queries")
    var disagreements: [String] = []
    for (index, answer) in answers.enumerated() where answer != expected[index] {
        disagreements.append(
            "\(queries[index].tz) at \(queries[index].instant): glibc \(answer), read \(expected[index])")
    }
    #expect(
        disagreements.isEmpty,
        "\(disagreements.count) of \(queries.count) disagree:\n\(disagreements.prefix(30).joined(separator: "\n"))")
}

/// TZ strings that name no file, so glibc evaluates them as POSIX rules: quoted names, minutes and
/// seconds, every day form, rule times that are negative or past 24 hours.
let posixOracleStrings = [
    "CET-1CEST,M3.5.0,M10.5.0/3",
    "<+03>-3",
    "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
    "AEST-10AEDT,M10.1.0,M4.1.0/3",
    "XNST-12:45XNDT-13:45,M9.5.0/2:45,M4.1.0/3:45",
    "XST3XDT,J60/-1,J300/26",
    "XST-5:30:15XDT-6:45,100/1:30,280/49",
    "<+0330>-3:30<+0430>,J79/24,J263/24",
    "XST8XDT,M3.2.0,M11.1.0",
    "XST8XDT7,M4.5.6/167,M10.5.1/-167",
]

@Test(arguments: posixOracleStrings)
func posixRulesAgreeWithGlibc(_ text: String) throws {
    let rules = try ZoneRules(posix: text)
    var random = SplitMix64(seed: 0x5051)
    // glibc computes rules only for years after 1970; within a year, both sides of each change.
    var instants = (0..<300).map { _ in Int.random(in: 31_536_000..<4_102_444_800, using: &random) }
    for transition in rules.transitions(from: 31_536_000 + 20 * 86_400, through: 4_102_444_800 - 20 * 86_400) {
        instants += [transition - 1, transition]
    }
    let answers = try GlibcLocaltime.answers(instants.map { (text, $0) })
    try #require(answers.count == instants.count)
    for (instant, answer) in zip(instants, answers) {
        #expect(GlibcLocaltime.describe(rules.localTimeType(at: instant)) == answer, "\(text) at \(instant)")
    }
    // The rules evaluated for the instant agree with the table of changes ZoneRules keeps for speed,
    // within it and beyond it (years 1800 to 2600).
    let posix = try PosixTimeZone(parsing: text)
    for _ in 0..<2000 {
        let instant = Int.random(in: -5_364_662_400..<19_723_248_000, using: &random)
        #expect(rules.localTimeType(at: instant) == posix.localTimeType(at: instant), "\(text) at \(instant)")
        #expect(rules.utcOffset(at: instant) == posix.utcOffset(at: instant), "\(text) at \(instant)")
        let window = Int.random(in: 0...(800 * 86_400), using: &random)
        #expect(
            rules.transitions(from: instant, through: instant + window)
                == posix.transitions(from: instant, through: instant + window), "\(text) from \(instant)")
    }
}
