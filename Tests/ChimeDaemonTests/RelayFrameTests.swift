import ChimeRelay
import DBusKit
import Testing

@testable import ChimeDaemon

/// The frames chimed and its notification relay exchange.
struct RelayFrameTests {
    let call = DBusMessage.methodCall(
        destination: NotificationServer.name, path: NotificationServer.path, interface: NotificationServer.interface,
        member: "Notify", body: [.string("chime"), .uint32(7), .string("")])

    @Test func aCallFrameCarriesTagTimeoutRowsAndMessage() throws {
        let request = NotificationRelay.Request(
            tag: 0x0102_0304_0506_0708, timeout: .milliseconds(2500), rows: [3, 1 << 40], message: call)
        let frame = try request.frame()
        let read = try #require(NotificationRelay.Request(frame: frame[...]))
        #expect(read.tag == request.tag)
        #expect(read.timeout == .milliseconds(2500))
        #expect(read.rows == [3, 1 << 40])
        #expect(read.message.member == "Notify")
        #expect(read.message.destination == NotificationServer.name)
        #expect(read.message.body == call.body)
    }

    @Test func aShortOrBrokenFrameIsNotACall() throws {
        let frame = try NotificationRelay.Request(tag: 1, timeout: .seconds(1), rows: [5], message: call).frame()
        // Cut inside the header, inside the rows, and inside the message.
        for length in [4, 20, frame.count - 3] {
            #expect(NotificationRelay.Request(frame: frame[0..<length]) == nil, "\(length) bytes")
        }
        // A row count larger than the frame holds.
        var lying = frame
        lying[12] = 0xFF
        #expect(NotificationRelay.Request(frame: lying[...]) == nil)
        // A signal is not a call.
        let signal = DBusMessage.signal(path: "/a", interface: "a.b", member: "C")
        var wrapped = Array(frame[0..<16]) + (try signal.serialized())
        wrapped[12] = 0
        #expect(NotificationRelay.Request(frame: wrapped[...]) == nil)
    }
}
