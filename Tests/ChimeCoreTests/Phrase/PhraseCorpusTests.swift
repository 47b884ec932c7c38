import Foundation
import Testing

@testable import ChimeCore

/// One line of oracle_phrase_corpus.py: a phrase, the system zone it is read in, and the instants
/// python-dateutil computed from the RRULE written by hand for it.
struct PhraseCorpusLine: Sendable, CustomStringConvertible {
    let phrase: String
    let zone: String
    let expected: [Int]
    var description: String { "\(phrase) [\(zone)]" }

    /// Local midnight of 2027-03-10 in `zone`, as the oracle evaluates.
    func now() throws -> Date {
        let tz = try #require(Zone(identifier: zone))
        let local = LocalDateTime(daysSinceEpoch: LocalDateTime.days(fromCivil: 2027, 3, 10))
        return try #require(WallClock.instants(for: local, in: tz).first)
    }
}

enum PhraseCorpus {
    /// Occurrences the oracle shows per phrase (its SHOWN).
    static let shown = 12

    /// The oracle's lines (computed once; the phrases themselves live in the Python file with their RRULEs).
    static let lines: [PhraseCorpusLine] = {
        guard
            let output = try? WallClockOracle.run(
                WallClockOracle.python, [WallClockOracle.sibling("oracle_phrase_corpus.py")], input: "")
        else { return [] }
        return output.compactMap { line in
            let fields = line.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3 else { return nil }
            return PhraseCorpusLine(
                phrase: fields[0], zone: fields[1], expected: fields[2].split(separator: " ").compactMap { Int($0) })
        }
    }()

    /// The first `count` occurrences strictly after `after`, as epoch seconds.
    static func occurrences(of recurrence: Recurrence, after: Date, zone: Zone, count: Int) -> [Int] {
        var result: [Int] = []
        var cursor = after
        while result.count < count, let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: zone) {
            result.append(Int(next.timeIntervalSince1970))
            cursor = next
        }
        return result
    }
}

@Test func phraseCorpusHasAtLeast250Phrasings() {
    #expect(PhraseCorpus.lines.count >= 250, "the oracle gave \(PhraseCorpus.lines.count) lines")
    #expect(Set(PhraseCorpus.lines.map(\.phrase)).count == PhraseCorpus.lines.count, "a phrase is listed twice")
}

/// Each phrasing's first occurrences (up to 12, or all of a rule that ends sooner) after a fixed instant
/// equal the hand-written RRULE's.
@Test(arguments: PhraseCorpus.lines)
func phraseCorpusAgreesWithDateutil(_ line: PhraseCorpusLine) throws {
    let zone = try #require(Zone(identifier: line.zone))
    let now = try line.now()
    let recurrence = try PhraseParser.recurrence(line.phrase, now: now, systemTimeZone: zone)
    // The oracle shows at most 12; fewer means the rule ends there, so one more must not exist.
    let wanted = line.expected.count < PhraseCorpus.shown ? line.expected.count + 1 : PhraseCorpus.shown
    let got = PhraseCorpus.occurrences(of: recurrence, after: now, zone: zone, count: wanted)
    #expect(!line.expected.isEmpty)
    #expect(
        got == line.expected,
        "\(line.phrase): got \(got.map { WallClock.iso8601(Date(timeIntervalSince1970: TimeInterval($0)), in: zone) })"
    )
}

/// Phrasings that mean nothing are refused with the word, its position and what was expected there
/// (checked by `phraseErrors`).
let phraseCorpusErrors: [PhraseErrorCase] = [
    PhraseErrorCase(phrase: "every blursday", offset: 6, token: "blursday", expectedContains: "a weekday such as"),
    PhraseErrorCase(phrase: "every 32nd", offset: 6, token: "32nd", expectedContains: "a unit such as day"),
    PhraseErrorCase(phrase: "every last", offset: 10, token: "", expectedContains: "a weekday such as friday"),
    PhraseErrorCase(
        phrase: "every february 30", offset: 15, token: "30", expectedContains: "a day that exists in that month"),
    PhraseErrorCase(
        phrase: "every 31st of april", offset: 6, token: "31st", expectedContains: "a day that exists in that month"),
    PhraseErrorCase(
        phrase: "every 3rd friday of the week", offset: 24, token: "week", expectedContains: "'the month'"),
    PhraseErrorCase(
        phrase: "every 1st and 15th of january", offset: 19, token: "of", expectedContains: "'of the month'"),
    PhraseErrorCase(phrase: "every morning at", offset: 16, token: "", expectedContains: "a time such as 9:00"),
    PhraseErrorCase(phrase: "hourly at 9:00", offset: 7, token: "at", expectedContains: "'for'"),
    PhraseErrorCase(
        phrase: "weekly on the 15th", offset: 14, token: "15th", expectedContains: "a day of the week such as monday"),
    PhraseErrorCase(phrase: "every tuesday of the month", offset: 14, token: "of", expectedContains: "'at'"),
    PhraseErrorCase(phrase: "every day at 24", offset: 13, token: "24", expectedContains: "a time such as 9:00"),
    PhraseErrorCase(phrase: "every day 9", offset: 10, token: "9", expectedContains: "'at'"),
    PhraseErrorCase(phrase: "daily at 25:00", offset: 9, token: "25:00", expectedContains: "a time such as 9:00"),
    PhraseErrorCase(phrase: "every jan", offset: 9, token: "", expectedContains: "a day of the month such as 24"),
    PhraseErrorCase(phrase: "every day in Mars/Olympus", offset: 13, token: "Mars/Olympus", expectedContains: "IANA"),
    PhraseErrorCase(phrase: "bimonthly", offset: 0, token: "bimonthly", expectedContains: "'daily'"),
    PhraseErrorCase(phrase: "twice a day at 9", offset: 0, token: "twice", expectedContains: "as many times"),
    PhraseErrorCase(phrase: "twice a week", offset: 8, token: "week", expectedContains: "every monday and thursday"),
    PhraseErrorCase(phrase: "at 9 every", offset: 10, token: "", expectedContains: "a unit such as day"),
    PhraseErrorCase(phrase: "at 9 remind me", offset: 5, token: "remind", expectedContains: "'every'"),
    PhraseErrorCase(phrase: "at 9 every day at 10", offset: 15, token: "at", expectedContains: "'for'"),
    PhraseErrorCase(phrase: "tomorrow at 9 and 17", offset: 20, token: "", expectedContains: "one time"),
    PhraseErrorCase(phrase: "the 1st of the month", offset: 0, token: "the", expectedContains: "'every'"),
    PhraseErrorCase(phrase: "every weekday except", offset: 20, token: "", expectedContains: "a day of the week"),
    PhraseErrorCase(phrase: "every mon-fri except mon-fri", offset: 14, token: "except", expectedContains: "left"),
    PhraseErrorCase(
        phrase: "every month except friday", offset: 12, token: "except", expectedContains: "daily or weekly"),
    PhraseErrorCase(phrase: "every hour from 17 to 9", offset: 22, token: "9", expectedContains: "later than 17:00"),
    PhraseErrorCase(phrase: "every minute from 0:00 to 23:59", offset: 31, token: "", expectedContains: "at most 96"),
    PhraseErrorCase(phrase: "every 24th weekday", offset: 6, token: "24th", expectedContains: "from 1st to 23rd"),
    PhraseErrorCase(phrase: "every day until november 31", offset: 25, token: "31", expectedContains: "exists"),
    PhraseErrorCase(phrase: "every day until smarch 3", offset: 16, token: "smarch", expectedContains: "november 28"),
    PhraseErrorCase(phrase: "every quarter past", offset: 14, token: "past", expectedContains: "'at'"),
    PhraseErrorCase(phrase: "every half day", offset: 11, token: "day", expectedContains: "'hour'"),
]
