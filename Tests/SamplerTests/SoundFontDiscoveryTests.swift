import TestSupport
import Testing

@testable import Sampler

#if canImport(Glibc)
    import Glibc
#endif

/// A scratch folder with empty files at the given relative paths.
func scratchTree(_ files: [String]) -> String {
    let root = makeTemporaryDirectory("pianola-sf")
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
    return root
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
        let root = scratchTree(["mine.sf2", "env.sf2", "sys/default-GM.sf2", "bundle/PianolaGM.sf2"])
        let found = try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": root + "/env.sf2"])
            .resolve(explicit: root + "/mine.sf2")
        #expect(found == .init(path: root + "/mine.sf2", source: .option))
    }

    @Test("PIANOLA_SOUNDFONT comes next")
    func environmentNext() throws {
        let root = scratchTree(["env.sf2", "sys/default-GM.sf2", "bundle/PianolaGM.sf2"])
        let found = try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": root + "/env.sf2"]).resolve()
        #expect(found == .init(path: root + "/env.sf2", source: .environment))
    }

    @Test("then the system's default GM font, then SoundFont folders (default* first), then the bundled font")
    func systemThenFoldersThenBundled() throws {
        var root = scratchTree(["sys/default-GM.sf2", "fonts/a.sf2", "bundle/PianolaGM.sf2"])
        #expect(try discovery(root: root).resolve() == .init(path: root + "/sys/default-GM.sf2", source: .system))

        root = scratchTree(["fonts/a.sf2", "fonts/default.sf3", "fonts/notes.txt", "bundle/PianolaGM.sf2"])
        #expect(try discovery(root: root).resolve() == .init(path: root + "/fonts/default.sf3", source: .system))

        root = scratchTree(["bundle/PianolaGM.sf2"])
        #expect(try discovery(root: root).resolve() == .init(path: root + "/bundle/PianolaGM.sf2", source: .bundled))
    }

    @Test("a named font that does not exist is an error, not a silent fallback")
    func missingNamedFont() throws {
        let root = scratchTree(["bundle/PianolaGM.sf2"])
        #expect(throws: SoundFontError.notFound(path: "/nope.sf2")) {
            try discovery(root: root).resolve(explicit: "/nope.sf2")
        }
        #expect(throws: SoundFontError.self) {
            try discovery(root: root, environment: ["PIANOLA_SOUNDFONT": "/nope.sf2"]).resolve()
        }
    }

    @Test("nothing anywhere is a notFound error that tells the user what to do")
    func nothingFound() {
        let root = scratchTree([])
        do {
            _ = try discovery(root: root).resolve()
            Issue.record("resolved a font in an empty tree")
        } catch {
            #expect(error.description.contains("--soundfont"))
        }
    }

    @Test("the real discovery finds the bundled font of this checkout")
    func realBundledFont() throws {
        let path = try SoundFontDiscovery().bundledFont()
        #expect(path.hasSuffix("SoundFonts/PianolaGM.sf2"))
    }

    @Test("a file that is not a SoundFont is named as what it is")
    func notASoundFont() throws {
        let root = scratchTree([])
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

    @Test("a RIFF file whose form bytes are not text is described without raw bytes (found by the fuzzer)")
    func riffFormWithControlBytes() throws {
        let path = scratchTree([]) + "/zeros.sf2"
        let bytes: [UInt8] = Array("RIFF".utf8) + [8, 0, 0, 0] + [0, 0, 0x1B, 0xFF] + [UInt8](repeating: 0, count: 64)
        let file = fopen(path, "wb")
        fwrite(bytes, 1, bytes.count, file)
        fclose(file)
        let synth = try FluidSynth()
        do {
            _ = try synth.loadSoundFont(at: path)
            Issue.record("a RIFF file of no known form loaded as a SoundFont")
        } catch {
            let message = error.description
            #expect(message.unicodeScalars.allSatisfy { (0x20..<0x7F).contains($0.value) }, "\(message)")
            #expect(message.hasSuffix("a RIFF file of form 0 0 1B FF, expected 'sfbk')"), "\(message)")
        }
    }
}
