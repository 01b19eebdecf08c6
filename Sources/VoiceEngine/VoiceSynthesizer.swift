import Dispatch
import SoundFontFiles
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Pianola's own SoundFont 2/3 synthesizer: the synthesis model FluidSynth 2.3 users know
/// (zones, generators, modulators, envelopes, LFOs, the resonant low-pass, Catmull-Rom
/// interpolation), with every note started, changed and ended on the exact frame it is given.
///
/// Control values (envelopes, LFOs, pitch, cutoff, gains) are computed every 64 frames of the
/// synthesizer's own clock and at each event's frame, and ramp per sample between; so the output
/// depends only on the events' frames, never on how the caller splits the rendering into quanta.
/// Voices run eight at a time in SIMD lanes.
///
/// Use it from one thread at a time: load a bank and send events before each
/// ``render(frameCount:left:right:reverb:chorus:)``; the
/// render itself does not allocate or lock.
public final class VoiceSynthesizer {
    /// What a synthesizer is set up with.
    public struct Settings: Sendable, Hashable {
        /// The output rate in hertz.
        public var sampleRate: Double
        /// The most voices sounding at once; a note beyond them takes the place of the least
        /// important voice (FluidSynth's rule and its default, 256).
        public var polyphony: Int
        /// The output gain (FluidSynth's `synth.gain`, 0.2 by default).
        public var gain: Double
        /// The most events one render takes; more are dropped.
        public var eventCapacity: Int
        /// Whether a ``NativeSamplerNode`` runs its reverb send through its reverb (on by default,
        /// as FluidSynth's `synth.reverb.active`). The synthesizer itself renders the send either way.
        public var isReverbEnabled: Bool
        /// Whether a ``NativeSamplerNode`` runs its chorus send through its chorus (on by default,
        /// as FluidSynth's `synth.chorus.active`).
        public var isChorusEnabled: Bool

        /// Settings with FluidSynth's defaults.
        public init(
            sampleRate: Double = 44100, polyphony: Int = 256, gain: Double = 0.2, eventCapacity: Int = 16384,
            isReverbEnabled: Bool = true, isChorusEnabled: Bool = true
        ) {
            self.sampleRate = sampleRate
            self.polyphony = polyphony
            self.gain = gain
            self.eventCapacity = eventCapacity
            self.isReverbEnabled = isReverbEnabled
            self.isChorusEnabled = isChorusEnabled
        }
    }

    /// A MIDI channel message for the synthesizer, at a frame of the next render.
    public enum Event: Sendable, Hashable {
        /// A note starts (velocity 0 ends it).
        case noteOn(channel: Int, key: Int, velocity: Int)
        /// A note ends.
        case noteOff(channel: Int, key: Int)
        /// A controller changes (0–127), including the channel mode messages 120–127.
        case controlChange(channel: Int, controller: Int, value: Int)
        /// The channel selects a program.
        case programChange(channel: Int, program: Int)
        /// The pitch wheel moves (0–16383, 8192 centred).
        case pitchBend(channel: Int, value: Int)
        /// The channel's pressure changes.
        case channelPressure(channel: Int, pressure: Int)
        /// A key's pressure changes.
        case keyPressure(channel: Int, key: Int, pressure: Int)
        /// Every voice stops at once and every channel returns to its defaults.
        case reset
    }

    /// The settings the synthesizer was made with.
    public let settings: Settings
    var bank: SoundFontBank?
    /// The loaded font the arena, samples and recipes come from (kept alive while they are read).
    var font: VoiceFont?
    var arena: [Int16] = [0]
    var loaded: [Int: LoadedSample] = [:]
    var channels = (0..<16).map { ChannelState(number: $0) }
    /// Each preset's recipes, by preset index; and the preset each channel plays.
    var recipes: [[VoiceRecipe]] = []
    var presets = [Int?](repeating: nil, count: 16)
    var voices: [Voice] = []
    var lanes: Lanes
    var events: [(frame: Int, event: Event)] = []
    var clock = 0
    var serial = 0
    var scratch: [Float]
    let minimumNoteLength: Int

    /// The number of voices sounding.
    public var activeVoiceCount: Int { voices.count }

    /// A synthesizer with no bank loaded.
    public init(settings: Settings = Settings()) {
        self.settings = settings
        lanes = Lanes(capacity: settings.polyphony)
        voices.reserveCapacity(settings.polyphony)
        events.reserveCapacity(settings.eventCapacity)
        scratch = [Float](repeating: 0, count: (settings.polyphony + Lanes.width) * Envelope.block)
        minimumNoteLength = Int((settings.sampleRate * 0.010).rounded())
        // The tables are made on first use: here, not on the audio thread.
        _ = (Conversions.concave.count, Conversions.convex.count, Conversions.amplitudes.count)
        _ = (Conversions.panGains.count, DefaultModulators.all.count, Lanes.interpolation.count)
    }

    /// Makes `bank` the synthesizer's sound and reads the samples of the presets given
    /// (`presets` as bank and program pairs; nil reads every sample the bank's presets use).
    /// Voices sounding stop. Channels select their presets again.
    ///
    /// - Throws: ``SoundFontReadError`` when a sample cannot be read or decoded.
    public func load(
        _ bank: SoundFontBank, presets wanted: [(bank: Int, program: Int)]? = nil
    ) throws(SoundFontReadError) {
        load(try VoiceFont(bank: bank, presets: wanted))
    }

    /// Makes `font` the synthesizer's sound. The font's samples are not copied: every
    /// synthesizer given the same font plays from its one copy. Voices sounding stop. Channels
    /// select their presets again.
    public func load(_ font: VoiceFont) {
        for slot in voices.indices { lanes.clear(slot) }
        voices.removeAll(keepingCapacity: true)
        // Arrays share their storage until written: the synthesizer only reads them.
        arena = font.arena
        loaded = font.loaded
        recipes = font.recipes
        bank = font.bank
        self.font = font
        for channel in 0..<16 { selectPreset(channel) }
    }

    /// The preset a channel plays after it selects `bank` and `program` (as bank select MSB and
    /// program change), with the fallbacks the synthesizer applies: the drum channel (9) plays
    /// bank 128; a missing preset falls back to bank 128 program 0 on the drum channel, else to
    /// bank 0 with the same program, else to bank 0 program 0. Nil when none of those exists.
    public static func preset(in font: SoundFontBank, channel: Int, bank: Int, program: Int) -> Preset? {
        let isDrums = channel == 9
        let index =
            find(font, isDrums ? 128 : bank, program)
            ?? (isDrums ? find(font, 128, 0) : find(font, 0, program) ?? find(font, 0, 0))
        return index.map { font.presets[$0] }
    }

    /// Queues `event` at `frame` of the next ``render(frameCount:left:right:reverb:chorus:)``
    /// (frames count from that render's first frame; events at the same frame keep their order).
    public func send(_ event: Event, atFrame frame: Int) {
        guard events.count < settings.eventCapacity else { return }
        var index = events.count
        while index > 0 && events[index - 1].frame > frame { index -= 1 }
        if index == events.count {
            events.append((frame, event))
        } else {
            events.insert((frame, event), at: index)
        }
    }

    /// Renders `frameCount` frames, applying the queued events at their frames, and adds the dry
    /// stereo signal into `left` and `right` and the mono effect sends into `reverb` and `chorus`.
    public func render(
        frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>,
        reverb: UnsafeMutablePointer<Float>, chorus: UnsafeMutablePointer<Float>
    ) {
        var frame = 0
        var next = 0
        var pending = 0
        while frame < frameCount {
            while next < events.count && events[next].frame <= frame {
                apply(events[next].event)
                next += 1
            }
            let now = clock + frame
            let gridEnd = (now / Envelope.block + 1) * Envelope.block
            var end = min(frameCount, gridEnd - clock)
            if next < events.count { end = min(end, max(events[next].frame, frame + 1)) }
            let atGrid = now % Envelope.block == 0
            var index = 0
            while index < voices.count {
                let splitDue = voices[index].nextSplit.map { voices[index].age >= $0 } ?? false
                if atGrid || voices[index].needsControl || splitDue {
                    if !control(index, length: gridEnd - now) { continue }
                }
                if let split = voices[index].nextSplit {
                    end = min(end, max(frame + split - voices[index].age, frame + 1))
                }
                index += 1
            }
            pending = end - frame
            arena.withUnsafeBufferPointer { arena in
                scratch.withUnsafeMutableBufferPointer { scratch in
                    lanes.render(
                        slots: voices.count, count: pending, arena: arena.baseAddress!, offset: frame,
                        scratch: scratch.baseAddress!, dryLeft: left, dryRight: right, reverbBus: reverb,
                        chorusBus: chorus)
                }
            }
            for index in voices.indices { voices[index].age += pending }
            frame = end
            removeStoppedSampleVoices()
        }
        while next < events.count {
            apply(events[next].event)
            next += 1
        }
        events.removeAll(keepingCapacity: true)
        clock += frameCount
    }
}

/// A SoundFont bank with the samples of some or all of its presets read into memory, and every
/// preset's voice recipes: what a ``VoiceSynthesizer`` plays. It never changes once made, so one
/// font serves any number of synthesizers on any threads (the lanes of a split render, the
/// workers of a batch) with one copy of its samples.
public final class VoiceFont: Sendable {
    /// The bank the samples come from.
    public let bank: SoundFontBank
    /// The presets whose samples were read, as bank and program pairs (nil: every preset's).
    public let loadedPresets: [(bank: Int, program: Int)]?
    /// Every read sample's points, each padded for the interpolation, one after the other.
    let arena: [Int16]
    /// Where each read sample is in the arena, by sample header index.
    let loaded: [Int: LoadedSample]
    /// Each preset's recipes, by preset index.
    let recipes: [[VoiceRecipe]]

    /// Reads the samples of `presets` of `bank` (bank and program pairs; nil reads every sample
    /// the bank's presets use, SF3's decoded) and works out every preset's voices.
    ///
    /// - Throws: ``SoundFontReadError`` when a sample cannot be read or decoded.
    public init(bank: SoundFontBank, presets wanted: [(bank: Int, program: Int)]? = nil) throws(SoundFontReadError) {
        var samples = Set<Int>()
        for preset in bank.presets {
            if let wanted, !wanted.contains(where: { $0.bank == preset.bank && $0.program == preset.program }) {
                continue
            }
            for zone in preset.zones {
                guard let instrument = zone.target, instrument < bank.instruments.count else { continue }
                for instrumentZone in bank.instruments[instrument].zones {
                    if let sample = instrumentZone.target, sample < bank.samples.count, !bank.samples[sample].isROM {
                        samples.insert(sample)
                    }
                }
            }
        }
        // Read (SF3: decoded) on every core, then copied into an arena of the exact size, each
        // sample's own buffer freed once copied: the peak is about one copy of the samples.
        let indices = samples.sorted()
        let results = Mutex([Result<SampleData, SoundFontReadError>?](repeating: nil, count: indices.count))
        DispatchQueue.concurrentPerform(iterations: indices.count) { slot in
            let result: Result<SampleData, SoundFontReadError>
            do throws(SoundFontReadError) { result = .success(try bank.readSample(indices[slot])) } catch {
                result = .failure(error)
            }
            results.withLock { $0[slot] = result }
        }
        var read = results.withLock { results in
            let read = results
            results = []
            return read
        }
        var total = 1
        for result in read {
            if case .success(let data) = result { total += data.points.count + 3 }
        }
        var arena: [Int16] = [0]
        arena.reserveCapacity(total)
        var loaded: [Int: LoadedSample] = [:]
        for (slot, index) in indices.enumerated() {
            guard let result = read[slot] else { continue }
            let data = try result.get()
            read[slot] = nil
            let header = bank.samples[index]
            loaded[index] = LoadedSample(
                offset: arena.count, count: data.count, padded: data.points.count, loopStart: data.loopStart,
                loopEnd: data.loopEnd, sampleRate: Double(max(header.sampleRate, 1)),
                originalPitch: header.originalPitch, pitchCorrection: header.pitchCorrection)
            arena.append(contentsOf: data.points)
            // Room for the interpolation's reads past a sample's last point.
            arena.append(contentsOf: [0, 0, 0])
        }
        self.bank = bank
        loadedPresets = wanted
        self.arena = arena
        self.loaded = loaded
        recipes = bank.presets.map { VoiceRecipe.recipes(bank: bank, preset: $0) }
    }

    /// The voices a note of `key` at `velocity` starts on `channel` after it selects `bank` and
    /// `program` (with ``VoiceSynthesizer/preset(in:channel:bank:program:)``'s fallbacks): for
    /// each, whether its sample loops and its volume envelope's release in seconds. For sharing a
    /// song's channels out by how much they play.
    public func voiceShapes(
        channel: Int, bank bankNumber: Int, program: Int, key: Int, velocity: Int
    ) -> [(isLooped: Bool, releaseSeconds: Double)] {
        let isDrums = channel == 9
        guard
            let preset = VoiceSynthesizer.find(bank, isDrums ? 128 : bankNumber, program)
                ?? (isDrums
                    ? VoiceSynthesizer.find(bank, 128, 0)
                    : VoiceSynthesizer.find(bank, 0, program) ?? VoiceSynthesizer.find(bank, 0, 0))
        else { return [] }
        return recipes[preset].compactMap { recipe in
            guard recipe.keys.contains(key), recipe.velocities.contains(velocity), loaded[recipe.sample] != nil
            else { return nil }
            let mode = Int(recipe.generators[.sampleModes])
            let release = pow(2, max(-12000, min(8000, recipe.generators[.volumeEnvelopeRelease])) / 1200)
            return (isLooped: mode == 1 || mode == 3, releaseSeconds: release)
        }
    }

    /// How many samples were read.
    public var sampleCount: Int { loaded.count }

    /// The bytes the read samples take in memory.
    public var sampleBytes: Int { arena.count * MemoryLayout<Int16>.stride }
}
