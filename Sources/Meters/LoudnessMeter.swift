import CEBUR128

/// Loudness and true peak per ITU-R BS.1770-4 / EBU R 128, measured by libebur128: integrated
/// loudness (gated, LUFS), loudness range and true peak (4× oversampled, dBTP).
///
/// ```swift
/// let meter = try LoudnessMeter(channelCount: 2, sampleRate: 48_000)
/// meter.add(left: l, right: r, frameCount: n)
/// print(meter.integratedLoudness, meter.truePeak)
/// ```
public final class LoudnessMeter {
    private let state: UnsafeMutablePointer<ebur128_state>
    /// Channels measured (1 or 2); `add(interleaved:)` takes frames of this many samples.
    public let channelCount: Int
    private var interleaved: [Float] = []

    /// Failures are only possible for unsupported layouts (channels 1…2, rates 8 kHz…384 kHz).
    /// Without `measuresTruePeakAndRange`, only the integrated loudness is measured (cheaper):
    /// `truePeak` and `loudnessRange` are then not available.
    public init(channelCount: Int, sampleRate: Double, measuresTruePeakAndRange: Bool = true) throws(MeterError) {
        let modes =
            measuresTruePeakAndRange
            ? EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue
            : EBUR128_MODE_I.rawValue
        guard (1...2).contains(channelCount), (8_000...384_000).contains(sampleRate),
            sampleRate == sampleRate.rounded(),
            let state = ebur128_init(UInt32(channelCount), UInt(sampleRate), Int32(modes))
        else {
            throw .unsupportedLayout(channelCount: channelCount, sampleRate: sampleRate)
        }
        self.state = state
        self.channelCount = channelCount
    }

    deinit {
        var pointer: UnsafeMutablePointer<ebur128_state>? = state
        ebur128_destroy(&pointer)
    }

    /// Adds interleaved frames.
    public func add(interleaved samples: UnsafeBufferPointer<Float>) {
        guard let base = samples.baseAddress, samples.count >= channelCount else { return }
        ebur128_add_frames_float(state, base, samples.count / channelCount)
    }

    /// Adds planar frames (the right channel ignored for a mono meter).
    public func add(left: UnsafePointer<Float>, right: UnsafePointer<Float>, frameCount: Int) {
        if interleaved.count < frameCount * channelCount {
            interleaved = [Float](repeating: 0, count: frameCount * channelCount)
        }
        for frame in 0..<frameCount {
            interleaved[frame * channelCount] = left[frame]
            if channelCount == 2 { interleaved[frame * 2 + 1] = right[frame] }
        }
        interleaved.withUnsafeBufferPointer {
            add(interleaved: UnsafeBufferPointer(rebasing: $0[..<(frameCount * channelCount)]))
        }
    }

    /// Integrated loudness in LUFS (−∞ for silence).
    public var integratedLoudness: Double {
        var value = -Double.infinity
        return ebur128_loudness_global(state, &value) == 0 ? value : -Double.infinity
    }

    /// Loudness range in LU.
    public var loudnessRange: Double {
        var value = 0.0
        return ebur128_loudness_range(state, &value) == 0 ? value : 0
    }

    /// The highest true peak over the channels, in dBTP (−∞ for silence).
    public var truePeak: Double {
        var highest = 0.0
        for channel in 0..<channelCount {
            var value = 0.0
            if ebur128_true_peak(state, UInt32(channel), &value) == 0 { highest = max(highest, value) }
        }
        return highest > 0 ? 20 * log10(highest) : -Double.infinity
    }
}

#if canImport(Glibc)
    import Glibc
#endif
