// libFuzzer harness for the TOML readers: chime.toml (DaemonSettings) and group files (GroupFile), through
// TOMLKit. TOMLKit is C++, so scripts/fuzz.sh builds this through SwiftPM (CHIME_FUZZ=1 adds the target)
// with --sanitize fuzzer --sanitize address; libFuzzer supplies main.
import ChimeConfig
import ChimeCore
import Foundation

let now = Date(timeIntervalSince1970: 1_800_000_000)
let zone = Zone(identifier: "Europe/Berlin")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    _ = try? DaemonSettings.parse(text, file: "fuzz.toml")
    if let group = try? GroupFile.parse(text, file: "fuzz.toml", groupID: "fuzz", now: now, timeZone: zone) {
        // Each entry of a group that reads can make its content.
        var random = SystemRandomNumberGenerator()
        for entry in group.entries {
            var state = EntryState()
            _ = entry.content.resolve(occurrence: now, number: 1, timeZone: zone, state: &state, random: &random)
        }
    }
    return 0
}
