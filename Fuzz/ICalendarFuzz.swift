// libFuzzer harness for the iCalendar reader (content lines, values, time zone definitions). Build and run
// from the package root:
//   swiftc -sanitize=fuzzer,address -parse-as-library -O Sources/ChimeCore/Shared/*.swift \
//     Sources/ChimeCore/RRule/*.swift Sources/ChimeCore/ICalendar/*.swift Fuzz/ICalendarFuzz.swift \
//     -o /tmp/fuzz-ical && /tmp/fuzz-ical -max_total_time=10 Tests/ChimeCoreTests/Fixtures/ics
import Foundation

/// The component without the line numbers (which serializing changes).
func unnumbered(_ component: ICalendarComponent) -> ICalendarComponent {
    ICalendarComponent(
        name: component.name,
        properties: component.properties.map { ICalendarProperty($0.name, $0.value, parameters: $0.parameters) },
        components: component.components.map(unnumbered))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let roots = try? ICalendarComponent.parse(text) else { return 0 }
    // Writing and reading again gives the same components.
    let written = roots.map(\.serialized).joined()
    guard let again = try? ICalendarComponent.parse(written), again.map(unnumbered) == roots.map(unnumbered) else {
        fatalError("round trip: \(text.debugDescription)")
    }
    var stack = roots
    while let component = stack.popLast() {
        stack += component.components
        for property in component.properties {
            _ = property.text
            _ = try? ICalendarTime.values(of: property)
            if let duration = ICalendarDuration.parse(property.value) {
                guard ICalendarDuration.parse(duration.description) != nil else { fatalError("duration \(duration)") }
            }
        }
        if component.name == "VTIMEZONE", let zone = try? ICalendarTimeZone(component) {
            for seconds in [-1e10, 0, 1.8e9, 1e11] { _ = zone.utcOffset(at: Date(timeIntervalSince1970: seconds)) }
        }
    }
    return 0
}
