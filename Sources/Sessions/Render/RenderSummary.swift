import AudioFiles

/// What a finished render produced.
public struct RenderSummary: Sendable {
    /// The file written.
    public var outputPath: String
    /// Its length in frames (music, then tail).
    public var frames: Int
    /// The file's sample rate in Hz.
    public var sampleRate: Double
    /// How long the song plays, to its last event.
    public var musicSeconds: Double
    /// What was rendered after it (releases and reverb).
    public var tailSeconds: Double
    /// The highest sample level (linear; above 1 when the file clips, unless it is float).
    public var peak: Float
    /// The file's length in seconds.
    public var seconds: Double { Double(frames) / sampleRate }
    /// Integrated loudness of the file written (LUFS, BS.1770 / EBU R 128, by libebur128; −∞
    /// for silence).
    public var loudness: Double?
    /// True peak (dBTP), measured when a loudness target was set.
    public var truePeak: Double?
    /// Samples above full scale: they clip in an integer file (s16, s24, FLAC), and wherever a
    /// float file is turned into integers.
    public var samplesOverFullScale = 0
    /// The file's sample format.
    public var encoding: AudioFile.Encoding = .s16
    /// What the render played silent, one line each: presets whose samples could not be read or
    /// decoded (`SamplerNode.sampleWarnings`).
    public var warnings: [String] = []

    /// A summary of the render written to `outputPath` (its `encoding` is s16 until set).
    public init(
        outputPath: String, frames: Int, sampleRate: Double, musicSeconds: Double, tailSeconds: Double, peak: Float,
        loudness: Double? = nil, truePeak: Double? = nil, samplesOverFullScale: Int = 0
    ) {
        self.outputPath = outputPath
        self.frames = frames
        self.sampleRate = sampleRate
        self.musicSeconds = musicSeconds
        self.tailSeconds = tailSeconds
        self.peak = peak
        self.loudness = loudness
        self.truePeak = truePeak
        self.samplesOverFullScale = samplesOverFullScale
    }
}

extension RenderSummary {
    /// The summary of a file in `encoding`.
    func encoded(_ encoding: AudioFile.Encoding) -> RenderSummary {
        var summary = self
        summary.encoding = encoding
        return summary
    }
}
