import AudioGraph
import Foundation
import Sampler
import SoundFontFiles
import TestSupport
import Testing
import VoiceComparison
import VoiceEngine

/// The project's own font, from this file's location.
let bundledFont: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

let sf3Font = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

/// `program` of `font`, keys 60, 36 and 84, held 1 s: level within 1 dB of FluidSynth's render and
/// 50 ms envelope correlation ≥ 0.99.
func expectHeldNotesMatch(font: String, program: Int) throws {
    let bank = try SoundFontBank(contentsOf: font)
    let synthesizer = VoiceSynthesizer()
    try synthesizer.load(bank, presets: [(0, program)])
    for (key, velocity) in [(60, 110), (36, 40), (84, 110)] {
        let frames = 44100 * 2
        let reference = try fluidSynthNote(
            font: font, program: program, key: key, velocity: velocity, holdFrames: 44100, frames: frames)
        let ours = nativeNote(
            synthesizer: synthesizer, program: program, key: key, velocity: velocity, holdFrames: 44100,
            frames: frames)
        let levelDifference = rmsDecibels(ours.0 + ours.1) - rmsDecibels(reference.0 + reference.1)
        #expect(
            abs(levelDifference) < 1,
            "\(font) program \(program) key \(key) vel \(velocity): level differs by \(levelDifference) dB")
        let envelopeCorrelation = correlation(envelope(ours.0), envelope(reference.0))
        #expect(
            envelopeCorrelation >= 0.99,
            "\(font) program \(program) key \(key) vel \(velocity): envelope correlation \(envelopeCorrelation)")
    }
}

@Suite("Native voice engine: single notes against FluidSynth", .serialized)
struct SingleNoteTests {
    @Test("a held note's level and envelope are FluidSynth's", arguments: [0, 19, 40, 56, 80])
    func levelAndEnvelope(program: Int) throws {
        try expectHeldNotesMatch(font: bundledFont, program: program)
    }
}

@Suite("Native voice engine: SoundFont 3 notes against FluidSynth", .serialized)
struct SoundFont3NoteTests {
    @Test(
        "a held note of Debian's FluidR3Mono SF3 matches FluidSynth's",
        .enabled(if: FileManager.default.fileExists(atPath: sf3Font)),
        arguments: [0, 24, 48, 73])
    func soundFont3Note(program: Int) throws {
        try expectHeldNotesMatch(font: sf3Font, program: program)
    }
}

@Suite("Native voice engine: tremolo against FluidSynth", .serialized)
struct TremoloNoteTests {
    /// Vibraphone, Seashore (a 1 s attack: released in it), Telephone Ring (a 96 dB tremolo) and
    /// Helicopter: the tremolo's boost cannot undo the attenuation, and a release starts where the
    /// attack's amplitude was, tremolo counted.
    @Test(
        "a tremolo's level and the time to -60 dB after the release are FluidSynth's", arguments: [11, 122, 124, 125])
    func tremolo(program: Int) throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(bank, presets: [(0, program)])
        let sampler = try fluidSynthSampler(font: bundledFont)
        for velocity in [40, 110] {
            // Released on a 64-frame boundary, where FluidSynth applies it too.
            let (hold, frames) = (44_096, 44_100 * 4)
            let reference = fluidSynthNote(
                sampler: sampler, program: program, key: 60, velocity: velocity, holdFrames: hold, frames: frames)
            let ours = nativeNote(
                synthesizer: synthesizer, program: program, key: 60, velocity: velocity, holdFrames: hold,
                frames: frames)
            let level = rmsDecibels(ours.0 + ours.1) - rmsDecibels(reference.0 + reference.1)
            #expect(abs(level) < 1, "program \(program) vel \(velocity): level differs by \(level) dB")
            let decay = (decaySeconds(ours.0, releaseFrame: hold), decaySeconds(reference.0, releaseFrame: hold))
            #expect(decay.1 != nil, "FluidSynth's note decays within the render")
            if let mine = decay.0, let theirs = decay.1 {
                #expect(abs(mine / theirs - 1) <= 0.1, "program \(program) vel \(velocity): \(mine) s vs \(theirs) s")
            } else {
                Issue.record("program \(program) vel \(velocity): ours does not decay to -60 dB (\(decay))")
            }
        }
    }
}
