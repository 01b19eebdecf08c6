import Synchronization

/// One band of an `EQNode` (or a `FilterNode`). Its properties may be set from any thread while
/// audio runs; the node glides to new values (no zipper noise).
public final class EQBand: Sendable {
    private let typeIndex: Atomic<Int>
    private let frequencyBits: Atomic<UInt64>
    private let gainBits: Atomic<UInt64>
    private let bandwidthBits: Atomic<UInt64>
    private let bypassed: Atomic<Bool>

    init(_ band: FilterBand, bypass: Bool) {
        typeIndex = Atomic(FilterType.allCases.firstIndex(of: band.type)!)
        frequencyBits = Atomic(Self.clamp(band.frequency, Self.frequencyRange, else: 1_000).bitPattern)
        gainBits = Atomic(Self.clamp(band.gain, Self.gainRange, else: 0).bitPattern)
        bandwidthBits = Atomic(Self.clamp(band.bandwidth, Self.bandwidthRange, else: 1).bitPattern)
        bypassed = Atomic(bypass)
    }

    static let frequencyRange = 10.0...22_050
    static let gainRange = -96.0...24
    static let bandwidthRange = 0.05...5.0

    /// `value` within `range`; `fallback` for NaN.
    static func clamp(_ value: Double, _ range: ClosedRange<Double>, else fallback: Double) -> Double {
        value.isNaN ? fallback : min(max(value, range.lowerBound), range.upperBound)
    }

    /// The shape (default parametric).
    public var filterType: FilterType {
        // `allCases` builds a new array on every call: the render thread reads a stored table.
        get { FilterType.table[typeIndex.load(ordering: .relaxed)] }
        set { typeIndex.store(FilterType.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// Hz, 10 … 22 050 (kept below Nyquist when rendering; NaN is ignored).
    public var frequency: Double {
        get { Double(bitPattern: frequencyBits.load(ordering: .relaxed)) }
        set { Self.store(newValue, Self.frequencyRange, frequencyBits) }
    }
    /// dB, −96 … +24 (NaN is ignored).
    public var gain: Double {
        get { Double(bitPattern: gainBits.load(ordering: .relaxed)) }
        set { Self.store(newValue, Self.gainRange, gainBits) }
    }
    /// Octaves, 0.05 … 5 (NaN is ignored).
    public var bandwidth: Double {
        get { Double(bitPattern: bandwidthBits.load(ordering: .relaxed)) }
        set { Self.store(newValue, Self.bandwidthRange, bandwidthBits) }
    }

    /// Stores `value` clamped to `range`, unless it is NaN.
    static func store(_ value: Double, _ range: ClosedRange<Double>, _ bits: borrowing Atomic<UInt64>) {
        guard !value.isNaN else { return }
        bits.store(min(max(value, range.lowerBound), range.upperBound).bitPattern, ordering: .relaxed)
    }
    /// A bypassed band passes its input unchanged (bit for bit once the fade is over).
    public var bypass: Bool {
        get { bypassed.load(ordering: .relaxed) }
        set { bypassed.store(newValue, ordering: .relaxed) }
    }

    /// All settings at once.
    public var settings: FilterBand {
        get { FilterBand(type: filterType, frequency: frequency, gain: gain, bandwidth: bandwidth) }
        set {
            filterType = newValue.type
            frequency = newValue.frequency
            gain = newValue.gain
            bandwidth = newValue.bandwidth
        }
    }
}
