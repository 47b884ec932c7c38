/// "Did you mean …": the known word nearest to a misspelt one.
public enum Suggestion {
    /// The word of `vocabulary` nearest to `word` (case-insensitive), when it is close enough to be a
    /// slip of the keyboard: one edit for a word of up to four letters, two for a longer one (an edit is
    /// a letter added, removed, changed, or two neighbours swapped). nil for a known word, a word with
    /// digits, or one too far from every candidate. Among equally near candidates the one closest in
    /// length wins (`febuary` → `february`, not `feb`). A known word with letters added in front is no
    /// slip of it (`biweekly` is not `weekly`).
    public static func nearest(to word: String, in vocabulary: some Collection<String>) -> String? {
        let lowered = word.lowercased()
        guard lowered.count >= 3, lowered.count <= 40, lowered.allSatisfy(\.isLetter),
            !vocabulary.contains(where: { $0.lowercased() == lowered })
        else { return nil }
        let limit = lowered.count <= 4 ? 1 : 2
        var best: (word: String, distance: Int, lengthGap: Int)?
        for candidate in vocabulary where candidate.count >= 3 {
            guard abs(candidate.count - lowered.count) <= limit else { continue }
            // Letters in front of a known word make another word ("biweekly", "trimonthly"), not a slip.
            if lowered.count >= candidate.count + 2, lowered.hasSuffix(candidate.lowercased()) { continue }
            let distance = editDistance(Array(lowered), Array(candidate.lowercased()))
            guard distance <= limit else { continue }
            let gap = abs(candidate.count - lowered.count)
            if let current = best,
                (current.distance, current.lengthGap, current.word) <= (distance, gap, candidate)
            {
                continue
            }
            best = (candidate, distance, gap)
        }
        return best?.word
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    /// neighbouring letters.
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { value = min(value, before[j - 2] + 1) }
                current[j] = value
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}
