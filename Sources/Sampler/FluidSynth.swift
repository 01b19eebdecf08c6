import CFluidSynth
import CFluidSynthRealtime
import Synchronization

/// One `fluid_synth_t` with its settings: the thin, owning wrapper every Pianola synthesizer is
/// built on. It is not thread-safe: one owner drives it at a time (the render thread, or a
/// control thread while nothing renders: see `SynthesizerControl`). FluidSynth's own API lock
/// (`synth.threadsafe-api`) is off, so that the render thread never takes or waits for a lock in
/// FluidSynth.
///
/// It deliberately does not schedule events or know about the graph; `SamplerNode` does that.
final class FluidSynth {
    let settings: OpaquePointer
    let synth: OpaquePointer
    let sampleRate: Double

    /// FluidSynth initializes process-global tables on first use; creating synths concurrently
    /// races on them, so creation is serialized.
    private static let creationLock = Mutex(())

    init(
        sampleRate: Double = 44_100, polyphony: Int = 256, reverb: Bool = false, chorus: Bool = false, cpuCores: Int = 1
    ) throws(SoundFontError) {
        try FluidSynthLibrary.load()
        FluidSynthLog.installIfNeeded()
        _ = pianola_install_realtime_openmp()
        let created: (OpaquePointer, OpaquePointer)? = Self.creationLock.withLock { _ in
            guard let settings = new_fluid_settings() else { return nil }
            fluid_settings_setnum(settings, "synth.sample-rate", sampleRate)
            fluid_settings_setint(settings, "synth.polyphony", Int32(polyphony))
            fluid_settings_setint(settings, "synth.reverb.active", reverb ? 1 : 0)
            fluid_settings_setint(settings, "synth.chorus.active", chorus ? 1 : 0)
            fluid_settings_setint(settings, "synth.cpu-cores", Int32(max(1, cpuCores)))
            fluid_settings_setint(settings, "synth.threadsafe-api", 0)
            guard let synth = new_fluid_synth(settings) else {
                delete_fluid_settings(settings)
                return nil
            }
            SoundFontSubsetLoader.install(in: synth, settings: settings)
            return (settings, synth)
        }
        guard let created else {
            throw SoundFontError.synthesizerUnavailable(reason: "FluidSynth rejected sample rate \(sampleRate) Hz")
        }
        (settings, synth) = created
        self.sampleRate = sampleRate
    }

    /// SoundFonts this synth uses but another owns (`share(from:)`): taken off the stack before
    /// the synth is deleted, which would otherwise delete them.
    private var borrowedFonts: [OpaquePointer] = []
    /// The synths owning the borrowed fonts, kept alive as long as this one.
    private var fontOwners: [FluidSynth] = []

    deinit {
        for font in borrowedFonts { fluid_synth_remove_sfont(synth, font) }
        delete_fluid_synth(synth)
        delete_fluid_settings(settings)
    }

    /// Adds the font `id` of `owner` to this synth's stack without copying it: both synths play
    /// from the same sample data (read-only while rendering). Returns this synth's id for it.
    func share(font id: Int32, from owner: FluidSynth) -> Int32? {
        Self.creationLock.withLock { _ in
            guard let font = fluid_synth_get_sfont_by_id(owner.synth, id) else { return nil }
            let newID = fluid_synth_add_sfont(synth, font)
            guard newID >= 0 else { return nil }
            borrowedFonts.append(font)
            fontOwners.append(owner)
            return newID
        }
    }

    /// Puts the fonts `ids` of `other` (oldest first) on this synth's stack, for a synth that
    /// replaces `other` (at another sample rate) and renders nowhere yet; returns this synth's id
    /// for each. With `moving` (nothing else holds `other`: no synth shares its fonts), they move
    /// here, owned as they were owned there; otherwise this synth shares them, keeping `other`
    /// alive as their owner.
    func takeFonts(_ ids: [Int32], from other: FluidSynth, moving: Bool) -> [Int32: Int32] {
        Self.creationLock.withLock { _ in
            var newIDs: [Int32: Int32] = [:]
            for id in ids {
                guard let font = fluid_synth_get_sfont_by_id(other.synth, id) else { continue }
                if moving {
                    fluid_synth_remove_sfont(other.synth, font)
                    if let index = other.borrowedFonts.firstIndex(of: font) {
                        other.borrowedFonts.remove(at: index)
                        borrowedFonts.append(font)
                    }
                }
                let newID = fluid_synth_add_sfont(synth, font)
                guard newID >= 0 else { continue }
                if !moving { borrowedFonts.append(font) }
                newIDs[id] = newID
            }
            fontOwners.append(contentsOf: moving ? other.fontOwners : [other])
            return newIDs
        }
    }

    /// Loads a SoundFont on top of the stack; returns FluidSynth's font id and the warnings it logged.
    /// With `onDemand`, the font's samples are not read (FluidSynth's dynamic sample loading):
    /// `pin(_:)` reads the ones a song uses.
    func loadSoundFont(
        at path: String, onDemand: Bool = false, subset: SoundFontSubset? = nil
    ) throws(SoundFontError) -> (
        id: Int32, warnings: [String]
    ) {
        let warnings = try SoundFontFile.validate(path: path)
        // The setting is read when a font loads, so fonts of one synth may differ.
        fluid_settings_setint(settings, "synth.dynamic-sample-loading", onDemand ? 1 : 0)
        let (id, logged) = FluidSynthLog.collecting {
            guard let subset else { return fluid_synth_sfload(synth, path, 1) }
            return SoundFontSubsetLoader.loading(subset, path: path) { fluid_synth_sfload(synth, path, 1) }
        }
        // A font the loaders refuse is tried by each (Pianola's, then FluidSynth's own): once each.
        var seen = Set<String>()
        let messages = logged.filter { seen.insert($0).inserted }
        guard id != FLUID_FAILED else { throw .loadFailed(path: path, messages: messages) }
        return (id, warnings.map { "warning: \($0)" } + messages)
    }

    func noteOn(channel: Int, key: Int, velocity: Int) {
        fluid_synth_noteon(synth, Int32(channel), Int32(key), Int32(velocity))
    }

    func noteOff(channel: Int, key: Int) { fluid_synth_noteoff(synth, Int32(channel), Int32(key)) }

    func controlChange(channel: Int, controller: Int, value: Int) {
        fluid_synth_cc(synth, Int32(channel), Int32(controller), Int32(value))
    }

    /// Selects a preset by font, bank and program; throws when the font has no such preset.
    func select(channel: Int, font: Int32, bank: Int, program: Int) throws(SoundFontError) {
        guard fluid_synth_program_select(synth, Int32(channel), font, Int32(bank), Int32(program)) == FLUID_OK else {
            throw SoundFontError.presetMissing(bank: bank, program: program)
        }
    }

    var activeVoiceCount: Int { Int(fluid_synth_get_active_voice_count(synth)) }

    /// Renders `frameCount` frames of the stereo dry mix into two planar buffers.
    func render(frameCount: Int, left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) -> Bool {
        fluid_synth_write_float(synth, Int32(frameCount), left, 0, 1, right, 0, 1) == FLUID_OK
    }

    /// Convenience for tests and offline tools: renders into new planar arrays.
    func render(frameCount: Int) -> (left: [Float], right: [Float]) {
        var left = [Float](repeating: 0, count: frameCount)
        var right = [Float](repeating: 0, count: frameCount)
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                _ = render(frameCount: frameCount, left: l.baseAddress!, right: r.baseAddress!)
            }
        }
        return (left, right)
    }
}

extension FluidSynth {
    /// How many of FluidSynth's one-thread OpenMP regions ran inline, without a libgomp team.
    static var inlineParallelRegions: Int { pianola_inline_parallel_regions() }
    /// Whether FluidSynth's OpenMP regions go through the allocation-free wrapper.
    static var isRealtimeOpenMPInstalled: Bool {
        // The wrapper patches the library once it is loaded, never before.
        (try? FluidSynthLibrary.load()) != nil && pianola_install_realtime_openmp() == 1
    }
}
