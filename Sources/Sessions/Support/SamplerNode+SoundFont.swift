import Sampler

extension SamplerNode {
    /// A sampler at `sampleRate` with the SoundFont at `path` loaded: what a playback or live
    /// session plays through.
    static func loaded(soundFont path: String, sampleRate: Int) throws(SessionError) -> SamplerNode {
        var settings = SamplerNode.Settings()
        settings.sampleRate = Double(sampleRate)
        do {
            let sampler = try SamplerNode(settings: settings)
            try sampler.loadSoundFont(at: path)
            return sampler
        } catch { throw .soundFont(error) }
    }
}
