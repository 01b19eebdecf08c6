import ArgumentParser
import Pianola

/// How the synthesizer plays, the same on play, render and live: gain, FluidSynth's reverb and
/// chorus, polyphony, interpolation, program overrides, muted and soloed channels.
struct SynthOptions: ParsableArguments {
    @Option(
        name: [.customShort("g"), .long], parsing: .unconditional,
        help: ArgumentHelp("Output gain in dB, -60…40 (FluidSynth's own gain stays at 0.2).", valueName: "db"))
    var gain = 0.0

    @Option(
        name: .customLong("synth-reverb"),
        help: ArgumentHelp("FluidSynth's reverb: on or off (default: on).", valueName: "on|off"),
        completion: Switch.completion, transform: Switch.parser(for: "--synth-reverb"))
    var synthReverb: Switch = .on

    @Option(
        name: .customLong("synth-chorus"),
        help: ArgumentHelp("FluidSynth's chorus: on or off (default: on).", valueName: "on|off"),
        completion: Switch.completion, transform: Switch.parser(for: "--synth-chorus"))
    var synthChorus: Switch = .on

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Voices that may sound at once, 1…4096.", valueName: "voices"))
    var polyphony = 256

    @Option(
        help: ArgumentHelp(
            "Sample interpolation: none, linear, 4th or 7th (order; default: 4th).", valueName: "method"),
        completion: Interpolation.completion, transform: Interpolation.parser(for: "--interpolation"))
    var interpolation: Interpolation = .fourth

    @Option(
        name: .customLong("program"),
        help: ArgumentHelp(
            "Play a channel (1…16) on this program whatever the MIDI selects: CH:PROG or CH:BANK:PROG, e.g. 1:4 or 10:128:25 (repeatable).",
            valueName: "ch:[bank:]prog"),
        transform: ArgumentParsing.program)
    var programs: [SamplerNode.ProgramOverride] = []

    @Option(
        help: ArgumentHelp("Silence a MIDI channel, 1…16 (repeatable).", valueName: "channel"),
        transform: ArgumentParsing.channel(option: "--mute"))
    var mute: [UInt8] = []

    @Option(
        help: ArgumentHelp("Play only this MIDI channel, 1…16 (repeatable: only these).", valueName: "channel"),
        transform: ArgumentParsing.channel(option: "--solo"))
    var solo: [UInt8] = []

    /// FluidSynth's interpolation methods, by their order.
    enum Interpolation: String, ArgumentChoice {
        case none, linear
        case fourth = "4th"
        case seventh = "7th"

        var method: SamplerNode.Interpolation {
            switch self {
            case .none: return .none
            case .linear: return .linear
            case .fourth: return .fourthOrder
            case .seventh: return .seventhOrder
            }
        }
    }

    func validate() throws {
        guard BatchJob.gains.contains(gain) else {
            throw ValidationError("--gain must be between -60 and 40 dB, got \(gain)")
        }
        guard (1...4_096).contains(polyphony) else {
            throw ValidationError("--polyphony must be between 1 and 4096 voices, got \(polyphony)")
        }
    }

    /// The channels left out: the muted ones, and with --solo every channel not soloed.
    var mutedChannels: Set<UInt8> {
        Set(mute).union(solo.isEmpty ? [] : Set(0..<16).subtracting(solo))
    }

    /// The synthesizer's settings (its sample rate is set by whoever creates it).
    var settings: SamplerNode.Settings {
        var settings = SamplerNode.Settings()
        settings.polyphony = polyphony
        settings.interpolation = interpolation.method
        settings.isReverbEnabled = synthReverb.isOn
        settings.isChorusEnabled = synthChorus.isOn
        settings.programOverrides = programs
        settings.mutedChannels = mutedChannels
        return settings
    }
}

/// Where and how fast a song plays: the same on play and render.
struct SongOptions: ParsableArguments {
    @Option(
        parsing: .unconditional, help: ArgumentHelp("Tempo factor, 0.25…4.", valueName: "factor"))
    var speed = 1.0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Semitones to transpose, -48…48 (drums excluded).", valueName: "n"))
    var transpose = 0

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Start at this time (seconds, or m:ss).", valueName: "time"), transform: ArgumentParsing.time
    )
    var start: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "End the music at this time (seconds, or m:ss; notes sounding then end, the tail follows).",
            valueName: "time"), transform: ArgumentParsing.time)
    var end: Double?

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp(
            "Play this long from --start (seconds, or m:ss): the same as --end START+TIME.", valueName: "time"),
        transform: ArgumentParsing.time)
    var duration: Double?

    /// Where the music ends in song time, from `--end` or `--start` + `--duration`.
    var endSeconds: Double? { end ?? duration.map { (start ?? 0) + $0 } }

    func validate() throws {
        if end != nil && duration != nil { throw ValidationError("give --end or --duration, not both") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be more than 0, got \(duration)") }
        if let end, end <= (start ?? 0) {
            throw ValidationError(
                "--end (\(Terminal.clock(end))) must come after --start (\(Terminal.clock(start ?? 0)))")
        }
        guard PlaybackSession.speeds.contains(speed) else {
            throw ValidationError("--speed must be between 0.25 and 4, got \(speed)")
        }
        guard (-48...48).contains(transpose) else {
            throw ValidationError("--transpose must be between -48 and 48, got \(transpose)")
        }
    }
}
