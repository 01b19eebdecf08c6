import AudioGraph
import Sampler
import Sequencer
import TestSupport
import Testing

@Suite("FluidSynth's player timing, as a policy the music player is given")
struct FluidSynthPlayerTimingTests {
    @Test(
        "FluidSynth-compatible timing: whole-millisecond clock per 64-frame block, ticks rounded, applied a block later"
    )
    func fluidSynthTiming() throws {
        let onsets = try Self.onsets(FluidSynthPlayerTiming())
        // The frame where FluidSynth's player would apply an event at `tick` (120 BPM, 480 PPQN).
        func fluidFrame(_ tick: Int) -> Int64 {
            let millisecondsPerTick = FluidSynthPlayerTiming.millisecondsPerTick(
                tempo: 500_000, ticksPerQuarterNote: 480)
            var block: Int64 = 0
            while true {
                let milliseconds = Int(1_000 * Double(block * 64) / 44_100)
                if Int(Double(milliseconds) / millisecondsPerTick + 0.5) >= tick { return (block + 1) * 64 }
                block += 1
            }
        }
        #expect(onsets == [0, 1, 100, 1000].map(fluidFrame))
        #expect(onsets.allSatisfy { $0 % 64 == 0 })
    }

    /// The frames where a recorder got the note-ons of a five-event song (ticks 0, 1, 100, 1000)
    /// played with `timing`, 60 quanta of 1024 frames at 44.1 kHz; the player finished.
    static func onsets(_ timing: FluidSynthPlayerTiming) throws -> [Int64] {
        let file = makeFile(tracks: [[(0, on(60)), (1, on(61)), (100, on(62)), (1000, on(63)), (1000, off(60))]])
        let recorder = RecordingNode()
        let engine = AudioEngine()
        let player = MusicPlayer(sequence: MusicSequence(file: file), destination: recorder, timing: timing)
        try engine.attach(recorder)
        try engine.connect(recorder, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 44_100), maximumFrameCount: 1024)
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 1024)
        for _ in 0..<60 { try engine.renderOffline(frameCount: 1024, into: buffer) }
        #expect(player.isFinished)
        return recorder.notesOn.map(\.0)
    }

    @Test("Delivered when sent: each event a block earlier, at the start of the block the player sends it in")
    func deliveredWhenSent() throws {
        let applied = try Self.onsets(FluidSynthPlayerTiming(delivery: .whenApplied))
        let sent = try Self.onsets(FluidSynthPlayerTiming(delivery: .whenSent))
        #expect(sent.count == 4)
        #expect(sent == applied.map { $0 - 64 })
        // Tick 0 is sent in the first block: at frame 0, which the other delivery cannot reach.
        #expect(sent.first == 0)
    }
}
