import Foundation
import Testing

@testable import ChimeCore

/// Writes TZif files (RFC 8536) for the tests: one data block of each width and the footer.
struct TZifWriter {
    var version: UInt8 = UInt8(ascii: "2")
    var transitions: [Int] = []
    var transitionTypes: [UInt8] = []
    /// (UT offset, isdst, abbreviation index)
    var types: [(Int, UInt8, UInt8)] = [(0, 0, 0)]
    var abbreviations: [UInt8] = Array("UTC\u{0}".utf8)
    var leapRecords = 0
    var footer = ""

    static func bigEndian(_ value: Int, _ size: Int) -> [UInt8] {
        (0..<size).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    func header(version: UInt8, counts: [Int]) -> [UInt8] {
        Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15) + counts.flatMap { Self.bigEndian($0, 4) }
    }

    func block(timeSize: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        for time in transitions { bytes += Self.bigEndian(time, timeSize) }
        bytes += transitionTypes
        for (offset, isdst, index) in types { bytes += Self.bigEndian(offset, 4) + [isdst, index] }
        bytes += abbreviations
        for index in 0..<leapRecords {
            bytes += Self.bigEndian(100_000 * (index + 1), timeSize) + Self.bigEndian(index + 1, 4)
        }
        return bytes
    }

    var counts: [Int] { [0, 0, leapRecords, transitions.count, types.count, abbreviations.count] }

    var bytes: [UInt8] {
        if version == 0 { return header(version: 0, counts: counts) + block(timeSize: 4) }
        // The version 1 block a reader of version 2 and later skips: one type and nothing else.
        let skipped =
            header(version: version, counts: [0, 0, 0, 0, 1, 4]) + Self.bigEndian(0, 4) + [0, 0]
            + Array("UTC\u{0}".utf8)
        return skipped + header(version: version, counts: counts) + block(timeSize: 8) + Array("\n\(footer)\n".utf8)
    }
}

/// A Berlin-like file: LMT, CET and CEST, two transitions, then the footer.
func berlinLike(version: UInt8 = UInt8(ascii: "2"), footer: String = "CET-1CEST,M3.5.0,M10.5.0/3") -> TZifWriter {
    var writer = TZifWriter()
    writer.version = version
    writer.transitions = [-2_422_054_408, 1_000_000_000]
    writer.transitionTypes = [1, 2]
    writer.types = [(3208, 0, 0), (3600, 0, 4), (7200, 1, 8)]
    writer.abbreviations = Array("LMT\u{0}CET\u{0}CEST\u{0}".utf8)
    writer.footer = footer
    return writer
}

@Test(arguments: [UInt8(ascii: "2"), UInt8(ascii: "3"), UInt8(ascii: "4")])
func versionsTwoToFourReadTheTableAndTheFooter(_ version: UInt8) throws {
    let rules = try ZoneRules(tzif: berlinLike(version: version).bytes, identifier: "test")
    #expect(
        rules.localTimeType(at: -3_000_000_000) == .init(utcOffset: 3208, isDaylightSaving: false, abbreviation: "LMT"))
    #expect(rules.localTimeType(at: 0) == .init(utcOffset: 3600, isDaylightSaving: false, abbreviation: "CET"))
    #expect(rules.localTimeType(at: 1_000_000_000).abbreviation == "CEST")
    // Past the table the footer decides: summer and winter of 2040.
    #expect(
        rules.localTimeType(at: utc(2040, 7, 1)) == .init(utcOffset: 7200, isDaylightSaving: true, abbreviation: "CEST")
    )
    #expect(rules.localTimeType(at: utc(2040, 12, 1)).abbreviation == "CET")
    // 2040-03-25 01:00 UTC is the last Sunday of March, 02:00 CET.
    #expect(rules.utcOffset(at: utc(2040, 3, 25, 1) - 1) == 3600)
    #expect(rules.utcOffset(at: utc(2040, 3, 25, 1)) == 7200)
    #expect(
        rules.transitions(from: utc(2040, 1, 1), through: utc(2040, 12, 31)) == [
            utc(2040, 3, 25, 1), utc(2040, 10, 28, 1),
        ])
}

@Test func versionOneReadsThirtyTwoBitTimesAndKeepsTheLastType() throws {
    var writer = berlinLike(version: 0)
    writer.transitions = [-1_000_000_000, 1_000_000_000]
    let rules = try ZoneRules(tzif: writer.bytes, identifier: "v1")
    #expect(rules.utcOffset(at: -2_000_000_000) == 3208)
    #expect(rules.utcOffset(at: 0) == 3600)
    #expect(rules.utcOffset(at: utc(2090, 1, 1)) == 7200)
}

@Test func leapRecordsAreReadPast() throws {
    var writer = berlinLike()
    writer.leapRecords = 3
    #expect(try ZoneRules(tzif: writer.bytes, identifier: "leap").utcOffset(at: 0) == 3600)
}

@Test func anEmptyFooterKeepsTheLastTypeForEver() throws {
    let rules = try ZoneRules(tzif: berlinLike(footer: "").bytes, identifier: "test")
    #expect(rules.utcOffset(at: utc(2090, 1, 1)) == 7200)
}

/// Every prefix of real files is refused with an error, never a trap.
@Test(arguments: ["Europe/Berlin", "America/Sao_Paulo", "UTC"])
func everyTruncationOfARealFileIsAnError(_ name: String) throws {
    let bytes = try systemZoneBytes(name)
    _ = try ZoneRules(tzif: bytes, identifier: name)
    for length in 0..<bytes.count {
        #expect(throws: TZifError.self) { try ZoneRules(tzif: Array(bytes[..<length]), identifier: name) }
    }
}

/// Headers announcing more than the limits are refused before anything is allocated.
@Test(arguments: [
    (2, 0x7FFF_FFFF, "leap-second records"), (3, 0x7FFF_FFFF, "transitions"), (3, 2001, "transitions"),
    (4, 257, "local time types"), (5, 0x7FFF_FFFF, "abbreviation bytes"), (4, 0, "no local time types"),
    (5, 0, "no abbreviations"), (0, 2, "isstdcnt and isutcnt"), (3, -1, "negative count"),
])
func headerCountsOverTheLimitsAreErrors(_ field: Int, _ value: Int, _ message: String) throws {
    var header = TZifWriter().header(version: UInt8(ascii: "2"), counts: [0, 0, 0, 0, 1, 4])
    header.replaceSubrange((20 + field * 4)..<(24 + field * 4), with: TZifWriter.bigEndian(value, 4))
    let bytes = header + [UInt8](repeating: 0, count: 64)
    let error = try #require(throws: TZifError.self) { try ZoneRules(tzif: bytes, identifier: "hostile") }
    #expect(error.message.contains(message), "\(error.message)")
}

@Test func aFileOverTheSizeLimitIsRefused() throws {
    let bytes = berlinLike().bytes + [UInt8](repeating: 0, count: TZifLimits.maximumFileBytes)
    let error = try #require(throws: TZifError.self) { try ZoneRules(tzif: bytes, identifier: "big") }
    #expect(error.message.contains("65536"))
}

@Test func malformedFilesAreErrors() {
    let changes: [(String, (inout TZifWriter) -> Void)] = [
        ("not TZif", { $0.version = UInt8(ascii: "9") }),
        ("descending times", { $0.transitions = [5, 4] }),
        ("type index out of range", { $0.transitionTypes = [1, 3] }),
        ("abbreviation index past the end", { $0.types[2].2 = 40 }),
        ("isdst of 2", { $0.types[1].1 = 2 }),
        ("offset outside RFC 8536's range", { $0.types[1].0 = 93_600 }),
        ("abbreviations without a final NUL", { $0.abbreviations[12] = 65 }),
        ("a footer that does not parse", { $0.footer = "CET-1CEST,M13.5.0,M10.5.0" }),
    ]
    for (what, change) in changes {
        var writer = berlinLike()
        change(&writer)
        #expect(throws: TZifError.self, "\(what)") { try ZoneRules(tzif: writer.bytes, identifier: "bad") }
    }
}

/// Random corruption of real files: each answer is rules or an error, and rules answer every query.
@Test func randomlyCorruptedFilesNeverTrap() throws {
    var random = SplitMix64(seed: 0xF022)
    let originals = try ["Europe/Berlin", "Australia/Lord_Howe", "America/Nuuk"].map(systemZoneBytes)
    for round in 0..<3000 {
        var bytes = originals[round % originals.count]
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
        }
        guard let rules = try? ZoneRules(tzif: bytes, identifier: "corrupt") else { continue }
        for _ in 0..<8 {
            let instant = Int.random(in: oracleRange, using: &random)
            _ = rules.localTimeType(at: instant)
            _ = rules.transitions(from: instant, through: instant + 86_400 * 400)
        }
    }
}
