import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// Eight-times oversampling for the distortion's shapers: three stages up (48 → 96 → 192 →
/// 384 kHz at a 48 kHz rate), three down, each a linear-phase FIR split into its two polyphase
/// halves. Render-thread code: every buffer is allocated in `init`.
///
/// The filters are Kaiser-windowed sincs (β 9.3, about 95 dB of design stop-band), chosen so
/// that what would alias into 0 … fs/2 at the end is suppressed, not merely what lies above
/// 20 kHz:
///
/// | stage | taps | rate out | pass | stop |
/// |---|---:|---|---|---|
/// | up 1 | 71 (half-band) | 2 fs | 0.42 fs | 0.58 fs |
/// | up 2 | 23 (half-band) | 4 fs | 0.5 fs | 1.5 fs |
/// | up 3 | 15 (half-band) | 8 fs | 0.5 fs | 3.5 fs |
/// | down 3 | 15 (half-band) | 4 fs | 0.5 fs | 3.5 fs |
/// | down 2 | 23 (half-band) | 2 fs | 0.5 fs | 1.5 fs |
/// | down 1 | 137 | fs | 0.42 fs | 0.5 fs |
///
/// The last stage is a full low-pass, not a half-band: its stop-band starts at fs/2 itself, so
/// the shaper's harmonics just above fs/2 cannot fold back into the top of the band. The whole
/// round trip delays by exactly `latency` frames (58: the filters' centres, counted in samples
/// at 8 fs, add up to 464 with the shaper's one-sample kernel delay).
struct Oversampler: ~Copyable {
    /// The largest oversampling factor.
    static let factor = 8
    /// The delay of a round trip plus the shaper's kernel (one sample at 8 fs), in frames.
    static let latency = 58

    /// The samples (at `factor` × the rate) to delay a round trip at `factor` by, so that with the
    /// shaper's one-sample kernel it takes `latency` frames whatever the factor: 0 at 8×, 6 at 4×, 13 at 2×
    /// and 57 at 1×.
    static func padding(factor: Int) -> Int {
        switch factor {
        case 8: 0
        case 4: 4 * latency - (70 + 11 + 1 + 10 + 134)
        case 2: 2 * latency - (35 + 1 + 67)
        default: latency - 1
        }
    }

    private let up1, up2, up3: PolyphaseStage
    private let down1, down2, down3: PolyphaseStage
    /// Intermediate blocks at 2 fs and 4 fs.
    private let twice: RealTimeBuffer<Float>
    private let fourTimes: RealTimeBuffer<Float>
    /// The largest block of base-rate frames one call takes.
    let blockSize: Int

    /// Stages for `channelCount` channels, taking up to `blockSize` frames a call.
    init(channelCount: Int, blockSize: Int) {
        self.blockSize = blockSize
        let (h1, h2, h3) = (
            Self.lowPass(taps: 71, cutoff: 0.25), Self.lowPass(taps: 23, cutoff: 0.25),
            Self.lowPass(taps: 15, cutoff: 0.25)
        )
        let final = Self.lowPass(taps: 137, cutoff: 22.0 / 96)
        up1 = PolyphaseStage(h1, interpolating: true, channelCount: channelCount, blockSize: blockSize)
        up2 = PolyphaseStage(h2, interpolating: true, channelCount: channelCount, blockSize: 2 * blockSize)
        up3 = PolyphaseStage(h3, interpolating: true, channelCount: channelCount, blockSize: 4 * blockSize)
        down1 = PolyphaseStage(final, interpolating: false, channelCount: channelCount, blockSize: blockSize)
        down2 = PolyphaseStage(h2, interpolating: false, channelCount: channelCount, blockSize: 2 * blockSize)
        down3 = PolyphaseStage(h3, interpolating: false, channelCount: channelCount, blockSize: 4 * blockSize)
        twice = RealTimeBuffer(capacity: 2 * blockSize, repeating: 0)
        fourTimes = RealTimeBuffer(capacity: 4 * blockSize, repeating: 0)
    }

    /// A Kaiser-windowed sinc low-pass of `taps` (odd) taps, cut off at `cutoff` × its rate, unity gain at DC.
    static func lowPass(taps: Int, cutoff: Double) -> [Float] {
        let beta = 0.1102 * (95 - 8.7)
        let centre = Double(taps - 1) / 2
        var h = (0..<taps).map { index -> Double in
            let n = Double(index) - centre
            var sinc = n == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * n) / (Double.pi * n)
            // A half-band's zeros (every second tap from the centre) exactly zero, so they are skipped.
            if abs(sinc) < 1e-12 { sinc = 0 }
            let r = n / centre
            return sinc * besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta)
        }
        let sum = h.reduce(0, +)
        h = h.map { $0 / sum }
        return h.map(Float.init)
    }

    /// The modified Bessel function of the first kind, order 0 (its power series).
    static func besselI0(_ x: Double) -> Double {
        var (sum, term, k) = (1.0, 1.0, 1.0)
        while term > 1e-17 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }

    /// Silence in every stage.
    func clear() {
        up1.clear()
        up2.clear()
        up3.clear()
        down1.clear()
        down2.clear()
        down3.clear()
    }

    /// `count` (≤ `blockSize`) frames of channel `channel` from `input`, `factor` (1, 2, 4 or 8) times
    /// oversampled, into `output` (`factor` × `count` samples). At 4× and 2× only the first stages run.
    func upsample(
        channel: Int, _ input: UnsafePointer<Float>, count: Int, factor: Int, into output: UnsafeMutablePointer<Float>
    ) {
        switch factor {
        case 8:
            up1.interpolate(channel: channel, input, count: count, into: twice.base)
            up2.interpolate(channel: channel, twice.base, count: 2 * count, into: fourTimes.base)
            up3.interpolate(channel: channel, fourTimes.base, count: 4 * count, into: output)
        case 4:
            up1.interpolate(channel: channel, input, count: count, into: twice.base)
            up2.interpolate(channel: channel, twice.base, count: 2 * count, into: output)
        case 2: up1.interpolate(channel: channel, input, count: count, into: output)
        default: output.update(from: input, count: count)
        }
    }

    /// `factor × count` samples of channel `channel` from `input`, filtered and decimated into `count` frames.
    func downsample(
        channel: Int, _ input: UnsafePointer<Float>, count: Int, factor: Int, into output: UnsafeMutablePointer<Float>
    ) {
        switch factor {
        case 8:
            down3.decimate(channel: channel, input, count: 4 * count, into: fourTimes.base)
            down2.decimate(channel: channel, fourTimes.base, count: 2 * count, into: twice.base)
            down1.decimate(channel: channel, twice.base, count: count, into: output)
        case 4:
            down2.decimate(channel: channel, input, count: 2 * count, into: twice.base)
            down1.decimate(channel: channel, twice.base, count: count, into: output)
        case 2: down1.decimate(channel: channel, input, count: count, into: output)
        default: output.update(from: input, count: count)
        }
    }
}

/// One stage of two-times up- or down-sampling: a linear-phase FIR's two polyphase halves, each
/// run as its own FIR on contiguous samples (a half-band's half that holds only the centre tap is
/// a one-tap FIR, a scaled delay). The per-channel history keeps the inputs the next call's
/// first outputs need.
struct PolyphaseStage: ~Copyable {
    /// Each half's taps (even-indexed, then odd-indexed), zero taps at either end dropped, and
    /// the delay in input samples of each half's first kept tap.
    private let even: RealTimeBuffer<Float>
    private let odd: RealTimeBuffer<Float>
    private let evenOffset: Int
    private let oddOffset: Int
    /// Per channel: `history` past inputs, then room for a block (down-sampling: two such rows,
    /// the block's even samples and its odd ones).
    private let rows: RealTimeBuffer<Float>
    private let history: Int
    private let rowLength: Int
    private let rowsPerChannel: Int

    /// A stage of FIR `taps`: interpolating (each input gives two outputs; the taps are scaled by
    /// two to keep unity gain) or decimating (each two inputs give one output), on up to
    /// `blockSize` input samples (interpolating) or output samples (decimating) a call.
    init(_ taps: [Float], interpolating: Bool, channelCount: Int, blockSize: Int) {
        let scale: Float = interpolating ? 2 : 1
        // Each half without the zero taps at its ends, and where its first kept tap is.
        func half(_ parity: Int) -> (taps: [Float], offset: Int) {
            let all = stride(from: parity, to: taps.count, by: 2).map { taps[$0] * scale }
            let first = all.firstIndex { $0 != 0 } ?? 0
            let last = all.lastIndex { $0 != 0 } ?? 0
            return (Array(all[first...last]), first)
        }
        let (evenHalf, oddHalf) = (half(0), half(1))
        even = RealTimeBuffer(copying: evenHalf.taps)
        evenOffset = evenHalf.offset
        odd = RealTimeBuffer(copying: oddHalf.taps)
        oddOffset = oddHalf.offset
        history = max(evenOffset + even.capacity, oddOffset + odd.capacity)
        rowLength = history + blockSize
        rowsPerChannel = interpolating ? 1 : 2
        rows = RealTimeBuffer(capacity: max(1, channelCount) * rowsPerChannel * rowLength, repeating: 0)
    }

    func clear() { rows.clear() }

    /// Two outputs per input: out[2i] = Σ even[j]·x[i − evenOffset − j], out[2i+1] likewise with the odd half.
    func interpolate(channel: Int, _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>)
    {
        let row = rows.base + channel * rowLength
        (row + history).update(from: input, count: count)
        let x = row + history
        Self.fir(even.base, even.capacity, x - evenOffset, count: count, into: output, stride: 2)
        Self.fir(odd.base, odd.capacity, x - oddOffset, count: count, into: output + 1, stride: 2)
        row.update(from: row + count, count: history)
    }

    /// One output per two inputs. With e[i] = v[2i] and o[i] = v[2i+1]:
    /// y[i] = Σ even[j]·o[i − evenOffset − j] + Σ odd[j]·e[i − oddOffset − j],
    /// the full FIR's output at input sample 2i + 1 (so a stage delays one input sample less than its centre).
    func decimate(channel: Int, _ input: UnsafePointer<Float>, count: Int, into output: UnsafeMutablePointer<Float>) {
        let evens = rows.base + channel * 2 * rowLength
        let odds = evens + rowLength
        for i in 0..<count {
            evens[history + i] = input[2 * i]
            odds[history + i] = input[2 * i + 1]
        }
        Self.fir(even.base, even.capacity, odds + history - evenOffset, count: count, into: output, stride: 1)
        Self.fir(
            odd.base, odd.capacity, evens + history - oddOffset, count: count, into: output, stride: 1, adding: true)
        evens.update(from: evens + count, count: history)
        odds.update(from: odds + count, count: history)
    }

    /// out[i·stride] = Σ taps[j]·x[i − j], or, `adding`, out[i·stride] += that sum.
    @inline(__always)
    private static func fir(
        _ taps: UnsafeMutablePointer<Float>, _ tapCount: Int, _ x: UnsafePointer<Float>, count: Int,
        into out: UnsafeMutablePointer<Float>, stride: Int, adding: Bool = false
    ) {
        var i = 0
        while i + 16 <= count {
            var a = SIMD8<Float>()
            var b = SIMD8<Float>()
            var j = 0
            while j < tapCount {
                let t = SIMD8(repeating: taps[j])
                a += t * load(x + i - j)
                b += t * load(x + i + 8 - j)
                j += 1
            }
            for k in 0..<8 {
                out[(i + k) * stride] = adding ? out[(i + k) * stride] + a[k] : a[k]
                out[(i + 8 + k) * stride] = adding ? out[(i + 8 + k) * stride] + b[k] : b[k]
            }
            i += 16
        }
        while i < count {
            var sum: Float = 0
            for j in 0..<tapCount { sum += taps[j] * x[i - j] }
            out[i * stride] = adding ? out[i * stride] + sum : sum
            i += 1
        }
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Float>) -> SIMD8<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD8<Float>.self)
    }
}
