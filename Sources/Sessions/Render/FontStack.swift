import AudioFiles
import Sampler
import SoundFontFiles
import Synchronization
import VoiceEngine

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
    /// For the native engine: the font's bank (its structure, read once) and, loading whole, the
    /// font with every sample read (one copy for every render).
    private let voiceFonts = Mutex(VoiceFonts())

    /// What the native engine has read of the font.
    private struct VoiceFonts {
        var bank: SoundFontBank?
        var whole: VoiceFont?
    }

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

    /// The native engine's bank of the font (read on first use), refusing a stack of several.
    func voiceBank() throws(SoundFontError) -> SoundFontBank {
        guard paths.count == 1 else {
            throw .synthesizerUnavailable(
                reason: "the native engine plays one SoundFont, not a stack of \(paths.count): "
                    + "stack them with the FluidSynth engine")
        }
        return try voiceFonts.withLock { (fonts: inout VoiceFonts) throws(SoundFontError) -> SoundFontBank in
            if let bank = fonts.bank { return bank }
            do throws(SoundFontReadError) {
                let bank = try SoundFontBank(contentsOf: paths[0])
                fonts.bank = bank
                return bank
            } catch {
                throw .notASoundFont(path: error.path, reason: error.problem)
            }
        }
    }

    /// The native engine's font with the samples of `presets` read (nil: every sample, read once
    /// and shared by every render).
    func voiceFont(presets: [(bank: Int, program: Int)]?) throws(SoundFontError) -> VoiceFont {
        let bank = try voiceBank()
        func read() throws(SoundFontError) -> VoiceFont {
            do { return try VoiceFont(bank: bank, presets: presets) } catch {
                throw .notASoundFont(path: error.path, reason: error.problem)
            }
        }
        guard presets == nil else { return try read() }
        return try voiceFonts.withLock { (fonts: inout VoiceFonts) throws(SoundFontError) -> VoiceFont in
            if let whole = fonts.whole { return whole }
            let whole = try read()
            fonts.whole = whole
            return whole
        }
    }
}
