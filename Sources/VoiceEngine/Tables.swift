#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The unit conversions of a SoundFont synthesizer, with the quantisations FluidSynth 2.3 applies
/// (so that levels and pitches land where its own do): whole cents in cents → hertz, whole
/// centibels in centibels → amplitude.
enum Conversions {
    /// 8.1758 Hz: the frequency of MIDI key 0, 0 absolute cents.
    static let keyZeroHertz = 8.175798915643707

    /// Absolute cents to hertz. At and above 0 cents the cents are truncated to a whole number,
    /// as FluidSynth's table does; below, the conversion is exact.
    static func hertz(cents: Double) -> Double {
        cents >= 0 ? keyZeroHertz * exp2(cents.rounded(.down) / 1200) : keyZeroHertz * exp2(cents / 1200)
    }

    /// Timecents to seconds.
    static func seconds(timecents: Double) -> Double { exp2(timecents / 1200) }

    /// 10^(−cB/200) for whole centibels 0…1440: index `(int)cB`, truncated.
    static let amplitudes: [Float] = (0...1440).map { Float(pow(10, Double($0) / -200)) }

    /// Centibels of attenuation to an amplitude: truncated to a whole centibel, 1 below 0, 0 from 1441.
    @inline(__always)
    static func amplitude(centibels: Double) -> Float {
        if centibels < 0 { return 1 }
        if centibels >= 1441 { return 0 }
        return amplitudes[Int(centibels)]
    }

    /// The SoundFont concave curve at 128 points: c[k] = −(5/12)·log10((127−k)/127), c[0] = 0, c[127] = 1.
    static let concave: [Double] = (0...127).map { (k: Int) -> Double in
        if k == 0 { return 0 }
        if k == 127 { return 1 }
        let ratio = Double(127 - k) / 127
        return -(5.0 / 12) * log10(ratio)
    }
    /// The convex curve: x[k] = 1 + (5/12)·log10(k/127), x[0] = 0, x[127] = 1.
    static let convex: [Double] = (0...127).map { (k: Int) -> Double in
        if k == 0 { return 0 }
        if k == 127 { return 1 }
        let ratio = Double(k) / 127
        return 1 + (5.0 / 12) * log10(ratio)
    }

    /// A 128-point table read at `position` (0…127), linearly interpolated.
    static func curve(_ table: [Double], at position: Double) -> Double {
        let clamped = min(max(position, 0), 127)
        let index = Int(clamped)
        if index >= 127 { return table[127] }
        let fraction = clamped - Double(index)
        return table[index] + fraction * (table[index + 1] - table[index])
    }

    /// sin(iπ/2002) for i = 0…1000: the pan law's gains.
    static let panGains: [Float] = (0...1000).map { Float(sin(Double($0) * Double.pi / 2002)) }

    /// The left and right gains of a pan in tenths of a percent (−500 left … 500 right), saturating.
    static func pan(_ value: Double) -> (left: Float, right: Float) {
        let clamped = min(max(value, -500), 500)
        return (panGains[Int(-clamped) + 500], panGains[Int(clamped) + 500])
    }
}
