/// What a rule does when its wall-clock time does not exist (spring-forward gap) or exists twice
/// (fall-back overlap) on a given day.
///
/// The defaults match what people expect from an alarm clock: a 02:30 reminder on the night the clocks
/// jump 02:00→03:00 still fires, at 03:00 (the moment the gap ends); a 01:30 reminder on the night
/// 01:00–02:00 repeats fires once, the first time.
public struct DSTPolicy: Codable, Hashable, Sendable {
    /// Behaviour for a wall-clock time inside a spring-forward gap.
    public enum Gap: String, Codable, Hashable, Sendable, CaseIterable {
        /// Fire at the transition instant, i.e. when the wall clock reads the end of the gap.
        case endOfGap
        /// Do not fire that day.
        case skip
    }

    /// Behaviour for a wall-clock time inside a fall-back overlap.
    public enum Overlap: String, Codable, Hashable, Sendable, CaseIterable {
        /// Fire once, at the first (earlier) of the two instants.
        case first
        /// Fire at both instants.
        case both
    }

    public var gap: Gap
    public var overlap: Overlap

    /// - Parameters:
    ///   - gap: defaults to `.endOfGap`.
    ///   - overlap: defaults to `.first`.
    public init(gap: Gap = .endOfGap, overlap: Overlap = .first) {
        self.gap = gap
        self.overlap = overlap
    }

    /// `endOfGap` and `first`.
    public static let `default` = DSTPolicy()
}
