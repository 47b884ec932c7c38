import ChimeCore
import Foundation

@testable import ChimeConfig

/// The instant and zone the tests read group files at: the `now` of docs/rule-phrases.md.
enum Fixture {
    static let berlin = Zone(identifier: "Europe/Berlin")!
    /// 2026-11-22T00:00:00+01:00.
    static let now = instant("2026-11-21T23:00:00Z")

    /// An instant written in ISO 8601 with its offset.
    static func instant(_ text: String) -> Date {
        ISO8601DateFormatter().date(from: text)!
    }

    /// Parses `text` as the group file `g.toml`.
    static func group(_ text: String) throws(ConfigError) -> TimelineGroup {
        try GroupFile.parse(text, file: "g.toml", groupID: "g", now: now, timeZone: berlin)
    }

    /// The one entry of a group file.
    static func entry(_ text: String) throws -> TimelineEntry {
        let entries = try group(text).entries
        guard entries.count == 1 else { throw FixtureError.notOneEntry(entries.count) }
        return entries[0]
    }

    enum FixtureError: Error { case notOneEntry(Int) }
}
