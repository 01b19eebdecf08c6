import AudioFiles
import Sampler

extension SamplerNode {
    /// A sampler with `settings` at `sampleRate` and the SoundFonts at `paths` stacked: what a
    /// playback or live session plays through.
    static func loaded(
        soundFonts paths: [String], settings: Settings, sampleRate: Double
    ) throws(SessionError) -> SamplerNode {
        var settings = settings
        settings.sampleRate = sampleRate
        do {
            let sampler = try SamplerNode(settings: settings)
            for path in paths { try sampler.loadSoundFont(at: path) }
            // Fixed presets loaded on demand: the overrides', read now (nothing else will be).
            if settings.sampleLoading == .onDemand, settings.ignoresPresetChanges {
                try sampler.loadSamples(for: sampler.presetUsage(of: []))
            }
            return sampler
        } catch { throw .soundFont(error) }
    }
}
