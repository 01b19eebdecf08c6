import MIDICore
import Testing

@Suite("Text from outside, escaped for a terminal")
struct PrintableTextTests {
    @Test("escape sequences, bells and newlines are shown, not obeyed")
    func controls() {
        // The name a peer gave in issue 41: it cleared the screen and retitled the window.
        let name = "\u{1B}[2J\u{1B}]0;owned\u{07}Trusted"
        #expect(PrintableText.escaped(name) == #"\x1b[2J\x1b]0;owned\x07Trusted"#)
        #expect(PrintableText.escaped("a\nrefused: b\r\t\u{0}\u{7F}") == #"a\x0arefused: b\x0d\x09\x00\x7f"#)
    }

    @Test("C1 controls, bidirectional overrides, zero-width and unassigned characters are shown as \\u{…}")
    func unicodeControls() {
        #expect(PrintableText.escaped("\u{9B}31m") == #"\u{9b}31m"#)  // CSI, as some terminals obey it
        #expect(PrintableText.escaped("\u{85}") == #"\u{85}"#)
        // "Trusted" shown reversed after a right-to-left override, and the isolates.
        #expect(PrintableText.escaped("\u{202E}detsurT\u{2066}x\u{2069}") == #"\u{202e}detsurT\u{2066}x\u{2069}"#)
        #expect(PrintableText.escaped("a\u{200B}b\u{FEFF}\u{2028}\u{FFFE}") == #"a\u{200b}b\u{feff}\u{2028}\u{fffe}"#)
    }

    @Test("a backslash is doubled, so the text cannot spell an escape of its own")
    func backslash() {
        #expect(PrintableText.escaped(#"\x1b"#) == #"\\x1b"#)
        #expect(PrintableText.escaped(#"DOMAIN\user"#) == #"DOMAIN\\user"#)
    }

    @Test("letters of every script, emoji and joiners are kept as they are")
    func printable() {
        for text in [
            "Pianola", "Clémence's iPad", "Студия", "スタジオ", "🎹 Keys", "👩\u{200D}🎤", "ترکی\u{200C}ها", "", "a b~",
        ] {
            #expect(PrintableText.escaped(text) == text)
        }
        // Bytes that were not UTF-8, decoded: the replacement character, itself printable.
        let decoded = String(decoding: [0x41, 0xFF, 0x42], as: UTF8.self)
        #expect(PrintableText.escaped(decoded) == "A\u{FFFD}B")
    }
}
