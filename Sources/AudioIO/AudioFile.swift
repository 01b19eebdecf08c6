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
        public var sampleRate: Int
        public var frameCount: Int { channelCount == 0 ? 0 : samples.count / channelCount }

        public init(samples: [Float], channelCount: Int, sampleRate: Int) {
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

    /// Writes `buffer` to `path`, format chosen by extension.
    public static func write(_ buffer: Buffer, to path: String, encoding: Encoding = .s16) throws(AudioFileError) {
        let major = try majorFormat(forPath: path)
        var info = SF_INFO()
        info.samplerate = Int32(buffer.sampleRate)
        info.channels = Int32(buffer.channelCount)
        info.format = major | subtype(major: major, encoding: encoding)
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedFormat(path: path, reason: "\(encoding.rawValue) at \(buffer.sampleRate) Hz")
        }
        guard let file = sf_open(path, Int32(SFM_WRITE), &info) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        // Saturate instead of wrapping when float samples exceed full scale.
        sf_command(file, Int32(SFC_SET_CLIPPING), nil, Int32(SF_TRUE))
        let frames = buffer.samples.withUnsafeBufferPointer {
            sf_writef_float(file, $0.baseAddress, sf_count_t(buffer.frameCount))
        }
        let reason = String(cString: sf_strerror(file))
        sf_close(file)
        guard frames == sf_count_t(buffer.frameCount) else { throw .writeFailed(path: path, reason: reason) }
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
        return Buffer(samples: samples, channelCount: Int(info.channels), sampleRate: Int(info.samplerate))
    }
}
