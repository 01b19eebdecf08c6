#if canImport(Glibc)
    import Glibc
#endif

// The settled matched design: two biquads in cascade. The first maps the analog prototype's poles and
// zeros by impulse invariance; the second corrects the first's magnitude, a smooth curve, toward the
// prototype's. Real-time safe: no heap allocation (fixed-size `InlineArray` and `SIMD3` storage on the
// stack), no locks, bounded work.

extension BandCoefficients {
    /// The matched design of a settled band, for every type (nil for a non-finite input or sample rate,
    /// below about 90 Hz sampling, for 0 dB gain, or if the fit fails; the caller then takes the closed
    /// form).
    ///
    /// 1. **Structure** (`BiquadCoefficients.structure`): the analog poles and zeros mapped by impulse
    ///    invariance (z = e^{sT}). Near a pole the map is exact to first order, so the structure has the
    ///    prototype's resonances at the right frequencies, heights relative to their surroundings and
    ///    widths, however narrow; zeros the prototype has at DC or on the jω axis stay exact.
    /// 2. **Correction**: what the structure still gets wrong, C = |H_analog| / |H_structure| in dB, is
    ///    smooth: the mapped conjugate poles and the sine-shaped frequency axis bend it gently (by up to
    ///    about 14 dB across the band near Nyquist), with no resonance left in it. A second biquad is
    ///    fitted to C, as |N|²/|D|² with N, D quadratics in x = sin²(ω/2), D(0) = 1: a linear
    ///    least-squares start (equation error), then Levenberg–Marquardt on the dB error with Lawson
    ///    reweighting toward the minimax solution, and a feasibility check (N, D > 0 on the whole unit
    ///    circle, so both factor into minimum-phase quadratics) on every step. The fit points are 40
    ///    log-spaced from 20 Hz to 0.45 × rate, 13 across the resonance (a resonant shelf: 6 across its
    ///    peak and 6 across its dip) and 5 between 0.46 × rate and Nyquist, weighted 0.3, which keep
    ///    the response near the prototype's there too.
    /// A parametric or shelf cut is the exact inverse of the boost of the same size, as in the analog
    /// domain. The first section carries the correction's mean level, so that neither section's gain
    /// is far from the band's. For the audio thread: no heap allocation, bounded work (at most 64
    /// trial evaluations of at most 64 points).
    static func matched(
        _ type: FilterType, _ f0: Double, _ gain: Double, _ bw: Double, _ rate: Double
    ) -> BandCoefficients? {
        // (`f0` and `bw` come clamped by the caller: below Nyquist, at least 0.001 octave.)
        let gain = type.usesGain ? gain : 0
        guard rate.isFinite, rate > 0, f0.isFinite, gain.isFinite, bw.isFinite || !type.usesBandwidth else {
            return nil
        }
        // Below ~90 Hz sampling the 20 Hz…0.45 × rate grid is empty.
        guard 0.45 * rate > 40 else { return nil }
        // At 0 dB the closed form is exact (its poles and zeros cancel) and what a gliding band uses.
        if type.usesGain && gain == 0 { return nil }
        if gain < 0 {
            // The analog cut is the inverse of the analog boost: so is the digital one.
            guard let boost = matched(type, f0, -gain, bw, rate), let main = boost.main.inverse,
                let correction = boost.correction.inverse
            else { return nil }
            return BandCoefficients(main: main, correction: correction)
        }
        let structure = BiquadCoefficients.structure(type, f0, gain, bw, rate)
        guard structure.isFiniteAndStable else { return nil }
        var fit = CorrectionFit(type, f0, gain, bw, rate, structure: structure)
        guard let correction = fit.run(), correction.isFiniteAndStable else { return nil }
        let scale = pow(10, fit.meanLevel(of: correction) / 20)
        guard scale.isFinite, scale > 0 else { return nil }
        return BandCoefficients(main: structure.scaled(by: scale), correction: correction.scaled(by: 1 / scale))
    }
}
