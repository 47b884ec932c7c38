import Foundation

/// SplitMix64: a tiny, well-mixed, seeded generator, so that a random test is the same on every run with
/// the same seed and a failure can be replayed from the seed it printed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The seed from the environment variable `name` when set (to replay a run), else a fresh one.
    public static func seed(from name: String) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[name], let seed = UInt64(text) { return seed }
        return UInt64.random(in: 0...UInt64.max)
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    public mutating func pick<T>(_ values: [T]) -> T { values[int(0...(values.count - 1))] }
}
