import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A multi-band equalizer, the counterpart of AVAudioUnitEQ: 1 to 16 bands of any `FilterType`
/// and a global gain. Mono or stereo in, the same out.
///
/// Coefficients come from the Audio EQ Cookbook by default (`design = .cookbook`), or from
/// matched designs (`.matched`: two sections per band), which keep their shape up to Nyquist.
/// Changes glide: the band's parameters follow their new values with a 10 ms time constant,
/// coefficients are recomputed every 16 samples and interpolated linearly in between, so sweeping
/// a band while it plays leaves no zipper noise; bypass fades linearly over 10 ms. Processing is in
/// double precision (direct form I), with denormal states flushed.
///
/// As in AVAudioUnitEQ, bands start bypassed: set `bypass = false` on the bands you use.
public final class EQNode: AudioNode, @unchecked Sendable {
    /// The bands, in processing order.
    public let bands: [EQBand]
    /// The coefficient design (may change while playing: the coefficients move to the new design
    /// over 16 samples, or cross-fade over 512 into a settled matched design).
    public var design: FilterDesign {
        get { FilterDesign.table[designIndex.load(ordering: .relaxed)] }
        set { designIndex.store(FilterDesign.table.firstIndex(of: newValue)!, ordering: .relaxed) }
    }
    /// dB, −96 … +24, applied after the bands.
    public var globalGain: Double {
        get { Double(bitPattern: globalGainBits.load(ordering: .relaxed)) }
        set { EQBand.store(newValue, EQBand.gainRange, globalGainBits) }
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
    private let runtime: RealTimeBuffer<BandRuntime>
    /// Two filter sections per band: band i's main section at 2i, its correction at 2i + 1.
    private let sections: RealTimeBuffer<SectionRuntime>
    private var sampleRate = 44_100.0
    private var gainNow = 1.0
    /// How many settled matched designs (tens of microseconds each) this quantum may still compute: one
    /// per 512 frames, at least one, so that sixteen bands settling at once do not cost one quantum a
    /// millisecond. The others keep their closed-form design a quantum or more longer.
    private var designsLeft = 0
    private static let framesPerDesign = 512
    /// Sub-blocks (of up to 16 samples) over which a band moves between the one-section (gliding) and
    /// the two-section (settled) matched designs: 32, about 11 ms at 48 kHz.
    private static let familyRamp = 32
    private static let subBlock = 16
    private static let glideSeconds = 0.010

    /// - Parameter numberOfBands: 1 … 16.
    public init(numberOfBands: Int = 1) {
        let count = min(max(numberOfBands, 1), 16)
        bands = (0..<count).map { _ in EQBand(FilterBand(type: .parametric, frequency: 1_000), bypass: true) }
        runtime = RealTimeBuffer(capacity: count, repeating: BandRuntime())
        sections = RealTimeBuffer(capacity: 2 * count, repeating: SectionRuntime())
        super.init(name: "EQ")
    }

    init(band: FilterBand, name: String) {
        bands = [EQBand(band, bypass: false)]
        runtime = RealTimeBuffer(capacity: 1, repeating: BandRuntime())
        sections = RealTimeBuffer(capacity: 2, repeating: SectionRuntime())
        super.init(name: name)
    }

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
            let settings = band.settings.effective
            runtime[index] = BandRuntime()
            runtime[index].target = settings
            runtime[index].smoothed = settings
            runtime[index].design = design
            runtime[index].current = BandCoefficients(settings, sampleRate: sampleRate, design: design)
            runtime[index].refined = design == .matched
            runtime[index].settled = runtime[index].current
            runtime[index].settledFor = design == .matched ? settings : nil
            runtime[index].mix = band.bypass ? 0 : 1
            sections[2 * index] = SectionRuntime()
            sections[2 * index + 1] = SectionRuntime()
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
        designsLeft = max(1, frameCount / Self.framesPerDesign)
        // Settled bands run without glide bookkeeping, stereo in one vector, their sections (a band's
        // main one, and its correction if it has one) two by two in one pass (their recursions overlap).
        // A section waits in `pending` for its partner; a band that glides, or the end, runs it alone.
        var pending = -1
        var pendingCoefficients = BiquadCoefficients.identity
        var index = 0
        while index < bands.count {
            if channels == 2, isSettled(runtime[index], bands[index], design) {
                if runtime[index].mix != 0 {
                    let current = runtime[index].current
                    let corrected = current.correction != .identity
                    for part in 0..<(corrected ? 2 : 1) {
                        let section = 2 * index + part
                        let coefficients = part == 0 ? current.main : current.correction
                        if pending < 0 {
                            (pending, pendingCoefficients) = (section, coefficients)
                        } else {
                            Self.filterStereo(
                                &sections[pending], pendingCoefficients, &sections[section], coefficients, output,
                                frameCount)
                            pending = -1
                        }
                    }
                }
                index += 1
                continue
            }
            if pending >= 0 {
                Self.filterStereo(&sections[pending], pendingCoefficients, output, frameCount)
                pending = -1
            }
            process(
                &runtime[index], band: bands[index], design: design, output: output, channels: channels,
                frameCount: frameCount, main: &sections[2 * index], correction: &sections[2 * index + 1])
            index += 1
        }
        if pending >= 0 { Self.filterStereo(&sections[pending], pendingCoefficients, output, frameCount) }
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

    /// Whether a band is at rest: its settings reached, its coefficients current, fully in or
    /// fully bypassed. Such a band needs no per-sample bookkeeping.
    @inline(__always)
    private func isSettled(_ state: BandRuntime, _ band: EQBand, _ design: FilterDesign) -> Bool {
        // A bypassed band is at rest once faded out with its settings taken, glide finished (the
        // bypass branch of `process` takes new ones, in closed form, when they change). Settings are
        // compared as the type uses them: changing a parameter it ignores changes nothing.
        let settings = band.settings.effective
        if band.bypass {
            return state.mix == 0 && state.target == settings && state.smoothed == settings && state.design == design
        }
        return state.mix == 1 && !state.needsCoefficients && design == state.design && state.smoothed == settings
            && state.target == state.smoothed
    }

    /// One settled section on both channels at once, in double precision: four samples at a time
    /// (`BiquadBlock4`), the quantum's last few by the direct form I.
    private static func filterStereo(
        _ state: inout SectionRuntime, _ coefficients: BiquadCoefficients, _ output: AudioBuffer, _ frameCount: Int
    ) {
        let left = output.channel(0)
        let right = output.channel(1)
        let kernel = state.kernel(coefficients)
        var h = state.history
        var frame = 0
        while frame + 4 <= frameCount {
            let (y0, y1, y2, y3) = kernel.run(left + frame, right + frame, &h)
            store(y0, y1, y2, y3, left + frame, right + frame)
            frame += 4
        }
        while frame < frameCount {
            let y = kernel.step(SIMD2(Double(left[frame]), Double(right[frame])), &h)
            (left[frame], right[frame]) = (Float(y.x), Float(y.y))
            frame += 1
        }
        state.history = h.flushed()
    }

    /// Writes four stereo frames back as single precision.
    @inline(__always)
    private static func store(
        _ y0: SIMD2<Double>, _ y1: SIMD2<Double>, _ y2: SIMD2<Double>, _ y3: SIMD2<Double>,
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>
    ) {
        (left[0], right[0]) = (Float(y0.x), Float(y0.y))
        (left[1], right[1]) = (Float(y1.x), Float(y1.y))
        (left[2], right[2]) = (Float(y2.x), Float(y2.y))
        (left[3], right[3]) = (Float(y3.x), Float(y3.y))
    }

    /// Two settled sections in one pass over both channels: the second filters the first's output
    /// four frames at a time, in registers, so the two recursions run side by side.
    private static func filterStereo(
        _ first: inout SectionRuntime, _ firstCoefficients: BiquadCoefficients, _ second: inout SectionRuntime,
        _ secondCoefficients: BiquadCoefficients, _ output: AudioBuffer, _ frameCount: Int
    ) {
        let left = output.channel(0)
        let right = output.channel(1)
        let kernel = first.kernel(firstCoefficients)
        let next = second.kernel(secondCoefficients)
        var h = first.history
        var g = second.history
        var frame = 0
        while frame + 4 <= frameCount {
            let (y0, y1, y2, y3) = kernel.run(left + frame, right + frame, &h)
            let (v0, v1, v2, v3) = next.run(y0, y1, y2, y3, &g)
            store(v0, v1, v2, v3, left + frame, right + frame)
            frame += 4
        }
        while frame < frameCount {
            let v = next.step(kernel.step(SIMD2(Double(left[frame]), Double(right[frame])), &h), &g)
            (left[frame], right[frame]) = (Float(v.x), Float(v.y))
            frame += 1
        }
        first.history = h.flushed()
        second.history = g.flushed()
    }

    /// One band over the quantum, in sub-blocks of 16 samples: its `main` section, then its `correction`
    /// (when either end of the sub-block has one; else the correction's history follows the main's output).
    private func process(
        _ state: inout BandRuntime, band: EQBand, design: FilterDesign, output: AudioBuffer, channels: Int,
        frameCount: Int, main: inout SectionRuntime, correction: inout SectionRuntime
    ) {
        let target = band.settings.effective
        let mixTarget: Double = band.bypass ? 0 : 1
        if state.mix == 0 && mixTarget == 0 {
            // Bypassed: nothing to filter, and the state starts clean when the band comes back. New
            // settings take the closed-form design at once; a matched band computes its settled design
            // when it comes back (not on every quantum while bypassed).
            if state.target != target || state.smoothed != target || state.design != design {
                state.target = target
                state.smoothed = target
                state.design = design
                state.current = BandCoefficients(target, sampleRate: sampleRate, design: design, refined: false)
                state.refined = false
                state.rampStep = 0
                state.needsCoefficients = design == .matched
            }
            main.history = BiquadHistory()
            correction.history = BiquadHistory()
            return
        }
        if target.type != state.target.type || design != state.design {
            // A new shape or design: jump the parameters, glide the coefficients over 16 samples (a
            // running cross-fade stops; one into a settled matched design may start).
            state.smoothed = target
            state.design = design
            state.needsCoefficients = true
            state.rampStep = 0
        }
        state.target = target
        var position = 0
        let glide = 1 - exp(-Double(Self.subBlock) / (Self.glideSeconds * sampleRate))
        let left = output.channel(0)
        let right = output.channel(channels > 1 ? 1 : 0)
        while position < frameCount {
            let length = min(Self.subBlock, frameCount - position)
            let next = nextCoefficients(&state, target: target, design: design, glide: glide)
            // Bypass fades linearly over the glide time.
            var mixNext = state.mix
            if state.mix != mixTarget {
                let fade = Double(length) / (Self.glideSeconds * sampleRate)
                mixNext = mixTarget > state.mix ? min(mixTarget, state.mix + fade) : max(mixTarget, state.mix - fade)
            }
            // Coefficients and mix move linearly across the sub-block (both channels in one vector;
            // a mono buffer computes its channel twice).
            let step = 1 / Double(length)
            var first = GlidingSection(from: state.current.main, to: next.main, step: step)
            var second = GlidingSection(from: state.current.correction, to: next.correction, step: step)
            let corrected = state.current.correction != .identity || next.correction != .identity
            var mix = SIMD2(repeating: state.mix)
            let dm = SIMD2(repeating: (mixNext - state.mix) * step)
            var h = main.history
            // A correction that was a wire until now starts from the wire's history: the main
            // section's last outputs as its inputs and outputs.
            var g =
                state.current.correction == .identity
                ? BiquadHistory(x1: h.y1, x2: h.y2, y1: h.y1, y2: h.y2) : correction.history
            for frame in position..<position + length {
                mix += dm
                let x = SIMD2(Double(left[frame]), Double(right[frame]))
                var y = first.step(x, &h)
                if corrected { y = second.step(y, &g) }
                let out = x + (y - x) * mix
                left[frame] = Float(out.x)
                right[frame] = Float(out.y)
            }
            main.history = h.flushed()
            correction.history = g.flushed()
            state.current = next
            state.mix = mixNext
            position += length
        }
        if state.mix == 0 {
            // Faded out: the band comes back from a clean state.
            main.history = BiquadHistory()
            correction.history = BiquadHistory()
        }
    }

    /// The band's coefficients for the next sub-block, `state.current` when nothing moves: the
    /// smoothed parameters glide toward `target` by `glide`; the matched design, once settled, is
    /// designed once (within this quantum's budget); a switch between the one- and two-section
    /// families cross-fades over `familyRamp` sub-blocks.
    private func nextCoefficients(
        _ state: inout BandRuntime, target: FilterBand, design: FilterDesign, glide: Double
    ) -> BandCoefficients {
        guard state.smoothed != target || state.needsCoefficients else { return state.current }
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
        // The matched design: the closed form while gliding; once settled, the two-section
        // design, computed once (if this quantum's budget allows; else a quantum later).
        var refined = false
        var deferred = false
        if state.smoothed == target && design == .matched {
            if state.settledFor != target && designsLeft > 0 {
                designsLeft -= 1
                state.settled = BandCoefficients(target, sampleRate: sampleRate, design: .matched)
                state.settledFor = target
            }
            refined = state.settledFor == target
            deferred = !refined
        }
        let wanted =
            refined
            ? state.settled
            : BandCoefficients(state.smoothed, sampleRate: sampleRate, design: design, refined: false)
        // Between the two families of designs (one section and two), the coefficients do not
        // jump in one sub-block: their sections split the response differently, and a fast move
        // would modulate the signal audibly. Each section cross-fades from its coefficients at the
        // switch to the wanted ones (which may still glide) over `familyRamp` sub-blocks, on a
        // raised cosine (no kink at either end). Each step is a blend of two stable sections,
        // so stable (the stability region of (a1, a2) is convex).
        if refined != state.refined {
            state.refined = refined
            state.rampFrom = state.current
            state.rampStep = design == .matched ? 1 : 0
        }
        let next: BandCoefficients
        if state.rampStep > 0 {
            let phase = Double.pi * Double(state.rampStep) / Double(Self.familyRamp)
            next = state.rampFrom.interpolated(to: wanted, (1 - cos(phase)) / 2)
            state.rampStep = state.rampStep < Self.familyRamp ? state.rampStep + 1 : 0
        } else {
            next = wanted
        }
        state.needsCoefficients = next != state.current || deferred || state.rampStep > 0
        return next
    }
}
