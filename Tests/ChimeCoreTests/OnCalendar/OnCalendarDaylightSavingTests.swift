import Foundation
import Testing

@testable import ChimeCore

/// Daylight-saving behaviour, pinned to what systemd 252 (glibc 2.36 mktime) does — including its quirks:
/// a wall-clock time skipped by spring-forward is NOT fired that day, a time repeated by fall-back fires
/// once (the first, daylight occurrence), and `*:0/20` does not run through the repeated hour twice.
/// Every row is also re-checked against `systemd-analyze` itself.
@Suite("OnCalendar: daylight-saving table")
struct OnCalendarDaylightSavingTests {
    struct Row: Sendable, CustomStringConvertible {
        var systemZone: String
        var base: String
        var expression: String
        var normalized: String
        var elapses: [String]

        init(_ systemZone: String, _ base: String, _ expression: String, _ normalized: String, _ elapses: [String]) {
            self.systemZone = systemZone
            self.base = base
            self.expression = expression
            self.normalized = normalized
            self.elapses = elapses
        }

        var description: String { "TZ=\(systemZone) after \(base): \(expression)" }

        var baseSeconds: Int {
            LocalDateTime(iso: String(base.dropLast()))?.secondsSinceEpoch ?? 0
        }
    }

    static let rows: [Row] = [
        Row(
            "Europe/Berlin", "2024-03-30T23:00:00Z", "*-*-* 02:30", "*-*-* 02:30:00",
            ["2024-04-01T00:30:00Z", "2024-04-02T00:30:00Z", "2024-04-03T00:30:00Z", "2024-04-04T00:30:00Z"]),
        Row(
            "Europe/Berlin", "2024-03-31T00:40:00Z", "*:0/15", "*-*-* *:00/15:00",
            ["2024-03-31T00:45:00Z", "2024-03-31T01:00:00Z", "2024-03-31T01:15:00Z", "2024-03-31T01:30:00Z"]),
        Row(
            "Europe/Berlin", "2024-03-30T23:00:00Z", "*-*-* 02..03:00:00", "*-*-* 02..03:00:00",
            ["2024-03-31T01:00:00Z", "2024-04-01T00:00:00Z", "2024-04-01T01:00:00Z", "2024-04-02T00:00:00Z"]),
        Row(
            "Europe/Berlin", "2024-03-30T12:00:00Z", "Sun *-03-* 02:00:00", "Sun *-03-* 02:00:00",
            ["2025-03-02T01:00:00Z", "2025-03-09T01:00:00Z", "2025-03-16T01:00:00Z", "2025-03-23T01:00:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-26T23:00:00Z", "*-*-* 02:30", "*-*-* 02:30:00",
            ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z", "2024-10-29T01:30:00Z", "2024-10-30T01:30:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-26T23:50:00Z", "*:0/20", "*-*-* *:00/20:00",
            ["2024-10-27T00:00:00Z", "2024-10-27T00:20:00Z", "2024-10-27T00:40:00Z", "2024-10-27T02:00:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-27T00:10:00Z", "*-*-* 02:*:00", "*-*-* 02:*:00",
            ["2024-10-27T00:11:00Z", "2024-10-27T00:12:00Z", "2024-10-27T00:13:00Z", "2024-10-27T00:14:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-27T00:59:59Z", "hourly", "*-*-* *:00:00",
            ["2024-10-27T02:00:00Z", "2024-10-27T03:00:00Z", "2024-10-27T04:00:00Z", "2024-10-27T05:00:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-27T01:10:00Z", "*-*-* 02:15", "*-*-* 02:15:00",
            ["2024-10-27T01:15:00Z", "2024-10-28T01:15:00Z", "2024-10-29T01:15:00Z", "2024-10-30T01:15:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-26T12:00:00Z", "daily", "*-*-* 00:00:00",
            ["2024-10-26T22:00:00Z", "2024-10-27T23:00:00Z", "2024-10-28T23:00:00Z", "2024-10-29T23:00:00Z"]),
        Row(
            "America/New_York", "2024-03-10T06:00:00Z", "*-*-* 02:30", "*-*-* 02:30:00",
            ["2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z", "2024-03-13T06:30:00Z", "2024-03-14T06:30:00Z"]),
        Row(
            "America/New_York", "2024-03-10T06:40:00Z", "*:0/30", "*-*-* *:00/30:00",
            ["2024-03-10T07:00:00Z", "2024-03-10T07:30:00Z", "2024-03-10T08:00:00Z", "2024-03-10T08:30:00Z"]),
        Row(
            "America/New_York", "2024-11-03T04:00:00Z", "*-*-* 01:30", "*-*-* 01:30:00",
            ["2024-11-03T05:30:00Z", "2024-11-04T06:30:00Z", "2024-11-05T06:30:00Z", "2024-11-06T06:30:00Z"]),
        Row(
            "America/New_York", "2024-11-03T05:00:00Z", "*:0/30", "*-*-* *:00/30:00",
            ["2024-11-03T05:30:00Z", "2024-11-03T07:00:00Z", "2024-11-03T07:30:00Z", "2024-11-03T08:00:00Z"]),
        Row(
            "America/New_York", "2024-11-03T05:45:00Z", "*-*-* 01..02:00:00", "*-*-* 01..02:00:00",
            ["2024-11-03T07:00:00Z", "2024-11-04T06:00:00Z", "2024-11-04T07:00:00Z", "2024-11-05T06:00:00Z"]),
        Row(
            "Australia/Lord_Howe", "2024-10-05T14:00:00Z", "*-*-* 02:15", "*-*-* 02:15:00",
            ["2024-10-06T15:15:00Z", "2024-10-07T15:15:00Z", "2024-10-08T15:15:00Z", "2024-10-09T15:15:00Z"]),
        Row(
            "Australia/Lord_Howe", "2024-10-05T15:10:00Z", "*:0/10", "*-*-* *:00/10:00",
            ["2024-10-05T15:20:00Z", "2024-10-05T15:30:00Z", "2024-10-05T15:40:00Z", "2024-10-05T15:50:00Z"]),
        Row(
            "Australia/Lord_Howe", "2024-04-06T14:00:00Z", "*-*-* 01:45", "*-*-* 01:45:00",
            ["2024-04-06T14:45:00Z", "2024-04-07T15:15:00Z", "2024-04-08T15:15:00Z", "2024-04-09T15:15:00Z"]),
        Row(
            "Australia/Lord_Howe", "2024-04-06T14:20:00Z", "*:0/15", "*-*-* *:00/15:00",
            ["2024-04-06T14:30:00Z", "2024-04-06T14:45:00Z", "2024-04-06T15:30:00Z", "2024-04-06T15:45:00Z"]),
        Row(
            "Asia/Kathmandu", "1985-12-31T18:00:00Z", "*-*-* 00:05", "*-*-* 00:05:00",
            ["1986-01-01T18:20:00Z", "1986-01-02T18:20:00Z", "1986-01-03T18:20:00Z", "1986-01-04T18:20:00Z"]),
        Row(
            "Asia/Kathmandu", "1985-12-31T18:00:00Z", "*:0/10", "*-*-* *:00/10:00",
            ["1985-12-31T18:10:00Z", "1985-12-31T18:20:00Z", "1985-12-31T18:35:00Z", "1985-12-31T18:45:00Z"]),
        Row(
            "Asia/Kathmandu", "1985-12-30T12:00:00Z", "daily", "*-*-* 00:00:00",
            ["1985-12-30T18:30:00Z", "1986-01-01T18:15:00Z", "1986-01-02T18:15:00Z", "1986-01-03T18:15:00Z"]),
        Row(
            "Pacific/Apia", "2011-12-28T12:00:00Z", "*-12-30 12:00", "*-12-30 12:00:00",
            ["2012-12-29T22:00:00Z", "2013-12-29T22:00:00Z", "2014-12-29T22:00:00Z", "2015-12-29T22:00:00Z"]),
        Row(
            "Pacific/Apia", "2011-12-28T12:00:00Z", "daily", "*-*-* 00:00:00",
            ["2011-12-29T10:00:00Z", "2011-12-30T10:00:00Z", "2011-12-31T10:00:00Z", "2012-01-01T10:00:00Z"]),
        Row(
            "Pacific/Apia", "2011-12-29T09:00:00Z", "*-*-* *:00", "*-*-* *:00:00",
            ["2011-12-29T10:00:00Z", "2011-12-29T11:00:00Z", "2011-12-29T12:00:00Z", "2011-12-29T13:00:00Z"]),
        Row(
            "Pacific/Apia", "2011-12-28T12:00:00Z", "Fri *-*-* 10:00", "Fri *-*-* 10:00:00",
            ["2012-01-05T20:00:00Z", "2012-01-12T20:00:00Z", "2012-01-19T20:00:00Z", "2012-01-26T20:00:00Z"]),
        Row(
            "America/New_York", "2024-03-09T12:00:00Z", "*-*-* 02:30 Europe/Berlin", "*-*-* 02:30:00 Europe/Berlin",
            ["2024-03-10T01:30:00Z", "2024-03-11T01:30:00Z", "2024-03-12T01:30:00Z", "2024-03-13T01:30:00Z"]),
        Row(
            "UTC", "2024-10-26T12:00:00Z", "*-*-* 02:30 Europe/Berlin", "*-*-* 02:30:00 Europe/Berlin",
            ["2024-10-27T00:30:00Z", "2024-10-28T01:30:00Z", "2024-10-29T01:30:00Z", "2024-10-30T01:30:00Z"]),
        Row(
            "UTC", "2024-03-09T12:00:00Z", "*-*-* 02:30 America/New_York", "*-*-* 02:30:00 America/New_York",
            ["2024-03-11T06:30:00Z", "2024-03-12T06:30:00Z", "2024-03-13T06:30:00Z", "2024-03-14T06:30:00Z"]),
        Row(
            "Europe/Berlin", "2024-10-26T12:00:00Z", "*-*-* 02:30 Asia/Kathmandu", "*-*-* 02:30:00 Asia/Kathmandu",
            ["2024-10-26T20:45:00Z", "2024-10-27T20:45:00Z", "2024-10-28T20:45:00Z", "2024-10-29T20:45:00Z"]),
        Row("Europe/Berlin", "2024-01-10T12:00:00Z", "daily CEST", "*-*-* 00:00:00 CEST", []),
        Row("Europe/Berlin", "2024-07-10T12:00:00Z", "daily CET", "*-*-* 00:00:00 CET", []),
        Row("Europe/Berlin", "2024-03-30T12:00:00Z", "*-*-* 02:30 CET", "*-*-* 02:30:00 CET", []),
        Row(
            "America/New_York", "2024-11-02T12:00:00Z", "*-*-* 01:30 EDT", "*-*-* 01:30:00 EDT",
            ["2024-11-03T05:30:00Z", "2024-11-04T06:30:00Z"]),
        Row("America/New_York", "2024-11-02T12:00:00Z", "*-*-* 01:30 EST", "*-*-* 01:30:00 EST", []),
        Row(
            "Europe/Berlin", "2024-03-30T12:00:00Z", "*-*~01 02:30", "*-*~01 02:30:00",
            ["2024-04-30T00:30:00Z", "2024-05-31T00:30:00Z", "2024-06-30T00:30:00Z", "2024-07-31T00:30:00Z"]),
    ]

    @Test("elapses around DST changes", arguments: rows)
    func table(_ row: Row) throws {
        let spec = try CalendarSpec.parse(row.expression, localZone: OnCalendarOurs.abbreviations(row.systemZone))
        #expect(spec.description == row.normalized)
        let zone = try #require(Zone(identifier: row.systemZone))
        let got = spec.elapses(
            after: Date(timeIntervalSince1970: TimeInterval(row.baseSeconds)), defaultTimeZone: zone, count: 4)
        #expect(got.map { OnCalendarOracle.iso(Int($0.timeIntervalSince1970)) } == row.elapses)
    }

    @Test("the DST table agrees with systemd-analyze")
    func tableAgreesWithOracle() throws {
        try #require(OnCalendarOracle.isAvailable, "systemd-analyze is needed")
        var failures: [String] = []
        for row in Self.rows {
            let oracle = try OnCalendarOracle.run(
                [row.expression], timeZone: row.systemZone, baseMicroseconds: row.baseSeconds * 1_000_000, iterations: 4
            )
            let expected = OnCalendarOracleVerdict.accepted(
                normalized: row.normalized,
                elapses: row.elapses.compactMap { LocalDateTime(iso: String($0.dropLast()))?.secondsSinceEpoch })
            if oracle.first != expected { failures.append("\(row): systemd \(oracle), table \(expected)") }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
