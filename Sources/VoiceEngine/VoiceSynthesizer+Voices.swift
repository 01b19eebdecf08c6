import SoundFontFiles

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Voices: how one starts (its envelopes, its lane), which one gives way when all are playing,
/// and its control values every 64 frames.
extension VoiceSynthesizer {
    /// FluidSynth's stealing priority: drums high; released, then held voices low; older and
    /// quieter voices lower.
    func leastImportantVoice() -> Int? {
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

    func removeVoice(_ index: Int) {
        let last = voices.count - 1
        if index != last {
            voices[index] = voices[last]
            lanes.move(last, to: index)
        }
        voices.removeLast()
        lanes.clear(last)
    }

    func removeStoppedSampleVoices() {
        var index = 0
        while index < voices.count {
            if lanes.playing[index / Lanes.width][index % Lanes.width] == 0 { removeVoice(index) } else { index += 1 }
        }
    }

    /// Computes voice `index`'s control values for the `length` frames to come; false when the
    /// voice has ended (and was removed).
    func control(_ index: Int, length: Int) -> Bool {
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
            // Two factors, each clamped at 0 cB: a tremolo's negative half cannot undo the attenuation.
            amplitude =
                Conversions.amplitude(centibels: attenuation)
                * Conversions.amplitude(centibels: 960 * (1 - volume.level) + tremolo)
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
