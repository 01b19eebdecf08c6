import TestSupport
import Testing

@testable import Sampler

#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` with a temporary folder holding empty files at the given relative paths.
func withScratchTree(_ files: [String], _ body: (String) throws -> Void) throws {
    try withTemporaryFolder("sf") { root in
        for file in files {
            let path = root + "/" + file
            let directory = String(path[..<path.lastIndex(of: "/")!])
            _ = directory.split(separator: "/").reduce("") { partial, part in
                let next = partial + "/" + part
                mkdir(next, 0o755)
                return next
            }
            fclose(fopen(path, "w"))
        }
        try body(root)
    }
}

@Suite("SoundFont discovery order")
struct SoundFontDiscoveryTests {
    func discovery(root: String, environment: [String: String] = [:]) -> SoundFontDiscovery {
        SoundFontDiscovery(
            environment: environment, systemFiles: [root + "/sys/default-GM.sf2"],
            systemDirectories: [root + "/fonts"], bundledCandidates: [root + "/bundle/PianolaGM.sf2"])
    }

    @Test("an explicit option wins over everything")
    func explicitWins() throws {
        try withScratchTree(["mine.sf2", "env.sf2", "sys/default-GM.sf2", "bundle/PianolaGM.sf2"]) { root in
            let found = try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": root + "/env.sf2"])
                .resolve(explicit: root + "/mine.sf2")
            #expect(found == .init(path: root + "/mine.sf2", source: .option))
        }
    }

    @Test("PIANOLA_SOUNDFONT comes next")
    func environmentNext() throws {
        try withScratchTree(["env.sf2", "sys/default-GM.sf2", "bundle/PianolaGM.sf2"]) { root in
            let found = try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": root + "/env.sf2"]).resolve()
            #expect(found == .init(path: root + "/env.sf2", source: .environment))
        }
    }

    @Test("then the system's default GM font, then SoundFont folders (default* first), then the bundled font")
    func systemThenFoldersThenBundled() throws {
        try withScratchTree(["sys/default-GM.sf2", "fonts/a.sf2", "bundle/PianolaGM.sf2"]) { root in
            let found = try discovery(root: root).resolve()
            #expect(found == .init(path: root + "/sys/default-GM.sf2", source: .system))
        }
        try withScratchTree(["fonts/a.sf2", "fonts/default.sf3", "fonts/notes.txt", "bundle/PianolaGM.sf2"]) { root in
            let found = try discovery(root: root).resolve()
            #expect(found == .init(path: root + "/fonts/default.sf3", source: .system))
        }
        try withScratchTree(["bundle/PianolaGM.sf2"]) { root in
            let found = try discovery(root: root).resolve()
            #expect(found == .init(path: root + "/bundle/PianolaGM.sf2", source: .bundled))
        }
    }

    @Test("a named font that does not exist is an error, not a silent fallback")
    func missingNamedFont() throws {
        try withScratchTree(["bundle/PianolaGM.sf2"]) { root in
            #expect(throws: SoundFontError.notFound(path: "/nope.sf2")) {
                try discovery(root: root).resolve(explicit: "/nope.sf2")
            }
            #expect(throws: SoundFontError.self) {
                try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": "/nope.sf2"]).resolve()
            }
        }
    }

    @Test("nothing anywhere is a notFound error that tells the user what to do")
    func nothingFound() throws {
        try withTemporaryFolder("sf") { root in
            do {
                _ = try discovery(root: root).resolve()
                Issue.record("resolved a font in an empty tree")
            } catch {
                #expect("\(error)".contains("--soundfont"))
            }
        }
    }

    @Test("the real discovery finds the bundled font of this checkout")
    func realBundledFont() throws {
        let path = try SoundFontDiscovery().bundledFont()
        #expect(path.hasSuffix("SoundFonts/PianolaGM.sf2"))
    }

    @Test("a file that is not a SoundFont is named as what it is")
    func notASoundFont() throws {
        try withTemporaryFolder("sf") { root in
            let path = root + "/song.mid"
            let file = fopen(path, "wb")
            fputs("MThd\0\0\0\u{6}\0\0\0\u{1}\0`", file)
            fclose(file)
            let synth = try FluidSynth()
            do {
                _ = try synth.loadSoundFont(at: path)
                Issue.record("a MIDI file loaded as a SoundFont")
            } catch {
                #expect("\(error)".contains("Standard MIDI File"))
            }
        }
    }

    @Test("a RIFF file whose form bytes are not text is described without raw bytes (found by the fuzzer)")
    func riffFormWithControlBytes() throws {
        try withTemporaryFolder("sf") { folder in
            let path = folder + "/zeros.sf2"
            let bytes: [UInt8] =
                Array("RIFF".utf8) + [8, 0, 0, 0] + [0, 0, 0x1B, 0xFF] + [UInt8](repeating: 0, count: 64)
            let file = fopen(path, "wb")
            fwrite(bytes, 1, bytes.count, file)
            fclose(file)
            let synth = try FluidSynth()
            do {
                _ = try synth.loadSoundFont(at: path)
                Issue.record("a RIFF file of no known form loaded as a SoundFont")
            } catch {
                let message = "\(error)"
                #expect(message.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }, "\(message)")
                #expect(message.hasSuffix("a RIFF file of form 0 0 1B FF, expected 'sfbk')"), "\(message)")
            }
        }
    }
}
