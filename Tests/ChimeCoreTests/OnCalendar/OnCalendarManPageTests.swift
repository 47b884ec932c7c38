import Foundation
import Testing

@testable import ChimeCore

/// Every example of systemd.time(7) (systemd 252): the "Normalized form" table and the shorthand list.
@Suite("OnCalendar: systemd.time(7) examples")
struct OnCalendarManPageTests {
    static let normalizedForms: [(String, String)] = [
        ("Sat,Thu,Mon..Wed,Sat..Sun", "Mon..Thu,Sat,Sun *-*-* 00:00:00"),
        ("Mon,Sun 12-*-* 2,1:23", "Mon,Sun 2012-*-* 01,02:23:00"),
        ("Wed *-1", "Wed *-*-01 00:00:00"),
        ("Wed..Wed,Wed *-1", "Wed *-*-01 00:00:00"),
        ("Wed, 17:48", "Wed *-*-* 17:48:00"),
        ("Wed..Sat,Tue 12-10-15 1:2:3", "Tue..Sat 2012-10-15 01:02:03"),
        ("*-*-7 0:0:0", "*-*-07 00:00:00"),
        ("10-15", "*-10-15 00:00:00"),
        ("monday *-12-* 17:00", "Mon *-12-* 17:00:00"),
        ("Mon,Fri *-*-3,1,2 *:30:45", "Mon,Fri *-*-01,02,03 *:30:45"),
        ("12,14,13,12:20,10,30", "*-*-* 12,13,14:10,20,30:00"),
        ("12..14:10,20,30", "*-*-* 12..14:10,20,30:00"),
        ("mon,fri *-1/2-1,3 *:30:45", "Mon,Fri *-01/2-01,03 *:30:45"),
        ("03-05 08:05:40", "*-03-05 08:05:40"),
        ("08:05:40", "*-*-* 08:05:40"),
        ("05:40", "*-*-* 05:40:00"),
        ("Sat,Sun 12-05 08:05:40", "Sat,Sun *-12-05 08:05:40"),
        ("Sat,Sun 08:05:40", "Sat,Sun *-*-* 08:05:40"),
        ("2003-03-05 05:40", "2003-03-05 05:40:00"),
        ("05:40:23.4200004/3.1700005", "*-*-* 05:40:23.420000/3.170001"),
        ("2003-02..04-05", "2003-02..04-05 00:00:00"),
        ("2003-03-05 05:40 UTC", "2003-03-05 05:40:00 UTC"),
        ("2003-03-05", "2003-03-05 00:00:00"),
        ("03-05", "*-03-05 00:00:00"),
        ("hourly", "*-*-* *:00:00"),
        ("daily", "*-*-* 00:00:00"),
        ("daily UTC", "*-*-* 00:00:00 UTC"),
        ("monthly", "*-*-01 00:00:00"),
        ("weekly", "Mon *-*-* 00:00:00"),
        ("weekly Pacific/Auckland", "Mon *-*-* 00:00:00 Pacific/Auckland"),
        ("yearly", "*-01-01 00:00:00"),
        ("annually", "*-01-01 00:00:00"),
        ("*:2/3", "*-*-* *:02/3:00"),
        // The prose examples.
        ("Thu,Fri 2012-*-1,5 11:12:13", "Thu,Fri 2012-*-01,05 11:12:13"),
        ("*-02~03", "*-02~03 00:00:00"),
        ("Mon *-05~07/1", "Mon *-05~07/1 00:00:00"),
    ]

    static let shorthands: [(String, String)] = [
        ("minutely", "*-*-* *:*:00"),
        ("hourly", "*-*-* *:00:00"),
        ("daily", "*-*-* 00:00:00"),
        ("monthly", "*-*-01 00:00:00"),
        ("weekly", "Mon *-*-* 00:00:00"),
        ("yearly", "*-01-01 00:00:00"),
        ("quarterly", "*-01,04,07,10-01 00:00:00"),
        ("semiannually", "*-01,07-01 00:00:00"),
        // Aliases systemd also accepts.
        ("annually", "*-01-01 00:00:00"),
        ("anually", "*-01-01 00:00:00"),
        ("biannually", "*-01,07-01 00:00:00"),
        ("bi-annually", "*-01,07-01 00:00:00"),
        ("semi-annually", "*-01,07-01 00:00:00"),
        ("DAILY", "*-*-* 00:00:00"),
    ]

    static var all: [(String, String)] { normalizedForms + shorthands }

    @Test("normalised form matches the manual", arguments: all.map { $0.0 })
    func normalizedForm(_ input: String) throws {
        let expected = try #require(Self.all.first { $0.0 == input }?.1)
        let spec = try CalendarSpec.parse(input)
        #expect(spec.description == expected)
        // The normalised form reads back as the same event.
        #expect(try CalendarSpec.parse(spec.description) == spec)
    }

    @Test("manual examples agree with systemd-analyze (form and 5 elapses, in 3 zones)")
    func agreesWithOracle() throws {
        try #require(OnCalendarOracle.isAvailable, "systemd-analyze is needed")
        let inputs = Self.all.map(\.0)
        var failures: [String] = []
        for (zone, base) in [
            ("Europe/Berlin", 1_700_000_000), ("America/New_York", 1_041_379_200), ("UTC", 1_330_000_000),
        ] {
            let oracle = try OnCalendarOracle.run(
                inputs, timeZone: zone, baseMicroseconds: base * 1_000_000, iterations: 5)
            for (input, expected) in zip(inputs, oracle) {
                let ours = OnCalendarOurs.verdict(
                    input, timeZone: zone, baseMicroseconds: base * 1_000_000, iterations: 5)
                if ours != expected {
                    failures.append("TZ=\(zone) @\(base) \(input): systemd \(expected), ours \(ours)")
                }
            }
            for (input, expected) in Self.all {
                if case .accepted(let normalized, _) = oracle[inputs.firstIndex(of: input) ?? 0], normalized != expected
                {
                    failures.append("manual says \(expected) but systemd prints \(normalized) for \(input)")
                }
            }
        }
        #expect(failures.isEmpty, "\(failures.count) disagreements:\n\(failures.joined(separator: "\n"))")
    }
}
