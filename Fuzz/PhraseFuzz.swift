import Foundation

// libFuzzer harness for the phrase parser: any bytes, read as lossy UTF-8, must either parse or throw
// a RuleSyntaxError whose offset lies within the input; a parsed phrase must survive a JSON round trip
// and yield a few next occurrences without trapping or looping.

private let fuzzNow = Date(timeIntervalSince1970: 1_795_302_000)  // 2026-11-22T00:00:00+01:00
private let fuzzZone = Zone(identifier: "Europe/Berlin") ?? Zone(secondsFromGMT: 3600)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let schedule: DateBuilder.Schedule
    do {
        schedule = try PhraseParser.parse(text)
    } catch let error as RuleSyntaxError {
        precondition(error.offset >= 0 && error.offset <= text.count, "offset out of range: \(error)")
        precondition(!error.expected.isEmpty)
        return 0
    } catch {
        preconditionFailure("unexpected error type: \(error)")
    }
    guard let encoded = try? JSONEncoder().encode(schedule),
        let decoded = try? JSONDecoder().decode(DateBuilder.Schedule.self, from: encoded)
    else { preconditionFailure("schedule does not round-trip: \(text)") }
    precondition(decoded == schedule)
    guard let rule = schedule.rule(now: fuzzNow, systemTimeZone: fuzzZone) else { return 0 }
    guard let ruleData = try? JSONEncoder().encode(rule),
        (try? JSONDecoder().decode(DateRule.self, from: ruleData)) == rule
    else { preconditionFailure("rule does not round-trip: \(text)") }
    var after = fuzzNow
    for _ in 0..<4 {
        guard let next = rule.nextOccurrence(after: after, systemTimeZone: fuzzZone) else { break }
        precondition(next > after, "occurrences must increase: \(text)")
        _ = WallClock.iso8601(next, in: fuzzZone)
        after = next
    }
    _ = rule.firstOccurrence(systemTimeZone: fuzzZone)
    return 0
}
