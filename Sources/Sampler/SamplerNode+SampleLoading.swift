import CFluidSynth
import Dispatch
import MIDICore
import Sequencer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension SamplerNode {
    /// The presets this sampler plays for `sequence` (its fonts, overrides and muted channels),
    /// found without reading a sample: what `loadSamples(for:)` needs before playing it.
    ///
    /// `transpose` is the semitones the player shifts keys by (channel 10's drums excepted), so
    /// that the played notes are the keys the sampler will get.
    public func presetUsage(
        of sequence: MusicSequence, transposedBy transpose: Int = 0
    ) throws(SoundFontError) -> PresetUsage {
        try PresetProbe(fonts: realFonts, settings: settings).usage(of: sequence, transposedBy: transpose)
    }

    /// The presets this sampler plays for `messages`, applied in order (for live input known
    /// in advance, such as the program changes a keyboard will send).
    public func presetUsage(of messages: [MIDIMessage]) throws(SoundFontError) -> PresetUsage {
        try PresetProbe(fonts: realFonts, settings: settings).usage(of: messages)
    }

    /// Reads the samples of `usage`'s presets, then selects each channel's first preset, before
    /// the audio starts. On a sampler loading on demand the samples stay until
    /// `unloadSamples(for:)` or the end of the sampler; on one that loaded whole fonts it only
    /// selects. Samplers (in this process) that need the same samples share one copy in memory.
    ///
    /// SF3 samples are decoded on up to `threads` threads (by default one per core): this one
    /// and helpers that load the font's presets again. `whileRendering` (the audio thread is
    /// rendering this sampler, as between two songs) leaves all the reading to helpers, so that
    /// this sampler's synthesizer, which only one thread may use at a time, is held only briefly:
    /// a preset at a time, to take the samples the helpers read (see `SamplerNode`).
    /// `threads: 0` reads everything on the calling thread (samples another sampler has just
    /// read are found in memory).
    ///
    /// `narrowing` (for a sampler that plays this usage only, such as a render's) reads only the
    /// samples the usage's played notes can reach, when it has them all (`hasEveryNote`): each
    /// font is read again without the instrument zones none of those notes falls in (a song
    /// playing two octaves of a piano reads those octaves' samples). Every played note sounds
    /// exactly as with the whole font. A later call reads the fonts again: for both usages when
    /// narrowing, else whole (the earlier usage's samples stay loaded either way).
    public func loadSamples(
        for usage: PresetUsage, threads: Int? = nil, whileRendering: Bool = false, narrowing: Bool = false
    ) throws(SoundFontError) {
        if let sampleReadFailure { throw sampleReadFailure }
        let ids = fontIDsByStackPosition
        let presets = usage.presets.sorted()
        let paths = ids.map { fontPaths[SoundFontID(rawValue: Int($0))] ?? "" }
        let onDemand = settings.sampleLoading == .onDemand
        // The usage the fonts are to be read for (nil: whole): this one, and the earlier ones a
        // narrowed sampler holds.
        let target: PresetUsage? =
            onDemand && narrowing && usage.hasEveryNote && !whileRendering
            ? fontsReadFor.map { $0.union(usage) } ?? usage : nil
        let subsets: [SoundFontSubset?] = ids.indices.map { position in
            guard let target else { return nil }
            return SoundFontSubset(path: paths[position], notes: target.playedNotes(ofFont: position))
        }
        // FluidSynth cannot undo a preset whose file it could not open: check first.
        if onDemand { try checkReadable(Set(presets.map { paths[$0.soundFont] })) }
        // (Reading a narrowed font whole again while the audio thread renders this sampler would
        // hold the synthesizer through a parse; no caller narrows a sampler that plays more.)
        if fontsReadFor != nil || subsets.contains(where: { $0 != nil }) {
            try exclusively { () throws(SoundFontError) in try readFontsAgain(subsets, paths: paths, for: target) }
        }
        // Decoding is worth more threads; plain SF2 samples are only copied.
        let compressed = Set(presets.map { paths[$0.soundFont] }).contains { SoundFontFile.isCompressed(path: $0) }
        let threadCount = min(threads ?? Self.processorCount, presets.count)
        let helperCount =
            !onDemand || threadCount == 0
            ? 0 : whileRendering ? (compressed ? threadCount : 1) : compressed ? threadCount - 1 : 0
        // Helpers on other threads read (and decode) a share each into FluidSynth's process-wide
        // sample cache, this sampler reading one share meanwhile unless it is rendering; it then
        // finds every sample there. The helpers are kept until then. One sampler reads at a time
        // in this process: another that needs the same samples finds them in the cache instead
        // of decoding a second copy at the same time.
        // Presets whose samples FluidSynth could not read or decode, with how many, from the
        // log of whichever thread read them.
        let silent = SilentSamples()
        let failed = Self.reading.withLock { _ -> [PresetUsage.Preset] in
            guard onDemand else { return [] }
            return pinPresets(
                presets, paths: paths, subsets: subsets, helperCount: helperCount, whileRendering: whileRendering,
                silent: silent)
        }
        guard failed.isEmpty else {
            let preset = failed[0]
            let failure = SoundFontError.loadFailed(
                path: paths[preset.soundFont],
                messages: ["error: the samples of bank \(preset.bank), program \(preset.program) cannot be read"])
            sampleReadFailure = failure
            throw failure
        }
        exclusively { selectFirstPresets(of: usage, warningOf: silent.counts, paths: paths) }
    }

    /// Throws (and keeps as `sampleReadFailure`) when a font file at `paths` can no longer be read.
    private func checkReadable(_ paths: Set<String>) throws(SoundFontError) {
        for path in paths where access(path, R_OK) != 0 {
            let failure = SoundFontError.loadFailed(
                path: path, messages: ["error: its samples cannot be read any more (the file was moved or deleted)"]
            )
            sampleReadFailure = failure
            throw failure
        }
    }

    /// Pins `presets` (reads their samples into FluidSynth's cache and keeps them), with
    /// `helperCount` helpers on other threads reading shares of them first (see
    /// `loadSamples`), recording in `silent` the presets whose samples play silence. Returns
    /// the presets FluidSynth could not pin. Called with `reading` held.
    private func pinPresets(
        _ presets: [PresetUsage.Preset], paths: [String], subsets: [SoundFontSubset?], helperCount: Int,
        whileRendering: Bool, silent: SilentSamples
    ) -> [PresetUsage.Preset] {
        let ids = fontIDsByStackPosition
        var helpers: [FluidSynth?] = []
        if helperCount > 0 {
            let parts = whileRendering ? helperCount : helperCount + 1
            let slots = HelperSlots(count: parts)
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let share = stride(from: part, to: presets.count, by: parts).map { presets[$0] }
                if !whileRendering && part == 0 {
                    for preset in share where preset.soundFont < ids.count {
                        let (_, messages) = exclusively {
                            FluidSynthLog.collectingOnThisThread {
                                fluid_synth_pin_preset(
                                    synth.synth, ids[preset.soundFont], Int32(preset.bank), Int32(preset.program))
                            }
                        }
                        silent.record(preset, messages)
                    }
                } else {
                    slots.store(
                        Self.helper(
                            loading: paths, subsets: subsets, pinning: share, sampleRate: settings.sampleRate,
                            silent: silent),
                        at: part)
                }
            }
            helpers = slots.taken()
        }
        var failed: [PresetUsage.Preset] = []
        for preset in presets where preset.soundFont < ids.count {
            // FluidSynth disables a sample it cannot read or decode and plays the preset
            // without it, saying so only in its log: collected, each such preset is a warning.
            // One preset at a time: a quantum due meanwhile waits for one only.
            let (result, messages) = exclusively {
                FluidSynthLog.collectingOnThisThread {
                    fluid_synth_pin_preset(
                        synth.synth, ids[preset.soundFont], Int32(preset.bank), Int32(preset.program))
                }
            }
            if result != FLUID_OK { failed.append(preset) }
            silent.record(preset, messages)
        }
        withExtendedLifetime(helpers) {}
        return failed
    }

    /// Adds a warning for each preset with samples that play silence, then selects each channel's
    /// first preset of `usage`, and applies the program overrides. Called holding the synthesizer.
    private func selectFirstPresets(
        of usage: PresetUsage, warningOf silentCounts: [PresetUsage.Preset: Int], paths: [String]
    ) {
        let ids = fontIDsByStackPosition
        for (preset, count) in silentCounts.sorted(by: { $0.key < $1.key }) {
            sampleWarnings.append(silentSamplesWarning(preset, count: count, path: paths))
        }
        for channel in 0..<16 {
            guard let first = usage.firstPresets[channel], first.soundFont < ids.count else { continue }
            fluid_synth_program_select(
                synth.synth, Int32(channel), ids[first.soundFont], Int32(first.bank), Int32(first.program))
            // The channel's bank is what it was (0, or 128 for the drum channel): a song's
            // program change without a bank select resolves as it would have.
            fluid_synth_bank_select(synth.synth, Int32(channel), channel == 9 ? 128 : 0)
        }
        applyProgramOverrides()
    }

    /// "FONT: bank 0, program 4 (Electric Piano): 3 samples cannot be decoded and play silence".
    private func silentSamplesWarning(_ preset: PresetUsage.Preset, count: Int, path paths: [String]) -> String {
        let ids = fontIDsByStackPosition
        var name = ""
        if let font = fluid_synth_get_sfont_by_id(synth.synth, ids[preset.soundFont]),
            let found = fluid_sfont_get_preset(font, Int32(preset.bank), Int32(preset.program)),
            let text = fluid_preset_get_name(found)
        {
            name = " (\(String(cString: text)))"
        }
        let samples = count == 1 ? "1 sample cannot" : "\(count) samples cannot"
        return "\(paths[preset.soundFont]): bank \(preset.bank), program \(preset.program)\(name): \(samples) be "
            + "read or decoded and play silence"
    }

    /// Lets `usage`'s presets' samples go (those no channel, voice or other sampler still uses)
    /// and leaves every channel without a preset.
    public func unloadSamples(for usage: PresetUsage) {
        let ids = fontIDsByStackPosition
        exclusively {
            for channel in 0..<16 { fluid_synth_unset_program(synth.synth, Int32(channel)) }
            for preset in usage.presets where preset.soundFont < ids.count {
                fluid_synth_unpin_preset(synth.synth, ids[preset.soundFont], Int32(preset.bank), Int32(preset.program))
            }
        }
    }

    /// Reads each font again as its subset (nil: whole, unless it is whole already), keeping the
    /// presets pinned by earlier loads; the fonts are then read for `target` (nil: whole). Holding
    /// the synthesizer (`exclusively`).
    private func readFontsAgain(
        _ subsets: [SoundFontSubset?], paths: [String], for target: PresetUsage?
    ) throws(SoundFontError) {
        let ids = fontIDsByStackPosition
        let wasWhole = fontsReadFor == nil
        let pinned = fontsReadFor?.presets ?? []
        fontsReadFor = subsets.contains(where: { $0 != nil }) ? target : nil
        for (position, subset) in subsets.enumerated() where subset != nil || !wasWhole {
            let (reloaded, messages) = FluidSynthLog.collecting { () -> Int32 in
                guard let subset else { return fluid_synth_sfreload(synth.synth, ids[position]) }
                return SoundFontSubsetLoader.loading(subset, path: paths[position]) {
                    fluid_synth_sfreload(synth.synth, ids[position])
                }
            }
            guard reloaded == ids[position] else {
                let failure = SoundFontError.loadFailed(
                    path: paths[position], messages: messages + ["error: it could not be read again"])
                sampleReadFailure = failure
                throw failure
            }
            for preset in pinned where preset.soundFont == position {
                fluid_synth_pin_preset(synth.synth, ids[position], Int32(preset.bank), Int32(preset.program))
            }
        }
    }

    /// FluidSynth's ids of the fonts, oldest (stack position 0) first.
    var fontIDsByStackPosition: [Int32] { fonts.values.sorted() }

    /// The fonts themselves, oldest first.
    var realFonts: [OpaquePointer] {
        let ids = fontIDsByStackPosition
        return exclusively { ids.compactMap { fluid_synth_get_sfont_by_id(synth.synth, $0) } }
    }

    static var processorCount: Int { max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN))) }

    /// Held while a sampler reads samples on demand.
    static let reading = Mutex(())

    /// A synthesizer that loads the fonts on demand and reads `presets`' samples.
    private static func helper(
        loading paths: [String], subsets: [SoundFontSubset?], pinning presets: [PresetUsage.Preset],
        sampleRate: Double, silent: SilentSamples
    ) -> FluidSynth? {
        guard let helper = try? FluidSynth(sampleRate: sampleRate, polyphony: 1) else { return nil }
        for channel in 0..<16 { fluid_synth_unset_program(helper.synth, Int32(channel)) }
        var ids: [Int32] = []
        // The fonts loaded once already (validated, their messages reported): not again.
        fluid_settings_setint(helper.settings, "synth.dynamic-sample-loading", 1)
        for (path, subset) in zip(paths, subsets) {
            let id =
                subset.map { subset in
                    SoundFontSubsetLoader.loading(subset, path: path) { fluid_synth_sfload(helper.synth, path, 1) }
                } ?? fluid_synth_sfload(helper.synth, path, 1)
            guard id != FLUID_FAILED else { return nil }
            ids.append(id)
        }
        for preset in presets where preset.soundFont < ids.count {
            let (_, messages) = FluidSynthLog.collectingOnThisThread {
                fluid_synth_pin_preset(helper.synth, ids[preset.soundFont], Int32(preset.bank), Int32(preset.program))
            }
            silent.record(preset, messages)
        }
        return helper
    }
}

/// How many samples of each preset FluidSynth could not read or decode ("Unable to load sample
/// 'NAME', disabling" in its log), gathered from the threads that read them.
private final class SilentSamples: Sendable {
    private let found = Mutex<[PresetUsage.Preset: Int]>([:])

    /// Notes what the log of pinning `preset` said.
    func record(_ preset: PresetUsage.Preset, _ messages: [String]) {
        let count = messages.filter { $0.contains("Unable to load sample") }.count
        guard count > 0 else { return }
        found.withLock { $0[preset] = max($0[preset] ?? 0, count) }
    }

    var counts: [PresetUsage.Preset: Int] { found.withLock { $0 } }
}

/// Where the helper threads leave their synthesizers.
private final class HelperSlots: @unchecked Sendable {
    private var slots: [FluidSynth?]
    private let lock = Mutex(())

    init(count: Int) { slots = [FluidSynth?](repeating: nil, count: count) }

    func store(_ helper: FluidSynth?, at index: Int) { lock.withLock { _ in slots[index] = helper } }
    func taken() -> [FluidSynth?] { lock.withLock { _ in slots } }
}
