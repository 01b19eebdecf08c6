import SoundFontFiles

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
/// Use it from one thread at a time: load a bank and send events before each ``render``; the
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

        /// Settings with FluidSynth's defaults.
        public init(sampleRate: Double = 44100, polyphony: Int = 256, gain: Double = 0.2, eventCapacity: Int = 16384) {
            self.sampleRate = sampleRate
            self.polyphony = polyphony
            self.gain = gain
            self.eventCapacity = eventCapacity
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
    private var bank: SoundFontBank?
    private var arena: [Int16] = [0]
    private var loaded: [Int: LoadedSample] = [:]
    private var channels = (0..<16).map { ChannelState(number: $0) }
    /// Each preset's recipes, by preset index; and the preset each channel plays.
    private var recipes: [[VoiceRecipe]] = []
    private var presets = [Int?](repeating: nil, count: 16)
    private var voices: [Voice] = []
    private var lanes: Lanes
    private var events: [(frame: Int, event: Event)] = []
    private var clock = 0
    private var serial = 0
    private var scratch: [Float]
    private let minimumNoteLength: Int

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
        voices.removeAll(keepingCapacity: true)
        var samples = Set<Int>()
        for preset in bank.presets {
            if let wanted, !wanted.contains(where: { $0.bank == preset.bank && $0.program == preset.program }) {
                continue
            }
            for zone in preset.zones {
                guard let instrument = zone.target else { continue }
                for instrumentZone in bank.instruments[instrument].zones {
                    if let sample = instrumentZone.target, !bank.samples[sample].isROM { samples.insert(sample) }
                }
            }
        }
        var arena: [Int16] = [0]
        var loaded: [Int: LoadedSample] = [:]
        for index in samples.sorted() {
            let data = try bank.readSample(index)
            let header = bank.samples[index]
            loaded[index] = LoadedSample(
                offset: arena.count, count: data.count, padded: data.points.count, loopStart: data.loopStart,
                loopEnd: data.loopEnd, sampleRate: Double(max(header.sampleRate, 1)),
                originalPitch: header.originalPitch, pitchCorrection: header.pitchCorrection)
            arena.append(contentsOf: data.points)
            // Room for the interpolation's reads past a sample's last point.
            arena.append(contentsOf: [0, 0, 0])
        }
        self.arena = arena
        self.loaded = loaded
        self.bank = bank
        recipes = bank.presets.map { VoiceRecipe.recipes(bank: bank, preset: $0) }
        for channel in 0..<16 { selectPreset(channel) }
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

    // MARK: Events

    private func apply(_ event: Event) {
        switch event {
        case .noteOn(let channel, let key, let velocity):
            guard (0..<16).contains(channel), (0...127).contains(key) else { return }
            if velocity <= 0 {
                noteOff(channel: channel, key: key)
            } else {
                noteOn(channel: channel, key: key, velocity: min(velocity, 127))
            }
        case .noteOff(let channel, let key):
            guard (0..<16).contains(channel) else { return }
            noteOff(channel: channel, key: key)
        case .controlChange(let channel, let controller, let value):
            guard (0..<16).contains(channel), (0...127).contains(controller) else { return }
            controlChange(channel: channel, controller: controller, value: min(max(value, 0), 127))
        case .programChange(let channel, let program):
            guard (0..<16).contains(channel) else { return }
            channels[channel].program = min(max(program, 0), 127)
            selectPreset(channel)
        case .pitchBend(let channel, let value):
            guard (0..<16).contains(channel) else { return }
            channels[channel].pitchBend = min(max(value, 0), 16383)
            remodulate(channel)
        case .channelPressure(let channel, let pressure):
            guard (0..<16).contains(channel) else { return }
            channels[channel].channelPressure = min(max(pressure, 0), 127)
            remodulate(channel)
        case .keyPressure(let channel, let key, let pressure):
            guard (0..<16).contains(channel), (0...127).contains(key) else { return }
            channels[channel].keyPressure[key] = UInt8(min(max(pressure, 0), 127))
            remodulate(channel, key: key)
        case .reset:
            voices.removeAll(keepingCapacity: true)
            for channel in 0..<16 {
                channels[channel] = ChannelState(number: channel)
                selectPreset(channel)
            }
        }
    }

    private func selectPreset(_ channel: Int) {
        guard let bank else { return }
        let state = channels[channel]
        let wanted = state.isDrums ? 128 : state.bank
        presets[channel] =
            Self.find(bank, wanted, state.program)
            ?? (state.isDrums
                ? Self.find(bank, 128, 0) : Self.find(bank, 0, state.program) ?? Self.find(bank, 0, 0))
    }

    private static func find(_ bank: SoundFontBank, _ bankNumber: Int, _ program: Int) -> Int? {
        let presets = bank.presets
        for index in 0..<presets.count where presets[index].bank == bankNumber && presets[index].program == program {
            return index
        }
        return nil
    }

    private func noteOn(channel: Int, key: Int, velocity: Int) {
        guard let preset = presets[channel] else { return }
        // The same key again: the voices it started are released first.
        noteOff(channel: channel, key: key)
        serial += 1
        let presetRecipes = recipes[preset]
        for number in 0..<presetRecipes.count {
            let recipe = presetRecipes[number]
            guard recipe.keys.contains(key), recipe.velocities.contains(velocity), let sample = loaded[recipe.sample]
            else { continue }
            startVoice(
                recipe, number: number, preset: preset, sample: sample, channel: channel, key: key, velocity: velocity)
        }
    }

    private func startVoice(
        _ recipe: VoiceRecipe, number: Int, preset: Int, sample: LoadedSample, channel: Int, key: Int, velocity: Int
    ) {
        if voices.count >= settings.polyphony {
            guard let victim = leastImportantVoice() else { return }
            removeVoice(victim)
        }
        let generators = recipe.generators
        let fixedKey = generators[.fixedKey]
        let fixedVelocity = generators[.fixedVelocity]
        var voice = Voice(
            channel: channel, key: key, velocity: velocity, effectiveKey: fixedKey >= 0 ? Int(fixedKey) : key,
            effectiveVelocity: fixedVelocity >= 0 ? Int(fixedVelocity) : velocity, serial: serial,
            preset: preset, recipe: number, values: generators, sample: sample,
            volume: Envelope(
                delay: 0, attack: 0, hold: 0, decay: 0, sustain: 0, release: 0, sampleRate: settings.sampleRate,
                holdIsZero: false),
            modulation: Envelope(
                delay: 0, attack: 0, hold: 0, decay: 0, sustain: 0, release: 0, sampleRate: settings.sampleRate,
                holdIsZero: false),
            exclusiveClass: Int(generators[.exclusiveClass]), sampleMode: Int(generators[.sampleModes]) & 3)
        voice.modulate(channels[channel], recipe: recipe)
        let keyOffset = 60 - Double(voice.effectiveKey)
        voice.volume = Envelope(
            delay: voice.value(.volumeEnvelopeDelay), attack: voice.value(.volumeEnvelopeAttack),
            hold: voice.value(.volumeEnvelopeHold) + voice.value(.keyToVolumeEnvelopeHold) * keyOffset,
            decay: voice.value(.volumeEnvelopeDecay) + voice.value(.keyToVolumeEnvelopeDecay) * keyOffset,
            sustain: 1 - 0.001 * voice.value(.volumeEnvelopeSustain),
            release: max(voice.value(.volumeEnvelopeRelease), -7200), sampleRate: settings.sampleRate,
            holdIsZero: voice.value(.volumeEnvelopeHold) <= -32768)
        voice.modulation = Envelope(
            delay: voice.value(.modulationEnvelopeDelay), attack: voice.value(.modulationEnvelopeAttack),
            hold: voice.value(.modulationEnvelopeHold) + voice.value(.keyToModulationEnvelopeHold) * keyOffset,
            decay: voice.value(.modulationEnvelopeDecay) + voice.value(.keyToModulationEnvelopeDecay) * keyOffset,
            sustain: 1 - 0.001 * voice.value(.modulationEnvelopeSustain),
            release: voice.value(.modulationEnvelopeRelease),
            sampleRate: settings.sampleRate, holdIsZero: voice.value(.modulationEnvelopeHold) <= -32768)
        // An exclusive class cuts the channel's earlier voices of the class.
        if voice.exclusiveClass != 0 {
            for index in voices.indices
            where voices[index].channel == channel && voices[index].exclusiveClass == voice.exclusiveClass
                && voices[index].serial < serial
            {
                voices[index].volume.setRelease(timecents: -200, sampleRate: settings.sampleRate)
                voices[index].modulation.setRelease(timecents: -200, sampleRate: settings.sampleRate)
                release(index)
            }
        }
        let slot = voices.count
        voices.append(voice)
        placeInLanes(slot)
    }

    /// Sets a new voice's lane: its sample points, loop, and silence until its first control update.
    private func placeInLanes(_ slot: Int) {
        let voice = voices[slot]
        let sample = voice.sample
        let start = min(max(voice.address(.startAddressOffset, .startAddressCoarseOffset), 0), sample.count - 1)
        let last = min(
            max(sample.count - 1 + voice.address(.endAddressOffset, .endAddressCoarseOffset), start),
            sample.count - 1)
        let loopStart = min(
            max(
                sample.loopStart + voice.address(.startLoopAddressOffset, .startLoopAddressCoarseOffset), start),
            last + 1)
        let loopEnd = min(
            max(sample.loopEnd + voice.address(.endLoopAddressOffset, .endLoopAddressCoarseOffset), start),
            last + 1)
        let loops = (voice.sampleMode == 1 || voice.sampleMode == 3) && loopEnd - loopStart >= 2
        let (group, lane) = (slot / Lanes.width, slot % Lanes.width)
        lanes.position[group][lane] = Int32(sample.offset + start)
        lanes.fraction[group][lane] = 0
        lanes.stepWhole[group][lane] = 0
        lanes.stepFraction[group][lane] = 0
        lanes.start[group][lane] = Int32(sample.offset + start)
        lanes.last[group][lane] = Int32(sample.offset + last)
        lanes.loopStart[group][lane] = Int32(sample.offset + loopStart)
        lanes.loopEnd[group][lane] = Int32(sample.offset + loopEnd)
        lanes.looping[group][lane] = loops ? -1 : 0
        lanes.wrapped[group][lane] = 0
        lanes.playing[group][lane] = -1
        lanes.gain[group][lane] = 0
        lanes.gainStep[group][lane] = 0
        lanes.z1[group][lane] = 0
        lanes.z2[group][lane] = 0
        voices[slot].needsControl = true
        voices[slot].filterReady = false
    }

    private func noteOff(channel: Int, key: Int) {
        for index in voices.indices
        where voices[index].channel == channel && voices[index].key == key && !voices[index].isReleased
            && voices[index].hold == .none
        {
            if channels[channel].controllers[64] >= 64 {
                voices[index].hold = .sustained
            } else if voices[index].heldBySostenuto {
                voices[index].hold = .sostenuto
            } else if voices[index].age < minimumNoteLength {
                voices[index].releaseAtAge = minimumNoteLength
            } else {
                release(index)
            }
        }
    }

    private func release(_ index: Int) {
        voices[index].volume.advance(voices[index].age - voices[index].envelopeAge)
        voices[index].modulation.advance(voices[index].age - voices[index].envelopeAge)
        voices[index].envelopeAge = voices[index].age
        voices[index].volume.release()
        voices[index].modulation.release(convexAttack: true)
        voices[index].isReleased = true
        voices[index].hold = .none
        voices[index].releaseAtAge = nil
        voices[index].needsControl = true
        if voices[index].sampleMode == 3 {
            lanes.looping[index / Lanes.width][index % Lanes.width] = 0
        }
    }

    private func controlChange(channel: Int, controller: Int, value: Int) {
        var state = channels[channel]
        state.controllers[controller] = UInt8(value)
        channels[channel] = state
        switch controller {
        case 0:
            if !state.isDrums { channels[channel].bank = value }
        case 64:
            if value < 64 {
                for index in voices.indices where voices[index].channel == channel && voices[index].hold == .sustained {
                    voices[index].hold = .none
                    if voices[index].heldBySostenuto { voices[index].hold = .sostenuto } else { releaseOrDefer(index) }
                }
            }
        case 66:
            let wasDown = channels[channel].sostenutoDown
            if value >= 64 && !wasDown {
                channels[channel].sostenutoDown = true
                for index in voices.indices where voices[index].channel == channel && !voices[index].isReleased {
                    voices[index].heldBySostenuto = true
                }
            } else if value < 64 && wasDown {
                channels[channel].sostenutoDown = false
                for index in voices.indices where voices[index].channel == channel && voices[index].heldBySostenuto {
                    voices[index].heldBySostenuto = false
                    if voices[index].hold == .sostenuto {
                        voices[index].hold = .none
                        releaseOrDefer(index)
                    }
                }
            }
        case 6, 38:
            dataEntry(channel: channel)
        case 98, 99:
            channels[channel].selectedRPN = nil
            if controller == 99 {
                channels[channel].selectedNRPN = value << 7 | Int(channels[channel].controllers[98] & 0x7F)
                channels[channel].nrpnGenerator = 0
            } else {
                let msb = Int(channels[channel].controllers[99])
                channels[channel].selectedNRPN = msb << 7 | value
                if msb == 120 {
                    if value < 100 {
                        channels[channel].nrpnGenerator += value
                    } else if value == 100 {
                        channels[channel].nrpnGenerator += 100
                    } else if value == 101 {
                        channels[channel].nrpnGenerator += 1000
                    } else if value == 102 {
                        channels[channel].nrpnGenerator += 10000
                    }
                }
            }
        case 100, 101:
            channels[channel].selectedNRPN = nil
            channels[channel].selectedRPN =
                Int(channels[channel].controllers[101]) << 7 | Int(channels[channel].controllers[100])
        case 120:
            var index = 0
            while index < voices.count {
                if voices[index].channel == channel { removeVoice(index) } else { index += 1 }
            }
        case 121:
            channels[channel].resetControllers(all: false)
            for index in voices.indices where voices[index].channel == channel && voices[index].hold != .none {
                voices[index].hold = .none
                releaseOrDefer(index)
            }
        case 123...127:
            for index in voices.indices where voices[index].channel == channel && !voices[index].isReleased {
                if channels[channel].controllers[64] >= 64 {
                    voices[index].hold = .sustained
                } else {
                    releaseOrDefer(index)
                }
            }
        default:
            break
        }
        remodulate(channel)
    }

    private func releaseOrDefer(_ index: Int) {
        if voices[index].age < minimumNoteLength {
            voices[index].releaseAtAge = minimumNoteLength
        } else {
            release(index)
        }
    }

    private func dataEntry(channel: Int) {
        let state = channels[channel]
        let msb = Int(state.controllers[6])
        let value = msb << 7 | Int(state.controllers[38])
        if let rpn = state.selectedRPN {
            switch rpn {
            case 0: channels[channel].bendRange = msb
            case 1:
                channels[channel].generatorOffsets[Int(Generator.fineTune.rawValue)] = Double(value - 8192) * 100 / 8192
            case 2: channels[channel].generatorOffsets[Int(Generator.coarseTune.rawValue)] = Double(msb - 64)
            default: break
            }
        } else if let nrpn = state.selectedNRPN, nrpn >> 7 == 120, state.nrpnGenerator < Generator.slotCount,
            let generator = Generator(rawValue: UInt16(state.nrpnGenerator))
        {
            channels[channel].generatorOffsets[generator] = Double(value - 8192) * generator.nrpnScale
        }
    }

    private func remodulate(_ channel: Int, key: Int? = nil) {
        for index in voices.indices where voices[index].channel == channel && (key == nil || voices[index].key == key) {
            voices[index].modulate(channels[channel], recipe: recipes[voices[index].preset][voices[index].recipe])
            voices[index].needsControl = true
        }
    }

    // MARK: Voices

    /// FluidSynth's stealing priority: drums high; released, then held voices low; older and
    /// quieter voices lower.
    private func leastImportantVoice() -> Int? {
        var best: Int?
        var lowest = Double.infinity
        for (index, voice) in voices.enumerated() {
            var priority = 0.0
            if channels[voice.channel].isDrums {
                priority += 4000
            } else if voice.isReleased {
                priority -= 2000
            } else if voice.hold != .none {
                priority -= 1000
            }
            priority += 1000 * settings.sampleRate / Double(max(voice.age, 1))
            priority += 500 / max(voice.value(.initialAttenuation), 0.1)
            if priority < lowest {
                lowest = priority
                best = index
            }
        }
        return best
    }

    private func removeVoice(_ index: Int) {
        let last = voices.count - 1
        if index != last {
            voices[index] = voices[last]
            lanes.move(last, to: index)
        }
        voices.removeLast()
        let (group, lane) = (last / Lanes.width, last % Lanes.width)
        lanes.playing[group][lane] = 0
        lanes.gain[group][lane] = 0
        lanes.gainStep[group][lane] = 0
        lanes.left[group][lane] = 0
        lanes.right[group][lane] = 0
        lanes.reverb[group][lane] = 0
        lanes.chorus[group][lane] = 0
    }

    private func removeStoppedSampleVoices() {
        var index = 0
        while index < voices.count {
            if lanes.playing[index / Lanes.width][index % Lanes.width] == 0 { removeVoice(index) } else { index += 1 }
        }
    }

    /// Computes voice `index`'s control values for the `length` frames to come; false when the
    /// voice has ended (and was removed).
    private func control(_ index: Int, length: Int) -> Bool {
        var voice = voices[index]
        voice.needsControl = false
        voice.volume.advance(voice.age - voice.envelopeAge)
        voice.modulation.advance(voice.age - voice.envelopeAge)
        voice.envelopeAge = voice.age
        voices[index] = voice
        if let releaseAge = voice.releaseAtAge, voice.age >= releaseAge {
            release(index)
            voice = voices[index]
            voice.needsControl = false
        }
        let (group, lane) = (index / Lanes.width, index % Lanes.width)
        if voice.volume.isFinished && lanes.gain[group][lane] == 0 {
            removeVoice(index)
            return false
        }
        if voice.volume.section == .delay {
            lanes.gain[group][lane] = 0
            lanes.gainStep[group][lane] = 0
            lanes.stepWhole[group][lane] = 0
            lanes.stepFraction[group][lane] = 0
            voices[index] = voice
            return true
        }
        let targetAge = voice.age + length
        var volume = voice.volume
        volume.advance(length)
        var modulation = voice.modulation
        modulation.advance(length)
        let rate = settings.sampleRate
        let modulationLFOTiming = voice.lfoTiming(
            delay: .modulationLFODelay, frequency: .modulationLFOFrequency, sampleRate: rate)
        let vibratoLFOTiming = voice.lfoTiming(
            delay: .vibratoLFODelay, frequency: .vibratoLFOFrequency, sampleRate: rate)
        let modulationLFO = Voice.lfo(
            age: targetAge, delay: modulationLFOTiming.delay, perSample: modulationLFOTiming.perSample)
        let vibratoLFO = Voice.lfo(age: targetAge, delay: vibratoLFOTiming.delay, perSample: vibratoLFOTiming.perSample)
        let modulationEnvelope =
            modulation.section == .attack
            ? Conversions.curve(Conversions.convex, at: 127 * modulation.level) : modulation.level

        // Amplitude.
        let attenuation = min(max(voice.value(.initialAttenuation), 0), 1440)
        let tremolo = -modulationLFO * voice.clamped(.modulationLFOToVolume, 960)
        let amplitude: Float
        if volume.isFinished {
            amplitude = 0
        } else if volume.section == .attack {
            amplitude =
                Conversions.amplitude(centibels: attenuation) * Conversions.amplitude(centibels: tremolo)
                * Float(volume.level)
        } else {
            amplitude = Conversions.amplitude(centibels: attenuation + 960 * (1 - volume.level) + tremolo)
        }
        lanes.gainStep[group][lane] = (amplitude - lanes.gain[group][lane]) / Float(length)

        // Pitch.
        let root = voice.rootCents
        var cents =
            voice.value(.scaleTuning) * (Double(voice.effectiveKey) - root / 100) + root + 100
            * voice.value(.coarseTune)
            + voice.value(.fineTune)
        cents +=
            modulationLFO * voice.clamped(.modulationLFOToPitch, 12000) + vibratoLFO
            * voice.clamped(.vibratoLFOToPitch, 12000)
            + modulationEnvelope * voice.clamped(.modulationEnvelopeToPitch, 12000)
        var ratio = Conversions.hertz(cents: cents) / (Conversions.hertz(cents: root) * rate / voice.sample.sampleRate)
        if !(ratio > 0) || !ratio.isFinite { ratio = 1 }
        ratio = min(ratio, 1_048_576)
        let whole = ratio.rounded(.down)
        lanes.stepWhole[group][lane] = Int32(whole)
        lanes.stepFraction[group][lane] = UInt32(min((ratio - whole) * 4_294_967_296, 4_294_967_295))

        // Filter.
        let cutoffCents = min(
            max(
                voice.value(.initialFilterCutoff) + modulationLFO * voice.clamped(.modulationLFOToFilterCutoff, 12000)
                    + modulationEnvelope * voice.clamped(.modulationEnvelopeToFilterCutoff, 12000), 1500), 13500)
        let cutoff = min(max(Conversions.hertz(cents: cutoffCents), 5), 0.45 * rate)
        let qDecibels = min(max(voice.value(.initialFilterQ) / 10, 0), 96) - 3.01
        let q = pow(10, qDecibels / 20)
        let filterGain = 1 / q.squareRoot()
        let omega = 2 * Double.pi * cutoff / rate
        let alpha = sin(omega) / (2 * q)
        let b0 = Float(filterGain * (1 - cos(omega)) / (2 * (1 + alpha)))
        let a1 = Float(-2 * cos(omega) / (1 + alpha))
        let a2 = Float((1 - alpha) / (1 + alpha))
        if !voice.filterReady {
            lanes.b0[group][lane] = b0
            lanes.b1[group][lane] = 2 * b0
            lanes.a1[group][lane] = a1
            lanes.a2[group][lane] = a2
            lanes.b0Step[group][lane] = 0
            lanes.b1Step[group][lane] = 0
            lanes.a1Step[group][lane] = 0
            lanes.a2Step[group][lane] = 0
            voice.filterReady = true
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
        var (panLeft, panRight) = Conversions.pan(voice.value(.pan))
        let balance =
            960
            * channels[voice.channel].mapped(
                ModulatorSource(rawValue: 0x0688), key: voice.effectiveKey, velocity: voice.effectiveVelocity,
                isAmountSource: false)
        if balance > 0 { panLeft *= Conversions.amplitude(centibels: balance) }
        if balance < 0 { panRight *= Conversions.amplitude(centibels: -balance) }
        let gain = Float(settings.gain)
        lanes.left[group][lane] = gain * panLeft
        lanes.right[group][lane] = gain * panRight
        lanes.reverb[group][lane] = gain * Float(min(max(voice.value(.reverbSend) / 1000, 0), 1))
        lanes.chorus[group][lane] = gain * Float(min(max(voice.value(.chorusSend) / 1000, 0), 1))
        voices[index] = voice
        return true
    }
}

extension Generator {
    /// The factor an SF2 NRPN's value is multiplied by for this generator (SoundFont 2.04, 9.6.3):
    /// 2 for the times, frequencies and pitch amounts that have wide ranges, 1 otherwise.
    var nrpnScale: Double {
        switch self {
        case .initialFilterCutoff, .modulationLFOToPitch, .vibratoLFOToPitch, .modulationEnvelopeToPitch,
            .modulationLFOToFilterCutoff, .modulationEnvelopeToFilterCutoff, .modulationLFODelay,
            .modulationLFOFrequency, .vibratoLFODelay, .vibratoLFOFrequency, .modulationEnvelopeDelay,
            .modulationEnvelopeAttack, .modulationEnvelopeHold, .modulationEnvelopeDecay, .modulationEnvelopeRelease,
            .volumeEnvelopeDelay, .volumeEnvelopeAttack, .volumeEnvelopeHold, .volumeEnvelopeDecay,
            .volumeEnvelopeRelease:
            2
        default: 1
        }
    }
}
