import AudioGraph
import Foundation
import MIDICore
import Sampler
import SoundFontFiles
import TestSupport
import Testing
import VoiceComparison
import VoiceEngine

/// A phrase of events at frames that are multiples of 64 (where FluidSynth applies them too).
struct Phrase {
    var name: String
    var events: [(frame: Int, event: VoiceSynthesizer.Event)]

    func midi(_ event: VoiceSynthesizer.Event) -> MIDIMessage? {
        switch event {
        case .noteOn(let channel, let key, let velocity):
            .noteOn(channel: UInt8(channel), note: UInt8(key), velocity: UInt8(velocity))
        case .noteOff(let channel, let key): .noteOff(channel: UInt8(channel), note: UInt8(key), velocity: 0)
        case .controlChange(let channel, let controller, let value):
            .controlChange(channel: UInt8(channel), controller: UInt8(controller), value: UInt8(value))
        case .programChange(let channel, let program): .programChange(channel: UInt8(channel), program: UInt8(program))
        case .pitchBend(let channel, let value): .pitchBend(channel: UInt8(channel), value: UInt16(value))
        case .channelPressure(let channel, let pressure):
            .channelPressure(channel: UInt8(channel), pressure: UInt8(pressure))
        case .keyPressure(let channel, let key, let pressure):
            .polyphonicKeyPressure(channel: UInt8(channel), note: UInt8(key), pressure: UInt8(pressure))
        case .reset: nil
        }
    }

    func fluidSynth(font: String, frames: Int) throws -> [Float] {
        var settings = SamplerNode.Settings()
        settings.isReverbEnabled = false
        settings.isChorusEnabled = false
        let sampler = try SamplerNode(settings: settings)
        try sampler.loadSoundFont(at: font)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 64)
        var output: [Float] = []
        var frame = 0
        while frame < frames {
            for (at, event) in events where at == frame {
                if let message = midi(event) { sampler.receive(message, atFrameOffset: 0) }
            }
            sampler.render(
                into: buffer, inputs: .none, frameCount: 64,
                time: AudioTime(sampleTime: Int64(frame), sampleRate: 44_100))
            for index in 0..<64 { output += [buffer.channel(0)[index], buffer.channel(1)[index]] }
            frame += 64
        }
        return output
    }

    func native(_ synthesizer: VoiceSynthesizer, frames: Int) -> [Float] {
        synthesizer.send(.reset, atFrame: 0)
        var (left, right, reverb, chorus) = (
            [Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64), [Float](repeating: 0, count: 64),
            [Float](repeating: 0, count: 64)
        )
        var output: [Float] = []
        var frame = 0
        while frame < frames {
            for (at, event) in events where at == frame { synthesizer.send(event, atFrame: 0) }
            for index in 0..<64 { (left[index], right[index], reverb[index], chorus[index]) = (0, 0, 0, 0) }
            synthesizer.render(frameCount: 64, left: &left, right: &right, reverb: &reverb, chorus: &chorus)
            for index in 0..<64 { output += [left[index], right[index]] }
            frame += 64
        }
        return output
    }
}

/// Zero crossings per second of one channel of an interleaved stereo signal (a pitch measure).
func crossingRate(_ interleaved: [Float], channel: Int, from: Int, to: Int) -> Double {
    var crossings = 0
    var previous = interleaved[from * 2 + channel]
    for frame in (from + 1)..<to {
        let value = interleaved[frame * 2 + channel]
        if (previous < 0) != (value < 0) { crossings += 1 }
        previous = value
    }
    return Double(crossings) * 44100 / Double(to - from)
}

@Suite("Native voice engine: controllers against FluidSynth", .serialized)
struct ControllerTests {
    static let second = 44096  // a multiple of 64

    static let phrases: [Phrase] = {
        let s = second
        func note(_ program: Int, _ key: Int, extra: [(Int, VoiceSynthesizer.Event)]) -> [(Int, VoiceSynthesizer.Event)]
        {
            [(0, .programChange(channel: 0, program: program))] + extra + [
                (64, .noteOn(channel: 0, key: key, velocity: 100)), (2 * s, .noteOff(channel: 0, key: key)),
            ]
        }
        return [
            Phrase(
                name: "bend range 2",
                events: note(
                    80, 69,
                    extra: [(s / 2, .pitchBend(channel: 0, value: 16383)), (s, .pitchBend(channel: 0, value: 0))])),
            Phrase(
                name: "bend range 12",
                events: note(
                    80, 57,
                    extra: [
                        (0, .controlChange(channel: 0, controller: 101, value: 0)),
                        (0, .controlChange(channel: 0, controller: 100, value: 0)),
                        (0, .controlChange(channel: 0, controller: 6, value: 12)),
                        (s / 2, .pitchBend(channel: 0, value: 12288)),
                    ])),
            Phrase(
                name: "volume and expression",
                events: note(
                    19, 60,
                    extra: [
                        (s / 2, .controlChange(channel: 0, controller: 7, value: 50)),
                        (s, .controlChange(channel: 0, controller: 11, value: 60)),
                    ])),
            Phrase(
                name: "pan",
                events: note(
                    19, 60,
                    extra: [
                        (s / 2, .controlChange(channel: 0, controller: 10, value: 0)),
                        (s, .controlChange(channel: 0, controller: 10, value: 127)),
                    ])),
            Phrase(
                name: "modulation wheel",
                events: note(40, 67, extra: [(s / 4, .controlChange(channel: 0, controller: 1, value: 127))])),
            Phrase(
                name: "channel pressure",
                events: note(40, 67, extra: [(s / 4, .channelPressure(channel: 0, pressure: 127))])),
            Phrase(
                name: "sustain pedal",
                events: [
                    (0, .programChange(channel: 0, program: 0)),
                    (0, .controlChange(channel: 0, controller: 64, value: 127)),
                    (64, .noteOn(channel: 0, key: 60, velocity: 100)), (s / 2, .noteOff(channel: 0, key: 60)),
                    (s, .noteOn(channel: 0, key: 64, velocity: 100)), (s + s / 4, .noteOff(channel: 0, key: 64)),
                    (3 * s / 2, .controlChange(channel: 0, controller: 64, value: 0)),
                ]),
            Phrase(
                name: "RPN fine and coarse tuning",
                events: note(
                    80, 69,
                    extra: [
                        (0, .controlChange(channel: 0, controller: 101, value: 0)),
                        (0, .controlChange(channel: 0, controller: 100, value: 2)),
                        (0, .controlChange(channel: 0, controller: 6, value: 65)),
                        (0, .controlChange(channel: 0, controller: 100, value: 1)),
                        (0, .controlChange(channel: 0, controller: 6, value: 96)),
                    ])),
        ]
    }()

    @Test("each phrase's level, envelope and pitch are FluidSynth's", arguments: phrases.indices)
    func phrase(index: Int) throws {
        let phrase = Self.phrases[index]
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(bank)
        let frames = 5 * Self.second / 2
        let reference = try phrase.fluidSynth(font: bundledFont, frames: frames)
        let ours = phrase.native(synthesizer, frames: frames)
        for channel in 0..<2 {
            let left = stride(from: channel, to: reference.count, by: 2).map { reference[$0] }
            let mine = stride(from: channel, to: ours.count, by: 2).map { ours[$0] }
            let level = rmsDecibels(mine) - rmsDecibels(left)
            #expect(abs(level) < 1, "\(phrase.name), channel \(channel): level differs by \(level) dB")
            let shape = correlation(envelope(mine), envelope(left))
            #expect(shape >= 0.99, "\(phrase.name), channel \(channel): envelope correlation \(shape)")
        }
        // Pitch, in quarter-second windows while the note sounds.
        for start in stride(from: 4096, to: 2 * Self.second - 11025, by: 11025) {
            let theirs = crossingRate(reference, channel: 0, from: start, to: start + 11025)
            let mine = crossingRate(ours, channel: 0, from: start, to: start + 11025)
            guard theirs > 50 else { continue }
            #expect(
                abs(mine / theirs - 1) < 0.01, "\(phrase.name) at frame \(start): \(mine) against \(theirs) crossings/s"
            )
        }
    }
}
