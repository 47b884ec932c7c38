import Foundation
import Testing

@testable import ChimeCore

/// Which trailing words systemd takes for a time zone, and that each is then used the same way.
@Suite("OnCalendar: time zone names")
struct OnCalendarTimeZoneNameTests {
    static let names = [
        "Europe/Berlin", "Asia/Kathmandu", "Australia/Lord_Howe", "Pacific/Apia", "Etc/UTC", "GMT", "GMT+0", "GMT-0",
        "GMT0", "UCT", "Zulu", "Etc/GMT+5", "Etc/GMT-14", "US/Eastern", "EST5EDT", "EST", "CET", "WET", "Factory",
        "Asia/Katmandu", "Europe/Kiev", "Europe/Kyiv", "America/Nuuk", "posix/Europe/Berlin", "posixrules",
        // Not zones for systemd (though ICU knows some of them):
        "PST", "IST", "BST", "GMT+5", "UTC+3", "US/Pacific-New", "Canada/East-Saskatchewan", "SystemV/EST5",
        "Etc/Unknown", "europe/berlin", "Europe//Berlin", "Europe/Berlin/", "zone.tab", "leapseconds", "Foo",
    ]

    @Test("accepted and evaluated like systemd-analyze")
    func agreesWithOracle() throws {
        try #require(OnCalendarOracle.isAvailable, "systemd-analyze is needed")
        let expressions = Self.names.map { "*-*-* 02:30 \($0)" }
        let base = 1_711_760_400 * 1_000_000  // 2024-03-30T01:00:00Z, the day before Europe's spring-forward
        let oracle = try OnCalendarOracle.run(
            expressions, timeZone: "America/New_York", baseMicroseconds: base, iterations: 3)
        var failures: [String] = []
        for (expression, expected) in zip(expressions, oracle) {
            let ours = OnCalendarOurs.verdict(
                expression, timeZone: "America/New_York", baseMicroseconds: base, iterations: 3)
            if ours != expected { failures.append("\(expression): systemd \(expected), ours \(ours)") }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test("localtime names the system zone")
    func localtime() throws {
        let spec = try CalendarSpec.parse("*-*-* 10:00 localtime")
        #expect(spec.description == "*-*-* 10:00:00 localtime")
        let berlin = try #require(Zone(identifier: "Europe/Berlin"))
        let after = Date(timeIntervalSince1970: 1_704_067_200)  // 2024-01-01T00:00:00Z
        #expect(spec.nextElapse(after: after, defaultTimeZone: berlin) == Date(timeIntervalSince1970: 1_704_099_600))
    }

    @Test("leap-second zones are refused (documented deviation: systemd accepts right/…)")
    func rightZones() {
        #expect(throws: RuleSyntaxError.self) { try CalendarSpec.parse("daily right/UTC") }
    }
}
