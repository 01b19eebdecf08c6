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
            // One line: FluidSynth's first real complaint (its DLS loader's "Not a DLS file", tried
            // after the SoundFont loader failed, is not one), printable, not too long; the error
            // keeps every message.
            let real = messages.filter { !$0.contains("DLS") }
            let first = real.first { $0.hasPrefix("error") } ?? real.first ?? messages.first
            let bare = first.map { $0.hasPrefix("error: ") ? String($0.dropFirst(7)) : $0 }
            let printable = bare.map { message in
                String(message.unicodeScalars.map { $0.value < 32 || $0.value == 127 ? " " : Character($0) })
            }
            let shown = printable.map { $0.count > 160 ? String($0.prefix(159)) + "…" : $0 }
            return "\(path): FluidSynth could not load it" + (shown.map { ": " + $0 } ?? "")
        case .presetMissing(let bank, let program):
            return "no preset at bank \(bank), program \(program)"
        case .synthesizerUnavailable(let reason):
            return "cannot create the synthesizer: \(reason)"
        }
    }
}
