/// The meters: each measures one thing, and says so in its name.
///
/// | Meter | Measures | Where it runs |
/// |---|---|---|
/// | `PeakMeter` | the highest sample per channel since the last read, and the last quantum's RMS (linear) | a tap: the render thread; read from any thread |
/// | `PowerMeter` | RMS and peak per window in dBFS, held peaks and clip lights (AVAudioRecorder's meters) | a tap: the render thread; read from any thread |
/// | `LoudnessMeter` | integrated loudness (LUFS), loudness range and true peak, BS.1770 (libebur128) | off the render thread |
/// | `PeakAndLoudnessMeter` | what a render writes: its peak, its samples over full scale, its integrated loudness | off the render thread |
///
/// The level meters share one measurement (`LevelMeasurement`): the sum of squares and the
/// highest absolute sample of a run of samples, eight lanes at a time.
public enum Meters {}

/// The measurement the level meters share.
package enum LevelMeasurement {
    /// The sum of squares and the highest absolute value of `count` samples: eight lanes at a time
    /// (SIMD, independent accumulators), in single precision (a window's sum keeps 24 bits: far
    /// finer than the 0.01 dB a meter shows). Allocates nothing, takes no lock.
    @inline(__always)
    package static func sumOfSquaresAndPeak(_ samples: UnsafePointer<Float>, count: Int) -> (sum: Float, peak: Float) {
        var sums = SIMD8<Float>()
        var peaks = SIMD8<Float>()
        let raw = UnsafeRawPointer(samples)
        let vectors = count / 8
        for index in 0..<vectors {
            let lanes = raw.loadUnaligned(fromByteOffset: index * 32, as: SIMD8<Float>.self)
            // Plain multiply-add and compare-select: `addProduct` and `pointwiseMax` call out per
            // lane where the target has no FMA (the x86-64 baseline).
            sums += lanes * lanes
            let magnitude = lanes.replacing(with: -lanes, where: lanes .< 0)
            peaks.replace(with: magnitude, where: magnitude .> peaks)
        }
        var sum = sums.sum()
        var peak = peaks.max()
        for frame in vectors * 8..<count {
            let value = samples[frame]
            sum += value * value
            peak = max(peak, abs(value))
        }
        return (sum, peak)
    }
}
