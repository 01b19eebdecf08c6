import Synchronization

/// A node's parameter as the control thread sets it and the render thread reads it at its next
/// quantum: a `Double` in an atomic, clamped as it is set to the range its effect's parameter
/// table gives.
struct AtomicParameter: ~Copyable, Sendable {
    let range: ClosedRange<Double>
    private let bits: Atomic<UInt64>

    /// `value` (clamped) within the range of `key` in `table`.
    init(_ value: Double, _ key: String, in table: [EffectParameter]) {
        let parameter = table.first { $0.identifier == key }
        precondition(parameter != nil, "no parameter '\(key)' in the table")
        range = parameter!.range
        bits = Atomic(min(max(value, range.lowerBound), range.upperBound).bitPattern)
    }

    /// The value last set (lock-free, any thread).
    var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    /// Sets `newValue`, clamped to the range (lock-free, any thread).
    func set(_ newValue: Double) {
        bits.store(min(max(newValue, range.lowerBound), range.upperBound).bitPattern, ordering: .relaxed)
    }
}
