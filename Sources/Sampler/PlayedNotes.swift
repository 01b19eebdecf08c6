/// The notes a preset starts, as (key, velocity) pairs: what decides which of its zones (and so
/// which samples) can sound. A set of 128 × 128 bits.
public struct PlayedNotes: Hashable, Sendable {
    /// For each key, a bit per velocity (bit `v` for velocity `v`); empty while nothing is played.
    private var velocitiesByKey: [UInt128] = []

    /// No notes.
    public init() {}

    /// Whether no note was played.
    public var isEmpty: Bool { velocitiesByKey.allSatisfy { $0 == 0 } }

    /// How many distinct (key, velocity) pairs were played.
    public var count: Int { velocitiesByKey.reduce(0) { $0 + $1.nonzeroBitCount } }

    /// Adds a note; keys and velocities outside 0–127 are ignored.
    public mutating func insert(key: Int, velocity: Int) {
        guard (0..<128).contains(key), (0..<128).contains(velocity) else { return }
        if velocitiesByKey.isEmpty { velocitiesByKey = [UInt128](repeating: 0, count: 128) }
        velocitiesByKey[key] |= 1 << UInt128(velocity)
    }

    /// Whether (key, velocity) was played.
    public func contains(key: Int, velocity: Int) -> Bool {
        guard !velocitiesByKey.isEmpty, (0..<128).contains(key), (0..<128).contains(velocity) else { return false }
        return velocitiesByKey[key] & (1 << UInt128(velocity)) != 0
    }

    /// Whether a note with its key in `keys` and its velocity in `velocities` was played.
    public func containsAny(keys: ClosedRange<Int>, velocities: ClosedRange<Int>) -> Bool {
        guard !velocitiesByKey.isEmpty else { return false }
        let low = max(0, velocities.lowerBound)
        let high = min(127, velocities.upperBound)
        guard low <= high else { return false }
        let width = high - low + 1
        let mask: UInt128 = (width == 128 ? ~0 : (1 << UInt128(width)) - 1) << UInt128(low)
        let first = max(0, keys.lowerBound)
        let last = min(127, keys.upperBound)
        guard first <= last else { return false }
        return velocitiesByKey[first...last].contains { $0 & mask != 0 }
    }

    /// Every note of both.
    public func union(_ other: PlayedNotes) -> PlayedNotes {
        if other.velocitiesByKey.isEmpty { return self }
        if velocitiesByKey.isEmpty { return other }
        var result = self
        for key in 0..<128 { result.velocitiesByKey[key] |= other.velocitiesByKey[key] }
        return result
    }
}
