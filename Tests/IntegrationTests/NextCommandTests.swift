import Foundation
import TestSupport
import Testing

/// `chime next` as a user runs it: no daemon, one rule, occurrences on stdout.
@Suite struct NextCommandTests {
    func chime(_ arguments: [String]) async throws -> (status: Int32, stdout: String, stderr: String) {
        let process = try ManagedProcess(Binaries.chime, arguments)
        defer { process.removeFiles() }
        let status = await process.waitForExit(timeout: .seconds(30)) ?? -1
        return (status, process.stdout, process.stderr)
    }

    @Test func firstFridaysInBerlin() async throws {
        let r = try await chime([
            "next", "--every", "every month on the first friday at 20:15", "--tz", "Europe/Berlin", "--count", "3",
            "--after", "2026-11-22T00:00:00",
        ])
        #expect(r.status == 0)
        #expect(r.stdout == "2026-12-04T20:15:00+01:00\n2027-01-01T20:15:00+01:00\n2027-02-05T20:15:00+01:00\n")
    }

    @Test func rruleFromDtstartAsJSON() async throws {
        let r = try await chime([
            "next", "--rrule", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=3", "--dtstart", "2026-12-01T09:00:00", "--tz",
            "Europe/Berlin", "--after", "2026-11-22T00:00:00", "--json",
        ])
        #expect(r.status == 0)
        let dates = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String]
        #expect(dates == ["2026-12-25T09:00:00+01:00", "2027-01-29T09:00:00+01:00", "2027-02-26T09:00:00+01:00"])
    }

    @Test func onCalendarWithItsOwnZoneAndTheDSTChange() async throws {
        // New York leaves DST on 2026-11-01: the offset changes between the two answers.
        let r = try await chime([
            "next", "--on-calendar", "*-*-* 09:00:00 America/New_York", "--tz", "America/New_York", "--count", "2",
            "--after", "2026-10-31T12:00:00",
        ])
        #expect(r.status == 0)
        #expect(r.stdout == "2026-11-01T09:00:00-05:00\n2026-11-02T09:00:00-05:00\n")
        let before = try await chime([
            "next", "--on-calendar", "*-*-* 09:00:00", "--tz", "America/New_York", "--count", "1",
            "--after", "2026-10-30T12:00:00",
        ])
        #expect(before.stdout == "2026-10-31T09:00:00-04:00\n")
    }

    @Test(arguments: [
        ["--rrule", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=31"],
        ["--on-calendar", "*-02-30"],
    ])
    func aRuleThatCanNeverFireIsReportedAsSuch(rule: [String]) async throws {
        let r = try await chime(["next"] + rule + ["--tz", "UTC"])
        #expect(r.status == 3)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("this rule never fires"), "stderr: \(r.stderr)")
    }

    @Test(arguments: [
        (["--rrule", "FREQ=DAILY;BYDAY=XX"], "position 18 (\"XX\")"),
        (["--on-calendar", "Mon..Fro"], "position 6 (\"Fro\")"),
        (["--every", "every blursday"], "position 7 (\"blursday\")"),
        (["--every", "every year on february 30"], "expected a day that exists in that month"),
        (["--every", "every day", "--tz", "Nowhere/Zone"], "unknown time zone"),
        (["--every", "every day", "--after", "yesterday"], "--after: cannot read"),
        (["--every", "every day", "--rrule", "FREQ=DAILY"], "exactly one of"),
        (["--every", "every day", "--count", "0"], "--count must be"),
    ])
    func badInputNamesTheTokenAndExitsWith2(arguments: [String], message: String) async throws {
        let r = try await chime(["next"] + arguments)
        #expect(r.status == 2)
        #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
    }
}
