import Foundation
import Testing

@testable import ChimeCore

/// Reads docs/rule-phrases.md (three levels up from this file) and checks every example line in it.
enum PhraseDoc {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../docs/rule-phrases.md").standardizedFileURL.path

    static func text() throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    /// The `- \`phrase\` → …` lines.
    static func exampleLines(_ text: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("- `") && $0.contains("` → ") }
    }

    /// `now = <ISO> with system time zone <zone>` from the document.
    static func evaluationContext(_ text: String) throws -> (now: Date, zone: Zone) {
        let words = text.replacingOccurrences(of: "\n", with: " ").split(separator: " ").map(String.init)
        guard
            let nowIndex = words.indices.first(where: {
                $0 + 2 < words.count && words[$0] == "now" && words[$0 + 1] == "="
            }),
            let zoneIndex = words.indices.first(where: { $0 > nowIndex && words[$0] == "zone" }),
            zoneIndex + 1 < words.count,
            let now = ISO8601DateFormatter().date(from: words[nowIndex + 2]),
            let zone = Zone(
                identifier: words[zoneIndex + 1].trimmingCharacters(in: CharacterSet(charactersIn: ";,.")))
        else { throw PhraseDocError(message: "the document must state 'now = <ISO> … time zone <zone>'") }
        return (now, zone)
    }

    /// Checks one line; returns a description of the mismatch, or nil.
    static func check(_ line: String, now: Date, zone: Zone) -> String? {
        guard let open = line.range(of: "- `"), let arrow = line.range(of: "` → ") else { return "malformed: \(line)" }
        let phrase = String(line[open.upperBound..<arrow.lowerBound])
        let claim = String(line[arrow.upperBound...])
        if claim.hasPrefix("error at offset ") { return checkError(phrase, claim) }
        var items = claim.components(separatedBy: ", ")
        var total: Int?
        var last: String?
        var more = false
        if let tail = items.last, let paren = tail.range(of: " ("), tail.hasSuffix(" in all)") {
            last = String(tail[..<paren.lowerBound])
            total = Int(tail[paren.upperBound...].dropLast(" in all)".count))
            items.removeLast()
        }
        if items.last == "…" {
            more = true
            items.removeLast()
        }
        let recurrence: Recurrence
        do { recurrence = try PhraseParser.recurrence(phrase, now: now, systemTimeZone: zone) } catch {
            return "`\(phrase)`: \(error)"
        }
        let wanted = (total ?? items.count) + 1
        var got: [String] = []
        var cursor = now
        while got.count < wanted, let next = recurrence.nextOccurrence(after: cursor, systemTimeZone: zone) {
            got.append(WallClock.iso8601(next, in: zone))
            cursor = next
        }
        if let total {
            guard got.count == total, Array(got.prefix(items.count)) == items, got.last == last else {
                return
                    "`\(phrase)`: expected \(items) … \(last ?? "") (\(total) in all), got \(got.count): \(got.prefix(items.count)) … \(got.last ?? "")"
            }
        } else if more {
            guard got.count > items.count, Array(got.prefix(items.count)) == items else {
                return "`\(phrase)`: expected \(items) and more, got \(got)"
            }
        } else if got != items {
            return "`\(phrase)`: expected exactly \(items), got \(got)"
        }
        return nil
    }

    /// `error at offset N ("token"): expected TEXT` or `error at offset N (end of input): expected TEXT`,
    /// optionally followed by `; did you mean 'WORD'?`.
    static func checkError(_ phrase: String, _ claim: String) -> String? {
        let rest = claim.dropFirst("error at offset ".count)
        guard let space = rest.firstIndex(of: " "), let offset = Int(rest[..<space]),
            let close = rest.range(of: "): expected ")
        else { return "malformed error claim: \(claim)" }
        var token = String(rest[rest.index(after: space)..<close.lowerBound]).dropFirst()  // drop "("
        if token == "end of input" { token = "" } else { token = token.dropFirst().dropLast() }
        var expected = String(rest[close.upperBound...])
        var suggestion: String?
        // `…; did you mean 'friday'?`
        if let hint = expected.range(of: "; did you mean '"), expected.hasSuffix("'?") {
            suggestion = String(expected[hint.upperBound...].dropLast(2))
            expected = String(expected[..<hint.lowerBound])
        }
        do {
            _ = try PhraseParser.parse(phrase)
            return "`\(phrase)`: parsed, but the document says it is an error"
        } catch let error as RuleSyntaxError {
            let want = RuleSyntaxError(
                grammar: "phrase", input: phrase, offset: offset, token: String(token), expected: expected,
                suggestion: suggestion)
            return error == want ? nil : "`\(phrase)`: expected \(want), got \(error)"
        } catch {
            return "`\(phrase)`: unexpected \(error)"
        }
    }
}

struct PhraseDocError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

@Test func phraseDocEveryExampleLineHolds() throws {
    let text = try PhraseDoc.text()
    let (now, zone) = try PhraseDoc.evaluationContext(text)
    #expect(WallClock.iso8601(now, in: zone) == "2026-11-22T00:00:00+01:00")
    let lines = PhraseDoc.exampleLines(text)
    #expect(lines.count >= 40)
    let failures = lines.compactMap { PhraseDoc.check($0, now: now, zone: zone) }
    #expect(
        failures.isEmpty, "\(failures.count) of \(lines.count) example lines fail:\n\(failures.joined(separator: "\n"))"
    )
}

/// The document's values come from the independent python computation, not from Chime: re-run it
/// and require the same lines.
@Test func phraseDocValuesMatchTheIndependentOracle() throws {
    let text = try PhraseDoc.text()
    let documented = Set(PhraseDoc.exampleLines(text).filter { !$0.contains("→ error at") })
    let oracle = try WallClockOracle.run(
        WallClockOracle.python, [WallClockOracle.sibling("oracle_phrasedoc.py")], input: "")
    #expect(oracle.count == documented.count)
    #expect(Set(oracle) == documented, "differ: \(Set(oracle).symmetricDifference(documented))")
}

@Test func phraseDocKeyExample() throws {
    // The README's example, checked independently of the document.
    let berlin = try #require(Zone(identifier: "Europe/Berlin"))
    let now = Date(timeIntervalSince1970: 1_795_302_000)  // 2026-11-22T00:00:00+01:00
    let rule = try PhraseParser.rule("every month on the first friday at 20:15", now: now, systemTimeZone: berlin)
    let next = rule.occurrences(after: now, systemTimeZone: berlin).prefix(3).map { WallClock.iso8601($0, in: berlin) }
    #expect(next == ["2026-12-04T20:15:00+01:00", "2027-01-01T20:15:00+01:00", "2027-02-05T20:15:00+01:00"])
}
