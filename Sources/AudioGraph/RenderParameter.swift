import Synchronization

/// A scalar parameter written by the control thread and read by the render thread once per
/// quantum, lock-free (the float's bits in an atomic).
public final class RenderParameter: Sendable {
    private let bits: Atomic<UInt32>

    /// A parameter holding `value`.
    public init(_ value: Float) { bits = Atomic(value.bitPattern) }

    /// Reads and writes through methods, for `let` references held by `Sendable` types.
    public func load() -> Float { Float(bitPattern: bits.load(ordering: .relaxed)) }
    /// Sets the value, unclamped (any thread, lock-free). The render thread sees it at a later `load()`,
    /// with no ordering relative to other writes.
    public func store(_ value: Float) { bits.store(value.bitPattern, ordering: .relaxed) }
}
