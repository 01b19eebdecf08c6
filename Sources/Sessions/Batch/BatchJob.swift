import AudioFiles
import Effects

/// One render of a batch: a MIDI file, where its audio goes, and what differs from the batch's
/// settings (from a manifest line; nil keeps the batch's).
public struct BatchJob: Sendable, Hashable {
    /// The MIDI file to render (a manifest's relative paths are already resolved against its folder).
    public var input: String
    /// The audio file to write; its extension chooses the format (.wav, .flac, .ogg, .opus, .mp3, .aiff).
    public var output: String
    /// Where the job came from, for messages: "corpus.jsonl:12", or the input's path.
    public var origin: String
    /// A SoundFont for this job only.
    public var soundFont: String?
    /// The output's sample rate in Hz, within `sampleRates` (8000…192000; outside, the job fails).
    public var sampleRate: Double?
    /// The output's sample format (the manifest's `format`: s16, s24 or f32).
    public var encoding: AudioFile.Encoding?
    /// Output gain in dB, within `gains` (−60…40; outside, the job fails).
    public var gainDecibels: Double?
    /// How long to keep rendering after the last event.
    public var tail: RenderOptions.Tail?
    /// Integrated loudness target (LUFS) and true-peak ceiling (dBTP).
    public var loudness: Double?
    /// The true-peak ceiling in dBTP, within `truePeakCeilings` (−20…0). A loudness target with no ceiling
    /// here or in the batch's options gets −1; a ceiling with no loudness target (the job's or the batch's)
    /// fails the job.
    public var truePeak: Double?
    /// The synthesizer for this job only (the manifest's `engine`: fluidsynth or native).
    public var engine: SynthesisEngine?

    /// A job rendering `input` to `output` with the batch's settings; `origin` is the input's path unless given.
    public init(input: String, output: String, origin: String? = nil) {
        self.input = input
        self.output = output
        self.origin = origin ?? input
    }

    /// The ranges a job's settings must be in (the command line's own).
    public static let sampleRates = 8_000.0...192_000
    /// The range of `gainDecibels`, in dB.
    public static let gains = -60.0...40
    /// The range of `loudness`, in LUFS.
    public static let loudnessTargets = -70.0...0
    /// The range of `truePeak`, in dBTP.
    public static let truePeakCeilings = -20.0...0

    /// The batch's options with this job's own settings.
    func options(over base: RenderOptions) throws(BatchError) -> RenderOptions {
        var options = base
        if let sampleRate {
            guard Self.sampleRates.contains(sampleRate) else {
                throw .invalidSettings("rate \(EffectSpec.format(sampleRate)) is outside 8000…192000")
            }
            options.sampleRate = sampleRate
        }
        if let encoding { options.encoding = encoding }
        if let gainDecibels {
            guard Self.gains.contains(gainDecibels) else {
                throw .invalidSettings("gain \(gainDecibels) dB is outside -60…40")
            }
            options.gainDecibels = gainDecibels
        }
        if let tail { options.tail = tail }
        if let engine { options.engine = engine }
        if loudness != nil || truePeak != nil {
            let integrated = loudness ?? options.loudness?.integrated
            let ceiling = truePeak ?? options.loudness?.truePeakCeiling ?? -1
            guard let integrated, Self.loudnessTargets.contains(integrated), Self.truePeakCeilings.contains(ceiling)
            else { throw .invalidSettings("loudness needs -70…0 LUFS and truePeak -20…0 dBTP") }
            options.loudness = LoudnessTarget(integrated: integrated, truePeakCeiling: ceiling)
        }
        return options
    }
}
