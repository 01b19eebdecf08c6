import CFluidSynth

extension SamplerNode {
    /// The FluidSynth library in use, as it reports its runtime version ("2.3.1").
    public static var fluidSynthVersion: String { String(cString: fluid_version_str()) }
}
