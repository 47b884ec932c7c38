/// libFuzzer entry point for the TZif reader and the POSIX TZ strings of its footer: every input is
/// rules or an error, and rules answer every query (an offset in RFC 8536's range, transitions in order)
/// for any instant; nothing may crash or hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var candidates: [ZoneRules] = []
    if let rules = try? ZoneRules(tzif: bytes, identifier: "fuzz") { candidates.append(rules) }
    if let rules = try? ZoneRules(posix: String(decoding: bytes, as: UTF8.self)) { candidates.append(rules) }
    let instants = [Int.min, -(1 << 40), -2_208_988_800, 0, 1_711_846_800, 4_102_444_800, 1 << 40, Int.max]
    for rules in candidates {
        for instant in instants {
            let offset = rules.utcOffset(at: instant)
            precondition(offset > -26 * 3600 && offset < 26 * 3600, "offset \(offset) out of range")
            let low = min(max(instant, -(1 << 40)), 1 << 40)
            let transitions = rules.transitions(from: low, through: low + 800 * 86_400)
            precondition(transitions == transitions.sorted(), "transitions out of order")
        }
    }
    return 0
}
