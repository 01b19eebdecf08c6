#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Deterministic pseudo-random numbers (xorshift64*), so the generated font is the same bytes on
/// every run.
struct NoiseSource {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    /// Uniform in [-1, 1).
    mutating func next() -> Double {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let value = state &* 0x2545_F491_4F6C_DD1D
        return Double(value >> 11) / Double(1 << 52) - 1.0
    }
}

/// An RBJ-cookbook biquad used to shape noise and transients while generating samples.
struct Biquad {
    enum Kind { case lowPass, highPass, bandPass }
    private var b0 = 1.0, b1 = 0.0, b2 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    init(_ kind: Kind, frequency: Double, q: Double, sampleRate: Double) {
        let w0 = 2 * Double.pi * min(frequency, sampleRate * 0.45) / sampleRate
        let alpha = sin(w0) / (2 * q)
        let cosw = cos(w0)
        let a0 = 1 + alpha
        switch kind {
        case .lowPass:
            b0 = (1 - cosw) / 2; b1 = 1 - cosw; b2 = (1 - cosw) / 2
        case .highPass:
            b0 = (1 + cosw) / 2; b1 = -(1 + cosw); b2 = (1 + cosw) / 2
        case .bandPass:
            b0 = alpha; b1 = 0; b2 = -alpha
        }
        a1 = -2 * cosw
        a2 = 1 - alpha
        b0 /= a0; b1 /= a0; b2 /= a0; a1 /= a0; a2 /= a0
    }

    mutating func process(_ x: Double) -> Double {
        let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
        x2 = x1; x1 = x; y2 = y1; y1 = y
        return y
    }
}

/// A partial of a periodic tone: frequency as a multiple of the fundamental, amplitude, phase.
struct Partial {
    var ratio: Double
    var amplitude: Double
    var phase: Double = 0
}

enum Synthesis {
    static let sampleRate = 44_100.0

    static func midiNote(forFrequency frequency: Double) -> Double { 69 + 12 * log2(frequency / 440) }
    static func frequency(ofNote note: Double) -> Double { 440 * pow(2, (note - 69) / 12) }

    /// Bessel function of the first kind, J_n(x), by its power series (exact enough for x < 10).
    static func besselJ(_ order: Int, _ x: Double) -> Double {
        let n = abs(order)
        var term = pow(x / 2, Double(n))
        for k in 1...max(n, 1) where n > 0 { term /= Double(k) }
        var sum = term
        for m in 1..<60 {
            term *= -(x * x / 4) / (Double(m) * Double(m + n))
            sum += term
            if abs(term) < 1e-14 { break }
        }
        return order < 0 && n % 2 == 1 ? -sum : sum
    }

    /// Spectrum of a two-operator FM pair `sin(ωt + I·sin(rωt))` with an integer ratio `r`, as
    /// harmonic partials, so the result can be looped exactly and band-limited like any other tone.
    static func fmPartials(ratio: Int, index: Double, maxHarmonic: Int = 64) -> [Partial] {
        var amplitudes = [Double](repeating: 0, count: maxHarmonic + 1)
        for k in -24...24 {
            let harmonic = 1 + k * ratio
            let amplitude = besselJ(k, index)
            if harmonic == 0 { continue }
            let folded = abs(harmonic)
            guard folded <= maxHarmonic else { continue }
            // sin(-x) = -sin(x): negative frequencies fold back with the sign flipped.
            amplitudes[folded] += harmonic < 0 ? -amplitude : amplitude
        }
        return amplitudes.enumerated().compactMap { harmonic, amplitude in
            harmonic > 0 && abs(amplitude) > 1e-4 ? Partial(ratio: Double(harmonic), amplitude: amplitude) : nil
        }
    }

    /// Sums partials over `count` frames for a loop of `loopLength` frames that holds `cycles`
    /// periods of the fundamental. Each partial's frequency is rounded to a whole number of cycles
    /// per loop (so the loop is seamless) and partials above `limit` Hz are dropped.
    static func additive(
        _ partials: [Partial], count: Int, loopLength: Int, cycles: Int, limit: Double
    ) -> [Double] {
        var output = [Double](repeating: 0, count: count)
        let binFrequency = sampleRate / Double(loopLength)
        for partial in partials {
            let loopCycles = (partial.ratio * Double(cycles)).rounded()
            guard loopCycles >= 1, loopCycles * binFrequency < limit else { continue }
            let step = 2 * Double.pi * loopCycles / Double(loopLength)
            for index in 0..<count {
                // Reduce the phase per loop so long prefixes lose no precision.
                let phase = step * Double(index % loopLength) + partial.phase
                output[index] += partial.amplitude * sin(phase)
            }
        }
        return output
    }

    /// Scales to a peak of `peak` (relative to full scale) and converts to 16-bit.
    static func quantize(_ signal: [Double], peak: Double = 0.9) -> [Int16] {
        let maximum = signal.reduce(0) { max($0, abs($1)) }
        let scale = maximum > 0 ? peak * 32_767 / maximum : 0
        return signal.map { Int16(max(-32_767, min(32_767, ($0 * scale).rounded()))) }
    }

    /// SoundFont timecents for a duration in seconds.
    static func timecents(_ seconds: Double) -> Int { Int((1200 * log2(seconds)).rounded()) }

    /// SoundFont absolute cents for a filter cutoff in Hz.
    static func absoluteCents(_ hertz: Double) -> Int { Int((1200 * log2(hertz / 8.176)).rounded()) }
}
