import Foundation
import Testing

@testable import ChimeCore

@Suite("OnCalendar: API behaviour")
struct OnCalendarAPITests {
    static let berlin = Zone(identifier: "Europe/Berlin")!
    static let utc = Zone(identifier: "UTC")!

    static func date(_ iso: String) -> Date {
        Date(timeIntervalSince1970: TimeInterval(LocalDateTime(iso: iso)?.secondsSinceEpoch ?? 0))
    }

    @Test("equivalent spellings are equal values")
    func equality() throws {
        #expect(try CalendarSpec.parse("mon,fri 10:00") == CalendarSpec.parse("Mon,Fri *-*-* 10:00:00"))
        #expect(try CalendarSpec.parse("Mon..Sun") == CalendarSpec.parse("daily"))
        #expect(try CalendarSpec.parse("daily") != CalendarSpec.parse("daily UTC"))
    }

    @Test("Codable stores the normalised form and reads it back")
    func codable() throws {
        for text in ["Mon..Fri 09:00 Europe/Berlin", "*-02~03", "*:*:0/0.25", "@1700000000", "quarterly UTC"] {
            let spec = try CalendarSpec.parse(text)
            let data = try JSONEncoder().encode(spec)
            #expect(try JSONDecoder().decode(String.self, from: data) == spec.description)
            #expect(try JSONDecoder().decode(CalendarSpec.self, from: data) == spec)
        }
        let local = try CalendarSpec.parse("daily CEST", localZone: .init(standard: "CET", daylight: "CEST"))
        let decoded = try JSONDecoder().decode(CalendarSpec.self, from: JSONEncoder().encode(local))
        #expect(decoded == local)
        #expect(decoded.description == "*-*-* 00:00:00 CEST")
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(CalendarSpec.self, from: Data("\"*-13-01\"".utf8))
        }
    }

    @Test("accessors")
    func accessors() throws {
        let spec = try CalendarSpec.parse("Sat,Sun 10:00 America/New_York")
        #expect(spec.weekdays == [.saturday, .sunday])
        #expect(spec.timeZoneIdentifier == "America/New_York")
        #expect(spec.hasOwnTimeZone)
        #expect(try CalendarSpec.parse("daily").weekdays == nil)
        #expect(try CalendarSpec.parse("daily").timeZoneIdentifier == nil)
        #expect(try CalendarSpec.parse("daily utc").timeZoneIdentifier == "UTC")
    }

    @Test("elapses are strictly after the given instant")
    func strictlyAfter() throws {
        let spec = try CalendarSpec.parse("*-*-* 10:00")
        let first = try #require(spec.nextElapse(after: Self.date("2024-05-01T00:00:00"), defaultTimeZone: Self.utc))
        #expect(first == Self.date("2024-05-01T10:00:00"))
        #expect(spec.nextElapse(after: first, defaultTimeZone: Self.utc) == Self.date("2024-05-02T10:00:00"))
        #expect(
            spec.elapses(after: Self.date("2024-05-01T00:00:00"), defaultTimeZone: Self.utc, count: 3)
                == ["2024-05-01T10:00:00", "2024-05-02T10:00:00", "2024-05-03T10:00:00"].map(Self.date))
    }

    @Test("the expression's own zone wins over the default zone")
    func ownZone() throws {
        let spec = try CalendarSpec.parse("*-*-* 10:00 Europe/Berlin")
        let next = spec.nextElapse(after: Self.date("2024-01-10T00:00:00"), defaultTimeZone: Self.utc)
        #expect(next == Self.date("2024-01-10T09:00:00"))
        let local = try CalendarSpec.parse("*-*-* 10:00")
        #expect(local.nextElapse(after: Self.date("2024-01-10T00:00:00"), defaultTimeZone: Self.berlin) == next)
    }

    @Test("sub-second repetitions elapse with microsecond precision")
    func fractions() throws {
        let spec = try CalendarSpec.parse("*:*:0/0.25")
        let got = spec.elapses(after: Self.date("2024-05-01T00:00:00"), defaultTimeZone: Self.utc, count: 3)
        let base = Self.date("2024-05-01T00:00:00").timeIntervalSince1970
        #expect(got.map { $0.timeIntervalSince1970 - base } == [0.25, 0.5, 0.75])
    }

    @Test("events that never fire answer nil at once", .timeLimit(.minutes(1)))
    func never() throws {
        let start = Date()
        let after = Self.date("2024-05-01T00:00:00")
        for text in ["*-02-30", "2020-*-*", "*-04-31", "*-02,04-31", "Mon 2024-05-01"] {
            let spec = try CalendarSpec.parse(text)
            #expect(spec.nextElapse(after: after, defaultTimeZone: Self.berlin) == nil, "\(text)")
        }
        let never = try CalendarSpec.parse("*-*-* 10:00")
        #expect(never.nextElapse(after: Self.date("2199-12-31T12:00:00"), defaultTimeZone: Self.utc) == nil)
        #expect(Date().timeIntervalSince(start) < 5)
    }

    @Test("a Monday 29 February is found by jumping, not walking")
    func leapMonday() throws {
        let spec = try CalendarSpec.parse("Mon *-02-29")
        let start = Date()
        let got = spec.elapses(after: Self.date("2024-05-01T00:00:00"), defaultTimeZone: Self.utc, count: 2)
        #expect(got == ["2044-02-29T00:00:00", "2072-02-29T00:00:00"].map(Self.date))
        #expect(Date().timeIntervalSince(start) < 1)
    }

    @Test("instants before 1970 search from 1970, as systemd cannot go earlier")
    func beforeEpoch() throws {
        let spec = try CalendarSpec.parse("*-*-* 00:00:00 UTC")
        #expect(
            spec.nextElapse(after: Self.date("1960-01-01T00:00:00"), defaultTimeZone: Self.utc)
                == Self.date("1970-01-01T00:00:00"))
    }
}
