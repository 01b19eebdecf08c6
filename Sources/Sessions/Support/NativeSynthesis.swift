import Sampler
import SoundFontFiles
import VoiceEngine

/// The native engine's node for a playback or live session: one SoundFont, every sample read
/// before the session starts (songs and keys then play without loading anything).
enum NativeSynthesis {
    /// A node playing `soundFonts` (one) at `sampleRate` with `settings`' polyphony, reverb and
    /// chorus switches; nil with
    /// FluidSynth's engine.
    static func node(
        _ engine: SynthesisEngine, soundFonts: [String], settings: SamplerNode.Settings, sampleRate: Double
    ) throws(SessionError) -> NativeSamplerNode? {
        guard engine == .native else { return nil }
        guard soundFonts.count == 1 else {
            throw .soundFont(
                .synthesizerUnavailable(
                    reason: "the native engine plays one SoundFont, not a stack of \(soundFonts.count): "
                        + "stack them with the FluidSynth engine"))
        }
        guard settings.programOverrides.isEmpty else {
            throw .failed("program overrides need FluidSynth's engine: the native one plays the song's programs")
        }
        let font: VoiceFont
        do {
            font = try VoiceFont(bank: SoundFontBank(contentsOf: soundFonts[0]))
        } catch {
            throw .soundFont(.notASoundFont(path: error.path, reason: error.problem))
        }
        let node = NativeSamplerNode(
            name: "Native sampler",
            settings: VoiceSynthesizer.Settings(
                sampleRate: sampleRate, polyphony: settings.polyphony, isReverbEnabled: settings.isReverbEnabled,
                isChorusEnabled: settings.isChorusEnabled))
        node.load(font)
        return node
    }
}
