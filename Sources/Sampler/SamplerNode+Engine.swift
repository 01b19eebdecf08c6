import AudioGraph
import CFluidSynth

/// What an engine and a sequencer ask of a sampler before it plays: that it render at the
/// engine's rate, and that it have something to play.
extension SamplerNode {
    /// Whether a SoundFont is loaded: without one, every note would play as silence, and an
    /// `AudioSequencer` refuses to start into the sampler (`AudioSequencerError.noSoundFont`).
    /// It holds the synthesizer briefly, as `program(onChannel:)` does.
    public var canPlayNotes: Bool { control.holding { !fonts.isEmpty } }

    /// Makes the sampler render at `format`'s rate, as AVAudioUnitSampler follows its
    /// connection: when it differs from the synthesizer's, a new synthesizer is made at that rate
    /// (FluidSynth cannot change the rate of one it made), on the calling (control) thread, while
    /// the sampler renders nowhere. It takes the SoundFonts over without reading them again, the
    /// program of every channel, and the gain, polyphony, interpolation and effect switches as last
    /// set; the messages sent and not yet applied apply to it. What the old synthesizer was
    /// sounding, and its channels' controllers, are not carried over.
    ///
    /// A sampler that loads its samples on demand (`Settings.sampleLoading`) and has loaded a
    /// font cannot follow (its fonts are read for one synthesizer): that, and a rate FluidSynth
    /// does not render at, throws `AudioGraphError.formatMismatch` naming
    /// `SamplerNode.Settings.sampleRate`.
    /// The rates FluidSynth renders at (its `synth.sample-rate` range).
    static let fluidSynthRates = 8_000.0...96_000.0

    func follow(_ format: AudioFormat) throws(AudioGraphError) {
        let rate = format.sampleRate
        let polyphony = polyphony
        let interpolation = interpolation
        let (reverb, chorus) = (isReverbEnabled, isChorusEnabled)
        // Held, not `exclusively`: the commands queued so far wait for the new synthesizer.
        try control.holding { () throws(AudioGraphError) in
            guard rate != synth.sampleRate else { return }
            let fix = "make it with SamplerNode.Settings.sampleRate = \(rate)"
            guard Self.fluidSynthRates.contains(rate) else {
                throw .formatMismatch(
                    node: name, format: format,
                    reason: "the sampler was created for \(synth.sampleRate) Hz (SamplerNode.Settings.sampleRate), "
                        + "and FluidSynth renders at 8000…96000 Hz only: prepare the engine at a rate in that range")
            }
            guard settings.sampleLoading == .whole || fonts.isEmpty else {
                throw .formatMismatch(
                    node: name, format: format,
                    reason: "the sampler was created for \(synth.sampleRate) Hz and loads its samples on demand, "
                        + "so it cannot follow the engine's rate: \(fix)")
            }
            let replacement: FluidSynth
            do {
                replacement = try FluidSynth(
                    sampleRate: rate, polyphony: polyphony, reverb: reverb, chorus: chorus,
                    cpuCores: settings.cpuCores)
            } catch {
                throw .formatMismatch(
                    node: name, format: format,
                    reason: "the sampler was created for \(synth.sampleRate) Hz and cannot follow (\(error)): \(fix)")
            }
            // Each channel's preset (none, on a channel a sampler loading on demand left unset).
            let programs = (0..<16).map { channel -> (font: Int32, bank: Int32, program: Int32)? in
                guard fluid_synth_get_channel_preset(synth.synth, Int32(channel)) != nil else { return nil }
                var program: (font: Int32, bank: Int32, program: Int32) = (0, 0, 0)
                fluid_synth_get_program(synth.synth, Int32(channel), &program.font, &program.bank, &program.program)
                return program
            }
            // Oldest first, so the stack keeps its order (the last added is searched first).
            let moving = isKnownUniquelyReferenced(&synth)
            let newIDs = replacement.takeFonts(fonts.values.sorted(), from: synth, moving: moving)
            for (identifier, id) in fonts { fonts[identifier] = newIDs[id] }
            let clocked = blockClock != nil
            stopBlockClock()
            synth = replacement
            if clocked { startBlockClock() }
            let handle = synth.synth
            for (channel, program) in programs.enumerated() {
                if let program, let font = newIDs[program.font] {
                    fluid_synth_program_select(handle, Int32(channel), font, program.bank, program.program)
                } else {
                    fluid_synth_unset_program(handle, Int32(channel))
                }
                fluid_synth_set_interp_method(handle, Int32(channel), interpolation.rawValue)
            }
            fluid_synth_set_gain(handle, baseGain)
        }
    }
}
