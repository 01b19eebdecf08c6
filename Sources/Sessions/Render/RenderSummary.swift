/// What a finished render produced.
public struct RenderSummary: Sendable {
    /// The file written.
    public var outputPath: String
    /// Its length in frames (music, then tail).
    public var frames: Int
    public var sampleRate: Int
    /// How long the song plays, to its last event.
    public var musicSeconds: Double
    /// What was rendered after it (releases and reverb).
    public var tailSeconds: Double
    /// The highest sample level (linear; above 1 when the file clips, unless it is float).
    public var peak: Float
    /// The file's length in seconds.
    public var seconds: Double { Double(frames) / Double(sampleRate) }
    /// Integrated loudness (LUFS) and true peak (dBTP) of the file written, when a loudness
    /// target was set (BS.1770 / EBU R 128, measured by libebur128).
    public var loudness: Double?
    public var truePeak: Double?
}
