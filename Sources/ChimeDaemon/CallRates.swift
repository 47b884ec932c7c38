import ChimeProtocol
import DBusKit
import Foundation
import Synchronization

/// Each app's call budget (chime.toml's `[limits] calls-per-second` and `call-burst`): a token bucket per
/// app, checked for every call and charged for the work a call did (`WorkCost`). Kept behind a lock of its
/// own, not on the daemon's queue, so that a call refused for its rate, or the check of one that is not,
/// never waits for the queue nor makes the deliveries wait for it. The user's own tool is not limited.
final class CallRates: Sendable {
    private struct State {
        var buckets: [String: RateBucket] = [:]
        var rate: Double
        var burst: Double
    }

    private let state: Mutex<State>

    init(callsPerSecond: Double, burst: Int) {
        state = Mutex(State(rate: callsPerSecond, burst: Double(burst)))
    }

    /// New limits, from a reload of chime.toml.
    func update(callsPerSecond: Double, burst: Int) {
        state.withLock {
            $0.rate = callsPerSecond
            $0.burst = Double(burst)
        }
    }

    /// Takes one call from `caller`'s budget; refuses it with LimitsExceeded when there is none.
    func check(_ caller: Caller, now: Date) throws(DBusError) {
        guard !caller.isUser else { return }
        let (allowed, rate) = state.withLock { state in
            var bucket = Self.bucket(caller.appID, in: state, now: now)
            let allowed = bucket.tokens >= 1
            if allowed { bucket.tokens -= 1 }
            state.buckets[caller.appID] = bucket
            return (allowed, state.rate)
        }
        guard allowed else {
            throw DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(caller.appID) calls chimed more than \(Self.words(rate)) times a second; slow down")
        }
    }

    /// The longest a refused call is held before its refusal is sent (`delayBeforeRefusal`).
    static let maximumRefusalDelay = 1.0

    /// How long to hold a call of `caller` that `check` refused before answering it: until the app's next
    /// call would be allowed, at most `maximumRefusalDelay` seconds. A sender's calls are answered in
    /// order, so while its refusal waits, its next calls wait in its lane (which holds at most a
    /// documented number; more are refused unread): an app that calls in a loop pays for its refusals
    /// in its own time, and chimed answers a few a second instead of thousands.
    func delayBeforeRefusal(_ caller: Caller, now: Date) -> Double {
        state.withLock { state in
            let bucket = Self.bucket(caller.appID, in: state, now: now)
            guard bucket.tokens < 1, state.rate > 0 else { return 0 }
            return min((1 - bucket.tokens) / state.rate, Self.maximumRefusalDelay)
        }
    }

    /// Charges `caller`'s budget for the work a call of its did beyond the call itself: the budget may go
    /// below zero, and the app's next calls are refused until it has refilled. So an app pays for a
    /// listing in proportion to what it read and computed, and cannot ask for more work than its calls a
    /// second buy, however it splits it.
    func charge(_ caller: Caller, _ cost: WorkCost, now: Date) {
        guard !caller.isUser, cost.tokens > 0 else { return }
        state.withLock { state in
            var bucket = Self.bucket(caller.appID, in: state, now: now)
            bucket.tokens -= cost.tokens
            state.buckets[caller.appID] = bucket
        }
    }

    /// Forgets `app`'s budget once it would be full again (its last connection closed): apps that come and
    /// go leave nothing behind, and one cannot refill its budget by reconnecting.
    func forgetIfFull(_ app: String, now: Date) {
        state.withLock { state in
            guard Self.bucket(app, in: state, now: now).tokens >= state.burst else { return }
            state.buckets.removeValue(forKey: app)
        }
    }

    private static func bucket(_ app: String, in state: State, now: Date) -> RateBucket {
        var bucket = state.buckets[app] ?? RateBucket(tokens: state.burst, updated: now)
        bucket.refill(now: now, rate: state.rate, capacity: state.burst)
        return bucket
    }

    /// A rate as the settings give it: 200, or 0.5.
    private static func words(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
