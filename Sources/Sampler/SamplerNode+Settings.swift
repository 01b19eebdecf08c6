extension SamplerNode {
    /// Sample interpolation, as FluidSynth names it.
    public enum Interpolation: Int32, Sendable, CaseIterable {
        /// `none`: the nearest sample (cheapest, aliases most); `linear`: a straight line between samples;
        /// `fourthOrder`: 4-point cubic (FluidSynth's default); `seventhOrder`: 7-point, the cleanest and most
        /// costly. The raw value is FluidSynth's `FLUID_INTERP_*` constant.
        case none = 0, linear = 1, fourthOrder = 4, seventhOrder = 7
    }

    /// Synthesizer settings fixed at creation.
    public struct Settings: Sendable, Hashable {
        /// The rate the synthesizer is made for, in Hz (44 100 by default). An engine that renders at
        /// another rate makes the sampler follow it when it prepares it (a new synthesizer at the
        /// engine's rate, taking the SoundFonts over, as AVAudioUnitSampler follows its
        /// connection), except a sampler that loads its samples on demand and has loaded a font,
        /// or a rate FluidSynth does not render at (8 000 … 96 000 Hz): preparing it then throws
        /// `AudioGraphError.formatMismatch` naming this setting. Setting it to the engine's rate
        /// saves making the synthesizer twice.
        public var sampleRate: Double = 44_100
        /// The most voices that sound at once (256 by default); the node's `polyphony` changes it later.
        public var polyphony = 256
        /// FluidSynth's master gain (its default, 0.2, leaves headroom for dense material).
        public var gain: Float = 0.2
        /// Sample interpolation on every channel (fourth order by default, as FluidSynth's own).
        public var interpolation: Interpolation = .fourthOrder
        /// Whether FluidSynth's reverb runs (on by default); the node's `isReverbEnabled` switches it later.
        public var isReverbEnabled = true
        /// Whether FluidSynth's chorus runs (on by default); the node's `isChorusEnabled` switches it later.
        public var isChorusEnabled = true
        /// Cores FluidSynth may use to render voices (its `synth.cpu-cores`); 1 renders on the
        /// calling thread only.
        public var cpuCores = 1
        /// Channels that play these programs whatever the MIDI selects (its bank selects and
        /// program changes on them are ignored; resets keep them).
        public var programOverrides: [ProgramOverride] = []
        /// Channels (0–15) whose notes do not sound (note-ons dropped; everything else applies).
        public var mutedChannels: Set<UInt8> = []
        /// Which samples loading a SoundFont reads: all of them (the default), or, `onDemand`,
        /// none until `loadSamples(for:)` names the presets a song uses.
        public var sampleLoading: SampleLoading = .whole
        /// Whether program changes, bank selects and resets leave every channel's preset as it
        /// is (resets still silence the notes and reset the controllers). A sampler that loaded
        /// only some presets on demand sets it, so that nothing selects another preset (and
        /// reads its samples) on the audio thread.
        public var ignoresPresetChanges = false
        /// Whether events reach FluidSynth as its own MIDI player sends them: those received at
        /// offset o are applied from inside the render of the 64-frame block starting at o (before
        /// FluidSynth mixes it), and sound from o + 64. For renders that match `fluidsynth -F`
        /// bit for bit, with `FluidSynthPlayerTiming(delivery: .whenSent)`; off by default.
        public var takesEventsAsFluidSynthPlayer = false
        /// The defaults: 44 100 Hz, 256 voices, gain 0.2, fourth-order interpolation, reverb and chorus on,
        /// one core, no program overrides and no muted channels.
        public init() {}
    }

    /// When a sampler reads a SoundFont's samples.
    public enum SampleLoading: Sendable, Hashable {
        /// Every sample when the font loads: anything can play at once, at the cost of the
        /// whole font in memory (and, for SF3, decoding all of it).
        case whole
        /// A font loads its presets only; `loadSamples(for:)` reads (and for SF3 decodes, on
        /// every core) the samples of the presets a song uses, before the audio starts. The
        /// channels have no preset until then. A preset selected later that was not loaded
        /// reads its samples on the thread selecting it: name every preset that will play.
        case onDemand
    }

    /// A channel's bank and program, fixed whatever the MIDI selects.
    public struct ProgramOverride: Sendable, Hashable {
        /// 0–15 (channel 10, drums, is 9).
        public var channel: UInt8
        /// The bank, 0–16383 (128 for drum kits in General MIDI fonts), and the program (0–127).
        public var bank: UInt16
        /// The program, 0–127.
        public var program: UInt8

        /// An override that fixes `channel` to `bank` (0 by default) and `program`.
        public init(channel: UInt8, bank: UInt16 = 0, program: UInt8) {
            self.channel = channel
            self.bank = bank
            self.program = program
        }
    }
}
