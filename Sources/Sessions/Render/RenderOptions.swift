import AudioFiles
import Effects
import Sampler
import Sequencer

/// How `OfflineRenderer` renders.
public struct RenderOptions: Sendable, Hashable {
    /// How long to keep rendering after the last event.
    public enum Tail: Sendable, Hashable {
        /// Until the release and reverb tail falls below −90 dBFS (capped at `maximumTailSeconds`).
        case automatic
        /// A fixed tail of this many seconds (0…600 when parsed from text); `maximumTailSeconds` does not apply.
        case seconds(Double)

        /// The seconds a fixed tail may have.
        public static let secondsRange = 0.0...600

        /// "auto", or a number of seconds from 0 to 600.
        public init?(_ text: String) {
            if text == "auto" {
                self = .automatic
            } else if let seconds = Double(text), Self.secondsRange.contains(seconds) {
                self = .seconds(seconds)
            } else {
                return nil
            }
        }

        /// "auto", or the seconds.
        public var text: String {
            switch self {
            case .automatic: return "auto"
            case .seconds(let seconds): return "\(seconds)"
            }
        }
    }

    /// The output's sample rate in Hz, at which the synthesizer renders.
    public var sampleRate = 44_100.0
    /// The output's sample format: 16-bit integer (the default), 24-bit integer or 32-bit float.
    public var encoding: AudioFile.Encoding = .s16
    /// How much an MP3, Opus or Ogg Vorbis output is compressed (`automatic`: each format's
    /// default, and the only choice for lossless outputs).
    public var compression: AudioFile.Compression = .automatic
    /// Whether 16- and 24-bit output gets TPDF dither of ±1 step before rounding (reproducible: the
    /// same noise every render). Without it, each sample is rounded to the nearest step.
    public var dither = false
    /// Output gain in dB, applied at the main mixer (FluidSynth's own gain stays at its default).
    public var gainDecibels = 0.0
    /// Whether FluidSynth's built-in reverb is on; `effects` are separate from it.
    public var isSynthReverbEnabled = true
    /// Whether FluidSynth's built-in chorus is on; `effects` are separate from it.
    public var isSynthChorusEnabled = true
    /// The most voices each synthesizer plays at once.
    public var polyphony = 256
    /// FluidSynth's sample interpolation.
    public var interpolation: SamplerNode.Interpolation = .fourthOrder
    /// Channels that play a fixed bank and program whatever the song selects.
    public var programOverrides: [SamplerNode.ProgramOverride] = []
    /// Channels (0–15) whose notes are left out.
    public var mutedChannels: Set<UInt8> = []
    /// Tempo factor (2 plays twice as fast), from 0.25 to 4.
    public var speed = 1.0
    /// Semitones added to every note outside the drum channel.
    public var transpose = 0
    /// Where in the song the render starts, in seconds (programs and controllers chased).
    public var startSeconds = 0.0
    /// Where in the song the music ends, in seconds (nil: at the song's end): the notes sounding
    /// then end there and the tail follows, as after a song's last note
    /// (`MusicSequence.ending(atSeconds:)`). Song time, as `startSeconds`; the render's music lasts
    /// `endSeconds − startSeconds` at speed 1.
    public var endSeconds: Double?
    /// Threads that render one file: its channels split over that many synthesizers, or
    /// FluidSynth's multi-core voice rendering when the channels cannot be split evenly.
    public var threads = 1
    /// How long to keep rendering after the last event.
    public var tail: Tail = .automatic
    /// The longest an automatic tail may run, in seconds.
    public var maximumTailSeconds = 30.0
    /// Frames per render quantum. Events are placed at their exact frame whatever this is.
    public var quantumFrames = 1_024
    /// Event timing: every event at its exact sample (the default) or as FluidSynth's own player
    /// places them.
    public var timing: RenderTiming = .exact
    /// Effects applied to the mix, in order (see `EffectSpec`).
    public var effects: [EffectSpec] = []
    /// A loudness to normalize to (after the effects), with a true-peak ceiling; nil renders as is.
    public var loudness: LoudnessTarget?
    /// Whether the summary gets the file's integrated loudness (with a loudness target it always
    /// does). Measuring costs about a fifth of a render with a light font (a release build, the
    /// bundled font: 40 ms for 23 s of audio), so it is asked for, not done by default.
    public var measuresLoudness = false

    /// The longest music a render accepts, in seconds (2 hours by default): a damaged delta time can
    /// make a file last hours of silence, which would otherwise fill the disk.
    public var maximumSeconds = 7_200.0
    /// Which samples of the SoundFonts are read: by default (`onDemand`) only those of the
    /// presets each song plays, before it renders (SF3 decoded on every core); `whole` reads
    /// every sample once when the renderer is made, which pays off for many files rendered with
    /// one large font.
    public var sampleLoading: SamplerNode.SampleLoading = .onDemand
    /// The synthesizer: FluidSynth (the default) or Pianola's own voice engine, which plays one
    /// SoundFont and reads (on demand) only the samples of the presets the song selects.
    public var engine: SynthesisEngine = .fluidSynth

    /// The defaults: 44100 Hz, s16, synthesizer reverb and chorus on, 256 voices, automatic tail, no
    /// effects, no loudness target.
    public init() {}

    /// At most how many frames a render of `sequence` writes: the music from the start at the speed,
    /// the longest tail, and slack for effect latency (a WAV that could pass 4 GiB is written as RF64).
    func maximumFrameCount(for sequence: MusicSequence) -> Int {
        let music = max(0, sequence.durationSeconds - startSeconds) / max(pace, 0.01)
        let tailSeconds: Double
        switch tail {
        case .seconds(let seconds): tailSeconds = seconds
        case .automatic: tailSeconds = maximumTailSeconds
        }
        let seconds = music + tailSeconds + 2
        return seconds.isFinite ? Int(min(seconds * sampleRate, Double(Int.max / 2))) + quantumFrames : Int.max / 2
    }

    /// About how many frames a render of `sequence` writes, for the free-space check: the music from
    /// the start at the speed, and the tail asked for (an automatic tail counted at three seconds,
    /// what a release and a reverb take to die away; longer ones fill the disk's margin).
    func expectedFrameCount(for sequence: MusicSequence) -> Int {
        let music = max(0, sequence.durationSeconds - startSeconds) / max(pace, 0.01)
        let tailSeconds: Double
        switch tail {
        case .seconds(let seconds): tailSeconds = seconds
        case .automatic: tailSeconds = min(3, maximumTailSeconds)
        }
        let seconds = music + tailSeconds
        return seconds.isFinite ? Int(min(seconds * sampleRate, Double(Int.max / 2))) : Int.max / 2
    }

    /// Whether a render's tail is over after a quantum (`quietFrames` counts the quiet frames
    /// so far, for the automatic tail). Once the voices have ended, the automatic tail ends at the
    /// first quiet quantum, or after `echoFrames` of quiet when a delay's echo may still come.
    func tailIsDone(
        tailFrames: Int, quantum: Int, peak: Float, voices: Int, quietFrames: inout Int, echoFrames: Int = 0
    ) -> Bool {
        let rate = sampleRate
        switch tail {
        case .seconds(let seconds):
            return Double(tailFrames) >= seconds * rate
        case .automatic:
            quietFrames = peak < Self.silenceThreshold ? quietFrames + quantum : 0
            let voicesDone = voices == 0 && quietFrames > echoFrames
            return voicesDone || quietFrames >= Int(2 * rate) || tailFrames >= Int(maximumTailSeconds * rate)
        }
    }

    /// The settings that shape a render, as the batch ledger records them: a render whose
    /// fingerprint (and input and font) is unchanged need not be done again.
    var fingerprint: String {
        let effects = effects.map { "\($0.name)\($0.values.sorted { $0.key < $1.key })" }.joined(separator: "+")
        let target = loudness.map { "\($0.integrated)/\($0.truePeakCeiling)" } ?? "none"
        let overrides = programOverrides.map { "\($0.channel):\($0.bank):\($0.program)" }.joined(separator: ",")
        return "reverb=\(isSynthReverbEnabled ? "on" : "off");chorus=\(isSynthChorusEnabled ? "on" : "off");"
            + "timing=\(timing.rawValue);threads=\(threads);truePeak=\(loudness?.truePeakCeiling ?? -1);fx=\(effects);"
            + "rate=\(sampleRate);format=\(encoding.rawValue);dither=\(dither);gain=\(gainDecibels);tail=\(tail.text);loudness=\(target);"
            + "polyphony=\(polyphony);maximumTail=\(maximumTailSeconds);quantum=\(quantumFrames);"
            + "interpolation=\(interpolation.rawValue);programs=\(overrides);muted=\(mutedChannels.sorted());"
            + "speed=\(speed);transpose=\(transpose);start=\(startSeconds);end=\(endSeconds ?? -1)"
            // Only when set, so that the ledgers of earlier versions still match.
            + (compression == .automatic ? "" : ";compression=\(compression)")
            + (engine == .fluidSynth ? "" : ";engine=\(engine.rawValue)")
    }

    /// `sequence` cut at `endSeconds`, if set.
    func excerpt(of sequence: MusicSequence) -> MusicSequence {
        endSeconds.map { sequence.ending(atSeconds: $0) } ?? sequence
    }

    /// The song's length once rendered from `startSeconds` at `pace`.
    func musicSeconds(of sequence: MusicSequence) -> Double {
        max(0, sequence.durationSeconds - startSeconds) / pace
    }

    /// How many times as fast as written the song goes: `speed`, times the rates of any
    /// `varispeed` or `timepitch` among the effects.
    var pace: Double { speed * EffectSpec.rateFactor(of: effects) }

    /// The level under which the automatic tail ends.
    public static let silenceThreshold: Float = 3.162_277_7e-5  // −90 dBFS
}

/// Integrated loudness to normalize a render to, and the true peak it must stay under.
public struct LoudnessTarget: Sendable, Hashable {
    /// LUFS, e.g. −14 (streaming) or −23 (EBU R 128 broadcast).
    public var integrated: Double
    /// dBTP, e.g. −1.
    public var truePeakCeiling: Double

    /// A target of `integrated` LUFS under a ceiling of `truePeakCeiling` dBTP.
    public init(integrated: Double, truePeakCeiling: Double = -1) {
        self.integrated = integrated
        self.truePeakCeiling = truePeakCeiling
    }
}

/// How a render places the song's events in time.
public enum RenderTiming: String, CaseIterable, Sendable, Hashable {
    /// Every event at its exact sample (the synthesizer still starts voices on its 64-frame blocks).
    case exact
    /// As FluidSynth's own player places them (a 64-frame block late, on a millisecond clock), so
    /// that a render equals `fluidsynth -F`'s sample for sample.
    case fluidSynth = "fluidsynth"

    /// The policy the music player is given (nil: the player's own sample-accurate timing).
    var policy: (any EventTimingPolicy)? {
        switch self {
        case .exact: return nil
        case .fluidSynth: return FluidSynthPlayerTiming(delivery: .whenSent)
        }
    }
}
