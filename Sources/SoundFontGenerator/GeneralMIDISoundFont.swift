import MIDICore

/// Builds Pianola's own General MIDI SoundFont: 128 melodic presets (bank 0) and a drum kit
/// (bank 128, program 0, notes 35-81), every sample synthesized here and deterministic, so the
/// same source always yields the same bytes.
public enum GeneralMIDISoundFont {
    /// The file name the project commits under `SoundFonts/`.
    public static let fileName = "PianolaGM.sf2"

    public static func makeBank() -> SoundFont2Bank {
        var bank = SoundFont2Bank(
            name: "Pianola GM",
            comment:
                "General MIDI set synthesized by Pianola's generate-soundfont; regenerate with scripts/generate-soundfont",
            copyright: "Pianola project; free to use, modify and redistribute (see SoundFonts/README.md)")

        // One sample per tone and key zone, shared by every preset that plays the tone.
        var toneSamples: [[Int]] = []
        for (toneIndex, tone) in Tones.all.enumerated() {
            var indices: [Int] = []
            for zone in Tone.zones.indices {
                indices.append(bank.samples.count)
                bank.samples.append(tone.sample(zone: zone, seed: UInt64(toneIndex + 1) &* 0x5851_F42D))
            }
            toneSamples.append(indices)
        }

        for program in 0..<128 {
            let patch = GeneralMIDIPatches.patch(for: program)
            let samples = toneSamples[Tones.index(patch.tone)]
            var zones = [SoundFont2Bank.Zone(generators: patch.globalGenerators, target: nil)]
            for (coarse, fine, pan) in patch.layers {
                for (zone, (keys, _)) in Tone.zones.enumerated() {
                    // A layer tuned up by n semitones uses the sample meant for the sounding key.
                    let low = zone == 0 ? 0 : keys.lowerBound - coarse
                    let high = zone == Tone.zones.count - 1 ? 127 : keys.upperBound - coarse
                    let range = max(0, low)...min(127, high)
                    guard range.lowerBound <= range.upperBound, low <= 127, high >= 0 else { continue }
                    var generators: [(SoundFont2Bank.Generator, Int)] = [(.sampleModes, patch.loops ? 1 : 0)]
                    if coarse != 0 { generators.append((.coarseTune, coarse)) }
                    if fine != 0 { generators.append((.fineTune, fine)) }
                    if pan != 0 { generators.append((.pan, pan)) }
                    zones.append(SoundFont2Bank.Zone(keyRange: range, generators: generators, target: samples[zone]))
                }
            }
            let name = GeneralMIDI.programNames[program]
            bank.instruments.append(SoundFont2Bank.Instrument(name: name, zones: zones))
            bank.presets.append(
                SoundFont2Bank.Preset(
                    name: name, program: program, bank: 0,
                    zones: [SoundFont2Bank.Zone(target: bank.instruments.count - 1)]))
        }

        var drumZones: [SoundFont2Bank.Zone] = [
            SoundFont2Bank.Zone(
                generators: [(.attackVolEnv, Synthesis.timecents(0.001)), (.reverbEffectsSend, 150)], target: nil)
        ]
        for note in 35...81 {
            let hit = DrumKit.hit(note: note)
            let frames = Synthesis.quantize(hit.frames, peak: 0.95)
            let loop = hit.loop ?? (frames.count - 40)..<(frames.count - 8)
            bank.samples.append(
                SoundFont2Bank.Sample(
                    name: "drum\(note)", frames: frames, loopStart: loop.lowerBound, loopEnd: loop.upperBound,
                    sampleRate: Int(DrumKit.sampleRate(note: note)), rootKey: note, pitchCorrection: 0))
            var generators: [(SoundFont2Bank.Generator, Int)] = [
                (.decayVolEnv, Synthesis.timecents(hit.loop == nil ? hit.decay * 4 : hit.decay)),
                (.sustainVolEnv, 1000),
                // Drums ring out after a short note-off, as GM players expect.
                (.releaseVolEnv, Synthesis.timecents(hit.loop == nil ? hit.decay + 0.1 : hit.decay / 2)),
                (.sampleModes, hit.loop == nil ? 0 : 1),
            ]
            if hit.pan != 0 { generators.append((.pan, hit.pan)) }
            if hit.exclusiveClass != 0 { generators.append((.exclusiveClass, hit.exclusiveClass)) }
            drumZones.append(
                SoundFont2Bank.Zone(keyRange: note...note, generators: generators, target: bank.samples.count - 1))
        }
        bank.instruments.append(SoundFont2Bank.Instrument(name: "Standard Kit", zones: drumZones))
        bank.presets.append(
            SoundFont2Bank.Preset(
                name: "Standard Kit", program: 0, bank: 128,
                zones: [SoundFont2Bank.Zone(target: bank.instruments.count - 1)]))
        return bank
    }

    /// The serialized SoundFont file.
    public static func makeFile() -> [UInt8] { makeBank().serialized() }
}
