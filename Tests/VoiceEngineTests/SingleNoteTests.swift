import AudioGraph
import Foundation
import Sampler
import SoundFontFiles
import TestSupport
import Testing
import VoiceEngine

/// The project's own font, from this file's location.
let bundledFont: String = {
    var path = #filePath
    for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
    return path + "/SoundFonts/PianolaGM.sf2"
}()

let sf3Font = "/usr/share/sounds/sf3/FluidR3Mono_GM.sf3"

/// A note rendered by FluidSynth (Pianola's SamplerNode, reverb and chorus off): left, right.
func fluidSynthNote(
    font: String, program: Int, bank: Int = 0, channel: Int = 0, key: Int, velocity: Int, holdFrames: Int,
    frames: Int
) throws -> ([Float], [Float]) {
    var settings = SamplerNode.Settings()
    settings.isReverbEnabled = false
    settings.isChorusEnabled = false
    let sampler = try SamplerNode(settings: settings)
    try sampler.loadSoundFont(at: font)
    if bank != 0 {
        sampler.receive(.controlChange(channel: UInt8(channel), controller: 0, value: UInt8(bank)), atFrameOffset: 0)
    }
    sampler.receive(.programChange(channel: UInt8(channel), program: UInt8(program)), atFrameOffset: 0)
    sampler.receive(.noteOn(channel: UInt8(channel), note: UInt8(key), velocity: UInt8(velocity)), atFrameOffset: 0)
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
    var left: [Float] = []
    var right: [Float] = []
    var frame = 0
    while frame < frames {
        if (frame..<(frame + 64)).contains(holdFrames) {
            sampler.receive(
                .noteOff(channel: UInt8(channel), note: UInt8(key), velocity: 0), atFrameOffset: holdFrames - frame)
        }
        sampler.render(
            into: buffer, inputs: .none, frameCount: 64, time: AudioTime(sampleTime: Int64(frame), sampleRate: 44_100))
        left += buffer.samples(channel: 0)[0..<64]
        right += buffer.samples(channel: 1)[0..<64]
        frame += 64
    }
    return (left, right)
}

/// The same note rendered by the native engine, in quanta of `quantum` frames.
func nativeNote(
    synthesizer: VoiceSynthesizer, program: Int, bank: Int = 0, channel: Int = 0, key: Int, velocity: Int,
    startFrame: Int = 0, holdFrames: Int, frames: Int, quantum: Int = 64
) -> ([Float], [Float]) {
    renderEvents(
        synthesizer,
        events: [
            (0, .controlChange(channel: channel, controller: 0, value: bank)),
            (0, .programChange(channel: channel, program: program)),
            (startFrame, .noteOn(channel: channel, key: key, velocity: velocity)),
            (startFrame + holdFrames, .noteOff(channel: channel, key: key)),
        ], frames: frames, quantum: quantum)
}

/// `events` (at frames from the start) rendered by the native engine after a reset, in quanta
/// of `quantum` frames: the left and right channels.
func renderEvents(
    _ synthesizer: VoiceSynthesizer, events: [(Int, VoiceSynthesizer.Event)], frames: Int, quantum: Int
) -> ([Float], [Float]) {
    synthesizer.send(.reset, atFrame: 0)
    var left = [Float](repeating: 0, count: frames)
    var right = left
    var reverb = left
    var chorus = left
    var pending = events
    var frame = 0
    while frame < frames {
        let count = min(quantum, frames - frame)
        while let first = pending.first, first.0 < frame + count {
            synthesizer.send(first.1, atFrame: first.0 - frame)
            pending.removeFirst()
        }
        left.withUnsafeMutableBufferPointer { l in
            right.withUnsafeMutableBufferPointer { r in
                reverb.withUnsafeMutableBufferPointer { v in
                    chorus.withUnsafeMutableBufferPointer { c in
                        synthesizer.render(
                            frameCount: count, left: l.baseAddress! + frame, right: r.baseAddress! + frame,
                            reverb: v.baseAddress! + frame, chorus: c.baseAddress! + frame)
                    }
                }
            }
        }
        frame += count
    }
    return (left, right)
}

/// RMS level in decibels of 50 ms windows.
func envelope(_ signal: [Float], window: Int = 2205) -> [Double] {
    stride(from: 0, to: signal.count - window + 1, by: window).map { start in
        let power = signal[start..<(start + window)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(window)
        return 10 * log10(max(power, 1e-12))
    }
}

func correlation(_ a: [Double], _ b: [Double]) -> Double {
    let count = min(a.count, b.count)
    let (x, y) = (Array(a.prefix(count)), Array(b.prefix(count)))
    let (mx, my) = (x.reduce(0, +) / Double(count), y.reduce(0, +) / Double(count))
    var (sxy, sxx, syy) = (0.0, 0.0, 0.0)
    for i in 0..<count {
        sxy += (x[i] - mx) * (y[i] - my)
        sxx += (x[i] - mx) * (x[i] - mx)
        syy += (y[i] - my) * (y[i] - my)
    }
    return sxx > 0 && syy > 0 ? sxy / (sxx * syy).squareRoot() : (sxx == syy ? 1 : 0)
}

func rmsDecibels(_ signal: [Float]) -> Double {
    10 * log10(max(signal.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(signal.count, 1)), 1e-20))
}

@Suite("Native voice engine: single notes against FluidSynth", .serialized)
struct SingleNoteTests {
    @Test("a held note's level and envelope are FluidSynth's", arguments: [0, 19, 40, 56, 80])
    func levelAndEnvelope(program: Int) throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(bank, presets: [(0, program)])
        for (key, velocity) in [(60, 110), (36, 40), (84, 110)] {
            let frames = 44100 * 2
            let reference = try fluidSynthNote(
                font: bundledFont, program: program, key: key, velocity: velocity, holdFrames: 44100, frames: frames)
            let ours = nativeNote(
                synthesizer: synthesizer, program: program, key: key, velocity: velocity, holdFrames: 44100,
                frames: frames)
            let levelDifference = rmsDecibels(ours.0 + ours.1) - rmsDecibels(reference.0 + reference.1)
            #expect(
                abs(levelDifference) < 1,
                "program \(program) key \(key) vel \(velocity): level differs by \(levelDifference) dB")
            let envelopeCorrelation = correlation(envelope(ours.0), envelope(reference.0))
            #expect(
                envelopeCorrelation >= 0.99,
                "program \(program) key \(key) vel \(velocity): envelope correlation \(envelopeCorrelation)")
        }
    }
}

@Suite("Native voice engine: SoundFont 3 notes against FluidSynth", .serialized)
struct SoundFont3NoteTests {
    @Test(
        "a held note of Debian's FluidR3Mono SF3 matches FluidSynth's",
        .enabled(if: FileManager.default.fileExists(atPath: sf3Font)),
        arguments: [0, 24, 48, 73])
    func soundFont3Note(program: Int) throws {
        let bank = try SoundFontBank(contentsOf: sf3Font)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(bank, presets: [(0, program)])
        for (key, velocity) in [(60, 110), (36, 40), (84, 110)] {
            let frames = 44100 * 2
            let reference = try fluidSynthNote(
                font: sf3Font, program: program, key: key, velocity: velocity, holdFrames: 44100, frames: frames)
            let ours = nativeNote(
                synthesizer: synthesizer, program: program, key: key, velocity: velocity, holdFrames: 44100,
                frames: frames)
            let levelDifference = rmsDecibels(ours.0 + ours.1) - rmsDecibels(reference.0 + reference.1)
            #expect(abs(levelDifference) < 1, "program \(program) key \(key): level differs by \(levelDifference) dB")
            let envelopeCorrelation = correlation(envelope(ours.0), envelope(reference.0))
            #expect(
                envelopeCorrelation >= 0.99,
                "program \(program) key \(key): envelope correlation \(envelopeCorrelation)")
        }
    }
}
