import Synchronization

/// The method calls waiting to be handled, one lane per sender.
///
/// A sender's calls are handled one at a time, in the order they arrived, so a client sees its calls
/// answered as it made them. Different senders' calls are handled concurrently: a handler that waits
/// (for a person, another service, a slow disk) holds up only the sender whose call it is.
///
/// A lane holds at most `limit` calls (the one being handled included); a sender that sends more
/// before its earlier calls are answered gets `org.freedesktop.DBus.Error.LimitsExceeded` for the
/// extra ones, so one client cannot make the service hold an unbounded backlog.
final class MethodCallLanes: Sendable {
    /// The most calls one sender may have waiting.
    let limit: Int
    private let lanes = Mutex<[String: [DBusMessage]]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    enum Admission {
        /// The lane was empty: the caller starts a handler that drains it (`next(after:)`).
        case startLane
        /// Queued behind the sender's earlier calls.
        case queued
        /// The sender has `limit` calls waiting already.
        case full
    }

    /// Adds a call to its sender's lane.
    func admit(_ message: DBusMessage) -> Admission {
        lanes.withLock { lanes in
            let key = Self.key(message)
            guard var lane = lanes[key] else {
                lanes[key] = [message]
                return .startLane
            }
            guard lane.count < limit else { return .full }
            lane.append(message)
            lanes[key] = lane
            return .queued
        }
    }

    /// Removes a handled call from its lane and returns the sender's next call, if any; nil ends the lane.
    func next(after message: DBusMessage) -> DBusMessage? {
        lanes.withLock { lanes in
            let key = Self.key(message)
            guard var lane = lanes[key] else { return nil }
            lane.removeFirst()
            guard let following = lane.first else {
                lanes.removeValue(forKey: key)
                return nil
            }
            lanes[key] = lane
            return following
        }
    }

    /// Forgets every waiting call (the connection closed).
    func removeAll() {
        lanes.withLock { $0.removeAll() }
    }

    /// The calls of this many senders are waiting or being handled.
    var count: Int { lanes.withLock { $0.count } }

    /// A peer connection's calls have no sender: they share one lane.
    private static func key(_ message: DBusMessage) -> String { message.sender ?? "" }
}
