import SoundFontFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What MIDI does to the synthesizer: note-ons start voices, note-offs and pedals release them,
/// controllers, (N)RPNs, the wheel and pressure re-modulate the channel's voices.
extension VoiceSynthesizer {
    func apply(_ event: Event) {
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
            for slot in voices.indices { lanes.clear(slot) }
            voices.removeAll(keepingCapacity: true)
            for channel in 0..<16 {
                channels[channel] = ChannelState(number: channel)
                selectPreset(channel)
            }
        }
    }

    func selectPreset(_ channel: Int) {
        guard let bank else { return }
        let state = channels[channel]
        let wanted = state.isDrums ? 128 : state.bank
        presets[channel] =
            Self.find(bank, wanted, state.program)
            ?? (state.isDrums
                ? Self.find(bank, 128, 0) : Self.find(bank, 0, state.program) ?? Self.find(bank, 0, 0))
    }

    static func find(_ bank: SoundFontBank, _ bankNumber: Int, _ program: Int) -> Int? {
        let presets = bank.presets
        for index in 0..<presets.count where presets[index].bank == bankNumber && presets[index].program == program {
            return index
        }
        return nil
    }

    func noteOn(channel: Int, key: Int, velocity: Int) {
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

    func startVoice(
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
    func placeInLanes(_ slot: Int) {
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

    func noteOff(channel: Int, key: Int) {
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

    func release(_ index: Int) {
        voices[index].volume.advance(voices[index].age - voices[index].envelopeAge)
        voices[index].modulation.advance(voices[index].age - voices[index].envelopeAge)
        voices[index].envelopeAge = voices[index].age
        let timing = voices[index].lfoTiming(
            delay: .modulationLFODelay, frequency: .modulationLFOFrequency, sampleRate: settings.sampleRate)
        let lfo = Voice.lfo(age: voices[index].age, delay: timing.delay, perSample: timing.perSample)
        voices[index].volume.release(
            lfoCentibels: -lfo * voices[index].clamped(.modulationLFOToVolume, 960))
        voices[index].modulation.release(convexAttack: true)
        voices[index].isReleased = true
        voices[index].hold = .none
        voices[index].releaseAtAge = nil
        voices[index].needsControl = true
        if voices[index].sampleMode == 3 {
            lanes.looping[index / Lanes.width][index % Lanes.width] = 0
        }
    }

    func controlChange(channel: Int, controller: Int, value: Int) {
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

    func releaseOrDefer(_ index: Int) {
        if voices[index].age < minimumNoteLength {
            voices[index].releaseAtAge = minimumNoteLength
        } else {
            release(index)
        }
    }

    func dataEntry(channel: Int) {
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

    func remodulate(_ channel: Int, key: Int? = nil) {
        for index in voices.indices where voices[index].channel == channel && (key == nil || voices[index].key == key) {
            voices[index].modulate(channels[channel], recipe: recipes[voices[index].preset][voices[index].recipe])
            voices[index].needsControl = true
        }
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
