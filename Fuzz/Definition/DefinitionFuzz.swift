import ChimeCore

/// libFuzzer entry point for the binary encoding of definitions: any bytes are an entry, a rule, or an
/// error; nothing may crash or hang. What decodes encodes to bytes that decode to the same value (the
/// encoding of what was read is canonical and readable).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    if let entry = try? DefinitionCoding.decode(TimelineEntry.self, bytes) {
        let again = DefinitionCoding.encode(entry)
        let reread = try? DefinitionCoding.decode(TimelineEntry.self, again)
        precondition(reread.map(DefinitionCoding.encode) == again, "an entry read did not read back")
    }
    if let rule = try? DefinitionCoding.decode(Recurrence.self, bytes) {
        let again = DefinitionCoding.encode(rule)
        let reread = try? DefinitionCoding.decode(Recurrence.self, again)
        precondition(reread.map(DefinitionCoding.encode) == again, "a rule read did not read back")
    }
    return 0
}
