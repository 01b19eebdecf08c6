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
        if voices[index].advanceEnvelopes() {
            release(index)
            voices[index].needsControl = false
        }
        let (channel, key, velocity) = (
            voices[index].channel, voices[index].effectiveKey, voices[index].effectiveVelocity
        )
        let balance =
            960
            * channels[channel].mapped(
                ModulatorSource(rawValue: 0x0688), key: key, velocity: velocity, isAmountSource: false)
        let sounding = voices[index].control(
            length: length, sampleRate: settings.sampleRate, gain: Float(settings.gain), balance: balance,
            lanes: &lanes, slot: index)
        if !sounding { removeVoice(index) }
        return sounding
    }
}
