import CSndFile

/// Reads and writes whole audio files through libsndfile (WAV, FLAC, Ogg Vorbis, AIFF, chosen by
/// the file extension when writing).
///
/// This is the simple, whole-buffer API; streaming writers for long renders build on the same
/// format table.
public enum AudioFile {
    /// The sample encoding of a written file.
    public enum Encoding: String, Sendable, CaseIterable {
        case s16, s24, f32
    }

    /// Interleaved float samples with their layout.
    public struct Buffer: Sendable, Equatable {
        public var samples: [Float]
        public var channelCount: Int
        public var sampleRate: Double
        public var frameCount: Int { channelCount == 0 ? 0 : samples.count / channelCount }

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
        throw .unsupportedFormat(path: path, reason: "use a .wav, .flac, .ogg or .aiff extension")
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
    /// `AudioFileWriter` does).
    public static func write(_ buffer: Buffer, to path: String, encoding: Encoding = .s16) throws(AudioFileError) {
        let writer = try AudioFileWriter(
            path: path, sampleRate: buffer.sampleRate, channelCount: buffer.channelCount, encoding: encoding)
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
