/// Text from outside the program (a network peer's session name, text a packet carries) made safe
/// to print on a terminal or in a log.
///
/// A peer chooses its session name: printed as it came, `ESC [ 2 J` clears the operator's screen,
/// `ESC ] 0 ; … BEL` retitles the window, a newline forges a log line of its own, and a
/// right-to-left override shows the text after it reversed. `escaped(_:)` writes each such
/// character as a visible escape instead, and keeps every other character (letters of every
/// script, emoji) as it is.
public enum PrintableText {
    /// `text` with each character a terminal could act on, or that could hide or reorder what is
    /// shown, written as a visible escape:
    ///
    /// - C0 controls and DEL (U+0000…U+001F, U+007F; escape sequences start with ESC, U+001B) as
    ///   `\xHH`: `\x1b`, `\x07`, `\x0a`;
    /// - C1 controls (U+0080…U+009F: some terminals obey U+009B as ESC `[`), format characters
    ///   (the bidirectional overrides, embeddings, isolates and marks such as U+202E, zero-width
    ///   spaces, the byte-order mark; not the joiners U+200C and U+200D that emoji and some
    ///   scripts need), line and paragraph separators, and code points with no character assigned
    ///   (noncharacters such as U+FFFE included) as `\u{HHHH}`: `\u{9b}`, `\u{202e}`;
    /// - the backslash as `\\`, so an escape shown is never one the text itself spelled out.
    ///
    /// (Bytes that were not UTF-8 were made U+FFFD `�` when the text was decoded: shown as such.)
    public static func escaped(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || value == 0x7F {
                out += value < 0x10 ? "\\x0" : "\\x"
                out += String(value, radix: 16)
            } else if value == 0x5C {
                out += "\\\\"
            } else if needsEscape(scalar) {
                out += "\\u{" + String(value, radix: 16) + "}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a scalar above ASCII is shown as `\u{…}`.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.value >= 0x80 else { return false }
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator, .surrogate, .unassigned: return true
        case .format: return scalar.value != 0x200C && scalar.value != 0x200D
        default: return false
        }
    }
}
