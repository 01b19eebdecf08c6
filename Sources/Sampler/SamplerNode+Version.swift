import CFluidSynth

extension SamplerNode {
    /// The FluidSynth library in use, as it reports its runtime version ("2.3.1"), or
    /// "unavailable" when libfluidsynth cannot be loaded (see ``SoundFontError/synthesizerUnavailable(reason:)``).
    public static var fluidSynthVersion: String {
        guard (try? FluidSynthLibrary.load()) != nil else { return "unavailable" }
        return String(cString: fluid_version_str())
    }
}
