import AudioIO

/// Why a render stopped early.
public enum RenderError: Error, Sendable, CustomStringConvertible {
    case cancelled
    case audio(AudioFileError)
    case graph(String)
    /// A file beside the audio (a folder, `stems.json`) cannot be written.
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .cancelled: return "interrupted; no output was written"
        case .audio(let error): return error.description
        case .graph(let reason): return reason
        case .cannotWrite(let path, let reason): return "\(path): cannot write it (\(reason))"
        }
    }
}
