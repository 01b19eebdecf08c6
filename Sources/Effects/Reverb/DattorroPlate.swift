import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// Jon Dattorro's plate reverberator ("Effect Design, Part 1: Reverberator and Other Filters",
/// J. Audio Eng. Soc. 45(9), 1997), the `plate` preset of `ReverbNode`: the mono input is
/// band-limited and smeared by four input allpasses, then circulates in a "figure eight" tank of
/// two cross-coupled halves (a modulated allpass, a delay, damping, a second allpass, a delay),
/// and seven taps spread over the tank's delays make each output channel.
///
/// Delay lengths and taps are the paper's (at its 29 761 Hz), scaled to the sample rate, the tank's
/// and its taps by a further quarter (`size`); the
/// decay coefficient is computed from the target reverberation time (at 1 kHz) and the tank's
/// loop length. Render-thread code: all memory is allocated in `init` and freed with the plate.
struct DattorroPlate: ~Copyable {
    /// The paper's sample rate.
    private static let referenceRate = 29_761.0
    /// Input diffusers: (length, coefficient).
    private static let inputDiffusers: [(Double, Float)] = [(142, 0.75), (107, 0.75), (379, 0.625), (277, 0.625)]
    /// The tank, per half: modulated allpass, delay, allpass, delay (lengths at the reference rate).
    private static let leftTank: (Double, Double, Double, Double) = (672, 4_453, 1_800, 3_720)
    private static let rightTank: (Double, Double, Double, Double) = (908, 4_217, 2_656, 3_163)
    /// Peak excursion of the modulated allpasses (reference samples) and the LFO's rate.
    private static let excursion = 16.0
    private static let lfoHertz = 1.0
    /// The tank's size relative to the paper's: a quarter, for an onset dense within 100 ms
    /// (echo density 0.9; the paper's full size reaches 0.58 there).
    private static let size = 0.25

    /// A ring of a power-of-two size in the plate's storage, read at delays from the write point.
    private struct Ring {
        var base: UnsafeMutablePointer<Float>
        var mask: Int

        @inline(__always) func read(_ counter: Int, _ delay: Int) -> Float { base[(counter &- delay) & mask] }
        @inline(__always) func write(_ counter: Int, _ value: Float) { base[counter & mask] = value }
        /// Linear interpolation between the two samples around a fractional delay.
        @inline(__always) func read(_ counter: Int, fractional delay: Float) -> Float {
            let whole = Int(delay)
            let fraction = delay - Float(whole)
            let a = base[(counter &- whole) & mask]
            let b = base[(counter &- whole &- 1) & mask]
            return a + (b - a) * fraction
        }
    }

    /// Every ring, one after another.
    private let storage: RealTimeBuffer<Float>
    private var diffusers: (Ring, Ring, Ring, Ring)
    private var diffuserLengths: (Int, Int, Int, Int)
    /// Left half: modulated allpass, delay, allpass, delay; then the right half.
    private var tank: (Ring, Ring, Ring, Ring, Ring, Ring, Ring, Ring)
    private var lengths: (Int, Int, Int, Int, Int, Int, Int, Int)
    /// Output taps: (ring index in `tank`, delay, sign) × 7 per channel.
    private let taps: RealTimeBuffer<(Int, Int, Float)>
    private let excursion: Float
    private let lfoStep: (Float, Float)
    private var lfo: (Float, Float) = (1, 0)
    private var counter = 0
    private var bandwidthState: Float = 0
    private var dampingState: (Float, Float) = (0, 0)
    private var decay: Float = 0.5
    private let bandwidth: Float = 0.9995
    private let damping: Float = 0.0005

    init(sampleRate: Double) {
        let scale = sampleRate / Self.referenceRate
        func samples(_ reference: Double) -> Int { max(1, Int((reference * scale).rounded())) }
        func tankSamples(_ reference: Double) -> Int { samples(reference * Self.size) }
        func size(_ length: Int) -> Int { 1 << DelayRing.bits(above: length + 2) }
        let extra = Int((Self.excursion * scale).rounded(.up)) + 2
        let diffuserLengths = Self.inputDiffusers.map { samples($0.0) }
        let tankLengths = [
            tankSamples(Self.leftTank.0), tankSamples(Self.leftTank.1), tankSamples(Self.leftTank.2),
            tankSamples(Self.leftTank.3), tankSamples(Self.rightTank.0), tankSamples(Self.rightTank.1),
            tankSamples(Self.rightTank.2), tankSamples(Self.rightTank.3),
        ]
        let sizes = diffuserLengths.map(size) + tankLengths.enumerated().map { size($1 + ($0 % 4 == 0 ? extra : 0)) }
        let storage = RealTimeBuffer<Float>(capacity: sizes.reduce(0, +))
        var offset = 0
        var rings: [Ring] = []
        for ringSize in sizes {
            rings.append(Ring(base: storage.base + offset, mask: ringSize - 1))
            offset += ringSize
        }
        self.storage = storage
        diffusers = (rings[0], rings[1], rings[2], rings[3])
        self.diffuserLengths = (diffuserLengths[0], diffuserLengths[1], diffuserLengths[2], diffuserLengths[3])
        tank = (rings[4], rings[5], rings[6], rings[7], rings[8], rings[9], rings[10], rings[11])
        lengths = (
            tankLengths[0], tankLengths[1], tankLengths[2], tankLengths[3], tankLengths[4], tankLengths[5],
            tankLengths[6], tankLengths[7]
        )
        // Dattorro's table of output taps: the delay (reference samples) from a tank delay's input.
        let table: [(Int, Double, Float)] = [
            (5, 266, 1), (5, 2_974, 1), (6, 1_913, -1), (7, 1_996, 1), (1, 1_990, -1), (2, 187, -1), (3, 1_066, -1),
            (1, 353, 1), (1, 3_627, 1), (2, 1_228, -1), (3, 2_673, 1), (5, 2_111, -1), (6, 335, -1), (7, 121, -1),
        ]
        taps = RealTimeBuffer(copying: table.map { ($0.0, tankSamples($0.1), $0.2) })
        excursion = Float(Self.excursion * scale)
        let step = 2 * Double.pi * Self.lfoHertz / sampleRate
        lfoStep = (Float(cos(step)), Float(sin(step)))
    }

    /// Sets the decay for a reverberation time at 1 kHz and clears the tank.
    mutating func configure(reverberationTime: Double, sampleRate: Double) {
        // One trip round the figure eight passes the decay gain four times and the damping
        // filter twice; its length is the sum of the tank's delays.
        let loop =
            Double(lengths.0 + lengths.1 + lengths.2 + lengths.3 + lengths.4 + lengths.5 + lengths.6 + lengths.7)
            / sampleRate
        let omega = 2 * Double.pi * 1_000 / sampleRate
        let d = Double(damping)
        let dampingDecibels = 20 * log10((1 - d) / (1 - 2 * d * cos(omega) + d * d).squareRoot())
        let decibelsPerLoop = -60 * loop / reverberationTime
        decay = Float(pow(10, (decibelsPerLoop - 2 * dampingDecibels) / 80))
        storage.clear()
        counter = 0
        bandwidthState = 0
        dampingState = (0, 0)
        lfo = (1, 0)
    }

    /// Flushes values below 2⁻⁵⁰ to zero (no subnormal state; the tail ends).
    @inline(__always)
    private static func flushed(_ value: Float) -> Float { abs(value) < 0x1p-50 ? 0 : value }

    /// Replaces `count` frames of input in `left` and `right` with the plate's wet output.
    mutating func process(_ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int) {
        for frame in 0..<count { (left[frame], right[frame]) = process(left[frame], right[frame]) }
    }

    /// One stereo frame in, the wet stereo frame out.
    @inline(__always)
    private mutating func process(_ left: Float, _ right: Float) -> (Float, Float) {
        let n = counter
        // Input: mono, band-limited, four allpasses.
        bandwidthState = Self.flushed(bandwidthState + bandwidth * ((left + right) * 0.5 - bandwidthState))
        var x = bandwidthState
        x = allpass(diffusers.0, diffuserLengths.0, 0.75, x, n)
        x = allpass(diffusers.1, diffuserLengths.1, 0.75, x, n)
        x = allpass(diffusers.2, diffuserLengths.2, 0.625, x, n)
        x = allpass(diffusers.3, diffuserLengths.3, 0.625, x, n)
        // The tank: each half takes the input and the other half's end.
        let leftEnd = tank.3.read(n, lengths.3)
        let rightEnd = tank.7.read(n, lengths.7)
        lfo = (lfo.0 * lfoStep.0 - lfo.1 * lfoStep.1, lfo.1 * lfoStep.0 + lfo.0 * lfoStep.1)
        if n & 4_095 == 0 {  // keep the oscillator on the unit circle
            let norm = 1 / (lfo.0 * lfo.0 + lfo.1 * lfo.1).squareRoot()
            lfo = (lfo.0 * norm, lfo.1 * norm)
        }
        var a = modulatedAllpass(tank.0, Float(lengths.0) + excursion * lfo.0, x + decay * rightEnd, n)
        tank.1.write(n, a)
        a = tank.1.read(n, lengths.1)
        dampingState.0 = Self.flushed(a + damping * (dampingState.0 - a))
        a = allpass(tank.2, lengths.2, 0.5, dampingState.0 * decay, n)
        tank.3.write(n, a)
        var b = modulatedAllpass(tank.4, Float(lengths.4) + excursion * lfo.1, x + decay * leftEnd, n)
        tank.5.write(n, b)
        b = tank.5.read(n, lengths.5)
        dampingState.1 = Self.flushed(b + damping * (dampingState.1 - b))
        b = allpass(tank.6, lengths.6, 0.5, dampingState.1 * decay, n)
        tank.7.write(n, b)
        // Seven taps per channel.
        var outLeft: Float = 0
        var outRight: Float = 0
        for index in 0..<7 {
            let (ring, delay, sign) = taps[index]
            outLeft += sign * self.ring(ring).read(n, delay)
            let (ring2, delay2, sign2) = taps[index + 7]
            outRight += sign2 * self.ring(ring2).read(n, delay2)
        }
        counter = n &+ 1
        return (outLeft * 0.6, outRight * 0.6)
    }

    @inline(__always)
    private func ring(_ index: Int) -> Ring {
        switch index {
        case 0: return tank.0
        case 1: return tank.1
        case 2: return tank.2
        case 3: return tank.3
        case 4: return tank.4
        case 5: return tank.5
        case 6: return tank.6
        default: return tank.7
        }
    }

    /// Schroeder's allpass: w = x + g·w(n−D), y = w(n−D) − g·w.
    @inline(__always)
    private func allpass(_ ring: Ring, _ length: Int, _ g: Float, _ x: Float, _ n: Int) -> Float {
        let delayed = ring.read(n, length)
        let w = Self.flushed(x + g * delayed)
        ring.write(n, w)
        return delayed - g * w
    }

    /// The tank's first allpass, with the coefficient's sign inverted (the paper's −0.7) and a
    /// delay swept by the LFO.
    @inline(__always)
    private func modulatedAllpass(_ ring: Ring, _ delay: Float, _ x: Float, _ n: Int) -> Float {
        let delayed = ring.read(n, fractional: delay)
        let w = Self.flushed(x - 0.7 * delayed)
        ring.write(n, w)
        return delayed + 0.7 * w
    }
}
