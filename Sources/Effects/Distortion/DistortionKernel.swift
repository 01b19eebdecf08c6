import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// The distortion's per-channel render state and its block processing: the dry delay, the
/// shapers (through the oversampler), the bit crusher, the ring modulator's carrier, the DC
/// blocker, the tone filter and the mix. Render-thread code: all memory is allocated in `init`.
struct DistortionKernel: ~Copyable {
    /// Drive gain, mix and level at the start of a block and their change per frame.
    struct Ramps {
        var gain, gainStep, mix, mixStep, level, levelStep: Float

        mutating func advance(by count: Int) {
            gain += gainStep * Float(count)
            mix += mixStep * Float(count)
            level += levelStep * Float(count)
        }
    }

    let channelCount: Int
    private let blockSize: Int
    /// Per channel: the last `latency` input frames, then room for a block.
    private let dryRows: RealTimeBuffer<Float>
    private let rowLength: Int
    private let scaled: RealTimeBuffer<Float>
    private let oversampled: RealTimeBuffer<Float>
    private let wet: RealTimeBuffer<Float>
    private let carrierWave: RealTimeBuffer<Float>
    /// Per channel: the oversampled signal's padding (see `Oversampler.padding`), then room for a block.
    private let padRows: RealTimeBuffer<Float>
    private let padRowLength: Int
    /// The shaper's scratch: the oversampled block and its F₂, in double precision.
    private let doubles: RealTimeBuffer<Double>
    /// Per channel: the shaper's four doubles, then the tone's two and the DC blocker's two.
    private let state: RealTimeBuffer<Double>
    /// Per channel: the bit crusher's held sample, the ring modulator's last input.
    private let held: RealTimeBuffer<Float>
    private let ringLast: RealTimeBuffer<Float>
    private var holdPhase = 0.0
    private var carrierPhase = 0.0

    /// Settings the node sets before each quantum.
    var bits: Float = 8
    var downsample = 4.0
    /// The carrier's phase step per oversampled sample, radians.
    var carrierStep = 0.0
    var tone: BiquadCoefficients?
    var dcCoefficient = 0.999
    /// The oversampling factor, 1, 2, 4 or 8.
    var factor = 8

    private static let stride = 8

    init(channelCount: Int, blockSize: Int) {
        self.channelCount = channelCount
        self.blockSize = blockSize
        rowLength = Oversampler.latency + blockSize
        dryRows = RealTimeBuffer(capacity: max(1, channelCount) * rowLength, repeating: 0)
        scaled = RealTimeBuffer(capacity: blockSize, repeating: 0)
        oversampled = RealTimeBuffer(capacity: Oversampler.factor * blockSize, repeating: 0)
        wet = RealTimeBuffer(capacity: blockSize, repeating: 0)
        carrierWave = RealTimeBuffer(capacity: Oversampler.factor * blockSize, repeating: 0)
        padRowLength = Oversampler.latency + Oversampler.factor * blockSize
        padRows = RealTimeBuffer(capacity: max(1, channelCount) * padRowLength, repeating: 0)
        doubles = RealTimeBuffer(capacity: 2 * (Oversampler.factor * blockSize + 2), repeating: 0)
        state = RealTimeBuffer(capacity: max(1, channelCount) * Self.stride, repeating: 0)
        held = RealTimeBuffer(capacity: max(1, channelCount), repeating: 0)
        ringLast = RealTimeBuffer(capacity: max(1, channelCount), repeating: 0)
    }

    mutating func clear() {
        dryRows.clear()
        clearWet()
    }

    /// Silence in the distorted path only (the dry delay keeps its samples).
    mutating func clearWet() {
        padRows.clear()
        state.clear()
        held.clear()
        ringLast.clear()
        holdPhase = .infinity
        carrierPhase = 0
    }

    /// Processes `count` (≤ the block size) frames of one channel. Call it for every channel
    /// with the same arguments, then `advance(by:shape:)`.
    func process(
        channel: Int, _ source: UnsafeMutablePointer<Float>, into target: UnsafeMutablePointer<Float>, count: Int,
        shape: DistortionNode.Shape, ramps: Ramps, oversampler: borrowing Oversampler
    ) {
        let latency = Oversampler.latency
        let row = dryRows.base + channel * rowLength
        (row + latency).update(from: source, count: count)
        let wet = self.wet.base
        let channelState = state.base + channel * Self.stride
        if shape == .bitCrush {
            crush(row, count: count, channel: channel, ramps: ramps)
        } else {
            for k in 0..<count { scaled[k] = source[k] * (ramps.gain + ramps.gainStep * Float(k)) }
            let oversampledCount = factor * count
            var samples = oversampled.base
            oversampler.upsample(channel: channel, scaled.base, count: count, factor: factor, into: samples)
            let padding = Oversampler.padding(factor: factor)
            if padding > 0 {
                // Delayed by `padding` samples: the block goes in behind the last ones and is read from the start.
                let row = padRows.base + channel * padRowLength
                (row + padding).update(from: samples, count: oversampledCount)
                samples = row
            }
            let scratch = doubles.base
            let shaped = samples
            func shapeWith<Curve: ShaperCurve>(_ curve: Curve.Type) {
                AntiderivativeShaper.run(curve, shaped, count: oversampledCount, state: channelState, scratch: scratch)
            }
            switch shape {
            case .softClip: shapeWith(SoftClipCurve.self)
            case .hardClip: shapeWith(HardClipCurve.self)
            case .tube: shapeWith(TubeCurve.self)
            case .foldback: shapeWith(FoldbackCurve.self)
            case .ringModulator:
                // One sample late, as the curves' kernels are: every shape has the same latency.
                var last = ringLast[channel]
                // The curves' history follows the input, so a change to a curve starts from it.
                channelState[1] = oversampledCount > 1 ? Double(samples[oversampledCount - 2]) : channelState[0]
                channelState[0] = Double(samples[oversampledCount - 1])
                for k in 0..<oversampledCount {
                    let next = samples[k]
                    samples[k] = last * carrierWave[k]
                    last = next
                }
                ringLast[channel] = last
            case .bitCrush: break
            }
            oversampler.downsample(channel: channel, samples, count: count, factor: factor, into: wet)
            if padding > 0 { samples.update(from: samples + oversampledCount, count: padding) }
        }
        if shape == .tube { blockDC(wet, count: count, state: channelState + 6) }
        if let tone { filter(wet, count: count, tone, state: channelState + 4) }
        // A NaN or an infinity in the input would stay in the recursive filters for good.
        for index in 4..<8 where !channelState[index].isFinite { channelState[index] = 0 }
        for k in 0..<count {
            let mix = ramps.mix + ramps.mixStep * Float(k)
            let level = ramps.level + ramps.levelStep * Float(k)
            target[k] = (1 - mix) * row[k] + mix * level * wet[k]
        }
        row.update(from: row + count, count: latency)
    }

    /// Quantizes the delayed input to `bits` and holds each sample `downsample` frames.
    private func crush(_ dry: UnsafeMutablePointer<Float>, count: Int, channel: Int, ramps: Ramps) {
        let steps = exp2(bits - 1)
        var phase = holdPhase
        var value = held[channel]
        for k in 0..<count {
            if phase >= downsample {
                phase -= downsample
                if phase >= downsample { phase = 0 }
                let driven = dry[k] * (ramps.gain + ramps.gainStep * Float(k))
                value = (min(max(driven, -1), 1) * steps).rounded() / steps
            }
            wet[k] = value
            phase += 1
        }
        held[channel] = value
    }

    /// A one-pole DC blocker, y = x − x₁ + R·y₁ (−3 dB near 10 Hz).
    private func blockDC(_ samples: UnsafeMutablePointer<Float>, count: Int, state: UnsafeMutablePointer<Double>) {
        var (x1, y1) = (state[0], state[1])
        let r = dcCoefficient
        for k in 0..<count {
            let x = Double(samples[k])
            y1 = x - x1 + r * y1
            x1 = x
            samples[k] = Float(y1)
        }
        (state[0], state[1]) = (x1, y1)
    }

    /// The tone: a biquad, transposed direct form II.
    private func filter(
        _ samples: UnsafeMutablePointer<Float>, count: Int, _ c: BiquadCoefficients, state: UnsafeMutablePointer<Double>
    ) {
        var (s1, s2) = (state[0], state[1])
        for k in 0..<count {
            let x = Double(samples[k])
            let y = c.b0 * x + s1
            s1 = c.b1 * x - c.a1 * y + s2
            s2 = c.b2 * x - c.a2 * y
            samples[k] = Float(y)
        }
        (state[0], state[1]) = (s1, s2)
    }

    /// Carries the shapers' state over a change of shape (call before the block that uses `new`).
    /// Between curves and the ring modulator the history of inputs carries over, its F₂ values
    /// recomputed for the new curve (the old curve's would make a spike of up to +70 dB); to or
    /// from the bit crusher, which does not run the oversampler, the distorted path starts
    /// afresh (returns true: the caller clears the oversampler too).
    mutating func change(from old: DistortionNode.Shape, to new: DistortionNode.Shape) -> Bool {
        if old == .bitCrush || new == .bitCrush {
            clearWet()
            return true
        }
        for channel in 0..<channelCount {
            let channelState = state.base + channel * Self.stride
            let (x1, x2) = (channelState[0], channelState[1])
            let curve: (Double) -> Double
            switch new {
            case .softClip: curve = SoftClipCurve.second
            case .hardClip: curve = HardClipCurve.second
            case .tube: curve = TubeCurve.second
            case .foldback: curve = FoldbackCurve.second
            case .ringModulator, .bitCrush: curve = { _ in 0 }
            }
            (channelState[2], channelState[3]) = (curve(x1), curve(x2))
            (channelState[6], channelState[7]) = (0, 0)
            // The ring modulator's one-sample delay holds the last input.
            ringLast[channel] = Float(x1)
        }
        return false
    }

    /// Fills the carrier for the next block (ring modulator only): a rotating phasor, so no sine
    /// per sample.
    func prepareBlock(count: Int, shape: DistortionNode.Shape) {
        guard shape == .ringModulator else { return }
        var (c, s) = (cos(carrierPhase), sin(carrierPhase))
        let (cw, sw) = (cos(carrierStep), sin(carrierStep))
        for k in 0..<(factor * count) {
            carrierWave[k] = Float(s)
            (c, s) = (c * cw - s * sw, s * cw + c * sw)
        }
    }

    /// Moves the shared phases on by `count` frames.
    mutating func advance(by count: Int, shape: DistortionNode.Shape) {
        if shape == .ringModulator {
            carrierPhase = (carrierPhase + carrierStep * Double(factor * count))
                .truncatingRemainder(dividingBy: 2 * Double.pi)
        }
        if shape == .bitCrush {
            var phase = holdPhase
            for _ in 0..<count {
                if phase >= downsample {
                    phase -= downsample
                    if phase >= downsample { phase = 0 }
                }
                phase += 1
            }
            holdPhase = phase
        }
    }
}
