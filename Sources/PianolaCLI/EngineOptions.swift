import ArgumentParser
import Pianola

extension SynthesisEngine: ArgumentChoice {}

/// Which synthesizer plays: FluidSynth (the default) or Pianola's own voice engine.
struct EngineOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The synthesizer: fluidsynth (FluidSynth, the default) or native (Pianola's own voice engine: every note on its exact frame; one SoundFont; --synth-reverb and --synth-chorus switch its own reverb and chorus, --interpolation does not change it; no --program, --timing fluidsynth or --channel-map with it).",
            valueName: "fluidsynth|native"),
        completion: SynthesisEngine.completion, transform: SynthesisEngine.parser(for: "--engine"))
    var engine: SynthesisEngine = .fluidSynth

    /// Refuses, as a usage error, what the native engine cannot do with these options.
    func check(synth: SynthOptions, soundFonts: SoundFontOptions, timing: RenderTiming = .exact) throws {
        guard engine == .native else { return }
        if timing == .fluidSynth {
            throw ValidationError("--timing fluidsynth needs FluidSynth's engine: not with --engine native")
        }
        if !synth.programs.isEmpty {
            throw ValidationError("--program needs FluidSynth's engine: not with --engine native")
        }
        if soundFonts.soundfont.count > 1 {
            throw ValidationError("--engine native plays one SoundFont: give one -s, or stack them with FluidSynth")
        }
    }
}
