import AudioIO
import Effects

/// One render of a batch: a MIDI file, where its audio goes, and what differs from the batch's
/// settings (from a manifest line; nil keeps the batch's).
public struct BatchJob: Sendable, Hashable {
    public var input: String
    public var output: String
    /// Where the job came from, for messages: "corpus.jsonl:12", or the input's path.
    public var origin: String
    /// A SoundFont for this job only.
    public var soundFont: String?
    public var sampleRate: Double?
    public var encoding: AudioFile.Encoding?
    public var gainDecibels: Double?
    public var tail: RenderOptions.Tail?
    /// Integrated loudness target (LUFS) and true-peak ceiling (dBTP).
    public var loudness: Double?
    public var truePeak: Double?

    public init(input: String, output: String, origin: String? = nil) {
        self.input = input
        self.output = output
        self.origin = origin ?? input
    }

    /// The ranges a job's settings must be in (the command line's own).
    public static let sampleRates = 8_000.0...192_000
    public static let gains = -60.0...40
    public static let loudnessTargets = -70.0...0
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
