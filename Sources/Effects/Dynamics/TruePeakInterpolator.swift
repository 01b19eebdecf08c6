import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// The true-peak detector's interpolator, 4× oversampling as ITU-R BS.1770 describes: 128 taps,
/// 32 per phase, a windowed sinc.
enum TruePeakInterpolator {
    static let taps = 32

    /// The 4 phases × 32 taps of the interpolator: a Hann-windowed sinc, each phase normalized to
    /// unit gain at DC (within 0.11 dB of the ideal up to 0.45 × the sample rate). Phase p gives
    /// the signal p/4 of a sample after the point 16 samples before the newest input (phase 0 is
    /// that sample itself).
    static func phases() -> [[Float]] {
        let half = Double(taps / 2)
        return (0..<4).map { phase in
            let offset = Double(phase) / 4
            var taps = (0..<Self.taps).map { tap -> Double in
                // Tap k holds x[n − 31 + k]; the point interpolated is at n − 16 + offset.
                let u = Double(tap) - Double(Self.taps - 1) + half - offset
                let sinc = u == 0 ? 1 : sin(Double.pi * u) / (Double.pi * u)
                let window = abs(u) < half + 0.5 ? 0.5 * (1 + cos(Double.pi * u / (half + 0.5))) : 0
                return sinc * window
            }
            let sum = taps.reduce(0, +)
            taps = taps.map { $0 / sum }
            return taps.map(Float.init)
        }
    }

    /// The phases one after another, as the detector reads them. Points between samples read 0.1 dB
    /// high: the limiter aims that much under the ceiling there, the accuracy of the interpolator
    /// near Nyquist and of BS.1770 meters. Allocates: call it off the audio thread.
    static func coefficients() -> RealTimeBuffer<Float> {
        RealTimeBuffer(
            copying: phases().enumerated().flatMap { phase, values in
                let margin: Float = phase == 0 ? 1 : 1.011_579  // +0.1 dB
                return values.map { $0 * margin }
            })
    }
}
