// libFuzzer entry point for SoundFont loading as Pianola drives libfluidsynth: Pianola's own
// structure check (SoundFontFile.validate), then FluidSynth's loader through the FluidSynth
// wrapper (its log collected, its DLS loader's and GLib's noise routed), then a note on each of
// the first presets. Built and run by scripts/fuzz with the Sampler files it needs (not part of
// the package build); libfluidsynth itself is not instrumented, but a crash in it is still one.
//
// Invariants checked on every input:
// - a bad font never crashes or hangs the process: it is a typed error;
// - the error's message is one line, printable, at most 400 characters, and names the file;
// - a font that loads plays a note on its presets without a crash;
// - read again as the subset those notes reach (SoundFontSubset, through Pianola's loader), it
//   loads and plays the same notes sample for sample.
import CFluidSynth

#if canImport(Glibc)
    import Glibc
#endif

/// The input as a file (FluidSynth loads from a path): in memory where /dev/shm exists.
private let fontPath: String = {
    let folder = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"
    return "\(folder)/pianola-soundfont-fuzz-\(getpid()).sf2"
}()

/// One synthesizer for the whole run: making one per input (voices, reverb, chorus) cost about
/// 20 ms, twenty times the load; each input's font is unloaded after it played.
nonisolated(unsafe) private let synth = try! FluidSynth(sampleRate: 44_100, polyphony: 16)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    guard let file = fopen(fontPath, "wb") else { return 0 }
    // (Removed after each input: a run ends by exiting, and would leave the last one behind.)
    defer { unlink(fontPath) }
    fwrite(data, 1, size, file)
    fclose(file)
    do throws(SoundFontError) {
        let (id, _) = try synth.loadSoundFont(at: fontPath)
        defer {
            // Silence and unload: the next input starts from an empty synthesizer.
            fluid_synth_all_sounds_off(synth.synth, -1)
            _ = synth.render(frameCount: 64)
            fluid_synth_sfunload(synth.synth, id, 1)
        }
        let font = fluid_synth_get_sfont_by_id(synth.synth, id)
        var presets: [(bank: Int32, program: Int32)] = []
        fluid_sfont_iteration_start(font)
        while presets.count < 4, let preset = fluid_sfont_iteration_next(font) {
            presets.append((fluid_preset_get_banknum(preset), fluid_preset_get_num(preset)))
        }
        let whole = play(presets, font: id)
        var notes: [SoundFontSubset.PresetKey: PlayedNotes] = [:]
        for preset in presets {
            let key = SoundFontSubset.PresetKey(bank: Int(preset.bank), program: Int(preset.program))
            notes[key, default: PlayedNotes()].insert(key: 60, velocity: 100)
        }
        if let subset = SoundFontSubset(path: fontPath, notes: notes) {
            let reloaded = SoundFontSubsetLoader.loading(subset, path: fontPath) {
                fluid_synth_sfreload(synth.synth, id)
            }
            precondition(reloaded == id, "the subset of a font that loads loads")
            precondition(play(presets, font: id) == whole, "the subset plays the notes as the whole font")
        }
    } catch {
        let message = error.description
        precondition(!message.contains("\n"), "one line: \(message)")
        precondition(message.unicodeScalars.allSatisfy { $0.value >= 32 && $0.value != 127 }, "printable: \(message)")
        precondition(message.count <= 400, "short: \(message.count) characters")
        if case .synthesizerUnavailable = error { return 0 }
        precondition(message.contains(fontPath), "names the file: \(message)")
    }
    return 0
}

/// A note on each preset in turn, rendered: the left channel.
private func play(_ presets: [(bank: Int32, program: Int32)], font: Int32) -> [Float] {
    var output: [Float] = []
    for preset in presets {
        try? synth.select(channel: 0, font: font, bank: Int(preset.bank), program: Int(preset.program))
        synth.noteOn(channel: 0, key: 60, velocity: 100)
        output += synth.render(frameCount: 128).left
        synth.noteOff(channel: 0, key: 60)
    }
    fluid_synth_all_sounds_off(synth.synth, -1)
    _ = synth.render(frameCount: 64)
    return output
}
