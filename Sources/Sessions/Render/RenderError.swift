import AudioIO

/// Why a render stopped early.
public enum RenderError: Error, Sendable, CustomStringConvertible {
    case cancelled
    case audio(AudioFileError)
    case graph(String)

    public var description: String {
        switch self {
        case .cancelled: return "interrupted; no output was written"
        case .audio(let error): return error.description
        case .graph(let reason): return reason
        }
    }
}
