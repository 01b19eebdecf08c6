/// Why a SoundFont could not be used. Every case names the file, so the message can be shown to a
/// user as it is.
public enum SoundFontError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file at the path (or no SoundFont anywhere on the search path, when `path` is empty).
    case notFound(path: String)
    /// The file exists but is not a SoundFont 2/3 bank; `reason` says what it looks like instead.
    case notASoundFont(path: String, reason: String)
    /// FluidSynth refused the file (damaged chunks, unreadable samples).
    case loadFailed(path: String, messages: [String])
    /// The bank has no preset at this bank/program.
    case presetMissing(bank: Int, program: Int)
    /// The synthesizer could not be created with these settings.
    case synthesizerUnavailable(reason: String)

    public var description: String {
        switch self {
        case .notFound(let path) where path.isEmpty:
            return "no SoundFont found: pass --soundfont FILE, set PIANOLA_SOUNDFONT, or install fluid-soundfont-gm"
        case .notFound(let path):
            return "SoundFont not found: \(path)"
        case .notASoundFont(let path, let reason):
            return "\(path): not a SoundFont (\(reason))"
        case .loadFailed(let path, let messages):
            return "\(path): FluidSynth could not load it"
                + (messages.isEmpty ? "" : ": " + messages.joined(separator: "; "))
        case .presetMissing(let bank, let program):
            return "no preset at bank \(bank), program \(program)"
        case .synthesizerUnavailable(let reason):
            return "cannot create the synthesizer: \(reason)"
        }
    }
}
