import Foundation
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

    @Test("nothing anywhere: noneFound lists every place looked in and names library calls, not CLI options")
    func nothingFound() throws {
        try withTemporaryFolder("sf") { root in
            let expected = SoundFontError.noneFound(searched: [
                "$PIANOLA_SOUNDFONT (not set)", root + "/sys/default-GM.sf2", root + "/fonts/",
                root + "/bundle/PianolaGM.sf2",
            ])
            #expect(throws: expected) { try discovery(root: root).resolve() }
            #expect(throws: SoundFontError.noneFound(searched: ["$PIANOLA_SOUNDFONT (empty)"])) {
                try SoundFontDiscovery(
                    environment: ["PIANOLA_SOUNDFONT": ""], systemFiles: [], systemDirectories: [],
                    bundledCandidates: []
                ).resolve()
            }
            let text = expected.description
            #expect(
                text == "no SoundFont found (looked in $PIANOLA_SOUNDFONT (not set), \(root)/sys/default-GM.sf2, "
                    + "\(root)/fonts/, \(root)/bundle/PianolaGM.sf2): load one with SamplerNode.loadSoundFont(at:) "
                    + "or pass soundFonts: to OfflineRenderer")
            #expect(!text.contains("--"), "no command-line option in a library error")
        }
    }

    @Test("the bundled font is found beside the test executable, in SwiftPM's resource folder, not in the checkout")
    func realBundledFont() throws {
        let executable = try #require(SoundFontDiscovery.executablePath())
        let directory = SoundFontDiscovery.parent(executable)
        let path = try SoundFontDiscovery().bundledFont()
        #expect(path == directory + "/Pianola_BundledSoundFont.resources/PianolaGM.sf2")
        #expect(SoundFontDiscovery.defaultBundledCandidates().first == path)
        // The same bytes as the checkout's font (the resource is a copy of it).
        #expect(FileManager.default.contentsEqual(atPath: path, andPath: bundledFont))
    }

    @Test("the bundled font's places, in order: the resource folder, beside the executable, PREFIX/share/pianola")
    func bundledCandidatesInOrder() throws {
        try withScratchTree([
            "bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2", "bin/PianolaGM.sf2", "share/pianola/PianolaGM.sf2",
        ]) { (root: String) throws in
            let candidates = SoundFontDiscovery.bundledCandidates(besideExecutable: root + "/bin/app")
            #expect(
                candidates == [
                    root + "/bin/Pianola_BundledSoundFont.resources/PianolaGM.sf2", root + "/bin/PianolaGM.sf2",
                    root + "/share/pianola/PianolaGM.sf2",
                ])
            for (index, candidate) in candidates.enumerated() {
                let discovery = SoundFontDiscovery(
                    environment: [:], systemFiles: [], systemDirectories: [], bundledCandidates: candidates)
                #expect(try discovery.bundledFont() == candidate, "place \(index + 1)")
                #expect(try discovery.resolve() == .init(path: candidate, source: .bundled))
                unlink(candidate)
            }
            let discovery = SoundFontDiscovery(
                environment: [:], systemFiles: [], systemDirectories: [], bundledCandidates: candidates)
            #expect(throws: SoundFontError.bundledFontNotFound(searched: candidates)) { try discovery.bundledFont() }
            let text = SoundFontError.bundledFontNotFound(searched: candidates).description
            #expect(candidates.allSatisfy { text.contains($0) }, "\(text)")
            #expect(text.contains("Pianola_BundledSoundFont.resources folder SwiftPM builds beside the executable"))
        }
    }

    @Test("selecting a program with no font loaded, or no font given, names the calls that load one")
    func noFontLoaded() throws {
        #expect(
            SoundFontError.notFound(path: "").description
                == "no SoundFont given: load one with SamplerNode.loadSoundFont(at:) or pass soundFonts: to OfflineRenderer"
        )
        let sampler = try SamplerNode()
        #expect(throws: SoundFontError.noSoundFontLoaded) { try sampler.selectProgram(0, onChannel: 0) }
        #expect(
            SoundFontError.noSoundFontLoaded.description
                == "the sampler has no SoundFont loaded: load one first with SamplerNode.loadSoundFont(at:)")
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
