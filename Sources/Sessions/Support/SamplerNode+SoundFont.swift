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
            return sampler
        } catch { throw .soundFont(error) }
    }
}
