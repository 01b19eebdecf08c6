/// The reverb's delays are rings of power-of-two sizes, all indexed by one running sample counter
/// (`counter & mask`), so that no loop wraps positions one by one.
enum DelayRing {
    /// The bits of the smallest power of two above `frames`.
    static func bits(above frames: Int) -> Int { Int.bitWidth - (frames).leadingZeroBitCount }
}
