/// The filter shapes of an EQ band, as AVAudioUnitEQ names them.
public enum FilterType: String, CaseIterable, Hashable, Sendable {
    /// A peak or dip of `gain` dB at the frequency, `bandwidth` octaves wide.
    case parametric
    /// Second-order Butterworth low-pass: −3 dB at the frequency.
    case lowPass
    /// Second-order Butterworth high-pass: −3 dB at the frequency.
    case highPass
    /// Second-order low-pass with a resonance set by `bandwidth` (narrower: higher peak).
    case resonantLowPass
    /// Second-order high-pass with a resonance set by `bandwidth` (narrower: higher peak).
    case resonantHighPass
    /// Band-pass with 0 dB at the frequency, `bandwidth` octaves wide.
    case bandPass
    /// Notch at the frequency, `bandwidth` octaves wide.
    case bandStop
    /// Shelf of `gain` dB below the frequency (half the gain at the frequency), steepest without overshoot.
    case lowShelf
    /// Shelf of `gain` dB above the frequency.
    case highShelf
    /// Shelves whose slope (and overshoot) is set by `bandwidth`.
    case resonantLowShelf
    /// Shelf of `gain` dB above the frequency whose slope (and overshoot) is set by `bandwidth`.
    case resonantHighShelf

    /// The cases in order, stored once (`allCases` allocates a new array on every call).
    static let table = FilterType.allCases

    /// Whether `gain` shapes the response.
    public var usesGain: Bool {
        switch self {
        case .parametric, .lowShelf, .highShelf, .resonantLowShelf, .resonantHighShelf: return true
        default: return false
        }
    }

    /// The analog prototype's Q: Butterworth (1/√2) for the plain low-pass, high-pass and shelves,
    /// else that of `bandwidth` octaves.
    func prototypeQ(bandwidth: Double) -> Double {
        usesBandwidth ? FilterBand.q(forBandwidth: bandwidth) : 0.5.squareRoot()
    }

    /// Whether `bandwidth` shapes the response.
    public var usesBandwidth: Bool {
        switch self {
        case .lowPass, .highPass, .lowShelf, .highShelf: return false
        default: return true
        }
    }
}
