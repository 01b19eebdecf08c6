import AudioFiles
import Sampler
import Synchronization

/// The SoundFonts a renderer plays, shared by the renderers made from it: the samplers that
/// hold them loaded (they never render), made when first needed.
///
/// Loading whole, one holder has every sample, and every render plays it from fresh
/// synthesizers sharing it. Loading on demand, each render loads the fonts' presets in its own
/// synthesizers (FluidSynth's per-font bookkeeping of loaded samples is not thread-safe, so
/// renders on several threads cannot share one font) and reads only the song's samples, which
/// FluidSynth's sample cache shares between them; a holder is made only to answer the voice
/// probes of a channel split.
final class FontStack: Sendable {
    let paths: [String]
    /// The rate the holders run at (the first renderer's): the voice probes' envelopes use it.
    let sampleRate: Double
    private let holders = Mutex<[SamplerNode.SampleLoading: SamplerNode]>([:])

    init(paths: [String], sampleRate: Double) {
        self.paths = paths
        self.sampleRate = sampleRate
    }

    /// The holder of the fonts loaded as `loading` says, loaded now if no renderer needed it yet.
    func holder(_ loading: SamplerNode.SampleLoading) throws(SoundFontError) -> SamplerNode {
        try holders.withLock { holders throws(SoundFontError) -> SamplerNode in
            if let holder = holders[loading] { return holder }
            var settings = SamplerNode.Settings()
            settings.isReverbEnabled = false
            settings.isChorusEnabled = false
            settings.sampleLoading = loading
            settings.sampleRate = sampleRate
            let holder = try SamplerNode(name: "SoundFont holder", settings: settings)
            for path in paths { try holder.loadSoundFont(at: path) }
            holders[loading] = holder
            return holder
        }
    }

    /// Loads the fonts once to report what cannot be loaded, keeping nothing: as each render
    /// loads them first, presets only (the instruments' zone indices are checked while they are
    /// left out; a font whose instruments cannot be left out loads whole).
    func check() throws(SoundFontError) {
        var settings = SamplerNode.Settings()
        settings.sampleLoading = .onDemand
        let sampler = try SamplerNode(settings: settings)
        for path in paths { try sampler.loadSoundFont(at: path, presetsOnly: true) }
    }
}
