import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One band of an `EQNode` (or a `FilterNode`). Its properties may be set from any thread while
/// audio runs; the node glides to new values (no zipper noise).
public final class EQBand: Sendable {
    private let typeIndex: Atomic<Int>
    private let frequencyBits: Atomic<UInt64>
    private let gainBits: Atomic<UInt64>
    private let bandwidthBits: Atomic<UInt64>
    private let bypassed: Atomic<Bool>

    init(_ band: FilterBand, bypass: Bool) {
        typeIndex = Atomic(FilterType.allCases.firstIndex(of: band.type)!)
        frequencyBits = Atomic(band.frequency.bitPattern)
        gainBits = Atomic(band.gain.bitPattern)
        bandwidthBits = Atomic(band.bandwidth.bitPattern)
        bypassed = Atomic(bypass)
    }

    /// The shape (default parametric).
    public var filterType: FilterType {
        // `allCases` builds a new array on every call: the render thread reads a stored table.
        get { FilterType.table[typeIndex.load(ordering: .relaxed)] }
        set { typeIndex.store(FilterType.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// Hz, 10 … 22 050 (kept below Nyquist when rendering).
    public var frequency: Double {
        get { Double(bitPattern: frequencyBits.load(ordering: .relaxed)) }
        set { frequencyBits.store(min(max(newValue, 10), 22_050).bitPattern, ordering: .relaxed) }
    }
    /// dB, −96 … +24.
    public var gain: Double {
        get { Double(bitPattern: gainBits.load(ordering: .relaxed)) }
        set { gainBits.store(min(max(newValue, -96), 24).bitPattern, ordering: .relaxed) }
    }
    /// Octaves, 0.05 … 5.
    public var bandwidth: Double {
        get { Double(bitPattern: bandwidthBits.load(ordering: .relaxed)) }
        set { bandwidthBits.store(min(max(newValue, 0.05), 5).bitPattern, ordering: .relaxed) }
    }
    /// A bypassed band passes its input unchanged (bit for bit once the fade is over).
    public var bypass: Bool {
        get { bypassed.load(ordering: .relaxed) }
        set { bypassed.store(newValue, ordering: .relaxed) }
    }

    /// All settings at once.
    public var settings: FilterBand {
        get { FilterBand(type: filterType, frequency: frequency, gain: gain, bandwidth: bandwidth) }
        set {
            filterType = newValue.type
            frequency = newValue.frequency
            gain = newValue.gain
            bandwidth = newValue.bandwidth
        }
    }
}

/// A multi-band equalizer, the counterpart of AVAudioUnitEQ: 1 to 16 bands of any `FilterType`
/// and a global gain. Mono or stereo in, the same out.
///
/// Coefficients come from the Audio EQ Cookbook by default (`design = .cookbook`), or from
/// Vicanek's matched designs (`.matched`), which keep high bands from cramping near Nyquist.
/// Changes glide: the band's parameters follow their new values with a 10 ms time constant,
/// coefficients are recomputed every 16 samples and interpolated linearly in between, so sweeping
/// a band while it plays leaves no zipper noise; bypass fades linearly over 10 ms. Processing is in
/// double precision (transposed direct form II), with denormal states flushed.
///
/// As in AVAudioUnitEQ, bands start bypassed: set `bypass = false` on the bands you use.
public final class EQNode: AudioNode, @unchecked Sendable {
    /// The bands, in processing order.
    public let bands: [EQBand]
    /// The coefficient design (may change while playing; the change glides like a parameter).
    public var design: FilterDesign {
        get { FilterDesign.table[designIndex.load(ordering: .relaxed)] }
        set { designIndex.store(FilterDesign.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// dB, −96 … +24, applied after the bands.
    public var globalGain: Double {
        get { Double(bitPattern: globalGainBits.load(ordering: .relaxed)) }
        set { globalGainBits.store(min(max(newValue, -96), 24).bitPattern, ordering: .relaxed) }
    }

    /// The parameter table of one band (and of `FilterNode`).
    public static let bandParameters: [EffectParameter] = [
        EffectParameter(
            "type", "filter shape", range: 0...Double(FilterType.allCases.count - 1), default: 0, unit: .choice,
            choices: FilterType.allCases.map(\.rawValue)),
        EffectParameter("freq", "frequency", range: 10...22_050, default: 1_000, unit: .hertz),
        EffectParameter("gain", "gain (parametric and shelves)", range: -96...24, default: 0, unit: .decibels),
        EffectParameter("bw", "bandwidth", range: 0.05...5, default: 1, unit: .octaves),
        EffectParameter("bypass", "band bypassed", range: 0...1, default: 0, unit: .boolean),
    ]

    private let designIndex = Atomic<Int>(0)
    private let globalGainBits = Atomic<UInt64>(0.0.bitPattern)
    private var runtime: UnsafeMutablePointer<BandRuntime>
    private var sampleRate = 44_100.0
    private var gainNow = 1.0
    private static let subBlock = 16
    private static let glideSeconds = 0.010

    /// - Parameter numberOfBands: 1 … 16.
    public init(numberOfBands: Int = 1) {
        let count = min(max(numberOfBands, 1), 16)
        bands = (0..<count).map { _ in EQBand(FilterBand(type: .parametric, frequency: 1_000), bypass: true) }
        runtime = .allocate(capacity: count)
        runtime.initialize(repeating: BandRuntime(), count: count)
        super.init(name: "EQ")
    }

    init(band: FilterBand, name: String) {
        bands = [EQBand(band, bypass: false)]
        runtime = .allocate(capacity: 1)
        runtime.initialize(repeating: BandRuntime(), count: 1)
        super.init(name: name)
    }

    deinit { runtime.deallocate() }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }

    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        sampleRate = format.sampleRate
        reset()
    }

    /// Jumps to the current settings (no glide) and clears the filters' state.
    public override func reset() {
        for index in bands.indices {
            let band = bands[index]
            let settings = band.settings
            runtime[index] = BandRuntime()
            runtime[index].target = settings
            runtime[index].smoothed = settings
            runtime[index].design = design
            runtime[index].current = BiquadCoefficients(settings, sampleRate: sampleRate, design: design)
            runtime[index].mix = band.bypass ? 0 : 1
        }
        gainNow = pow(10, globalGain / 20)
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else {
            output.clear(frames: frameCount)
            return
        }
        let channels = min(output.channelCount, 2)
        for channel in 0..<channels {
            let source = input.channel(min(channel, input.channelCount - 1))
            output.channel(channel).update(from: source, count: frameCount)
        }
        let design = self.design
        for index in bands.indices {
            let band = bands[index]
            process(
                &runtime[index], band: band, design: design, output: output, channels: channels, frameCount: frameCount)
        }
        // The global gain, smoothed per sample.
        let target = pow(10, globalGain / 20)
        if target != 1 || gainNow != 1 {
            let coefficient = 1 - exp(-1 / (Self.glideSeconds * sampleRate))
            var gain = gainNow
            for frame in 0..<frameCount {
                gain += (target - gain) * coefficient
                if abs(gain - target) < 1e-9 { gain = target }
                for channel in 0..<channels {
                    output.channel(channel)[frame] = Float(Double(output.channel(channel)[frame]) * gain)
                }
            }
            gainNow = gain
        }
    }

    /// One band over the quantum, in sub-blocks of 16 samples.
    private func process(
        _ state: inout BandRuntime, band: EQBand, design: FilterDesign, output: AudioBuffer, channels: Int,
        frameCount: Int
    ) {
        let target = band.settings
        let mixTarget: Double = band.bypass ? 0 : 1
        if state.mix == 0 && mixTarget == 0 {
            // Bypassed: nothing to do, and the state starts clean when the band comes back.
            state.target = target
            state.smoothed = target
            state.design = design
            state.current = BiquadCoefficients(target, sampleRate: sampleRate, design: design)
            state.z = (0, 0, 0, 0)
            return
        }
        if target.type != state.target.type || design != state.design {
            // A new shape or design: jump the parameters, glide the coefficients.
            state.smoothed = target
            state.design = design
            state.needsCoefficients = true
        }
        state.target = target
        var position = 0
        let glide = 1 - exp(-Double(Self.subBlock) / (Self.glideSeconds * sampleRate))
        while position < frameCount {
            if state.smoothed == target && !state.needsCoefficients && state.mix == mixTarget && state.mix == 1 {
                // Settled: the plain filter over the rest of the quantum, no glide bookkeeping.
                let c = state.current
                for channel in 0..<channels {
                    let samples = output.channel(channel)
                    var z1 = channel == 0 ? state.z.0 : state.z.2
                    var z2 = channel == 0 ? state.z.1 : state.z.3
                    for frame in position..<frameCount {
                        let x = Double(samples[frame])
                        let y = c.b0 * x + z1
                        z1 = c.b1 * x - c.a1 * y + z2
                        z2 = c.b2 * x - c.a2 * y
                        samples[frame] = Float(y)
                    }
                    if abs(z1) < 1e-20 { z1 = 0 }
                    if abs(z2) < 1e-20 { z2 = 0 }
                    if channel == 0 { (state.z.0, state.z.1) = (z1, z2) } else { (state.z.2, state.z.3) = (z1, z2) }
                }
                return
            }
            let length = min(Self.subBlock, frameCount - position)
            var next = state.current
            if state.smoothed != target || state.needsCoefficients {
                state.smoothed.frequency *= pow(target.frequency / state.smoothed.frequency, glide)
                state.smoothed.gain += (target.gain - state.smoothed.gain) * glide
                state.smoothed.bandwidth *= pow(target.bandwidth / state.smoothed.bandwidth, glide)
                if abs(state.smoothed.frequency / target.frequency - 1) < 1e-6
                    && abs(state.smoothed.gain - target.gain) < 1e-5
                    && abs(state.smoothed.bandwidth / target.bandwidth - 1) < 1e-6
                {
                    state.smoothed = target
                }
                state.smoothed.type = target.type
                next = BiquadCoefficients(state.smoothed, sampleRate: sampleRate, design: design)
                state.needsCoefficients = next != state.current
            }
            // Bypass fades linearly over the glide time.
            var mixNext = state.mix
            if state.mix != mixTarget {
                let fade = Double(length) / (Self.glideSeconds * sampleRate)
                mixNext = mixTarget > state.mix ? min(mixTarget, state.mix + fade) : max(mixTarget, state.mix - fade)
            }
            let step = 1 / Double(length)
            for channel in 0..<channels {
                let samples = output.channel(channel) + position
                var z1 = channel == 0 ? state.z.0 : state.z.2
                var z2 = channel == 0 ? state.z.1 : state.z.3
                var c = state.current
                var mix = state.mix
                let dc = BiquadCoefficients(
                    b0: (next.b0 - c.b0) * step, b1: (next.b1 - c.b1) * step, b2: (next.b2 - c.b2) * step,
                    a1: (next.a1 - c.a1) * step, a2: (next.a2 - c.a2) * step)
                let dm = (mixNext - mix) * step
                let interpolating = next != c
                for frame in 0..<length {
                    if interpolating {
                        c.b0 += dc.b0
                        c.b1 += dc.b1
                        c.b2 += dc.b2
                        c.a1 += dc.a1
                        c.a2 += dc.a2
                    }
                    mix += dm
                    let x = Double(samples[frame])
                    let y = c.b0 * x + z1
                    z1 = c.b1 * x - c.a1 * y + z2
                    z2 = c.b2 * x - c.a2 * y
                    samples[frame] = Float(mix == 1 ? y : x + (y - x) * mix)
                }
                // Flush denormals (a long silence must not leave subnormal states).
                if abs(z1) < 1e-20 { z1 = 0 }
                if abs(z2) < 1e-20 { z2 = 0 }
                if channel == 0 { (state.z.0, state.z.1) = (z1, z2) } else { (state.z.2, state.z.3) = (z1, z2) }
            }
            state.current = next
            state.mix = mixNext
            position += length
        }
    }
}

/// Render-thread state of one band.
struct BandRuntime {
    var target = FilterBand(type: .parametric, frequency: 1_000)
    var smoothed = FilterBand(type: .parametric, frequency: 1_000)
    var design = FilterDesign.cookbook
    var current = BiquadCoefficients.identity
    var needsCoefficients = false
    var mix = 1.0
    var z: (Double, Double, Double, Double) = (0, 0, 0, 0)
}

/// One filter band as a node: the counterpart of an AVAudioUnitEQ with one band, not bypassed.
public final class FilterNode: AudioNode, @unchecked Sendable {
    private let eq: EQNode
    /// The band (type, frequency, gain, bandwidth, bypass).
    public var band: EQBand { eq.bands[0] }
    public var design: FilterDesign {
        get { eq.design }
        set { eq.design = newValue }
    }

    public init(type: FilterType = .lowPass, frequency: Double = 1_000, gain: Double = 0, bandwidth: Double = 1) {
        eq = EQNode(
            band: FilterBand(type: type, frequency: frequency, gain: gain, bandwidth: bandwidth), name: "filter")
        super.init(name: "filter")
    }

    public override var inputBusCount: Int { 1 }
    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int {
        eq.outputChannelCount(inputChannelCounts: inputChannelCounts)
    }
    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        try eq.prepare(format: format, maximumFrameCount: maximumFrameCount)
    }
    public override func reset() { eq.reset() }
    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        eq.render(into: output, inputs: inputs, frameCount: frameCount, time: time)
    }
}
