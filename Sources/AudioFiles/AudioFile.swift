import CSndFile

/// Reads and writes whole audio files through libsndfile (WAV, FLAC, Ogg Vorbis, AIFF, chosen by
/// the file extension when writing).
///
/// This is the simple, whole-buffer API; streaming writers for long renders build on the same
/// format table.
public enum AudioFile {
    /// The sample encoding of a written file.
    public enum Encoding: String, Sendable, CaseIterable {
        /// `s16`: 16-bit integers (the default). `s24`: 24-bit integers. `f32`: 32-bit floats (FLAC,
        /// which has no floats, gets 24-bit integers). Ogg files are always Vorbis, whatever is asked.
        case s16, s24, f32
    }

    /// Interleaved float samples with their layout.
    public struct Buffer: Sendable, Equatable {
        /// The samples, interleaved frame by frame (`[L0, R0, L1, R1, …]` for stereo), full scale ±1.
        public var samples: [Float]
        /// Samples per frame (1 for mono, 2 for stereo).
        public var channelCount: Int
        /// Frames per second, in Hz.
        public var sampleRate: Double
        /// Whole frames in `samples` (a trailing partial frame is not counted); 0 without channels.
        public var frameCount: Int { channelCount == 0 ? 0 : samples.count / channelCount }

        /// Makes a buffer of interleaved samples; it does not check that they fill whole frames.
        public init(samples: [Float], channelCount: Int, sampleRate: Double) {
            self.samples = samples
            self.channelCount = channelCount
            self.sampleRate = sampleRate
        }
    }

    /// libsndfile's major format for a path's extension.
    static func majorFormat(forPath path: String) throws(AudioFileError) -> Int32 {
        let lower = path.lowercased()
        if lower.hasSuffix(".wav") { return Int32(SF_FORMAT_WAV) }
        if lower.hasSuffix(".flac") { return Int32(SF_FORMAT_FLAC) }
        if lower.hasSuffix(".ogg") || lower.hasSuffix(".oga") { return Int32(SF_FORMAT_OGG) }
        if lower.hasSuffix(".aiff") || lower.hasSuffix(".aif") { return Int32(SF_FORMAT_AIFF) }
        // Headerless interleaved samples, little-endian (for pipelines: `-o -` with `--ext raw`).
        if lower.hasSuffix(".raw") { return Int32(SF_FORMAT_RAW) | Int32(SF_ENDIAN_LITTLE) }
        throw .unsupportedFormat(path: path, reason: "use a .wav, .flac, .ogg, .aiff or .raw extension")
    }

    static func subtype(major: Int32, encoding: Encoding) -> Int32 {
        if major == Int32(SF_FORMAT_OGG) { return Int32(SF_FORMAT_VORBIS) }
        switch encoding {
        case .s16: return Int32(SF_FORMAT_PCM_16)
        case .s24: return Int32(SF_FORMAT_PCM_24)
        case .f32: return major == Int32(SF_FORMAT_FLAC) ? Int32(SF_FORMAT_PCM_24) : Int32(SF_FORMAT_FLOAT)
        }
    }

    /// Writes `buffer` to `path`, format chosen by extension (through a temporary name, as
    /// `AudioFileWriter` does; 16- and 24-bit samples rounded, with TPDF dither where `dither`).
    public static func write(
        _ buffer: Buffer, to path: String, encoding: Encoding = .s16, dither: Bool = false
    ) throws(AudioFileError) {
        let writer = try AudioFileWriter(
            path: path, sampleRate: buffer.sampleRate, channelCount: buffer.channelCount, encoding: encoding,
            expectedFrameCount: buffer.frameCount, dither: dither)
        try writer.write(interleaved: buffer.samples)
        try writer.finish()
    }

    /// Reads a whole file as interleaved floats.
    public static func read(from path: String) throws(AudioFileError) -> Buffer {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let frames = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        guard frames == info.frames else { throw .readFailed(path: path, reason: String(cString: sf_strerror(file))) }
        return Buffer(samples: samples, channelCount: Int(info.channels), sampleRate: Double(info.samplerate))
    }
}
