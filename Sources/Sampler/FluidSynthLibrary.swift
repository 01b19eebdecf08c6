import CFluidSynth

/// libfluidsynth, opened on first use rather than linked (see CFluidSynth.h): commands that never
/// synthesize do not pay for its library tree at start-up, and a missing library is an error a
/// caller can report, not a process that cannot start.
enum FluidSynthLibrary {
    /// Opens the library (once per process); throws what failed when it cannot be.
    static func load() throws(SoundFontError) {
        var message = [CChar](repeating: 0, count: 512)
        guard pianola_fluidsynth_load(&message, message.count) != 0 else { return }
        let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        throw SoundFontError.synthesizerUnavailable(reason: reason)
    }
}
