import ArgumentParser
import Pianola

/// How `render` writes: rate, format, tail, timing, threads and loudness (the synthesizer's
/// settings are `SynthOptions`, the song's `SongOptions`).
struct RenderSettings: ParsableArguments {
    @Option(
        name: [.customShort("r"), .long], parsing: .unconditional,
        help: ArgumentHelp("Sample rate in Hz, 8000…192000.", valueName: "hz"))
    var rate = 44_100

    @OptionGroup var sampleFormat: SampleFormatOptions

    @OptionGroup var compression: CompressionOptions

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Tail after the last event: auto (until below −90 dBFS, the default) or seconds.",
            valueName: "auto|seconds"),
        transform: ArgumentParsing.tail)
    var tail: RenderOptions.Tail = .automatic

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Threads to render one file with: its channels split over that many synthesizers whose outputs sum (FluidSynth's multi-core voice rendering when the channels cannot be split evenly). They share one copy of the SoundFont.",
            valueName: "n"))
    var threads = 1

    @Option(
        help: ArgumentHelp(
            "Event timing: exact (each event reaches the synthesizer at its sample, the default; FluidSynth starts notes on its 64-frame blocks) or fluidsynth (as FluidSynth's player places them: with --threads 1, renders equal to `fluidsynth -F` in every sample; it loads whole fonts, as FluidSynth does, unless --load says otherwise).",
            valueName: "exact|fluidsynth"),
        completion: RenderTiming.completion, transform: RenderTiming.parser(for: "--timing"))
    var timing: RenderTiming = .exact

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Normalize to this integrated loudness (LUFS, BS.1770 / EBU R 128), e.g. -14 or -23; after the effects. With --stems, the mix is measured and every file scaled by one gain, so that the stems still sum to the mix.",
            valueName: "lufs"))
    var loudness: Double?

    @Option(
        name: .customLong("max-length"), parsing: .unconditional,
        help: ArgumentHelp(
            "The longest music to render, in seconds (default 7200, two hours): a damaged delta time can make a file last hours of silence, and the output's size is checked against the free space first.",
            valueName: "seconds"))
    var maxLength = 7_200.0

    @Option(
        name: .customLong("true-peak"), parsing: .unconditional,
        help: ArgumentHelp(
            "True-peak ceiling for --loudness (dBTP; peaks above it go through a true-peak limiter; with --stems, the gain stops short of it instead).",
            valueName: "dbtp"))
    var truePeak = -1.0

    func validate() throws {
        guard BatchJob.sampleRates.contains(Double(rate)) else {
            throw ValidationError("--rate must be between 8000 and 192000 Hz, got \(rate)")
        }
        guard maxLength > 0, maxLength.isFinite else {
            throw ValidationError("--max-length must be a positive number of seconds, got \(maxLength)")
        }
        guard (1...64).contains(threads) else {
            throw ValidationError("--threads must be between 1 and 64, got \(threads)")
        }
        if let loudness, !BatchJob.loudnessTargets.contains(loudness) {
            throw ValidationError("--loudness must be between -70 and 0 LUFS, got \(loudness)")
        }
        guard BatchJob.truePeakCeilings.contains(truePeak) else {
            throw ValidationError("--true-peak must be between -20 and 0 dBTP, got \(truePeak)")
        }
    }

    /// The render options these settings give, with the synthesizer's and the song's, and
    /// `effects` on the mix.
    func options(synth: SynthOptions, song: SongOptions, effects: [EffectSpec]) -> RenderOptions {
        var options = RenderOptions()
        options.sampleRate = Double(rate)
        options.encoding = sampleFormat.format
        options.dither = sampleFormat.dither.isOn
        options.compression = compression.compression
        options.tail = tail
        options.threads = threads
        options.effects = effects
        options.timing = timing
        options.loudness = loudness.map { LoudnessTarget(integrated: $0, truePeakCeiling: truePeak) }
        options.gainDecibels = synth.gain
        options.isSynthReverbEnabled = synth.synthReverb.isOn
        options.isSynthChorusEnabled = synth.synthChorus.isOn
        options.polyphony = synth.polyphony
        options.interpolation = synth.interpolation.method
        options.programOverrides = synth.programs
        options.mutedChannels = synth.mutedChannels
        options.speed = song.speed
        options.transpose = song.transpose
        options.startSeconds = song.start ?? 0
        options.endSeconds = song.endSeconds
        options.maximumSeconds = maxLength
        return options
    }
}
