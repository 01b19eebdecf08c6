import AudioIO

/// Why a render stopped early.
public enum RenderError: Error, Sendable, CustomStringConvertible {
    /// The `progress` callback returned false: the render stopped and wrote no output.
    case cancelled
    /// An audio file could not be read or written.
    case audio(AudioFileError)
    /// The render could not be set up or run (an effect that cannot be built, a synthesizer that cannot be
    /// made, FluidSynth's player timing with a start or speed, stems of a file without notes); the text says
    /// what.
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
