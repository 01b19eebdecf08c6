import AudioGraph
import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

/// An SMPTE-timed file, 25 frames a second of 40 ticks each (1 000 ticks a second): note 60 + n at
/// second n, for 10 s. Its beats are counted at 120 BPM, half a second each.
private let smpteFile: MIDIFile = {
    var events: [MIDIFile.Event] = []
    for second in 0..<10 {
        events.append(MIDIFile.Event(tick: second * 1_000, .channel(on(UInt8(60 + second)))))
        events.append(MIDIFile.Event(tick: second * 1_000 + 500, .channel(off(UInt8(60 + second)))))
    }
    events.append(MIDIFile.Event(tick: 10_000, .meta(.endOfTrack)))
    return MIDIFile(
        format: .singleTrack, division: .smpte(framesPerSecond: 25, ticksPerFrame: 40),
        tracks: [MIDIFile.Track(events: events)])
}()

@Suite("SMPTE-timed sequences: beats and seconds agree, and a seek by beats lands where it should")
struct SMPTETimingTests {
    @Test("seconds(forBeats:) and beats(forSeconds:) are inverses: 4 beats are 2 s and read back as 4")
    func beatsAndSecondsAreInverses() {
        let sequence = MusicSequence(file: smpteFile)
        #expect(sequence.seconds(forBeats: 4) == 2)
        #expect(sequence.beats(forSeconds: 2) == 4)
        #expect(sequence.lengthInBeats == 20)
        for beats in [0, 0.25, 1, 3.5, 4, 7, 19.9] {
            #expect(abs(sequence.beats(forSeconds: sequence.seconds(forBeats: beats)) - beats) < 1e-12, "\(beats)")
        }
        for seconds in [0, 0.1, 1.92, 2, 9.5] {
            #expect(abs(sequence.seconds(forBeats: sequence.beats(forSeconds: seconds)) - seconds) < 1e-12)
        }
        // A tempo-timed file still goes through its tempo map both ways (120, then 60 BPM from beat 4).
        let tempoTimed = MusicSequence(file: makeFile(tempos: [(0, 500_000), (1_920, 1_000_000)], tracks: [[]]))
        #expect(tempoTimed.seconds(forBeats: 6) == 4)
        #expect(tempoTimed.beats(forSeconds: 4) == 6)
    }

    @Test("MusicPlayer: seek(toBeats: 4) lands at 2 s, reads back 4 beats, and plays the note at 2 s first")
    func playerSeeksByBeats() throws {
        let harness = try Harness(smpteFile)
        harness.player.seek(toBeats: 4)
        #expect(harness.player.currentPositionInSeconds == 2)
        #expect(harness.player.currentPositionInBeats == 4)
        harness.player.play()
        try harness.render(frames: 24_000)  // 0.5 s: the note at 2 s only
        #expect(harness.recorder.notesOn.map(\.1) == [62])
        #expect(harness.recorder.notesOn.first?.0 == 0, "at the seek's frame")
        harness.player.currentPositionInBeats = 12
        #expect(harness.player.currentPositionInSeconds == 6)
        harness.recorder.received.removeAll()
        try harness.render(frames: 24_000)
        #expect(harness.recorder.notesOn.map(\.1) == [66])
    }

    @Test("AudioSequencer: a position set in beats is the same place in seconds, before and after it plays")
    func sequencerSeeksByBeats() throws {
        let engine = AudioEngine()
        let recorder = RecordingNode()
        try engine.attach(recorder)
        try engine.connect(recorder, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 1_000)
        let sequencer = AudioSequencer(audioEngine: engine)
        sequencer.load(MusicSequence(file: smpteFile))
        sequencer.currentPositionInBeats = 4
        #expect(sequencer.currentPositionInSeconds == 2)
        #expect(sequencer.currentPositionInBeats == 4)
        try sequencer.start()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 1_000)
        for _ in 0..<24 { try engine.renderOffline(frameCount: 1_000, into: buffer) }  // 0.5 s
        #expect(recorder.notesOn.map(\.1) == [62])
        sequencer.currentPositionInBeats = 16
        #expect(sequencer.currentPositionInSeconds == 8)
        #expect(sequencer.currentPositionInBeats == 16)
        for _ in 0..<24 { try engine.renderOffline(frameCount: 1_000, into: buffer) }
        #expect(recorder.notesOn.map(\.1) == [62, 68])
    }
}
