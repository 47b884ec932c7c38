import Foundation

@testable import ChimeCore

/// Shared fixtures for the timeline tests. Instants are written as UTC ISO 8601 text and read with
/// Foundation's own parser, so expectations never go through the WallClock code under test.
enum Fixture {
    static let berlin = Zone(identifier: "Europe/Berlin")!
    static let utcZone = Zone(identifier: "UTC")!

    /// `2026-12-04T19:15:00Z` (optionally with fractional seconds) as a `Date`.
    static func utc(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        guard let date = formatter.date(from: text) else { fatalError("bad fixture date \(text)") }
        return date
    }

    static func entry(
        _ seq: UInt64, at occurrence: Date, urgency: Urgency? = .normal, summary: String? = nil,
        appName: String = "test", owner: String = ""
    ) -> OutboxEntry {
        OutboxEntry(
            seq: seq, itemID: seq, owner: owner, groupID: nil, occurrence: occurrence,
            content: NotificationContent(appName: appName, summary: summary ?? "entry \(seq)", urgency: urgency))
    }

    /// Whether two optional instants agree to within a microsecond: the gate computes token times with
    /// floating-point arithmetic.
    static func isClose(_ a: Date?, _ b: Date?) -> Bool {
        guard let a, let b else { return a == nil && b == nil }
        return abs(a.timeIntervalSince(b)) < 1e-6
    }
}
