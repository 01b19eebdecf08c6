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

    public var description: String {
        switch self {
        case .unreadableManifest(let path, let reason): return "manifest \(path): cannot read it (\(reason))"
        case .invalidSettings(let reason): return reason
        case .cannotWrite(let path, let reason): return "\(path): cannot write (\(reason))"
        case .cannotCreateFolder(let path, let reason): return "cannot create output folder \(path): \(reason)"
        case .vanished(let path): return "\(path): vanished after rendering"
        case .noSpace(let path): return "no space left on device (\(path))"
        }
    }
}
