import CDBus
import Synchronization

/// The method calls waiting to be handled, one lane per sender.
///
/// A sender's calls are handled one at a time, in the order they arrived, so a client sees its calls
/// answered as it made them. Different senders' calls are handled concurrently: a handler that waits
/// (for a person, another service, a slow disk) holds up only the sender whose call it is.
///
/// Calls wait here as they arrived, undecoded (`IncomingCall`), so what a waiting call costs is its size
/// on the wire, and that is bounded three ways: a lane holds at most `limits.callsPerSender` calls and
/// `limits.bytesPerSender` bytes (the one being handled included), and all lanes together at most
/// `limits.bytes`. A call beyond any of them is refused with `org.freedesktop.DBus.Error.LimitsExceeded`,
/// so no client, nor many of them, can make the service hold an unbounded backlog.
final class MethodCallLanes: Sendable {
    let limits: DBusConnection.IncomingLimits
    private let state = Mutex(State())

    private struct Lane {
        var calls: [IncomingCall] = []
        var bytes = 0
    }

    private struct State {
        var lanes: [String: Lane] = [:]
        var bytes = 0
    }

    init(limits: DBusConnection.IncomingLimits) {
        self.limits = limits
    }

    enum Admission: Equatable {
        /// The lane was empty: the caller starts a handler that drains it (`next(after:)`).
        case startLane
        /// Queued behind the sender's earlier calls.
        case queued
        /// Refused: the sender has `limits.callsPerSender` calls waiting already.
        case tooManyCalls
        /// Refused: the sender's waiting calls would hold more than `limits.bytesPerSender` bytes.
        case tooManyBytesFromSender
        /// Refused: all senders' waiting calls would hold more than `limits.bytes` bytes.
        case tooManyBytes
    }

    /// Adds a call to its sender's lane.
    func admit(_ call: IncomingCall) -> Admission {
        state.withLock { state in
            let key = Self.key(call)
            var lane = state.lanes[key] ?? Lane()
            guard lane.calls.count < limits.callsPerSender else { return .tooManyCalls }
            guard lane.bytes + call.bytes <= limits.bytesPerSender else { return .tooManyBytesFromSender }
            guard state.bytes + call.bytes <= limits.bytes else { return .tooManyBytes }
            lane.calls.append(call)
            lane.bytes += call.bytes
            state.bytes += call.bytes
            state.lanes[key] = lane
            return lane.calls.count == 1 ? .startLane : .queued
        }
    }

    /// Removes a handled call from its lane and returns the sender's next call, if any; nil ends the lane.
    func next(after call: IncomingCall) -> IncomingCall? {
        state.withLock { state in
            let key = Self.key(call)
            guard var lane = state.lanes[key], !lane.calls.isEmpty else { return nil }
            let done = lane.calls.removeFirst()
            lane.bytes -= done.bytes
            state.bytes -= done.bytes
            guard let following = lane.calls.first else {
                state.lanes.removeValue(forKey: key)
                return nil
            }
            state.lanes[key] = lane
            return following
        }
    }

    /// Forgets every waiting call (the connection closed).
    func removeAll() {
        state.withLock { $0 = State() }
    }

    /// The calls of this many senders are waiting or being handled.
    var count: Int { state.withLock { $0.lanes.count } }

    /// The bytes of all calls waiting or being handled.
    var bytes: Int { state.withLock { $0.bytes } }

    /// A peer connection's calls have no sender: they share one lane.
    private static func key(_ call: IncomingCall) -> String { call.header.sender ?? "" }
}

/// A method call as it arrived: its header read, its body not yet decoded, and its size on the wire.
struct IncomingCall: Sendable {
    /// The header; `body` is empty until the call is handled.
    var header: DBusMessage
    /// The body's signature, from the header.
    var signature: String
    /// About how many bytes the body takes (`Marshalling.bodyBytes`).
    var bytes: Int
    let received: ReceivedMessage
}

/// A libdbus message kept, undecoded, until its turn comes.
final class ReceivedMessage: @unchecked Sendable {
    // @unchecked Sendable: libdbus locks a message once it is received, so its contents never change;
    // it is read by one task at a time (its call's lane), and its reference count is atomic.
    let raw: OpaquePointer

    /// Takes a reference of its own to `raw`.
    init(retaining raw: OpaquePointer) {
        self.raw = raw
        dbus_message_ref(raw)
    }

    deinit { dbus_message_unref(raw) }
}
