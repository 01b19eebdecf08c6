/// Render-thread state of one band of an `EQNode`.
struct BandRuntime {
    var target = FilterBand(type: .parametric, frequency: 1_000)
    var smoothed = FilterBand(type: .parametric, frequency: 1_000)
    var design = FilterDesign.cookbook
    var current = BandCoefficients(main: .identity)
    var needsCoefficients = false
    /// Whether `current` is (or moves toward) the settled two-section matched design.
    var refined = false
    /// A cross-fade between the two families of designs: the coefficients at its start, and its step
    /// (1 … `EQNode.familyRamp`; 0 when none runs).
    var rampFrom = BandCoefficients(main: .identity)
    var rampStep = 0
    /// The settled matched design of `settledFor`, computed once.
    var settled = BandCoefficients(main: .identity)
    var settledFor: FilterBand?
    var mix = 1.0
}
