/// Why a file could not be read at all (lenient mode), or the first defect found (strict mode).
public enum MIDIFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes hold no MIDI: empty, or another kind of file (`what` names it when recognized).
    case notMIDI(what: String)
    /// A RIFF file that is not RMID, or an RMID without a `data` chunk.
    case invalidRIFF(String)
    /// Strict mode: the file has this defect.
    case damaged(MIDIFileDiagnostic)
    /// The file could not be read from disk.
    case unreadable(path: String, reason: String)

    public var description: String {
        switch self {
        case .notMIDI(let what): return "not a MIDI file: \(what)"
        case .invalidRIFF(let reason): return "invalid RIFF MIDI file: \(reason)"
        case .damaged(let diagnostic): return "damaged MIDI file: \(diagnostic)"
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        }
    }
}
