import Synchronization

/// A `Double` setting the control thread sets and the render thread reads at its next quantum,
/// lock-free: clamped to its range as it is set, NaN ignored (the setting keeps its value).
package struct ClampedSetting: ~Copyable, Sendable {
    let range: ClosedRange<Double>
    private let bits: Atomic<UInt64>

    /// `value` (clamped) within `range`.
    package init(_ value: Double, in range: ClosedRange<Double>) {
        self.range = range
        bits = Atomic(min(max(value, range.lowerBound), range.upperBound).bitPattern)
    }

    /// The value last set (any thread).
    package var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    /// Sets `newValue`, clamped to the range; NaN is ignored (any thread).
    package func set(_ newValue: Double) {
        guard !newValue.isNaN else { return }
        bits.store(min(max(newValue, range.lowerBound), range.upperBound).bitPattern, ordering: .relaxed)
    }
}
