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

    /// The LFO's delay in samples and its per-sample phase step, from its generators.
    func lfoTiming(delay: Generator, frequency: Generator, sampleRate: Double) -> (delay: Int, perSample: Double) {
        let delaySamples = Int(sampleRate * Conversions.seconds(timecents: min(max(value(delay), -12000), 5000)))
        let hertz = Conversions.hertz(cents: min(max(value(frequency), -16000), 4500))
        return (delaySamples, 4 * hertz / sampleRate)
    }
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
