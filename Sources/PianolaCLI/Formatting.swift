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

/// A count and its noun, agreeing in number: "1 track", "2 tracks", "0 tracks"; `plural` for a
/// noun that does not take an "s" ("1 match", "2 matches").
func counted(_ number: Int, _ noun: String, plural: String? = nil) -> String {
    "\(number) \(number == 1 ? noun : plural ?? noun + "s")"
}

/// The extensions of MIDI files (for shell completion).
let midiFileExtensions = ["mid", "midi", "kar", "rmi", "smf"]

/// `text` cut or padded with spaces to exactly `width` characters, for columns.
func fitted(_ text: String, width: Int) -> String {
    text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
}

/// `prefix` then `text`, in lines of at most `width` columns: broken at spaces, and after a "|"
/// inside a word too long for a line (a list of choices); the lines after the first start with
/// `indent` spaces. A word longer than a line with no "|" in it stands alone on its line.
func wrapped(_ text: String, after prefix: String, indent: Int, width: Int = 80) -> [String] {
    let room = width - indent
    var pieces: [(text: Substring, glue: String)] = []
    for word in text.split(separator: " ") {
        guard word.count > room, word.contains("|") else {
            pieces.append((word, " "))
            continue
        }
        var start = word.startIndex
        for index in word.indices where word[index] == "|" {
            let next = word.index(after: index)
            pieces.append((word[start..<next], start == word.startIndex ? " " : ""))
            start = next
        }
        if start < word.endIndex { pieces.append((word[start...], start == word.startIndex ? " " : "")) }
    }
    var lines: [String] = []
    var line = prefix
    var lineHasText = false
    for piece in pieces {
        let candidate = line + (lineHasText ? piece.glue : "") + piece.text
        if candidate.count <= width || !lineHasText {
            line = candidate
        } else {
            lines.append(line)
            line = String(repeating: " ", count: indent) + piece.text
        }
        lineHasText = true
    }
    return lines + [line]
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
