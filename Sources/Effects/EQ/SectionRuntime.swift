/// Render-thread state of one filter section of an `EQNode`: its history and the four-sample kernel
/// of its coefficients.
struct SectionRuntime {
    var history = BiquadHistory()
    var block = BiquadBlock4()

    /// The four-sample kernel of `coefficients` (computed again only when they change).
    @inline(__always)
    mutating func kernel(_ coefficients: BiquadCoefficients) -> BiquadBlock4 {
        if block.source != coefficients { block = BiquadBlock4(coefficients) }
        return block
    }
}
