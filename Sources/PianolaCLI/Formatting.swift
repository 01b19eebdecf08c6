import Pianola

#if canImport(Glibc)
    import Glibc
#endif

extension String {
    /// One decimal place ("-inf" and "inf" for infinities).
    init(format1 value: Double) {
        guard value.isFinite else {
            self = value < 0 ? "-inf" : "inf"
            return
        }
        let scaled = (value * 10).rounded()
        let whole = Int(scaled / 10)
        let tenth = Int(abs(scaled)) % 10
        self = (scaled < 0 && whole == 0 ? "-" : "") + "\(whole).\(tenth)"
    }

    /// A linear level in dBFS, one decimal place ("-inf" for silence).
    init(decibels level: Float) {
        self = level > 0 ? String(format1: 20 * log10(Double(level))) : "-inf"
    }
}

/// The extensions of MIDI files (for shell completion).
let midiFileExtensions = ["mid", "midi", "kar", "rmi", "smf"]

/// `text` cut or padded with spaces to exactly `width` characters, for columns.
func fitted(_ text: String, width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}

/// The last part of a path.
func fileName(_ path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

extension SoundFontDiscovery.Source {
    /// Why this font was chosen, for the "SoundFont: …" line.
    var explanation: String {
        switch self {
        case .option: return "from --soundfont"
        case .environment: return "from $\(SoundFontDiscovery.environmentVariable)"
        case .system: return "system SoundFont"
        case .bundled: return "Pianola's bundled General MIDI font"
        }
    }
}
