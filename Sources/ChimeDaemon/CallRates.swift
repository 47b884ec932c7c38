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

    /// A call refused for its app's rate: the error it is answered with, and how long it is held before.
    struct Refusal: Sendable {
        var error: DBusError
        /// Until the app's next call would be allowed, at most `maximumRefusalDelay` seconds. A sender's
        /// calls are answered in order, so while its refusal waits, its next calls wait in its lane (which
        /// holds at most a documented number; more are refused unread): an app that calls in a loop pays
        /// for its refusals in its own time, and chimed answers a few a second instead of thousands.
        var delay: Double
    }

    /// The longest a refused call is held before its refusal is sent.
    static let maximumRefusalDelay = 1.0

    /// Takes one call from `caller`'s budget; when there is none, the call's refusal (LimitsExceeded).
    func check(_ caller: Caller, now: Date) -> Refusal? {
        guard !caller.isUser else { return nil }
        let refused: (rate: Double, delay: Double)? = state.withLock { state in
            var bucket = Self.bucket(caller.appID, in: state, now: now)
            defer { state.buckets[caller.appID] = bucket }
            guard bucket.tokens < 1 else {
                bucket.tokens -= 1
                return nil
            }
            let delay = state.rate > 0 ? min((1 - bucket.tokens) / state.rate, Self.maximumRefusalDelay) : 0
            return (state.rate, delay)
        }
        guard let refused else { return nil }
        return Refusal(
            error: DBusError(
                name: ChimeBus.ErrorName.limitsExceeded,
                message: "\(caller.appID) calls chimed more than \(Self.words(refused.rate)) times a second; slow down"),
            delay: refused.delay)
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
