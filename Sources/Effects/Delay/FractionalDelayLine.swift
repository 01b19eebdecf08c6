import AudioGraph

/// The delay's lines: one ring per channel, read at a fractional delay by third-order Lagrange
/// interpolation, with a one-pole low-pass and the feedback in the loop. Render-thread code: all
/// memory is allocated in `init` and freed with the line.
///
/// Per sample and channel, with `D` the delay in samples (at least 2):
///
///     y[n] = LP(Lagrange(w, n − D))       the echo (low-passed once more on every round)
///     w[n] = x[n] + feedback · y[n]        what the ring keeps
///     out[n] = (1 − mix) · x[n] + mix · y[n]
///
/// The low-pass is the bilinear transform of a one-pole RC filter, −3 dB at the cutoff exactly:
/// `|H(f)|² = 1 / (1 + (tan(πf/fs) / tan(πfc/fs))²)`; at or above the Nyquist frequency it is off.
struct FractionalDelayLine: ~Copyable {
    /// Left, then the other channels: each a ring of `1 << bits` samples.
    private let ring: RealTimeBuffer<Float>
    /// The low-pass's state per channel: its last input, then its last output.
    private let filterState: RealTimeBuffer<Float>
    private let bits: Int
    /// A block's echoes, for the steady loop that runs in three passes.
    private let echoes: RealTimeBuffer<Float>
    let channelCount: Int
    /// The running write position, shared by the channels.
    private var write = 0

    /// Lines for `channelCount` channels holding up to `maximumDelay` samples, processed in calls
    /// of up to `maximumFrameCount` frames.
    init(channelCount: Int, maximumDelay: Int, maximumFrameCount: Int = 0) {
        self.channelCount = channelCount
        bits = Int.bitWidth - (maximumDelay + 4).leadingZeroBitCount
        ring = RealTimeBuffer(capacity: max(1, channelCount) << bits)
        filterState = RealTimeBuffer(capacity: 2 * max(1, channelCount))
        echoes = RealTimeBuffer(capacity: max(1, 2 * maximumFrameCount))
    }

    /// The longest delay the lines hold, in samples.
    var maximumDelay: Int { (1 << bits) - 4 }

    /// Silence in every line.
    func clear() {
        ring.clear()
        filterState.clear()
    }

    /// The four Lagrange weights for a delay of `integer + fraction` samples, applied to the
    /// samples at delays `integer − 1`, `integer`, `integer + 1` and `integer + 2`.
    @inline(__always)
    static func weights(_ fraction: Float) -> SIMD4<Float> {
        let f = fraction
        return SIMD4(
            -f * (f - 1) * (f - 2) / 6, (f + 1) * (f - 1) * (f - 2) / 2, -(f + 1) * f * (f - 2) / 2,
            (f + 1) * f * (f - 1) / 6)
    }

    /// The loop's parameters for one quantum: where it starts and how it moves, per sample.
    struct Ramps {
        var feedback: Float
        var feedbackStep: Float
        var mix: Float
        var mixStep: Float
        /// The low-pass's coefficients (`b0`, `a1`), or nil when it is off.
        var lowPass: (b0: Float, a1: Float)?
    }

    /// Processes `count` frames of channel `channel` of `input` into `output`. `delays` holds the
    /// delay of each frame in samples when it glides; otherwise `steady` is the delay of them all.
    /// Call it for every channel with the same arguments, then `advance(by:)`.
    func process(
        channel: Int, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int,
        steady: Double, delays: UnsafeMutablePointer<Double>?, ramps: Ramps
    ) {
        // One loop per case (steady or gliding, filtered or not), specialized: no test per sample.
        let state = filterState.base + 2 * channel
        let integer = Int(steady)
        let taps = SteadyTaps(integer: integer, weights: Self.weights(Float(steady - Double(integer))))
        if delays == nil && integer > count && count <= echoes.capacity {
            // Steady and longer than the block: every echo of the block is in the ring already.
            if let (b0, a1) = ramps.lowPass {
                var filter = OnePole(b0: b0, a1: a1, lastIn: state[0], lastOut: state[1])
                runBlock(channel, input, output, count, taps, &filter, ramps)
                (state[0], state[1]) = (filter.lastIn, filter.lastOut)
            } else {
                var filter = NoFilter()
                runBlock(channel, input, output, count, taps, &filter, ramps)
                (state[0], state[1]) = (filter.last, filter.last)
            }
            return
        }
        if let (b0, a1) = ramps.lowPass {
            var filter = OnePole(b0: b0, a1: a1, lastIn: state[0], lastOut: state[1])
            if let delays {
                run(channel, input, output, count, GlidingTaps(delays: delays), &filter, ramps)
            } else {
                run(channel, input, output, count, taps, &filter, ramps)
            }
            (state[0], state[1]) = (filter.lastIn, filter.lastOut)
        } else {
            var filter = NoFilter()
            if let delays {
                run(channel, input, output, count, GlidingTaps(delays: delays), &filter, ramps)
            } else {
                run(channel, input, output, count, taps, &filter, ramps)
            }
            (state[0], state[1]) = (filter.last, filter.last)
        }
    }

    @inline(__always)
    private func run<Taps: DelayTaps, Filter: LoopFilter>(
        _ channel: Int, _ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>, _ count: Int,
        _ taps: Taps, _ filter: inout Filter, _ ramps: Ramps
    ) {
        let mask = (1 << bits) - 1
        let line = ring.base + (channel << bits)
        var position = write
        for frame in 0..<count {
            let (integer, weights) = taps.tap(frame)
            let base = position &- integer
            let samples = SIMD4(
                line[(base &+ 1) & mask], line[base & mask], line[(base &- 1) & mask], line[(base &- 2) & mask])
            let echo = filter.filter((weights * samples).sum())
            let x = input[frame]
            let step = Float(frame + 1)
            let feedback = ramps.feedback + ramps.feedbackStep * step
            let mix = ramps.mix + ramps.mixStep * step
            // Bounded (±64, +36 dBFS): full feedback on a steady input grows without end otherwise.
            var kept = x + feedback * echo
            kept = kept > 64 ? 64 : kept
            kept = kept < -64 ? -64 : kept
            line[position & mask] = abs(kept) < 1e-30 ? 0 : kept
            output[frame] = (1 - mix) * x + mix * echo
            position &+= 1
        }
    }

    /// The steady loop when the delay is longer than the block (`taps.integer > count`): nothing
    /// the block writes is read in it, so it runs in three passes, the first and the last free of
    /// any recursion (vectorized where the ring's stretch does not wrap): the interpolated echoes,
    /// the loop's low-pass over them, then the ring's input and the output.
    @inline(__always)
    private func runBlock<Filter: LoopFilter>(
        _ channel: Int, _ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>, _ count: Int,
        _ taps: SteadyTaps, _ filter: inout Filter, _ ramps: Ramps
    ) {
        let echo = echoes.base
        readEchoes(channel, into: echo, count, taps)
        // A local copy: the state stays in registers (stores through `echo` could alias `filter`).
        // The recursion runs unflushed (a flush in it lengthens every sample's dependency chain);
        // its state is flushed once the block is done, so it never stays subnormal for long.
        var local = filter
        for frame in 0..<count { echo[frame] = local.filterUnflushed(echo[frame]) }
        local.flush()
        filter = local
        writeBack(channel, input, output, echo, count, ramps)
    }

    /// Both channels of a stereo line with the low-pass on, steady and longer than the block, in
    /// the three passes of `runBlock`, the low-passes four samples at a time (`BlockLowPass`: a
    /// quarter of the recursion's chain per sample). False, doing nothing,
    /// where that does not apply (then `process` each channel).
    func processStereo(
        _ inputs: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>),
        into outputs: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>), count: Int, steady: Double,
        ramps: Ramps
    ) -> Bool {
        let integer = Int(steady)
        guard channelCount == 2, integer > count, 2 * count <= echoes.capacity, let (b0, a1) = ramps.lowPass else {
            return false
        }
        let taps = SteadyTaps(integer: integer, weights: Self.weights(Float(steady - Double(integer))))
        let left = echoes.base
        let right = echoes.base + count
        readEchoes(0, into: left, count, taps)
        readEchoes(1, into: right, count, taps)
        let state = filterState.base
        let lowPass = BlockLowPass(b0: b0, a1: a1)
        (state[0], state[1]) = lowPass.run(left, count: count, lastIn: state[0], lastOut: state[1])
        (state[2], state[3]) = lowPass.run(right, count: count, lastIn: state[2], lastOut: state[3])
        writeBack(0, inputs.0, outputs.0, left, count, ramps)
        writeBack(1, inputs.1, outputs.1, right, count, ramps)
        return true
    }

    /// The block's interpolated echoes of `channel` into `echo`: frame f reads the samples at
    /// delays integer − 1 … integer + 2 before it, all written before the block.
    @inline(__always)
    private func readEchoes(_ channel: Int, into echo: UnsafeMutablePointer<Float>, _ count: Int, _ taps: SteadyTaps) {
        let size = 1 << bits
        let mask = size - 1
        let line = ring.base + (channel << bits)
        let w = taps.weights
        let oldest = (write &- taps.integer &- 2) & mask
        if oldest + count + 3 <= size {
            let stretch = line + oldest
            for frame in 0..<count {
                echo[frame] =
                    w[0] * stretch[frame + 3] + w[1] * stretch[frame + 2] + w[2] * stretch[frame + 1] + w[3]
                    * stretch[frame]
            }
        } else {
            for frame in 0..<count {
                let base = oldest &+ frame
                echo[frame] =
                    w[0] * line[(base &+ 3) & mask] + w[1] * line[(base &+ 2) & mask] + w[2]
                    * line[(base &+ 1) & mask] + w[3] * line[base & mask]
            }
        }
    }

    /// The block's input plus the fed-back echo into `channel`'s ring, and the mix to the output.
    @inline(__always)
    private func writeBack(
        _ channel: Int, _ input: UnsafeMutablePointer<Float>, _ output: UnsafeMutablePointer<Float>,
        _ echo: UnsafeMutablePointer<Float>, _ count: Int, _ ramps: Ramps
    ) {
        let size = 1 << bits
        let mask = size - 1
        let line = ring.base + (channel << bits)
        @inline(__always) func kept(_ frame: Int) -> Float {
            let feedback = ramps.feedback + ramps.feedbackStep * Float(frame + 1)
            // Bounded (±64, +36 dBFS): full feedback on a steady input grows without end otherwise.
            var kept = input[frame] + feedback * echo[frame]
            kept = kept > 64 ? 64 : kept
            kept = kept < -64 ? -64 : kept
            return abs(kept) < 1e-30 ? 0 : kept
        }
        let start = write & mask
        if start + count <= size {
            let stretch = line + start
            for frame in 0..<count { stretch[frame] = kept(frame) }
        } else {
            for frame in 0..<count { line[(start &+ frame) & mask] = kept(frame) }
        }
        for frame in 0..<count {
            let mix = ramps.mix + ramps.mixStep * Float(frame + 1)
            output[frame] = (1 - mix) * input[frame] + mix * echo[frame]
        }
    }

    /// Moves the write position on after every channel has processed `count` frames.
    mutating func advance(by count: Int) { write &+= count }
}

/// Where a frame's echo is read: the integer delay and the four Lagrange weights.
protocol DelayTaps {
    func tap(_ frame: Int) -> (Int, SIMD4<Float>)
}

/// One delay for every frame.
struct SteadyTaps: DelayTaps {
    let integer: Int
    let weights: SIMD4<Float>
    @inline(__always) func tap(_ frame: Int) -> (Int, SIMD4<Float>) { (integer, weights) }
}

/// A delay per frame, while it glides.
struct GlidingTaps: DelayTaps {
    let delays: UnsafeMutablePointer<Double>
    @inline(__always) func tap(_ frame: Int) -> (Int, SIMD4<Float>) {
        let delay = delays[frame]
        let integer = Int(delay)
        return (integer, FractionalDelayLine.weights(Float(delay - Double(integer))))
    }
}

/// The filter in the loop.
protocol LoopFilter {
    mutating func filter(_ x: Float) -> Float
    /// As `filter`, without flushing a state about to turn subnormal (`flush()` does that).
    mutating func filterUnflushed(_ x: Float) -> Float
    /// Sets a state that is nearly zero to zero.
    mutating func flush()
}

/// No filter (the cutoff at or above Nyquist).
struct NoFilter: LoopFilter {
    /// The last echo, the state a low-pass switched on takes up.
    var last: Float = 0
    @inline(__always) mutating func filter(_ x: Float) -> Float {
        last = x
        return x
    }
    @inline(__always) mutating func filterUnflushed(_ x: Float) -> Float { filter(x) }
    @inline(__always) mutating func flush() {}
}

/// `OnePole` over a block, four samples at a time: with q = −a1 and uₙ = b0 (xₙ + xₙ₋₁), the
/// four outputs are y = L u + (q, q², q³, q⁴) y₋₁, L lower triangular with q^(i−j) below its
/// diagonal, so the recursion carries one output per four samples (a multiply and an add) where
/// the plain loop carries each (its multiplies, subtraction and select: about twice as long per
/// sample). Rounding differs from the plain loop's by a few units in the last place.
struct BlockLowPass {
    let b0: Float
    let a1: Float
    private let columns: (SIMD4<Float>, SIMD4<Float>, SIMD4<Float>)
    private let powers: SIMD4<Float>

    init(b0: Float, a1: Float) {
        self.b0 = b0
        self.a1 = a1
        let q = -a1
        let (q2, q3) = (q * q, q * q * q)
        columns = (SIMD4(1, q, q2, q3), SIMD4(0, 1, q, q2), SIMD4(0, 0, 1, q))
        powers = SIMD4(q, q2, q3, q2 * q2)
    }

    /// Filters `count` samples in place from the state (`lastIn`, `lastOut`); returns the state
    /// after them, flushed to zero below 1e-30 (the loop runs unflushed: it would lengthen it).
    @inline(__always)
    func run(
        _ samples: UnsafeMutablePointer<Float>, count: Int, lastIn: Float, lastOut: Float
    ) -> (lastIn: Float, lastOut: Float) {
        var (x1, y1) = (lastIn, lastOut)
        let raw = UnsafeMutableRawPointer(samples)
        var frame = 0
        while frame &+ 4 <= count {
            let x = raw.loadUnaligned(fromByteOffset: frame &<< 2, as: SIMD4<Float>.self)
            let u = b0 * (x + SIMD4(x1, x[0], x[1], x[2]))
            let inBlock = (u[0] * columns.0 + u[1] * columns.1) + (u[2] * columns.2 + SIMD4(0, 0, 0, u[3]))
            let y = inBlock + y1 * powers
            raw.storeBytes(of: y, toByteOffset: frame &<< 2, as: SIMD4<Float>.self)
            (x1, y1) = (x[3], y[3])
            frame &+= 4
        }
        while frame < count {
            let x = samples[frame]
            y1 = b0 * (x + x1) - a1 * y1
            x1 = x
            samples[frame] = y1
            frame &+= 1
        }
        return (abs(x1) < 1e-30 ? 0 : x1, abs(y1) < 1e-30 ? 0 : y1)
    }
}

/// The bilinear one-pole low-pass: y = b0 (x + x₋₁) − a1 y₋₁.
struct OnePole: LoopFilter {
    let b0: Float
    let a1: Float
    var lastIn: Float
    var lastOut: Float
    @inline(__always) mutating func filter(_ x: Float) -> Float {
        let y = b0 * (x + lastIn) - a1 * lastOut
        lastIn = x
        // Flushed before it turns subnormal (slow on x86-64) once the loop dies away.
        lastOut = abs(y) < 1e-30 ? 0 : y
        return lastOut
    }
    @inline(__always) mutating func filterUnflushed(_ x: Float) -> Float {
        lastOut = b0 * (x + lastIn) - a1 * lastOut
        lastIn = x
        return lastOut
    }
    @inline(__always) mutating func flush() {
        if abs(lastOut) < 1e-30 { lastOut = 0 }
        if abs(lastIn) < 1e-30 { lastIn = 0 }
    }
}
