import SoundFontFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loaded sample's place in the arena, with what pitch and loop need.
struct LoadedSample {
    /// Where the sample's first point is in the arena.
    var offset: Int
    /// The sample's own points; the arena holds `padded` points from `offset`.
    var count: Int
    var padded: Int
    var loopStart: Int
    var loopEnd: Int
    var sampleRate: Double
    var originalPitch: Int
    var pitchCorrection: Int
}

/// One sounding voice, on the control side: what it plays, its generators and modulators, its
/// envelopes and LFOs. Its per-sample state lives in ``Lanes`` at the voice's slot.
struct Voice {
    enum Hold { case none, sustained, sostenuto }

    var channel: Int
    /// The key and velocity of the note-on (what note-offs and pressure find the voice by).
    var key: Int
    var velocity: Int
    /// The key and velocity the voice's generators and modulators see (a zone's fixed key or
    /// velocity, else the note's).
    var effectiveKey: Int
    var effectiveVelocity: Int
    /// Which note-on started it, counted across the synthesizer (older voices have smaller numbers).
    var serial: Int
    /// The preset and the recipe (zone pair) of it the voice plays, in the synthesizer's lists.
    var preset: Int
    var recipe: Int
    /// The generators with the modulators and the channel's NRPN offsets added.
    var values: GeneratorValues
    var sample: LoadedSample
    var volume: Envelope
    var modulation: Envelope
    /// Samples since the note-on, at the last control update.
    var age = 0
    var isReleased = false
    var hold = Hold.none
    var heldBySostenuto = false
    /// The age at which a note-off that came too early takes effect (FluidSynth's 10 ms minimum).
    var releaseAtAge: Int?
    var exclusiveClass: Int
    var sampleMode: Int
    var filterReady = false
    /// The age the envelopes were last advanced to.
    var envelopeAge = 0
    /// Whether the voice's control values must be computed before its next samples.
    var needsControl = true
    /// What the last control update computed from its inputs, reused while they stay the same.
    var memo = ControlMemo()

    /// The next age at which the voice needs a control update off the 64-frame grid: the end of
    /// its envelope's delay, or a deferred release.
    var nextSplit: Int? {
        if volume.section == .delay { return envelopeAge + volume.delayRemaining }
        return releaseAtAge
    }

    /// The root pitch in cents: 100 · (overriding root key, else the sample's original pitch) − correction.
    var rootCents: Double {
        let overriding = values[Int(Generator.overridingRootKey.rawValue)]
        let root = overriding >= 0 ? overriding : Double(sample.originalPitch)
        return 100 * root - Double(sample.pitchCorrection)
    }

    func value(_ generator: Generator) -> Double { values[generator] }

    /// A generator's value clamped to ±`limit`.
    func clamped(_ generator: Generator, _ limit: Double) -> Double { min(max(values[generator], -limit), limit) }

    /// A sample address offset: fine plus 32768 × coarse, each truncated to a whole point.
    func address(_ fine: Generator, _ coarse: Generator) -> Int { Int(values[fine]) + 32768 * Int(values[coarse]) }

    /// Re-sums the modulators of `recipe` into `values` from the channel's current state.
    mutating func modulate(_ channel: ChannelState, recipe: VoiceRecipe) {
        values = recipe.generators
        values.add(channel.generatorOffsets)
        // Index loops: an array's iterator allocates in debug builds (a coroutine frame per element).
        let modulators = recipe.modulators
        for index in 0..<modulators.count {
            let modulator = modulators[index]
            if modulator.isIdentical(to: DefaultModulators.velocityToFilterCutoff) { continue }
            let primary = channel.mapped(
                modulator.source, key: effectiveKey, velocity: effectiveVelocity, isAmountSource: false)
            let secondary = channel.mapped(
                modulator.amountSource, key: effectiveKey, velocity: effectiveVelocity, isAmountSource: true)
            var output = Double(modulator.amount) * primary * secondary
            if modulator.transform == 2 { output = abs(output) }
            values[modulator.destination] += output
        }
    }

    /// A triangle LFO (−1…1, starting at 0 and rising) at `age`, held at 0 through its delay.
    static func lfo(age: Int, delay: Int, perSample: Double) -> Double {
        guard age >= delay else { return 0 }
        let phase = (Double(age - delay) * perSample).truncatingRemainder(dividingBy: 4)
        // 0→1 over the first quarter, 1→−1 over the next half, −1→0 over the last quarter.
        if phase < 1 { return phase }
        if phase < 3 { return 2 - phase }
        return phase - 4
    }

    /// Advances the envelopes to the voice's age; true when a deferred release is due.
    mutating func advanceEnvelopes() -> Bool {
        needsControl = false
        volume.advance(age - envelopeAge)
        modulation.advance(age - envelopeAge)
        envelopeAge = age
        if let releaseAge = releaseAtAge, age >= releaseAge { return true }
        return false
    }

    /// Sets the voice's lane (`slot` in `lanes`) to ramp to its control values over the `length`
    /// frames to come; false when the voice has ended.
    mutating func control(
        length: Int, sampleRate rate: Double, gain: Float, balance: Double, lanes: inout Lanes, slot: Int
    ) -> Bool {
        let (group, lane) = (slot / Lanes.width, slot % Lanes.width)
        if volume.isFinished && lanes.gain[group][lane] == 0 { return false }
        if volume.section == .delay {
            lanes.gain[group][lane] = 0
            lanes.gainStep[group][lane] = 0
            lanes.stepWhole[group][lane] = 0
            lanes.stepFraction[group][lane] = 0
            return true
        }
        let targetAge = age + length
        var volume = self.volume
        volume.advance(length)
        var modulation = self.modulation
        modulation.advance(length)
        // An LFO that moves nothing is not computed (every product of it would be a zero).
        var modulationLFO = 0.0
        if value(.modulationLFOToPitch) != 0 || value(.modulationLFOToFilterCutoff) != 0
            || value(.modulationLFOToVolume) != 0
        {
            let inputs = SIMD2(value(.modulationLFODelay), value(.modulationLFOFrequency))
            if inputs != memo.modulationLFOInputs {
                memo.modulationLFOInputs = inputs
                memo.modulationLFO = lfoTiming(
                    delay: .modulationLFODelay, frequency: .modulationLFOFrequency, sampleRate: rate)
            }
            modulationLFO = Voice.lfo(
                age: targetAge, delay: memo.modulationLFO.delay, perSample: memo.modulationLFO.perSample)
        }
        var vibratoLFO = 0.0
        if value(.vibratoLFOToPitch) != 0 {
            let inputs = SIMD2(value(.vibratoLFODelay), value(.vibratoLFOFrequency))
            if inputs != memo.vibratoLFOInputs {
                memo.vibratoLFOInputs = inputs
                memo.vibratoLFO = lfoTiming(
                    delay: .vibratoLFODelay, frequency: .vibratoLFOFrequency, sampleRate: rate)
            }
            vibratoLFO = Voice.lfo(age: targetAge, delay: memo.vibratoLFO.delay, perSample: memo.vibratoLFO.perSample)
        }
        let modulationEnvelope =
            modulation.section == .attack
            ? Conversions.curve(Conversions.convex, at: 127 * modulation.level) : modulation.level

        // Amplitude.
        let attenuation = min(max(value(.initialAttenuation), 0), 1440)
        let tremolo = -modulationLFO * clamped(.modulationLFOToVolume, 960)
        let amplitude: Float
        if volume.isFinished {
            amplitude = 0
        } else if volume.section == .attack {
            amplitude =
                Conversions.amplitude(centibels: attenuation) * Conversions.amplitude(centibels: tremolo)
                * Float(volume.level)
        } else {
            // Two factors, each clamped at 0 cB: a tremolo's negative half cannot undo the attenuation.
            amplitude =
                Conversions.amplitude(centibels: attenuation)
                * Conversions.amplitude(centibels: 960 * (1 - volume.level) + tremolo)
        }
        lanes.gainStep[group][lane] = (amplitude - lanes.gain[group][lane]) / Float(length)

        // Pitch.
        let root = rootCents
        var cents =
            value(.scaleTuning) * (Double(effectiveKey) - root / 100) + root + 100 * value(.coarseTune)
            + value(.fineTune)
        cents +=
            modulationLFO * clamped(.modulationLFOToPitch, 12000) + vibratoLFO * clamped(.vibratoLFOToPitch, 12000)
            + modulationEnvelope * clamped(.modulationEnvelopeToPitch, 12000)
        let pitchInputs = SIMD2(cents, root)
        if pitchInputs != memo.pitchInputs {
            memo.pitchInputs = pitchInputs
            var ratio =
                Conversions.hertz(cents: cents) / (Conversions.hertz(cents: root) * rate / sample.sampleRate)
            if !(ratio > 0) || !ratio.isFinite { ratio = 1 }
            ratio = min(ratio, 1_048_576)
            let whole = ratio.rounded(.down)
            memo.step = (Int32(whole), UInt32(min((ratio - whole) * 4_294_967_296, 4_294_967_295)))
        }
        lanes.stepWhole[group][lane] = memo.step.whole
        lanes.stepFraction[group][lane] = memo.step.fraction

        // Filter.
        let cutoffCents = min(
            max(
                value(.initialFilterCutoff) + modulationLFO * clamped(.modulationLFOToFilterCutoff, 12000)
                    + modulationEnvelope * clamped(.modulationEnvelopeToFilterCutoff, 12000), 1500), 13500)
        let filterInputs = SIMD2(cutoffCents, value(.initialFilterQ))
        if filterInputs != memo.filterInputs {
            memo.filterInputs = filterInputs
            let cutoff = min(max(Conversions.hertz(cents: cutoffCents), 5), 0.45 * rate)
            let qDecibels = min(max(value(.initialFilterQ) / 10, 0), 96) - 3.01
            let q = pow(10, qDecibels / 20)
            let filterGain = 1 / q.squareRoot()
            let omega = 2 * Double.pi * cutoff / rate
            let alpha = sin(omega) / (2 * q)
            memo.filter = (
                Float(filterGain * (1 - cos(omega)) / (2 * (1 + alpha))), Float(-2 * cos(omega) / (1 + alpha)),
                Float((1 - alpha) / (1 + alpha))
            )
        }
        let (b0, a1, a2) = memo.filter
        if !filterReady {
            lanes.b0[group][lane] = b0
            lanes.b1[group][lane] = 2 * b0
            lanes.a1[group][lane] = a1
            lanes.a2[group][lane] = a2
            lanes.b0Step[group][lane] = 0
            lanes.b1Step[group][lane] = 0
            lanes.a1Step[group][lane] = 0
            lanes.a2Step[group][lane] = 0
            filterReady = true
        } else {
            let frames = Float(length)
            lanes.b0Step[group][lane] = (b0 - lanes.b0[group][lane]) / frames
            lanes.b1Step[group][lane] = (2 * b0 - lanes.b1[group][lane]) / frames
            lanes.a1Step[group][lane] = (a1 - lanes.a1[group][lane]) / frames
            lanes.a2Step[group][lane] = (a2 - lanes.a2[group][lane]) / frames
        }
        if abs(lanes.z1[group][lane]) < 1e-20 { lanes.z1[group][lane] = 0 }
        if abs(lanes.z2[group][lane]) < 1e-20 { lanes.z2[group][lane] = 0 }

        // Buses: pan and balance on the dry pair; the sends are mono, before the pan.
        var (panLeft, panRight) = Conversions.pan(value(.pan))
        if balance > 0 { panLeft *= Conversions.amplitude(centibels: balance) }
        if balance < 0 { panRight *= Conversions.amplitude(centibels: -balance) }
        lanes.left[group][lane] = gain * panLeft
        lanes.right[group][lane] = gain * panRight
        lanes.reverb[group][lane] = gain * Float(min(max(value(.reverbSend) / 1000, 0), 1))
        lanes.chorus[group][lane] = gain * Float(min(max(value(.chorusSend) / 1000, 0), 1))
        return true
    }

    /// The LFO's delay in samples and its per-sample phase step, from its generators.
    func lfoTiming(delay: Generator, frequency: Generator, sampleRate: Double) -> (delay: Int, perSample: Double) {
        let delaySamples = Int(sampleRate * Conversions.seconds(timecents: min(max(value(delay), -12000), 5000)))
        let hertz = Conversions.hertz(cents: min(max(value(frequency), -16000), 4500))
        return (delaySamples, 4 * hertz / sampleRate)
    }
}

/// Control values a voice computed from its generators, with the inputs they came from (NaN
/// inputs at first, which nothing equals): the exponentials and the filter's trigonometry are
/// computed again only when an input changes.
struct ControlMemo {
    var modulationLFOInputs = SIMD2<Double>(.nan, .nan)
    var modulationLFO = (delay: 0, perSample: 0.0)
    var vibratoLFOInputs = SIMD2<Double>(.nan, .nan)
    var vibratoLFO = (delay: 0, perSample: 0.0)
    var pitchInputs = SIMD2<Double>(.nan, .nan)
    var step = (whole: Int32(0), fraction: UInt32(0))
    var filterInputs = SIMD2<Double>(.nan, .nan)
    var filter = (b0: Float(0), a1: Float(0), a2: Float(0))
}

/// The 60 generator values of a voice, stored inline (no allocation when a voice starts or changes).
struct GeneratorValues {
    private var storage = InlineArray<60, Double>(repeating: 0)

    subscript(generator: Generator) -> Double {
        get { storage[Int(generator.rawValue)] }
        set { storage[Int(generator.rawValue)] = newValue }
    }

    subscript(index: Int) -> Double {
        get { storage[index] }
        set { storage[index] = newValue }
    }

    mutating func add(_ offsets: GeneratorValues) {
        for index in 0..<60 { storage[index] += offsets.storage[index] }
    }
}
