import SoundFontFiles
import Testing
import VoiceComparison
import VoiceEngine

@Suite("Native voice engine: every note on its exact frame", .serialized)
struct ExactFrameTests {
    /// A few notes, controllers and a bend at frames that fall anywhere in a block.
    static let events: [(Int, VoiceSynthesizer.Event)] = [
        (0, .programChange(channel: 0, program: 0)), (0, .programChange(channel: 1, program: 40)),
        (37, .noteOn(channel: 0, key: 60, velocity: 100)), (1001, .noteOn(channel: 1, key: 67, velocity: 90)),
        (5003, .controlChange(channel: 1, controller: 7, value: 70)), (7777, .pitchBend(channel: 1, value: 12000)),
        (9001, .noteOn(channel: 9, key: 38, velocity: 120)), (20011, .noteOff(channel: 0, key: 60)),
        (23456, .controlChange(channel: 0, controller: 64, value: 127)),
        (23500, .noteOn(channel: 0, key: 64, velocity: 80)),
        (26000, .noteOff(channel: 0, key: 64)), (30001, .controlChange(channel: 0, controller: 64, value: 0)),
        (33333, .noteOff(channel: 1, key: 67)),
    ]

    static func render(quantum: Int, frames: Int, synthesizer: VoiceSynthesizer) -> [Float] {
        let (left, right) = renderEvents(synthesizer, events: events, frames: frames, quantum: quantum)
        return zip(left, right).flatMap { [$0, $1] }
    }

    @Test("the output does not depend on the render quantum (1, 61, 512, 4096 frames)")
    func quantumIndependence() throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let frames = 44100
        var outputs: [[Float]] = []
        for quantum in [64, 1, 61, 512, 4096] {
            // A fresh synthesizer each time: the 64-frame control grid counts from its first frame.
            let synthesizer = VoiceSynthesizer()
            try synthesizer.load(bank, presets: [(0, 0), (0, 40), (128, 0)])
            outputs.append(Self.render(quantum: quantum, frames: frames, synthesizer: synthesizer))
        }
        let peak = outputs[0].map { abs($0) }.max() ?? 0
        #expect(peak > 0.05, "the phrase plays: peak \(peak)")
        for (index, quantum) in [1, 61, 512, 4096].enumerated() {
            let difference = zip(outputs[0], outputs[index + 1]).map { abs($0 - $1) }.max() ?? 1
            #expect(difference <= 1e-6, "quantum \(quantum): differs from 64 by up to \(difference)")
        }
    }

    @Test(
        "a note sounds from the frame it is given, not from a block boundary", arguments: [0, 1, 37, 63, 64, 100, 1001])
    func noteStartsOnItsFrame(offset: Int) throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let synthesizer = VoiceSynthesizer()
        try synthesizer.load(bank, presets: [(0, 80)])
        let (left, _) = nativeNote(
            synthesizer: synthesizer, program: 80, key: 69, velocity: 127, startFrame: offset, holdFrames: 2000,
            frames: 4096, quantum: 512)
        let first = left.firstIndex { $0 != 0 }
        #expect(first == offset + 1, "offset \(offset): first non-zero sample at \(String(describing: first))")
    }

    @Test("after a reset nothing of the voices before it sounds: a new note is a fresh synthesizer's")
    func resetLeavesNothing() throws {
        let bank = try SoundFontBank(contentsOf: bundledFont)
        let frames = 44_100
        // A chord of three voices (a group partly filled) cut by a reset at frame 20 000, then one note.
        let chord: [(Int, VoiceSynthesizer.Event)] = [
            (0, .programChange(channel: 0, program: 48)), (0, .noteOn(channel: 0, key: 60, velocity: 100)),
            (0, .noteOn(channel: 0, key: 64, velocity: 100)), (0, .noteOn(channel: 0, key: 67, velocity: 100)),
            (20_000, .reset), (20_000, .noteOn(channel: 0, key: 72, velocity: 90)),
        ]
        let lone: [(Int, VoiceSynthesizer.Event)] = [(20_000, .noteOn(channel: 0, key: 72, velocity: 90))]
        var outputs: [[Float]] = []
        for events in [chord, lone] {
            let synthesizer = VoiceSynthesizer()
            try synthesizer.load(bank, presets: [(0, 0), (0, 48)])
            outputs.append(renderEvents(synthesizer, events: events, frames: frames, quantum: 512).0)
        }
        #expect(outputs[0][10_000] != 0, "the chord sounds before the reset")
        let after = zip(outputs[0][20_000...], outputs[1][20_000...]).map { abs($0 - $1) }.max() ?? 1
        #expect(after <= 1e-6, "after the reset the output differs from the lone note's by up to \(after)")
        let nonFinite = outputs[0].filter { !$0.isFinite }.count
        #expect(nonFinite == 0, "\(nonFinite) samples are not finite")
    }
}
