import Foundation
import Testing

@testable import ChimeCore

/// `Zone`: a name of the system's tz database, or a fixed offset, computed with the database's rules.
@Suite struct ZoneTests {
    static func date(_ year: Int, _ month: Int, _ day: Int) -> Date {
        Date(timeIntervalSince1970: TimeInterval(utc(year, month, day, 12)))
    }

    @Test func namesOfTheDatabaseAreKeptAsGiven() throws {
        for name in ["Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "US/Pacific", "Universal"] {
            let zone = try #require(Zone(identifier: name), "\(name)")
            #expect(zone.identifier == name)
            #expect(zone.fixedOffset == nil)
        }
        for name in ["Mars/Olympus", "Europe/berlin", "", "../etc/passwd", "Europe/Berlin/", "zone.tab"] {
            #expect(Zone(identifier: name) == nil, "\(name)")
        }
    }

    @Test func offsetsAndAbbreviationsComeFromTheZoneFiles() throws {
        let berlin = try #require(Zone(identifier: "Europe/Berlin"))
        #expect(berlin.secondsFromGMT(for: Self.date(2027, 1, 15)) == 3600)
        #expect(berlin.secondsFromGMT(for: Self.date(2027, 7, 15)) == 7200)
        #expect(berlin.abbreviation(for: Self.date(2027, 1, 15)) == "CET")
        #expect(berlin.abbreviation(for: Self.date(2027, 7, 15)) == "CEST")
        #expect(!berlin.isDaylightSavingTime(for: Self.date(2027, 1, 15)))
        #expect(berlin.isDaylightSavingTime(for: Self.date(2027, 7, 15)))
        let rules = try ZoneInfoDirectory().rules(named: "America/Sao_Paulo")
        let saoPaulo = try #require(Zone(identifier: "America/Sao_Paulo"))
        for year in [1990, 2010, 2018, 2019, 2040] {
            let instant = Self.date(year, 1, 15)
            #expect(saoPaulo.secondsFromGMT(for: instant) == rules.utcOffset(at: utc(year, 1, 15, 12)), "\(year)")
        }
    }

    @Test func fixedOffsetsAreNamedAsFoundationNamesThem() throws {
        #expect(Zone(identifier: "UTC") == .utc)
        #expect(Zone(identifier: "GMT") == .gmt)
        #expect(Zone(secondsFromGMT: 0) == .gmt)
        #expect(Zone(secondsFromGMT: 19_800).identifier == "GMT+0530")
        #expect(Zone(secondsFromGMT: -28_800).identifier == "GMT-0800")
        #expect(Zone(secondsFromGMT: -1_050).identifier == "GMT-001730")
        #expect(Zone(secondsFromGMT: -1_050).secondsFromGMT(for: Self.date(2027, 1, 1)) == -1_050)
        #expect(Zone(identifier: "GMT+0530")?.fixedOffset == 19_800)
        #expect(Zone(identifier: "GMT-08")?.fixedOffset == -28_800)
        // A name only Foundation's copy of the database reads is no zone where the system has the database.
        #expect(ZoneRulesStore.shared.hasDatabase)
        #expect(TimeZone(identifier: "GMT+5") != nil)
        #expect(Zone(identifier: "GMT+5") == nil)
        for name in ["GMT+", "GMT+0", "GMT+1960", "GMT+05x0", "GMT+053", "GMT+99"] {
            #expect(Zone.fixedOffset(named: name) == nil, "\(name)")
        }
    }

    @Test func aZoneIsCodedAsFoundationCodesATimeZone() throws {
        let foundation = try JSONEncoder().encode(TimeZone(identifier: "Asia/Tokyo")!)
        #expect(try JSONDecoder().decode(Zone.self, from: foundation).identifier == "Asia/Tokyo")
        let ours = try JSONEncoder().encode(Zone(identifier: "Asia/Tokyo")!)
        #expect(try JSONDecoder().decode(TimeZone.self, from: ours).identifier == "Asia/Tokyo")
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(Zone.self, from: Data(#"{"identifier":"Mars/Olympus"}"#.utf8))
        }
    }

    @Test func theSystemZoneIsTZThenWhatLocaltimeLinksTo() throws {
        let scratch = try ScratchDirectory()
        defer { scratch.remove() }
        let localtime = scratch.path + "/localtime"
        try FileManager.default.createSymbolicLink(
            atPath: localtime, withDestinationPath: ZoneInfoDirectory.defaultPath + "/America/New_York")
        #expect(Zone.system(localtime: localtime, environment: [:]).identifier == "America/New_York")
        #expect(Zone.system(localtime: localtime, environment: ["TZ": ""]).identifier == "America/New_York")
        #expect(Zone.system(localtime: localtime, environment: ["TZ": ":Asia/Tokyo"]).identifier == "Asia/Tokyo")
        #expect(Zone.system(localtime: localtime, environment: ["TZ": "Asia/Kolkata"]).identifier == "Asia/Kolkata")
        // A copy of a zone's file, not a link: its own rules, under the name glibc gives it.
        let copy = scratch.path + "/copied-localtime"
        try scratch.write(try systemZoneBytes("Asia/Kolkata"), to: "copied-localtime")
        let copied = Zone.system(localtime: copy, environment: [:])
        #expect(copied.identifier == "localtime")
        #expect(copied.file == copy)
        #expect(copied.secondsFromGMT(for: Self.date(2027, 1, 15)) == 19_800)
        // A TZ that names no zone is passed over, as glibc falls back to the system's file.
        #expect(Zone.system(localtime: localtime, environment: ["TZ": "Mars/Olympus"]).identifier == "America/New_York")
    }

    /// Logs, history records and chime's listings write instants as Foundation's `ISO8601FormatStyle`
    /// does; `WallClock.timestamp` writes them from the zone files without asking ICU.
    @Test func timestampsReadAsFoundationsISO8601() throws {
        var random = SplitMix64(seed: 0x150_8601)
        for name in ["UTC", "Europe/Berlin", "Europe/London", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham"] {
            let zone = try #require(Zone(identifier: name))
            let style = Date.ISO8601FormatStyle(timeZone: try #require(TimeZone(identifier: name)))
            for _ in 0..<200 {
                let instant = Date(
                    timeIntervalSince1970: TimeInterval(Int.random(in: 0...4_102_444_800, using: &random)))
                #expect(WallClock.timestamp(instant, in: zone) == instant.formatted(style), "\(name) \(instant)")
            }
        }
        #expect(WallClock.timestamp(Date(timeIntervalSince1970: 1_795_305_600.75)) == "2026-11-22T00:00:00Z")
    }
}
