// libFuzzer harness for the RRULE parsers. Build and run from the package root:
//   swiftc -sanitize=fuzzer,address -parse-as-library -O Sources/ChimeCore/Shared/*.swift \
//     Sources/ChimeCore/RRule/*.swift Fuzz/RRuleFuzz.swift -o /tmp/fuzz-rrule && /tmp/fuzz-rrule -max_total_time=10
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let start = LocalDateTime(year: 2026, month: 1, day: 31, hour: 9, minute: 30)
    if let rule = try? RRule.parse(text) {
        // Serialising and parsing again must give the same rule.
        guard let again = try? RRule.parse(rule.rfcString), again == rule else { fatalError("round trip: \(text)") }
        if let set = try? RRuleSet(dtstart: start, rules: [rule]) {
            _ = set.occurrences(limit: 5)
            _ = set.nextOccurrence(after: LocalDateTime(year: 2400, month: 6, day: 1))
        }
    }
    if let set = try? RRuleSet.parse(text, dtstart: start, timeZone: Zone(identifier: "Europe/Paris")) {
        _ = set.rfcString
        _ = set.occurrences(after: LocalDateTime(year: 2030, month: 2, day: 28, hour: 23), inclusive: true, limit: 5)
        _ = set.neverFires
    }
    return 0
}
