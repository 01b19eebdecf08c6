import AudioGraph
import CFluidSynth
import MIDICore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A General MIDI sampler over one FluidSynth synthesizer (16 channels): the counterpart of
/// AVAudioUnitSampler. It plays SoundFont 2/3 banks, takes MIDI from the sequencer at frame
/// offsets inside each quantum, and renders stereo.
///
/// Events scheduled with `receive(_:atFrameOffset:)` are applied at their offset: the synth is
/// rendered up to the offset, the event applied, and rendering resumes. FluidSynth's own 64-frame
/// block is the only quantization left. The note API (`startNote` …) and the runtime settings
/// (`gain`, `polyphony`, …) may be used from any thread while the engine renders: they apply at
/// the start of the next quantum rendered, in the order they were made.
///
/// Only the render thread calls FluidSynth while the sampler renders (FluidSynth's own API lock
/// is off, so that the render thread never waits for another thread): what must happen at once
/// (loading fonts and samples, `selectProgram`, `program(onChannel:)`) waits for the quantum in
/// progress to end, and a quantum due meanwhile waits for it briefly or renders silence. Do such
/// work before the audio starts, or between songs.
///
/// It does not decide when notes play (the sequencer or the caller does) and does not mix (the
/// engine's mixer does).
public final class SamplerNode: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// The settings the sampler was created with. Later changes through `gain`, `polyphony`,
    /// `interpolation` and the effect switches, and an engine's rate the sampler follows, are not
    /// reflected here.
    public let settings: Settings
    /// The synthesizer; replaced only by `follow(_:)`, when an engine prepares the sampler for
    /// another rate.
    var synth: FluidSynth
    /// Control threads' way to the synthesizer (see `SynthesizerControl`).
    let control = SynthesizerControl()
    var fonts: [SoundFontID: Int32] = [:]
    /// Where each font was loaded from (helpers decoding samples on other threads load it again).
    var fontPaths: [SoundFontID: String] = [:]
    /// Set when reading a font's samples on demand failed: FluidSynth then holds presets whose
    /// samples are missing, which it must not be asked to play; later loads are refused.
    var sampleReadFailure: SoundFontError?
    /// The presets whose samples could not be read or decoded by `loadSamples(for:)` (a damaged
    /// SF3 sample, say): they play those samples silent. One line each, naming the preset.
    public internal(set) var sampleWarnings: [String] = []
    /// When the fonts are read without the zones whose samples no played note reaches
    /// (`loadSamples(for:narrowing:)`, `loadSoundFont(at:presetsOnly:)`): the usage they were
    /// read for, its presets pinned. Nil while every font is whole.
    var fontsReadFor: PresetUsage?
    /// The gain as last applied (render thread): the master volume SysEx scales it.
    var baseGain: Float
    /// The runtime settings as last set (control threads), while they wait for the next quantum.
    private let gainSetting: Atomic<UInt32>
    private let polyphonySetting: Atomic<Int>
    private let interpolationSetting: Atomic<Int32>
    private let reverbSetting: Atomic<Bool>
    private let chorusSetting: Atomic<Bool>
    // Render-thread event list for the coming quantum.
    private let eventCapacity = 8_192
    private let eventOffsets: RealTimeBuffer<Int>
    private let eventMessages: RealTimeBuffer<MIDIMessage>
    /// SysEx given as raw bytes (live input): copied here, so the audio thread builds no array.
    /// An event whose `eventSysExLengths` entry is ≥ 0 is the bytes at its `eventSysExStarts`.
    private let eventSysExStarts: RealTimeBuffer<Int>
    private let eventSysExLengths: RealTimeBuffer<Int>
    private let sysExArena: RealTimeBuffer<UInt8>
    private let sysExArenaCapacity = 16_384
    private var sysExArenaUsed = 0
    private var eventCount = 0
    private let renderedVoiceCount = Atomic<Int>(0)
    /// Bit n set: channel n's program is overridden / its notes are muted (from the settings).
    let overriddenChannels: UInt16
    let mutedChannelMask: UInt16
    /// With `takesEventsAsFluidSynthPlayer`: the FluidSynth player that calls back inside each
    /// block (`SamplerNode+PlayerBlocks.swift`), and the events it is to apply there.
    var blockClock: OpaquePointer?
    var armedEvents = 0..<0
    /// Events dropped because more than `eventCapacity` arrived in one quantum.
    public private(set) var droppedEventCount = 0

    /// Creates the synthesizer. Throws when FluidSynth rejects the settings.
    public init(name: String = "sampler", settings: Settings = Settings()) throws(SoundFontError) {
        self.settings = settings
        synth = try FluidSynth(
            sampleRate: settings.sampleRate, polyphony: settings.polyphony, reverb: settings.isReverbEnabled,
            chorus: settings.isChorusEnabled, cpuCores: settings.cpuCores)
        baseGain = settings.gain
        overriddenChannels =
            settings.ignoresPresetChanges
            ? 0xFFFF : settings.programOverrides.reduce(0) { $0 | 1 << UInt16($1.channel & 15) }
        mutedChannelMask = settings.mutedChannels.reduce(0) { $0 | 1 << UInt16($1 & 15) }
        gainSetting = Atomic(settings.gain.bitPattern)
        // (FluidSynth keeps its default for a polyphony out of its range.)
        polyphonySetting = Atomic(Int(fluid_synth_get_polyphony(synth.synth)))
        interpolationSetting = Atomic(settings.interpolation.rawValue)
        reverbSetting = Atomic(settings.isReverbEnabled)
        chorusSetting = Atomic(settings.isChorusEnabled)
        fluid_synth_set_gain(synth.synth, settings.gain)
        for channel in 0..<16 {
            fluid_synth_set_interp_method(synth.synth, Int32(channel), settings.interpolation.rawValue)
        }
        eventOffsets = RealTimeBuffer(capacity: eventCapacity)
        eventMessages = RealTimeBuffer(capacity: eventCapacity, repeating: .tuneRequest)
        eventSysExStarts = RealTimeBuffer(capacity: eventCapacity)
        eventSysExLengths = RealTimeBuffer(capacity: eventCapacity, repeating: -1)
        sysExArena = RealTimeBuffer(capacity: sysExArenaCapacity)
        super.init(name: name)
        if settings.takesEventsAsFluidSynthPlayer { startBlockClock() }
    }

    deinit {
        // The player's timer is the synthesizer's: it goes first.
        stopBlockClock()
    }

    /// A new sampler with `other`'s SoundFonts and `settings` (by default `other`'s): the fonts
    /// move to the new sampler without being reloaded, and `other` is left with none. Use it to
    /// start a render from a pristine synthesizer (no reverb or chorus state, no LFO phase)
    /// without paying for the load.
    public convenience init(
        name: String = "sampler", settings: Settings? = nil, takingSoundFontsFrom other: SamplerNode
    ) throws(SoundFontError) {
        try self.init(name: name, settings: settings ?? other.settings)
        // (This sampler renders nowhere yet: only `other` may be rendering.)
        other.exclusively {
            // Oldest first, so the stack keeps its order (the last added is searched first).
            for (identifier, fontID) in other.fonts.sorted(by: { $0.value < $1.value }) {
                guard let font = fluid_synth_get_sfont_by_id(other.synth.synth, fontID) else { continue }
                fluid_synth_remove_sfont(other.synth.synth, font)
                let newID = fluid_synth_add_sfont(synth.synth, font)
                if newID >= 0 { fonts[identifier] = newID }
            }
            fontPaths = other.fontPaths
            other.fonts.removeAll()
            other.fontPaths.removeAll()
        }
        applyProgramOverrides()
    }

    /// A new sampler that plays `owner`'s SoundFonts without loading or copying them: one copy of
    /// a bank in memory serves any number of samplers, rendering on any threads (the sample data
    /// is only read). `owner` keeps the fonts (and is kept alive by the new sampler); it should
    /// not load or unload fonts while samplers share them.
    public convenience init(
        name: String = "sampler", settings: Settings? = nil, sharingSoundFontsWith owner: SamplerNode
    ) throws(SoundFontError) {
        try self.init(name: name, settings: settings ?? owner.settings)
        owner.exclusively {
            for (identifier, fontID) in owner.fonts.sorted(by: { $0.value < $1.value }) {
                if let newID = synth.share(font: fontID, from: owner.synth) { fonts[identifier] = newID }
            }
            fontPaths = owner.fontPaths
        }
        applyProgramOverrides()
    }

    public override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    /// Prepares the sampler for the engine's format: at another rate than its synthesizer's, the
    /// sampler follows it with a new synthesizer (see `Settings.sampleRate`).
    public override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        try follow(format)
    }

    // MARK: SoundFonts

    /// Loads a SoundFont on top of the sampler's stack (the last loaded is searched first) and
    /// selects its presets on every channel (bank 0 program 0, drums on channel 10).
    ///
    /// It applies at once (after the note API's messages sent before it), holding the synthesizer:
    /// while the engine renders the sampler, its quanta are silent until the font is loaded.
    @discardableResult
    public func loadSoundFont(at path: String) throws(SoundFontError) -> SoundFontID {
        try load(path)
    }

    /// Loads a SoundFont off the calling task's thread (loading a large bank takes a while).
    @discardableResult
    public func loadSoundFont(at path: String) async throws(SoundFontError) -> SoundFontID {
        let task = Task.detached { [self] () -> Result<SoundFontID, SoundFontError> in
            do throws(SoundFontError) { return .success(try self.load(path)) } catch { return .failure(error) }
        }
        return try await task.value.get()
    }

    /// Loads a font's presets without its instruments' zones, for a sampler that loads on demand
    /// and is to play one song: `presetUsage(of:)` finds the song's presets in it, and
    /// `loadSamples(for:narrowing:)` reads the font again with the zones the song reaches (any
    /// other `loadSamples` reads it whole). Half the memory and time of reading the preset data
    /// twice whole. Where the file cannot be read so, it loads whole.
    @discardableResult
    package func loadSoundFont(at path: String, presetsOnly: Bool) throws(SoundFontError) -> SoundFontID {
        guard presetsOnly, settings.sampleLoading == .onDemand,
            let subset = SoundFontSubset(path: path, notes: [:])
        else { return try load(path) }
        let id = try load(path, subset: subset)
        if fontsReadFor == nil {
            var usage = PresetUsage()
            usage.hasEveryNote = true
            fontsReadFor = usage
        }
        return id
    }

    private func load(_ path: String, subset: SoundFontSubset? = nil) throws(SoundFontError) -> SoundFontID {
        let onDemand = settings.sampleLoading == .onDemand
        return try exclusively { () throws(SoundFontError) -> SoundFontID in
            // On demand, no channel selects a preset (which would read its samples) until
            // `loadSamples(for:)`.
            if onDemand { for channel in 0..<16 { fluid_synth_unset_program(synth.synth, Int32(channel)) } }
            let (id, _) = try synth.loadSoundFont(at: path, onDemand: onDemand, subset: subset)
            let identifier = SoundFontID(rawValue: Int(id))
            fonts[identifier] = id
            fontPaths[identifier] = path
            // Loading selects the new font's presets on every channel: the overrides again.
            applyProgramOverrides()
            return identifier
        }
    }

    /// Selects every overridden channel's bank and program (through the whole font stack). The
    /// synthesizer's owner only (the render thread, a control thread holding it, or a sampler
    /// that renders nowhere yet).
    func applyProgramOverrides() {
        for override in settings.programOverrides {
            fluid_synth_bank_select(synth.synth, Int32(override.channel), Int32(override.bank))
            fluid_synth_program_change(synth.synth, Int32(override.channel), Int32(override.program))
        }
    }

    /// Selects bank and program on a channel; throws `SoundFontError.presetMissing` when no loaded
    /// font has that preset, `SoundFontError.noSoundFontLoaded` when no font is loaded.
    ///
    /// It applies at once (after the note API's messages sent before it), holding the
    /// synthesizer: call it before the audio starts, or use `sendProgramChange`, which takes
    /// effect at the next quantum and does not throw.
    public func selectProgram(
        _ program: UInt8, bank: UInt16 = 0, onChannel channel: UInt8, in font: SoundFontID? = nil
    ) throws(SoundFontError) {
        try exclusively { () throws(SoundFontError) in
            let fontID = font.flatMap { fonts[$0] } ?? fonts.values.max() ?? -1
            guard fontID >= 0 else { throw .noSoundFontLoaded }
            try synth.select(channel: Int(channel), font: fontID, bank: Int(bank), program: Int(program))
        }
    }

    /// Releases every sounding note (all notes off on every channel, sustain ignored), at the
    /// start of the next render quantum.
    public func allNotesOff() { send(.allNotesOff) }

    /// Silences every voice without release, at the start of the next render quantum.
    public func allSoundOff() { send(.allSoundOff) }

    /// Resets every channel as a GM reset does (keeping the presets when the settings ignore
    /// preset changes), at the start of the next render quantum.
    public func systemReset() { send(MIDIMessage.systemReset) }

    /// Master gain (FluidSynth's; 0.2 is its default), 0 or more. A new gain applies at the start
    /// of the next render quantum (and replaces a master volume SysEx's scaling); reading it
    /// gives the gain last set.
    public var gain: Float {
        get { Float(bitPattern: gainSetting.load(ordering: .acquiring)) }
        set {
            let gain = max(0, newValue)
            control.sending {
                gainSetting.store(gain.bitPattern, ordering: .releasing)
                enqueue(.gain, UInt64(gain.bitPattern))
            }
        }
    }

    /// FluidSynth's own reverb, on or off (the SoundFont's and CC91's sends stay as they are).
    /// A change applies at the start of the next render quantum.
    public var isReverbEnabled: Bool {
        get { reverbSetting.load(ordering: .acquiring) }
        set {
            control.sending {
                reverbSetting.store(newValue, ordering: .releasing)
                enqueue(.reverb, newValue ? 1 : 0)
            }
        }
    }

    /// FluidSynth's own chorus, on or off. A change applies at the start of the next render quantum.
    public var isChorusEnabled: Bool {
        get { chorusSetting.load(ordering: .acquiring) }
        set {
            control.sending {
                chorusSetting.store(newValue, ordering: .releasing)
                enqueue(.chorus, newValue ? 1 : 0)
            }
        }
    }

    /// The most voices that sound at once (1–65 535); FluidSynth steals the quietest beyond it.
    /// A change applies at the start of the next render quantum; reading it gives the value last
    /// set. (FluidSynth reallocates its mixer's voice lists on the render thread for each change,
    /// and creates voices there when the polyphony exceeds the most it has had.)
    public var polyphony: Int {
        get { polyphonySetting.load(ordering: .acquiring) }
        set {
            let polyphony = max(1, min(65_535, newValue))
            control.sending {
                polyphonySetting.store(polyphony, ordering: .releasing)
                enqueue(.polyphony, UInt64(polyphony))
            }
        }
    }

    /// Sample interpolation on every channel. A change applies at the start of the next render
    /// quantum; reading it gives the value last set.
    public var interpolation: Interpolation {
        get { Interpolation(rawValue: interpolationSetting.load(ordering: .acquiring)) ?? .fourthOrder }
        set {
            control.sending {
                interpolationSetting.store(newValue.rawValue, ordering: .releasing)
                enqueue(.interpolation, UInt64(newValue.rawValue))
            }
        }
    }

    /// The bank and program selected on `channel`, as FluidSynth resolved them, once the
    /// messages sent before are applied. It reads the synthesizer at once, holding it (see
    /// `SamplerNode`): meant for a sampler at rest, not for polling while the engine renders.
    public func program(onChannel channel: UInt8) -> (bank: UInt16, program: UInt8)? {
        exclusively {
            var font: Int32 = 0
            var bank: Int32 = 0
            var program: Int32 = 0
            guard fluid_synth_get_program(synth.synth, Int32(channel), &font, &bank, &program) == FLUID_OK else {
                return nil
            }
            return (UInt16(clamping: bank), UInt8(clamping: program))
        }
    }

    /// What a note-on starts with `bank` and `program` on `channel`: for each voice (each zone
    /// and layer the loaded fonts give that key and velocity), whether its sample loops and its
    /// release time in seconds. A cost estimate for planning a render: the note is started
    /// without rendering and the channel silenced again, so call it only on a sampler that is
    /// not rendering.
    package func voiceShapes(
        forNote note: UInt8, velocity: UInt8, bank: Int, program: Int, onChannel channel: Int
    ) -> [(isLooped: Bool, releaseSeconds: Double)] {
        exclusively {
            voiceShapesHeld(forNote: note, velocity: velocity, bank: bank, program: program, onChannel: channel)
        }
    }

    private func voiceShapesHeld(
        forNote note: UInt8, velocity: UInt8, bank: Int, program: Int, onChannel channel: Int
    ) -> [(isLooped: Bool, releaseSeconds: Double)] {
        let handle = synth.synth
        fluid_synth_bank_select(handle, Int32(channel), Int32(bank))
        fluid_synth_program_change(handle, Int32(channel), Int32(program))
        fluid_synth_noteon(handle, Int32(channel), Int32(note), Int32(max(velocity, 1)))
        var voices = [OpaquePointer?](repeating: nil, count: 64)
        fluid_synth_get_voicelist(handle, &voices, Int32(voices.count), -1)
        var shapes: [(isLooped: Bool, releaseSeconds: Double)] = []
        for case let voice? in voices
        where fluid_voice_is_on(voice) != 0 && fluid_voice_get_channel(voice) == Int32(channel) {
            let mode = Int(fluid_voice_gen_get(voice, Int32(GEN_SAMPLEMODE.rawValue)))
            let release = Double(fluid_voice_gen_get(voice, Int32(GEN_VOLENVRELEASE.rawValue)))
            shapes.append((mode & 1 == 1, exp2(release / 1200)))
        }
        fluid_synth_all_sounds_off(handle, Int32(channel))
        _ = synth.render(frameCount: 64)  // the voices are freed at the next block
        return shapes
    }

    /// Voices playing at the end of the last rendered quantum (read without touching the
    /// synthesizer, so a status display never contends with the audio thread).
    public var activeVoiceCount: Int { renderedVoiceCount.load(ordering: .relaxed) }

    // MARK: Rendering

    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        guard eventCount < eventCapacity else {
            droppedEventCount += 1
            return
        }
        eventOffsets[eventCount] = frameOffset
        eventMessages[eventCount] = message
        eventSysExLengths[eventCount] = -1
        eventCount += 1
    }

    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        guard eventCount < eventCapacity, sysExArenaUsed + payload.count <= sysExArenaCapacity else {
            droppedEventCount += 1
            return
        }
        if let base = payload.baseAddress {
            (sysExArena.base + sysExArenaUsed).update(from: base, count: payload.count)
        }
        eventOffsets[eventCount] = frameOffset
        eventSysExStarts[eventCount] = sysExArenaUsed
        eventSysExLengths[eventCount] = payload.count
        sysExArenaUsed += payload.count
        eventCount += 1
    }

    public override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard control.enterRender() else {
            // A control thread holds the synthesizer (a font or samples loading): this quantum
            // is silent, and its events play at the start of the next.
            output.clear(frames: frameCount)
            for index in 0..<eventCount { eventOffsets[index] = 0 }
            return
        }
        defer { control.leaveRender() }
        // What control threads sent since the last quantum, at its start.
        applyCommands()
        let left = output.channel(0)
        let right = output.channel(1)
        var position = 0
        // Upstream of a varispeed the sampler renders another count than the engine's quantum,
        // whose frames the offsets count: scaled, each event sounds when it is due.
        // (A method, not a nested function: one capturing `position` would box it on the heap,
        // an allocation per render call.)
        let engineFrames = engineFrameCount
        var index = 0
        while index < eventCount {
            let offset = frameOffset(index, frameCount: frameCount, engineFrames: engineFrames, notBefore: position)
            if offset > position {
                _ = synth.render(frameCount: offset - position, left: left + position, right: right + position)
                position = offset
            }
            guard blockClock != nil && position < frameCount else {
                applyEvent(index)
                index += 1
                continue
            }
            // As FluidSynth's player: this offset's events are taken inside the block starting
            // here (the clock's callback), after FluidSynth applied the earlier ones and before
            // it mixes the block; they sound from the next block.
            var end = index + 1
            while end < eventCount
                && frameOffset(end, frameCount: frameCount, engineFrames: engineFrames, notBefore: position) <= offset
            {
                end += 1
            }
            armedEvents = index..<end
            let count = min(Self.fluidSynthBlockFrames, frameCount - position)
            _ = synth.render(frameCount: count, left: left + position, right: right + position)
            position += count
            // Not taken (the clock did not call back): applied after the block, as before.
            applyArmedEvents()
            index = end
        }
        eventCount = 0
        sysExArenaUsed = 0
        if position < frameCount {
            _ = synth.render(frameCount: frameCount - position, left: left + position, right: right + position)
        }
        renderedVoiceCount.store(synth.activeVoiceCount, ordering: .relaxed)
    }

    /// Where in a render of `frameCount` frames the received event at `index` applies, no earlier
    /// than `notBefore`: its offset, scaled when the engine's quantum (`engineFrames`) differs.
    private func frameOffset(_ index: Int, frameCount: Int, engineFrames: Int, notBefore position: Int) -> Int {
        var offset = eventOffsets[index]
        if engineFrames > 0 && engineFrames != frameCount {
            offset = min(max(offset, 0), engineFrames) * frameCount / engineFrames
        }
        return min(max(offset, position), frameCount)
    }

    /// FluidSynth's block (`FLUID_BUFSIZE`): it renders, and takes events, 64 frames at a time.
    static let fluidSynthBlockFrames = 64

    /// Applies the received event at `index` (a message or SysEx bytes).
    func applyEvent(_ index: Int) {
        if eventSysExLengths[index] >= 0 {
            applySystemExclusive(
                UnsafeBufferPointer(start: sysExArena.base + eventSysExStarts[index], count: eventSysExLengths[index]))
        } else {
            apply(eventMessages[index])
        }
    }

    /// Applies the events armed for the block being rendered, once.
    func applyArmedEvents() {
        let events = armedEvents
        armedEvents = 0..<0
        for index in events { applyEvent(index) }
    }

    public override func reset() {
        eventCount = 0
        sysExArenaUsed = 0
        allSoundOff()
    }
}
