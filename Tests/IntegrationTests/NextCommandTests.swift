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

    /// `--after` anchors a phrase there for every frequency: each lists its first occurrence after that
    /// time, whatever the day it is now (a daily phrase does not jump to today, nor a weekly one to this week).
    @Test(arguments: [
        ("every day at 9", "2026-01-05T09:00:00+01:00"), ("every monday at 9", "2026-01-05T09:00:00+01:00"),
        ("every week on friday at 9", "2026-01-09T09:00:00+01:00"),
        ("every month on the 15th at 9", "2026-01-15T09:00:00+01:00"),
        ("every year on february 2 at 9", "2026-02-02T09:00:00+01:00"),
        ("every day at 9am and 5pm", "2026-01-05T09:00:00+01:00"),
    ])
    func afterAnchorsEveryFrequency(phrase: String, first: String) async throws {
        let r = try await chime([
            "next", "--every", phrase, "--tz", "Europe/Berlin", "--count", "1", "--after", "2026-01-05T00:00:00",
        ])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout == first + "\n", "\(phrase)")
    }

    @Test func rruleFromDtstartAsJSON() async throws {
        let r = try await chime([
            "next", "--rrule", "FREQ=MONTHLY;BYDAY=-1FR;COUNT=3", "--dtstart", "2026-12-01T09:00:00", "--tz",
            "Europe/Berlin", "--after", "2026-11-22T00:00:00", "--json",
        ])
        #expect(r.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        #expect(
            object?["occurrences"] as? [String]
                == ["2026-12-25T09:00:00+01:00", "2027-01-29T09:00:00+01:00", "2027-02-26T09:00:00+01:00"])
        #expect(
            object?["understood"] as? String
                == "every month on the last Friday at 09:00 from 2026-12-01, 3 times (Europe/Berlin)")
        #expect(object?["rrule"] as? String == "DTSTART:20261201T090000\nRRULE:FREQ=MONTHLY;COUNT=3;BYDAY=-1FR")
    }

    /// What a phrase was understood as goes to standard error, in words and as RRULE; the occurrences stay
    /// alone on standard output, for scripts.
    @Test func aPhraseIsExplainedBackInWordsAndAsRRule() async throws {
        let r = try await chime([
            "next", "--every", "every weekday at 9:00 in America/New_York", "--tz", "Europe/Berlin", "--count", "2",
            "--after", "2026-11-26T00:00:00",
        ])
        #expect(r.status == 0)
        // 09:00 in New York is 15:00 in Berlin.
        #expect(r.stdout == "2026-11-26T15:00:00+01:00\n2026-11-27T15:00:00+01:00\n")
        #expect(r.stderr.contains("understood: every weekday at 09:00 (America/New_York)\n"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("as RRULE:   DTSTART;TZID=America/New_York:"), "stderr: \(r.stderr)")
        #expect(r.stderr.contains("RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;BYSECOND=0\n"))
    }

    /// The RRULE printed for a phrase, given back to `chime next --rrule`, names the same occurrences.
    @Test(arguments: [
        "every month on the first friday at 20:15", "every 2 weeks on monday and thursday at 8:30",
        "every last day at 18:00 until 2027-06-30", "every 1st and last friday at 17:00 for 6 months",
        "every jan 27th", "every 90 minutes",
    ])
    func thePrintedRRuleFiresAsThePhraseDoes(phrase: String) async throws {
        let common = ["--tz", "Europe/Berlin", "--count", "12", "--after", "2026-11-26T00:00:00"]
        let r = try await chime(["next", "--every", phrase, "--json"] + common)
        #expect(r.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let rrule = try #require(object["rrule"] as? String)
        let again = try await chime(["next", "--rrule", rrule, "--json"] + common)
        #expect(again.status == 0, "stderr: \(again.stderr)")
        let other = try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any]
        let occurrences = try #require(object["occurrences"] as? [String])
        #expect(!occurrences.isEmpty)
        #expect(other?["occurrences"] as? [String] == occurrences, "\(phrase) as \(rrule)")
    }

    /// An occurrence daylight saving moved carries a note in a second, tab-separated column (and in
    /// `--json`); the others are dates alone.
    @Test func anOccurrenceMovedOutOfTheGapIsMarked() async throws {
        let arguments = [
            "next", "--rrule", "FREQ=DAILY;BYHOUR=2;BYMINUTE=30", "--dtstart", "2099-03-27T00:00:00", "--tz",
            "Europe/Berlin", "--after", "2099-03-27T12:00:00", "--count", "3",
        ]
        let note = "02:30 does not exist on 2099-03-29 (the clocks go forward): moved to 03:00"
        let r = try await chime(arguments)
        #expect(r.status == 0)
        #expect(
            r.stdout
                == "2099-03-28T02:30:00+01:00\n2099-03-29T03:00:00+02:00\t(\(note))\n2099-03-30T02:30:00+02:00\n")
        let json = try await chime(arguments + ["--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let marks = object?["daylightSaving"] as? [[String: String]]
        #expect(marks == [["occurrence": "2099-03-29T03:00:00+02:00", "note": note]])
    }

    /// A rule that skips periods says which, before it is scheduled.
    @Test func aRuleThatSkipsMonthsIsFlagged() async throws {
        let arguments = ["next", "--every", "every month on the 31st at 9:00", "--tz", "UTC", "--count", "2"]
        let skips = "fires in 7 of every 12 months: never in February, April, June, September or November"
        let r = try await chime(arguments)
        #expect(r.status == 0)
        #expect(r.stderr.contains("skips:      \(skips)\n"), "stderr: \(r.stderr)")
        let json = try await chime(arguments + ["--json"])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["skips"] as? String == skips)
        let monthly = try await chime(["next", "--every", "every month on the first friday", "--count", "1"])
        #expect(!monthly.stderr.contains("skips:"), "stderr: \(monthly.stderr)")
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
        (["--every", "every febuary 3"], "position 7 (\"febuary\"): expected a unit such as day"),
        (["--every", "every febuary 3"], "; did you mean 'february'?"),
        (["--rrule", "FREQ=MONTLY"], "did you mean 'MONTHLY'?"),
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
