import CSndFile

/// How float samples become the integers of a 16- or 24-bit file: each rounded to the nearest
/// step (0 stays 0, ±full scale clips to the largest step), optionally with TPDF dither of ±1 step
/// first. libsndfile's own float path truncates toward minus infinity instead (`floor`): a half-step
/// offset, and the FluidSynth render's near-silence (−1e-9) written as −1.
///
/// Floats and Ogg Vorbis go through unchanged (`sf_writef_float`); integer files through
/// `sf_writef_int`, whose samples are given aligned to the top of 32 bits so libsndfile keeps them
/// exactly.
package final class SampleQuantizer {
    /// Bits per sample of the file's integers; nil for a float or compressed file.
    package let bits: Int?
    /// Whether TPDF dither is added before rounding.
    package let dithers: Bool
    private var random: UInt64
    private let scratch: UnsafeMutablePointer<Int32>
    private let scratchCount: Int

    /// For a file opened with `format` (libsndfile's major and subtype); `frameCapacity` frames of
    /// `channels` samples are converted at a time (the scratch is allocated here, once).
    package init(format: Int32, channels: Int, dither: Bool = false, frameCapacity: Int = 4_096) {
        switch format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_16): bits = 16
        case Int32(SF_FORMAT_PCM_24): bits = 24
        default: bits = nil
        }
        dithers = dither && bits != nil
        random = 0x9E37_79B9_7F4A_7C15
        scratchCount = bits == nil ? 1 : max(1, frameCapacity) * max(1, channels)
        scratch = .allocate(capacity: scratchCount)
    }

    deinit { scratch.deallocate() }

    /// The integer step a float sample becomes (in steps of the file's bits, not yet aligned).
    @inline(__always)
    package static func quantize(_ sample: Float, bits: Int, offset: Float = 0) -> Int32 {
        let scale = Float(1 << (bits - 1))
        let scaled = sample * scale + offset
        // NaN compares false both ways: it becomes 0.
        guard scaled == scaled else { return 0 }
        return Int32(min(max(scaled.rounded(), -scale), scale - 1))
    }

    /// Writes `frames` interleaved frames of `channels` samples to `file`; what libsndfile returns
    /// (the frames written).
    package func write(
        _ file: OpaquePointer, _ samples: UnsafePointer<Float>, frames: Int, channels: Int
    ) -> sf_count_t {
        guard let bits else { return sf_writef_float(file, samples, sf_count_t(frames)) }
        let shift = Int32(32 - bits)
        let chunk = max(1, scratchCount / max(1, channels))
        var done = 0
        while done < frames {
            let count = min(chunk, frames - done)
            let source = samples + done * channels
            for index in 0..<count * channels {
                let offset = dithers ? nextTriangular() : 0
                scratch[index] = Self.quantize(source[index], bits: bits, offset: offset) << shift
            }
            let written = sf_writef_int(file, scratch, sf_count_t(count))
            done += Int(max(0, written))
            guard written == sf_count_t(count) else { break }
        }
        return sf_count_t(done)
    }

    /// Triangular noise of ±1 step (the sum of two uniform values in −½…½), from a xorshift
    /// generator seeded alike for every file, so a render with dither is reproducible.
    @inline(__always)
    private func nextTriangular() -> Float { uniform() + uniform() }

    @inline(__always)
    private func uniform() -> Float {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        return Float(random >> 40) / Float(1 << 24) - 0.5
    }
}
