import SoundFontGenerator
import Testing

@testable import Sampler

#if canImport(Glibc)
    import Glibc
#endif

/// The committed font, located from this file: Tests/SoundFontGeneratorTests/ → SoundFonts/.
let committedFontPath: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/" + GeneralMIDISoundFont.fileName
}()

func readFile(_ path: String) -> [UInt8]? {
    guard let file = fopen(path, "rb") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return bytes
}

/// RMS level in dBFS of both channels over `frames` frames after a note-on.
func noteLevel(
    synth: FluidSynth, channel: Int, key: Int, seconds: Double = 1.0
) -> (whole: Double, early: Double, late: Double) {
    synth.noteOn(channel: channel, key: key, velocity: 100)
    let frames = Int(seconds * synth.sampleRate)
    let (left, right) = synth.render(frameCount: frames)
    synth.noteOff(channel: channel, key: key)
    _ = synth.render(frameCount: Int(synth.sampleRate * 3))  // let the release finish before the next note
    func level(_ range: Range<Int>) -> Double {
        var sum = 0.0
        for index in range { sum += Double(left[index] * left[index] + right[index] * right[index]) }
        let rms = (sum / Double(2 * max(range.count, 1))).squareRoot()
        return 20 * log10(max(rms, 1e-12))
    }
    let tenth = frames / 10
    return (level(0..<frames), level(tenth..<2 * tenth), level(frames - tenth..<frames))
}

@Suite("Pianola's General MIDI SoundFont", .serialized)
struct GeneralMIDISoundFontTests {
    @Test("regenerating produces exactly the committed bytes, under 2 MB")
    func deterministic() throws {
        let committed = try #require(readFile(committedFontPath), "missing \(committedFontPath)")
        let generated = GeneralMIDISoundFont.makeFile()
        #expect(generated.count < 2 * 1024 * 1024)
        #expect(generated.count == committed.count)
        #expect(generated == committed, "SoundFonts/PianolaGM.sf2 is stale: run scripts/generate-soundfont")
    }

    @Test("libfluidsynth loads it with no warnings; it has GM programs 0-127 and a drum kit")
    func loadsCleanly() throws {
        let info = try SoundFontInfo.load(path: committedFontPath)
        #expect(info.warnings == [])
        let melodic = Set(info.presets.filter { $0.bank == 0 }.map(\.program))
        #expect(melodic == Set(0..<128))
        #expect(info.presets.contains { $0.bank == 128 && $0.program == 0 })
    }

    @Test("every program 0-127 sounds (> -50 dBFS RMS over a one-second note)")
    func everyProgramSounds() throws {
        let synth = try FluidSynth()
        let (font, _) = try synth.loadSoundFont(at: committedFontPath)
        var silent: [Int] = []
        for program in 0..<128 {
            try synth.select(channel: 0, font: font, bank: 0, program: program)
            let level = noteLevel(synth: synth, channel: 0, key: 60).whole
            if !(level > -50) { silent.append(program) }
        }
        #expect(silent == [], "programs below -50 dBFS: \(silent)")
    }

    @Test("every GM drum note 35-81 sounds (> -50 dBFS RMS over its note)")
    func everyDrumSounds() throws {
        let synth = try FluidSynth()
        let (font, _) = try synth.loadSoundFont(at: committedFontPath)
        try synth.select(channel: 9, font: font, bank: 128, program: 0)
        var silent: [Int] = []
        for key in 35...81 {
            let level = noteLevel(synth: synth, channel: 9, key: key, seconds: 0.5).whole
            if !(level > -50) { silent.append(key) }
        }
        #expect(silent == [], "drum notes below -50 dBFS: \(silent)")
    }

    @Test("families behave like their family: struck tones decay, organs and strings sustain")
    func familiesHaveTheirEnvelope() throws {
        let synth = try FluidSynth()
        let (font, _) = try synth.loadSoundFont(at: committedFontPath)
        for program in [0, 8, 12, 24, 32, 45] {  // piano, celesta, marimba, guitar, bass, pizzicato
            try synth.select(channel: 0, font: font, bank: 0, program: program)
            let level = noteLevel(synth: synth, channel: 0, key: 60, seconds: 3)
            #expect(level.early - level.late > 6, "program \(program) should decay: \(level)")
        }
        for program in [16, 19, 48, 56, 73, 80] {  // organs, strings, trumpet, flute, square lead
            try synth.select(channel: 0, font: font, bank: 0, program: program)
            let level = noteLevel(synth: synth, channel: 0, key: 60, seconds: 3)
            #expect(abs(level.early - level.late) < 3, "program \(program) should sustain: \(level)")
        }
    }
}
