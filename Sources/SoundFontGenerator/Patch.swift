/// How one General MIDI program plays a tone: envelopes, filter, modulation and layering,
/// expressed directly as SoundFont generators.
struct Patch: Sendable {
    typealias Generator = SoundFont2Bank.Generator

    var tone: String
    /// Volume envelope: attack, hold, decay in seconds; sustain as attenuation in dB; release in s.
    var attack = 0.002, hold = 0.0, decay = 1.0, sustainDB = 0.0, release = 0.25
    /// Decay shortening per key (timecents/key): higher notes of struck instruments die sooner.
    var decayPerKey = 0
    /// Low-pass filter cutoff in Hz (nil: no filter), resonance in dB.
    var cutoff: Double? = nil
    var resonanceDB = 0.0
    /// Modulation envelope routed to the filter (cents) and pitch (cents).
    var filterEnvelopeCents = 0, pitchEnvelopeCents = 0
    var modAttack = 0.001, modDecay = 0.5, modSustain = 0.0
    /// Vibrato (vibrato LFO to pitch) and tremolo (modulation LFO to volume).
    var vibratoHz = 5.5, vibratoCents = 0, vibratoDelay = 0.3
    var tremoloHz = 5.0, tremoloCB = 0
    /// Extra attenuation in dB to balance the families.
    var attenuationDB = 0.0
    /// Layers: (coarse tune in semitones, fine tune in cents, pan -500...500).
    var layers: [(Int, Int, Int)] = [(0, 0, 0)]
    var reverb = 200, chorus = 0
    /// Loop sustained tones; one-shot tones still loop (their volume envelope ends them).
    var loops = true
    /// Plays the tone at a fixed pitch, whatever the key (sound effects).
    var fixedPitch = false
    var exclusiveClass = 0

    init(_ tone: String, configure: (inout Patch) -> Void = { _ in }) {
        self.tone = tone
        configure(&self)
    }

    /// The instrument-level generators of this patch's global zone.
    var globalGenerators: [(Generator, Int)] {
        var generators: [(Generator, Int)] = [
            (.attackVolEnv, Synthesis.timecents(max(attack, 0.001))),
            (.decayVolEnv, Synthesis.timecents(max(decay, 0.001))),
            (.sustainVolEnv, Int((sustainDB * 10).rounded())),
            (.releaseVolEnv, Synthesis.timecents(max(release, 0.001))),
            (.reverbEffectsSend, reverb),
        ]
        if hold > 0 { generators.append((.holdVolEnv, Synthesis.timecents(hold))) }
        if decayPerKey != 0 { generators.append((.keynumToVolEnvDecay, decayPerKey)) }
        if chorus > 0 { generators.append((.chorusEffectsSend, chorus)) }
        if let cutoff {
            generators.append((.initialFilterFc, min(13_500, max(1_500, Synthesis.absoluteCents(cutoff)))))
            if resonanceDB > 0 { generators.append((.initialFilterQ, Int(resonanceDB * 10))) }
        }
        if filterEnvelopeCents != 0 || pitchEnvelopeCents != 0 {
            generators.append((.attackModEnv, Synthesis.timecents(max(modAttack, 0.001))))
            generators.append((.decayModEnv, Synthesis.timecents(max(modDecay, 0.001))))
            generators.append((.sustainModEnv, Int(((1 - modSustain) * 1000).rounded())))
            if filterEnvelopeCents != 0 { generators.append((.modEnvToFilterFc, filterEnvelopeCents)) }
            if pitchEnvelopeCents != 0 { generators.append((.modEnvToPitch, pitchEnvelopeCents)) }
        }
        if vibratoCents != 0 {
            generators.append((.freqVibLFO, Synthesis.absoluteCents(vibratoHz)))
            generators.append((.delayVibLFO, Synthesis.timecents(max(vibratoDelay, 0.001))))
            generators.append((.vibLFOToPitch, vibratoCents))
        }
        if tremoloCB != 0 {
            generators.append((.freqModLFO, Synthesis.absoluteCents(tremoloHz)))
            generators.append((.modLFOToVolume, tremoloCB))
        }
        if attenuationDB > 0 { generators.append((.initialAttenuation, Int((attenuationDB * 10).rounded()))) }
        if fixedPitch { generators.append((.scaleTuning, 0)) }
        if exclusiveClass != 0 { generators.append((.exclusiveClass, exclusiveClass)) }
        return generators
    }
}
