import AudioGraph
import MIDICore
import SMF
import TestSupport
import Testing

@testable import Sequencer

/// A note at 1 s (120 BPM, 480 PPQN: tick 960).
private let noteAtOneSecond = MusicSequence(file: makeFile(tracks: [[(960, on(60)), (1_200, off(60))]]))

@Suite("AudioSequencer: made with its engine, it cannot be left out of the render or play at the wrong rate")
struct AudioSequencerTests {
    @Test("it adds itself to the render, takes the engine's rate and finds the engine's instrument")
    func playsWithoutWiring() throws {
        for rate in [32_000.0, 48_000.0] {
            let engine = AudioEngine()
            let recorder = RecordingNode()
            try engine.attach(recorder)
            try engine.connect(recorder, to: engine.mainMixerNode)
            let sequencer = AudioSequencer(audioEngine: engine)
            sequencer.load(noteAtOneSecond)
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: 1_024)
            try sequencer.start()
            let buffer = AudioBuffer(channelCount: 2, frameCapacity: 1_024)
            var rounds = 0
            while !sequencer.isFinished && rounds < 1_000 {
                try engine.renderOffline(frameCount: 1_024, into: buffer)
                rounds += 1
            }
            #expect(sequencer.isFinished, "it never finished at \(rate) Hz")
            #expect(recorder.notesOn.map(\.0) == [Int64(rate)], "at \(rate) Hz")
        }
    }

    @Test("a player given no rate plays at the rate the engine renders at")
    func playerTakesTheRenderRate() throws {
        let engine = AudioEngine()
        let recorder = RecordingNode()
        try engine.attach(recorder)
        try engine.connect(recorder, to: engine.mainMixerNode)
        let player = MusicPlayer(sequence: noteAtOneSecond, destination: recorder)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 22_050), maximumFrameCount: 512)
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 512)
        for _ in 0..<100 { try engine.renderOffline(frameCount: 512, into: buffer) }
        #expect(recorder.notesOn.map(\.0) == [22_050])
    }

    @Test("what it cannot do is a typed error: nothing loaded, no instrument attached")
    func typedErrors() throws {
        let engine = AudioEngine()
        let sequencer = AudioSequencer(audioEngine: engine)
        #expect(throws: AudioSequencerError.nothingLoaded) { try sequencer.start() }
        sequencer.load(noteAtOneSecond)
        #expect(throws: AudioSequencerError.noDestination) { try sequencer.start() }
        // Settings made before a player exists apply when it is made.
        sequencer.rate = 2
        sequencer.currentPositionInSeconds = 0.5
        let recorder = RecordingNode()
        try engine.attach(recorder)
        try sequencer.prepareToPlay()
        #expect(sequencer.player?.rate == 2 && sequencer.currentPositionInSeconds == 0.5)
    }

    @Test("an instrument with nothing to play with (a sampler without a SoundFont) is a typed error, not silence")
    func nothingToPlayWith() throws {
        let engine = AudioEngine()
        let empty = SilentInstrument(name: "empty sampler")
        try engine.attach(empty)
        try engine.connect(empty, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 512)
        let sequencer = AudioSequencer(audioEngine: engine)
        sequencer.load(noteAtOneSecond)
        #expect(throws: AudioSequencerError.noSoundFont(node: "empty sampler")) { try sequencer.prepareToPlay() }
        #expect(throws: AudioSequencerError.noSoundFont(node: "empty sampler")) { try sequencer.start() }
        #expect(sequencer.player == nil && !sequencer.isPlaying)
        #expect(AudioSequencerError.noSoundFont(node: "empty sampler").description.contains("no SoundFont loaded"))
        // Behind a router, the instrument that cannot play is named; one that can plays.
        let drums = SilentInstrument(name: "drums")
        let router = try MIDIChannelRouter(
            destinations: [RecordingNode(), drums], channelRoutes: (0..<16).map { $0 == 9 ? 1 : 0 })
        // (A sequence of its own: a track's destination is set on the track, shared by every player.)
        sequencer.load(MusicSequence(file: makeFile(tracks: [[(960, on(60)), (1_200, off(60))]])))
        sequencer.tracks.forEach { $0.destination = router }
        #expect(throws: AudioSequencerError.noSoundFont(node: "drums")) { try sequencer.start() }
        drums.hasSounds = true
        empty.hasSounds = true
        try sequencer.start()
        #expect(sequencer.isPlaying)
    }
}

/// A MIDI destination that, until `hasSounds`, says it cannot play notes (as a sampler without
/// a SoundFont does).
private final class SilentInstrument: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    var hasSounds = false
    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {}
    var canPlayNotes: Bool { hasSounds }
}
