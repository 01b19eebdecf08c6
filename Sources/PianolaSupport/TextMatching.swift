/// Matching names that were typed against names that exist (commands, ports), for "did you mean"
/// hints.
public enum TextMatching {
    /// The Levenshtein distance between `a` and `b`, ignoring case: the fewest single-character
    /// insertions, deletions and substitutions that turn one into the other.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased())
        let b = Array(b.lowercased())
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + [Int](repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
