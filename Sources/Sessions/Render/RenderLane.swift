import AudioGraph
import MIDICore
import Sampler
import Sequencer

#if canImport(Glibc)
    import Glibc
#endif

/// One synthesizer's part of an offline render: its engine, sampler (either engine's) and player.
final class RenderLane: @unchecked Sendable {
    let engine = AudioEngine()
    let sampler: any LaneSynthesizer
    let player: MusicPlayer
    private let quantum: Int
    private let buffer: AudioBuffer

    init(sampler: any LaneSynthesizer, sequence: MusicSequence, options: RenderOptions) throws {
        self.sampler = sampler
        quantum = options.quantumFrames
        buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
        let rate = options.sampleRate
        player = MusicPlayer(sequence: sequence, destination: sampler, timing: options.timing.policy)
        player.rate = options.speed
        player.transpose = options.transpose
        if options.startSeconds > 0 { player.seek(toSeconds: options.startSeconds) }
        try engine.attach(sampler)
        try engine.connect(sampler, to: engine.mainMixerNode)
        try engine.addRenderObserver(player)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: quantum)
        engine.mainMixerNode.outputVolume = Float(pow(10, options.gainDecibels / 20))
    }

    /// Renders the chunk's quanta one after the other, noting after each whether the song has
    /// ended and how many voices still sound.
    func render(into chunk: RenderChunk) {
        for index in 0..<chunk.quantumCount {
            _ = engine.render(frameCount: quantum, into: buffer)
            for channel in 0..<2 {
                (chunk.audio.channel(channel) + index * quantum).update(from: buffer.channel(channel), count: quantum)
            }
            chunk.voiceCounts[index] = sampler.activeVoiceCount
            chunk.isFinished[index] = player.isFinished
        }
    }
}

/// A run of quanta rendered by one lane (or the sum of several).
final class RenderChunk: @unchecked Sendable {
    let quantumCount: Int
    let audio: AudioBuffer
    var voiceCounts: [Int]
    var isFinished: [Bool]

    init(quantumFrames: Int, quantumCount: Int) {
        self.quantumCount = quantumCount
        audio = AudioBuffer(channelCount: 2, frameCapacity: quantumFrames * quantumCount)
        voiceCounts = [Int](repeating: 0, count: quantumCount)
        isFinished = [Bool](repeating: false, count: quantumCount)
    }

    /// Mixes `other` (the same span of the song from another lane) into this chunk.
    func add(_ other: RenderChunk) {
        let frames = audio.frameCapacity
        for channel in 0..<2 {
            let target = audio.channel(channel)
            let source = other.audio.channel(channel)
            for frame in 0..<frames { target[frame] += source[frame] }
        }
        for index in 0..<quantumCount { voiceCounts[index] += other.voiceCounts[index] }
    }
}
