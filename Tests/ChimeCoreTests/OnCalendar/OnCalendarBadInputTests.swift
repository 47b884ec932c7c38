import Foundation
import Testing

@testable import ChimeCore

/// Inputs systemd rejects: each must throw, pointing at the right place; the whole table is also run
/// through `systemd-analyze` to prove systemd refuses every one of them.
@Suite("OnCalendar: rejected input")
struct OnCalendarBadInputTests {
    struct Row: Sendable, CustomStringConvertible {
        var input: String
        var offset: Int
        var token: String

        init(_ input: String, _ offset: Int, _ token: String) {
            self.input = input
            self.offset = offset
            self.token = token
        }

        var description: String { "'\(input)'" }
    }

    static let rows: [Row] = [
        Row("", 0, ""),
        Row(" ", 0, " "),
        Row("UTC", 0, "UTC"),
        Row(" UTC", 0, " "),
        Row("bogus", 0, "bogus"),
        Row("Mond 10:00", 0, "Mond"),
        Row("Mon..", 5, ""),
        Row("Mon-", 4, ""),
        Row("Wed..Mon", 5, "Mon"),
        Row("Mon..Tue..Fri", 8, ".."),
        Row("Mon.Tue", 3, "."),
        Row("Mon,,Tue", 4, ","),
        Row("Mon,10:00", 4, "10"),
        Row("Sundays", 0, "Sundays"),
        Row("*/5", 1, "/"),
        Row("*:*/5", 3, "/"),
        Row("10:00 Foo/Bar", 6, "Foo/Bar"),
        Row("10:60", 3, "60"),
        Row("24:00", 0, "24"),
        Row("*-13-01", 2, "13"),
        Row("*-02-32", 5, "32"),
        Row("1969-01-01", 0, "1969"),
        Row("2200-01-01", 0, "2200"),
        Row("*-*-0", 4, "0"),
        Row("*:0/60", 2, "0/60"),
        Row("*:*:60", 4, "60"),
        Row("*-*~29", 4, "29"),
        Row("*-*~1/2", 4, "1/2"),
        Row("*-*~14,26", 7, "26"),
        Row("2023~01-05", 7, "-"),
        Row("10", 2, ""),
        Row("10:00:", 6, ""),
        Row("10:00:05.", 9, ""),
        Row("10:00:1.5..2", 6, "1.5..2"),
        Row("1,", 2, ""),
        Row("1..", 3, ""),
        Row("5..1 10:00", 4, " "),
        Row("*-*-* 10:00:00:00", 14, ":"),
        Row("@", 1, ""),
        Row("@-5", 0, "@-5"),
        Row("@99999999999", 0, "@99999999999"),
        Row("@5 10:00", 2, " "),
        Row("Mon *-02-29 Tue", 12, "Tue"),
        Row("*:0/0", 4, "0"),
        Row("99999999999:00", 0, "99999999999"),
        Row("*-*-* 2,1:23.5", 12, "."),
        Row("daily  UTC", 0, "daily"),
        Row("Mon-Wed-Fri", 7, "-"),
        Row("*-01-01x", 7, "x"),
        Row("x*-01-01", 0, "x*"),
        Row("2012-*-1,5 11:12:13 Europe/Nowhere", 20, "Europe/Nowhere"),
        Row("Mon 10:00 CEST", 10, "CEST"),
        Row("*-*-* 10:00 europe/berlin", 12, "europe/berlin"),
        Row("weekly,", 0, "weekly"),
        Row("Mon daily", 4, "daily"),
        Row("10:00:00.1234567.5", 16, "."),
        Row("*-*-5..1", 4, "5..1"),
        Row("*-*-01/31", 4, "01/31"),
        Row("2020..2010-01-01", 0, "2020..2010"),
        Row("12:00 GMT+5", 6, "GMT+5"),
    ]

    @Test("rejected with the offending token and its offset", arguments: rows)
    func rejected(_ row: Row) {
        #expect(throws: RuleSyntaxError.self) { try CalendarSpec.parse(row.input) }
        do {
            let spec = try CalendarSpec.parse(row.input)
            Issue.record("accepted as \(spec)")
        } catch {
            #expect(error.grammar == "OnCalendar")
            #expect(error.input == row.input)
            #expect(error.offset == row.offset)
            #expect(error.token == row.token)
            #expect(!error.expected.isEmpty)
        }
    }

    @Test("systemd-analyze rejects every row too")
    func oracleRejectsAll() throws {
        try #require(OnCalendarOracle.isAvailable, "systemd-analyze is needed")
        let inputs = Self.rows.map(\.input)
        let verdicts = try OnCalendarOracle.run(
            inputs, timeZone: "UTC", baseMicroseconds: 1_700_000_000_000_000, iterations: 1)
        let accepted = zip(inputs, verdicts).filter { $0.1 != .rejected }.map { "'\($0.0)': \($0.1)" }
        #expect(accepted.isEmpty, "systemd accepted: \(accepted.joined(separator: ", "))")
    }

    @Test("the message names the position, the token and what was expected")
    func message() {
        do {
            _ = try CalendarSpec.parse("*-*-* 10:60")
            Issue.record("accepted")
        } catch {
            #expect(error.description.hasPrefix("invalid OnCalendar at position 10 (\"60\"): expected a minute 0–59"))
        }
    }

    @Test("a long list is limited like systemd's (241 values)")
    func listLimit() throws {
        let ok = (0..<241).map { _ in "1" }.joined(separator: ",") + ":00"
        let tooLong = (0..<242).map { _ in "1" }.joined(separator: ",") + ":00"
        _ = try CalendarSpec.parse(ok)
        #expect(throws: RuleSyntaxError.self) { try CalendarSpec.parse(tooLong) }
        if OnCalendarOracle.isAvailable {
            let verdicts = try OnCalendarOracle.run([ok, tooLong], timeZone: "UTC", baseMicroseconds: 0, iterations: 1)
            #expect(verdicts.first != .rejected)
            #expect(verdicts.last == .rejected)
        }
    }
}
