/// Why an audio file could not be read or written; each case names the file.
public enum AudioFileError: Error, Equatable, Sendable, CustomStringConvertible {
    case cannotOpen(path: String, reason: String)
    case unsupportedFormat(path: String, reason: String)
    case writeFailed(path: String, reason: String)
    case readFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): return "\(path): cannot open: \(reason)"
        case .unsupportedFormat(let path, let reason): return "\(path): unsupported audio format: \(reason)"
        case .writeFailed(let path, let reason): return "\(path): write failed: \(reason)"
        case .readFailed(let path, let reason): return "\(path): read failed: \(reason)"
        }
    }
}
