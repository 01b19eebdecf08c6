import MIDICore

/// Why a file could not be read at all (lenient mode), the first defect found (strict mode), or why
/// a file could not be written.
public enum MIDIFileError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bytes hold no MIDI: empty, or another kind of file (`what` names it when recognized).
    case notMIDI(what: String)
    /// A RIFF file that is not RMID, or an RMID without a `data` chunk.
    case invalidRIFF(String)
    /// Strict mode: the file has this defect.
    case damaged(MIDIFileDiagnostic)
    /// The file could not be read from disk.
    case unreadable(path: String, reason: String)
    /// The file is larger than `MIDIFile.sizeLimit`: `bytes` (nil when it has no size, as a pipe,
    /// and gave more than the limit).
    case tooLarge(path: String, bytes: Int?, limit: Int)
    /// Waiting for the file's bytes (a named pipe, a device) was cancelled.
    case interrupted(path: String)
    /// Writing: the message of event `event` (0-based, in `tracks[track].events`) holds a number
    /// MIDI 1.0 cannot carry, which the file would have to change into another (see ``MIDIMessage``).
    /// Nothing is written.
    case valueOutOfRange(track: Int, event: Int, MIDIValueError)

    public var description: String {
        switch self {
        case .notMIDI(let what): return "not a MIDI file: \(what)"
        case .invalidRIFF(let reason): return "invalid RIFF MIDI file: \(reason)"
        case .damaged(let diagnostic): return "damaged MIDI file: \(diagnostic)"
        case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
        case .tooLarge(let path, let bytes, let limit):
            let size =
                bytes.map { "\(MIDIFileError.megabytes($0)) MB" } ?? "more than \(MIDIFileError.megabytes(limit)) MB"
            return "cannot read \(path): \(size), over the limit of \(MIDIFileError.megabytes(limit)) MB "
                + "for a MIDI file " + MIDIFileError.sizeLimitHint
        case .interrupted(let path): return "reading \(path) was interrupted"
        case .valueOutOfRange(let track, let event, let error):
            return "cannot write the MIDI file: track \(track), event \(event): \(error)"
        }
    }
}

extension MIDIFileError {
    /// Whole megabytes, rounded up ("1 MB" for a byte over none).
    static func megabytes(_ bytes: Int) -> Int { (bytes + 999_999) / 1_000_000 }

    /// How a `tooLarge` description ends: how to raise the limit, for a caller to put in its own words.
    public static let sizeLimitHint = "(MIDIFile.sizeLimit)"
}
