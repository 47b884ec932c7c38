import Foundation
import Testing

@testable import ChimeCore

/// Seconds since 1970 of a UTC date and time.
func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0) -> Int {
    LocalDateTime(year: year, month: month, day: day, hour: hour, minute: minute).secondsSinceEpoch
}

/// A directory of its own under /tmp, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() throws {
        path = NSTemporaryDirectory() + "zonerules-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    func write(_ bytes: [UInt8], to name: String) throws {
        let file = URL(fileURLWithPath: path + "/" + name)
        try FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: file)
    }

    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

func systemZoneBytes(_ name: String) throws -> [UInt8] {
    Array(try Data(contentsOf: URL(fileURLWithPath: ZoneInfoDirectory.defaultPath + "/" + name)))
}

@Test func aZoneDirectoryWithTokyoAsBerlinAnswersInJST() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try scratch.write(try systemZoneBytes("Asia/Tokyo"), to: "Europe/Berlin")
    let july = utc(2026, 7, 1, 12)
    let system = try ZoneInfoDirectory().rules(named: "Europe/Berlin")
    let modified = try ZoneInfoDirectory(path: scratch.path).rules(named: "Europe/Berlin")
    #expect(system.localTimeType(at: july).abbreviation == "CEST")
    #expect(modified.localTimeType(at: july) == .init(utcOffset: 32_400, isDaylightSaving: false, abbreviation: "JST"))
    #expect(WallClock.localDateTime(for: Date(timeIntervalSince1970: TimeInterval(july)), in: modified).hour == 21)
    // TZDIR chooses the directory, as it does for glibc.
    #expect(ZoneInfoDirectory(environment: ["TZDIR": scratch.path]).path == scratch.path)
    #expect(ZoneInfoDirectory(environment: [:]).path == "/usr/share/zoneinfo")
    #expect(ZoneInfoDirectory(environment: ["TZDIR": ""]).path == "/usr/share/zoneinfo")
    #expect(ZoneInfoDirectory(environment: ["TZDIR": scratch.path + "//"]).path == scratch.path)
}

@Test func aStoreKeepsWhatItReadUntilReloaded() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try scratch.write(try systemZoneBytes("Europe/Berlin"), to: "Europe/Berlin")
    let store = ZoneRulesStore(directory: ZoneInfoDirectory(path: scratch.path))
    let july = utc(2026, 7, 1)
    #expect(store.rules(named: "Europe/Berlin")?.utcOffset(at: july) == 7200)
    // tzdata replaces the file: the store answers from what it read until told the database changed.
    try scratch.write(try systemZoneBytes("Asia/Tokyo"), to: "Europe/Berlin")
    #expect(store.rules(named: "Europe/Berlin")?.utcOffset(at: july) == 7200)
    store.reload()
    #expect(store.rules(named: "Europe/Berlin")?.utcOffset(at: july) == 32_400)
    #expect(store.generation == 1)
    #expect(store.rules(named: "Nowhere/Atlantis") == nil)
    #expect(throws: TZifError.self) { try store.rulesOrError(named: "Nowhere/Atlantis") }
}

@Test(arguments: [
    "", "/etc/localtime", "../../etc/passwd", "Europe/../../x", "Europe//Berlin", "Europe/./Berlin", "Europe/",
    "Euro pe/Berlin", "Europe/Berlin\u{0}", String(repeating: "a", count: 256),
])
func zoneNamesThatLeaveTheDirectoryAreRefused(_ name: String) {
    #expect(throws: TZifError.self) { try ZoneInfoDirectory.validate(name) }
    #expect(throws: TZifError.self) { try ZoneInfoDirectory().rules(named: name) }
}

@Test(arguments: ["Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Etc/GMT-14", "UTC", "EST5EDT"])
func ordinaryZoneNamesAreAccepted(_ name: String) throws {
    try ZoneInfoDirectory.validate(name)
    _ = try ZoneInfoDirectory().rules(named: name)
}

@Test func aFileThatIsNotRegularIsRefused() throws {
    let error = try #require(throws: TZifError.self) {
        try ZoneInfoDirectory(path: "/usr/share").rules(named: "zoneinfo")
    }
    #expect(error.message.contains("not a regular file"))
}

@Test func theSystemZoneIsReadFromLocaltime() throws {
    let scratch = try ScratchDirectory()
    defer { scratch.remove() }
    try scratch.write(try systemZoneBytes("Asia/Kolkata"), to: "localtime")
    let rules = try ZoneInfoDirectory(localtimePath: scratch.path + "/localtime").localtimeRules()
    #expect(rules.utcOffset(at: utc(2026, 1, 1)) == 19_800)
}
