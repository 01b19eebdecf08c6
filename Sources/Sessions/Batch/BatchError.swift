/// Why a batch, or one of its jobs, could not go on; each case says what and where.
public enum BatchError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The manifest cannot be read.
    case unreadableManifest(path: String, reason: String)
    /// A job's settings are out of range ("rate 1000 is outside 8000…192000").
    case invalidSettings(String)
    /// A file (the ledger, the failure log) cannot be written.
    case cannotWrite(path: String, reason: String)
    /// An output's folder cannot be created.
    case cannotCreateFolder(path: String, reason: String)
    /// An output vanished between its render and its record in the ledger.
    case vanished(path: String)
    /// The file system holding the file (the ledger, the failure log) is full: nothing was added
    /// to it.
    case noSpace(path: String)
    /// The output exists and the batch does not replace outputs (`replacesExistingOutputs`).
    case outputExists(path: String)
    /// The output is one of the batch's inputs (a MIDI file or a SoundFont), the same file by
    /// device and inode: it is never written over.
    case outputIsInput(path: String, input: String)

    public var description: String {
        switch self {
        case .unreadableManifest(let path, let reason): return "manifest \(path): cannot read it (\(reason))"
        case .invalidSettings(let reason): return reason
        case .cannotWrite(let path, let reason): return "\(path): cannot write (\(reason))"
        case .cannotCreateFolder(let path, let reason): return "cannot create output folder \(path): \(reason)"
        case .vanished(let path): return "\(path): vanished after rendering"
        case .noSpace(let path): return "no space left on device (\(path))"
        case .outputExists(let path): return "\(path) " + BatchError.existsPhrase
        case .outputIsInput(let path, let input):
            return path == input
                ? "\(path) is an input: not written over"
                : "\(path) is the input \(input) under another name: not written over"
        }
    }
}

extension BatchError {
    /// How an `outputExists` description ends, for a caller that adds how to replace it.
    public static let existsPhrase = "exists and was not replaced"

    /// Why `output` may not be written by a job that reads `inputs`, if it may not: it is one of
    /// them (by device and inode, whatever the path), or it exists and `replacing` is off.
    public static func writing(_ output: String, over inputs: [String], replacing: Bool) -> BatchError? {
        guard let identity = FileIdentity(path: output) else { return nil }
        if let input = inputs.first(where: { FileIdentity(path: $0) == identity }) {
            return .outputIsInput(path: output, input: input)
        }
        return replacing ? nil : .outputExists(path: output)
    }
}
