/// How a band's analog prototype becomes a digital filter.
public enum FilterDesign: String, CaseIterable, Hashable, Sendable {
    /// Robert Bristow-Johnson's Audio EQ Cookbook (bilinear transform, prewarped at the
    /// frequency): what AVAudioUnitEQ and most EQs do. Responses cramp near Nyquist.
    case cookbook
    /// Responses matched to the analog prototype up to near Nyquist, so high bands keep their
    /// shape: two biquads per band. The first maps the prototype's poles by impulse invariance, as
    /// Martin Vicanek's matched second-order filters (2016) do, and its zeros the same way (or keeps
    /// them exact at DC, or on the unit circle for the notch), which keeps every resonance's
    /// frequency, height and width however narrow; the second corrects what remains, a smooth curve,
    /// by a minimax fit of the magnitude in dB. Within 1 dB of the prototype up to 0.45 × the sample
    /// rate over the parameters' whole range (tested from 10 Hz to 21 kHz, −96 to +24 dB, 0.05 to 5
    /// octaves, at 44.1 and 48 kHz: up to 0.8 dB for resonant shelves of 0.05 to 0.1 octave, 0.55
    /// dB or less for every other type).
    /// While a band glides it uses one section, Vicanek's closed form (shelves: the cookbook's); once
    /// it settles the two-section design is computed (on the audio thread, bounded: 34 µs on average
    /// and 61 µs at worst on a current x86-64 core, see BENCHMARKS.md; one per 512 frames of a
    /// quantum, at least one) and the band cross-fades to it over 32 sub-blocks of 16 samples, as it
    /// does back to the closed form when it moves again.
    case matched

    /// The cases in order, stored once.
    static let table = FilterDesign.allCases
}
