import CSndFile

/// Reads and writes whole audio files through libsndfile (WAV, FLAC, Ogg Vorbis, Opus, MP3, AIFF,
/// chosen by the file extension when writing: `FileType`).
///
/// This is the simple, whole-buffer API; streaming writers for long renders build on the same
/// format table.
public enum AudioFile {
    /// The sample encoding of a written file.
    public enum Encoding: String, Sendable, CaseIterable {
        /// `s16`: 16-bit integers (the default). `s24`: 24-bit integers. `f32`: 32-bit floats (FLAC,
        /// which has no floats, gets 24-bit integers). Ogg files are always Vorbis, whatever is asked;
        /// Opus and MP3 files take only `s16`, the default, which there means no sample format
        /// (`Compression` sets their size; another encoding is an `unsupportedFormat` error).
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

    /// Writes `buffer` to `path`, format chosen by extension (through a temporary name, as
    /// `AudioFileWriter` does; 16- and 24-bit samples rounded, with TPDF dither where `dither`;
    /// `compression` for MP3, Opus and Ogg Vorbis; an Opus or MP3 file at a rate it cannot hold
    /// gets the buffer converted to `FileType.fileSampleRate(for:)`).
    public static func write(
        _ buffer: Buffer, to path: String, encoding: Encoding = .s16, dither: Bool = false,
        compression: Compression = .automatic
    ) throws(AudioFileError) {
        let writer = try AudioFileWriter(
            path: path, sampleRate: buffer.sampleRate, channelCount: buffer.channelCount, encoding: encoding,
            expectedFrameCount: buffer.frameCount, dither: dither, compression: compression)
        try writer.write(interleaved: buffer.samples)
        try writer.finish()
    }

    /// Reads a whole file as interleaved floats.
    ///
    /// A lossy file (Ogg, MP3) is decoded to its end, whatever length its header gives (an MP3
    /// without a LAME header only has an estimate). Encoders add silence at the start and the end:
    /// Opus and MP3 files with LAME's header say how much, and it is taken off (MP3s written
    /// here come back within a few frames of their length).
    public static func read(from path: String) throws(AudioFileError) -> Buffer {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else {
            throw .cannotOpen(path: path, reason: String(cString: sf_strerror(nil)))
        }
        defer { sf_close(file) }
        let major = info.format & Int32(SF_FORMAT_TYPEMASK)
        if major == Int32(SF_FORMAT_OGG) || major == Int32(SF_FORMAT_MPEG) {
            return try readToEnd(file, info: info, path: path)
        }
        var samples = [Float](repeating: 0, count: Int(info.frames) * Int(info.channels))
        let frames = samples.withUnsafeMutableBufferPointer { sf_readf_float(file, $0.baseAddress, info.frames) }
        guard frames == info.frames else { throw .readFailed(path: path, reason: String(cString: sf_strerror(file))) }
        return Buffer(samples: samples, channelCount: Int(info.channels), sampleRate: Double(info.samplerate))
    }

    /// Decodes `file` block by block until libsndfile gives no more.
    private static func readToEnd(_ file: OpaquePointer, info: SF_INFO, path: String) throws(AudioFileError) -> Buffer {
        let channels = Int(max(1, info.channels))
        let block = 16_384
        var samples: [Float] = []
        if info.frames > 0 && info.frames < Int64(Int32.max) { samples.reserveCapacity(Int(info.frames) * channels) }
        var chunk = [Float](repeating: 0, count: block * channels)
        while true {
            let frames = chunk.withUnsafeMutableBufferPointer {
                sf_readf_float(file, $0.baseAddress, sf_count_t(block))
            }
            if frames <= 0 { break }
            samples += chunk[0..<Int(frames) * channels]
        }
        guard sf_error(file) == 0 else {
            throw .readFailed(path: path, reason: String(cString: sf_strerror(file)))
        }
        return Buffer(samples: samples, channelCount: channels, sampleRate: Double(info.samplerate))
    }
}
