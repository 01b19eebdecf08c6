/// What a finished render produced.
public struct RenderSummary: Sendable {
    public var outputPath: String
    public var frames: Int
    public var sampleRate: Int
    public var musicSeconds: Double
    public var tailSeconds: Double
    public var peak: Float
    public var seconds: Double { Double(frames) / Double(sampleRate) }
    /// Integrated loudness (LUFS) and true peak (dBTP) of the file written, when a loudness
    /// target was set (BS.1770 / EBU R 128, measured by libebur128).
    public var loudness: Double?
    public var truePeak: Double?
}
