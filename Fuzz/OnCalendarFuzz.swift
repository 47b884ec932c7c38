import Foundation

/// libFuzzer entry point for the OnCalendar parser: every input that parses must print a normalised form
/// that parses back to the same value, and its next elapses (in UTC and in a DST zone) must strictly
/// increase; nothing may crash or hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let names = CalendarSpec.LocalZoneAbbreviations(standard: "CET", daylight: "CEST")
    guard let spec = try? CalendarSpec.parse(text, localZone: names) else { return 0 }
    let normalized = spec.description
    guard let reread = try? CalendarSpec.parse(normalized, localZone: names) else {
        fatalError("normalised form does not parse: \(text) -> \(normalized)")
    }
    precondition(reread.description == normalized, "normalised form is not stable: \(normalized)")
    // What Codable stores must read back as the identical value.
    guard let data = try? JSONEncoder().encode(spec),
        let decoded = try? JSONDecoder().decode(CalendarSpec.self, from: data)
    else { fatalError("Codable round trip failed for \(text)") }
    precondition(decoded == spec, "Codable round trip changed \(text)")
    let base = Date(timeIntervalSince1970: 1_711_846_800)  // 2024-03-31T01:00:00Z, Berlin's spring-forward
    for zoneName in ["UTC", "Europe/Berlin", "Australia/Lord_Howe"] {
        guard let zone = Zone(identifier: zoneName) else { continue }
        let elapses = spec.elapses(after: base, defaultTimeZone: zone, count: 3)
        var previous = base
        for elapse in elapses {
            precondition(elapse > previous, "elapses do not increase for \(normalized) in \(zoneName)")
            previous = elapse
        }
    }
    return 0
}
