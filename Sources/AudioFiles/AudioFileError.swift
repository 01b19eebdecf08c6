/// Why an audio file could not be read or written; each case names the file.
public enum AudioFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be opened for reading (missing, not permitted, not an audio file libsndfile
    /// knows), its temporary file could not be created for writing, or a URL is not a file URL.
    case cannotOpen(path: String, reason: String)
    /// The format cannot be used: an extension other than .wav, .flac, .ogg, .opus, .mp3, .aiff or
    /// .raw, an encoding, channel count or rate the format cannot hold (s24 or f32 for MP3 and Opus,
    /// an MP3 of more than two channels), a compression that does not fit it (a quality out of
    /// 0…1, a bit rate the encoder does not take, either for a lossless file), a layout a clip does not take (then `path`
    /// is the clip's name), or a tap's channel count, rate or part length that
    /// no file can have (no channels, no hertz, parts of no frames).
    case unsupportedFormat(path: String, reason: String)
    /// Writing, closing or renaming to the final name failed, or the writer was already finished or
    /// cancelled.
    case writeFailed(path: String, reason: String)
    /// The file ended before the frames it declares, a clip's sample-rate conversion failed, or the
    /// frames asked of a clip are outside it (`path` is then the clip's name).
    case readFailed(path: String, reason: String)
    /// The file system holding the file is full (or the user's quota is spent): nothing was left
    /// behind.
    case noSpace(path: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "\(path): cannot open: \(reason)"
        case .unsupportedFormat(let path, let reason): return "\(path): unsupported audio format: \(reason)"
        case .writeFailed(let path, let reason): return "\(path): write failed: \(reason)"
        case .readFailed(let path, let reason): return "\(path): read failed: \(reason)"
        case .noSpace(let path): return "no space left on device (\(path))"
        }
    }
}
