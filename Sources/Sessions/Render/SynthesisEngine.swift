import AudioGraph
import Sampler
import VoiceEngine

/// Which synthesizer plays a render, a playback or a live session.
public enum SynthesisEngine: String, CaseIterable, Sendable, Hashable {
    /// FluidSynth (`SamplerNode`), the default: its reverb and chorus, every SoundFont setting,
    /// stacked fonts, and `RenderTiming.fluidSynth`'s renders equal to `fluidsynth -F`'s.
    case fluidSynth = "fluidsynth"
    /// Pianola's own voice engine (`NativeSamplerNode`): every note on its exact frame. It plays
    /// one SoundFont with 4th-order interpolation, its reverb and chorus switched as FluidSynth's
    /// are; it takes no program overrides, no runtime settings SysEx and not FluidSynth's player
    /// timing.
    case native
}

/// A synthesizer node a render lane plays: FluidSynth's `SamplerNode` or the native engine's
/// `NativeSamplerNode`.
protocol LaneSynthesizer: AudioNode, MIDIReceivingNode {
    /// The voices sounding at the end of the last quantum.
    var activeVoiceCount: Int { get }
}

extension SamplerNode: LaneSynthesizer {}
extension NativeSamplerNode: LaneSynthesizer {}
