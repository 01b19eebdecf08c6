/// Why a SoundFont could not be used. Every case names the file or the places looked in, so the
/// message can be shown to a user as it is.
public enum SoundFontError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No file at the path; an empty `path`: no SoundFont was given at all (an empty list of
    /// fonts).
    case notFound(path: String)
    /// `SoundFontDiscovery.resolve()` found no font: `searched` lists the places it looked, in
    /// order (the environment variable, the system's files and folders, the bundled font's places).
    case noneFound(searched: [String])
    /// `SoundFontDiscovery.bundledFont()` found no bundled font in any of the places `searched`.
    case bundledFontNotFound(searched: [String])
    /// The sampler has no SoundFont loaded, so it has no preset to select.
    case noSoundFontLoaded
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
        case .noneFound(let searched):
            return "no SoundFont found (looked in \(searched.joined(separator: ", "))): \(Self.loadHint)"
        case .bundledFontNotFound(let searched):
            return "the SoundFont bundled with Pianola is not in any of \(searched.joined(separator: ", ")): "
                + Self.bundledFontHint
        case .noSoundFontLoaded:
            return "the sampler has no SoundFont loaded: load one first with SamplerNode.loadSoundFont(at:)"
        case .notFound(let path) where path.isEmpty:
            return "no SoundFont given: \(Self.loadHint)"
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

    /// How a ``noneFound(searched:)`` description (and an empty ``notFound(path:)``'s) ends: how a
    /// program gives Pianola a font, in the library's words, for a caller to put in its own (the
    /// `pianola` command names its options).
    public static let loadHint = "load one with SamplerNode.loadSoundFont(at:) or pass soundFonts: to OfflineRenderer"

    /// How a ``bundledFontNotFound(searched:)`` description ends: where the font must be.
    public static let bundledFontHint =
        "keep the Pianola_BundledSoundFont.resources folder SwiftPM builds beside the executable "
        + "(or PianolaGM.sf2 itself), or install PianolaGM.sf2 in PREFIX/share/pianola"
}
