import AudioGraph
import Dispatch
import MIDICore
import Sampler
import Sequencer
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One synthesizer's part of an offline render: its engine, sampler and player.
final class RenderLane: @unchecked Sendable {
    let engine = AudioEngine()
    let sampler: SamplerNode
    let player: MusicPlayer
    private let quantum: Int
    private let buffer: AudioBuffer

    init(sampler: SamplerNode, sequence: MusicSequence, options: RenderOptions) throws {
        self.sampler = sampler
        quantum = options.quantumFrames
        buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
        let rate = Double(options.sampleRate)
        player = MusicPlayer(sequence: sequence, destination: sampler, sampleRate: rate, timing: options.timing)
        engine.attach(sampler)
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

/// A lane rendered ahead on its own thread into a small ring of chunks. The consumer takes the
/// chunks in order with `nextChunk()` and hands each back with `releaseChunk()`.
final class LaneWorker: @unchecked Sendable {
    private let lane: RenderLane
    private let slots: [RenderChunk]
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private var consumed = 0
    private var started = false

    init(lane: RenderLane, quantumFrames: Int, quantumCount: Int, slotCount: Int = 3) {
        self.lane = lane
        slots = (0..<slotCount).map { _ in RenderChunk(quantumFrames: quantumFrames, quantumCount: quantumCount) }
        // Counted up rather than created at slotCount: libdispatch traps when a semaphore is
        // freed below the value it was created with.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<slotCount { free.signal() }
    }

    func start() {
        started = true
        DispatchQueue.global().async { self.run() }
    }

    private func run() {
        var produced = 0
        while true {
            free.wait()
            if stopping.load(ordering: .acquiring) { break }
            lane.render(into: slots[produced % slots.count])
            produced += 1
            filled.signal()
        }
        finished.signal()
    }

    /// The next chunk in song order (waits until the worker has rendered it).
    func nextChunk() -> RenderChunk {
        filled.wait()
        return slots[consumed % slots.count]
    }

    /// Gives the chunk from `nextChunk()` back to the worker to render into.
    func releaseChunk() {
        consumed += 1
        free.signal()
    }

    /// Stops the worker after the chunk it is rendering, and waits for it.
    func stop() {
        guard started else { return }
        started = false
        stopping.store(true, ordering: .releasing)
        free.signal()
        finished.wait()
    }
}

/// How a song's channels are shared out between synthesizers.
enum ChannelSplit {
    /// The voices a note starts (whether each loops, its release in seconds), for (channel,
    /// bank, program, key, velocity).
    typealias VoiceProbe = (_ channel: Int, _ bank: Int, _ program: Int, _ key: UInt8, _ velocity: UInt8) -> [(
        isLooped: Bool, releaseSeconds: Double
    )]

    /// How much work each channel gives the synthesizer, in voice-seconds: a looped voice sounds
    /// for its note (at most 8 s) and its release (at most 3 s), an unlooped one (a drum, a
    /// plucked sample) for the same but at most 1.5 s.
    static func channelLoads(of sequence: MusicSequence, voices probe: VoiceProbe) -> [Double] {
        var loads = [Double](repeating: 0, count: 16)
        struct Note: Hashable {
            var isDrumChannel: Bool
            var bank: Int
            var program: Int
            var key: UInt8
            var velocityBand: UInt8
        }
        var cache: [Note: [(isLooped: Bool, releaseSeconds: Double)]] = [:]
        for track in sequence.tracks {
            var started = [Double](repeating: -1, count: 16 * 128)
            var shapes = [[(isLooped: Bool, releaseSeconds: Double)]](repeating: [], count: 16 * 128)
            var bank = [Int](repeating: 0, count: 16)
            var program = [Int](repeating: 0, count: 16)
            func end(_ key: Int, at seconds: Double) {
                guard started[key] >= 0 else { return }
                let held = min(seconds - started[key], 8)
                for voice in shapes[key] {
                    let life = held + min(voice.releaseSeconds, 3)
                    loads[key / 128] += voice.isLooped ? life : min(life, 1.5)
                }
                started[key] = -1
            }
            for (index, event) in track.events.enumerated() {
                let seconds = track.eventSeconds[index]
                switch event.message {
                case .controlChange(let channel, 0, let value):
                    bank[Int(channel)] = Int(value)
                case .programChange(let channel, let value):
                    program[Int(channel)] = Int(value)
                case .noteOn(let channel, let note, let velocity) where velocity > 0:
                    let key = Int(channel) * 128 + Int(note)
                    end(key, at: seconds)
                    let cacheKey = Note(
                        isDrumChannel: channel == 9, bank: bank[Int(channel)], program: program[Int(channel)],
                        key: note, velocityBand: velocity / 16)
                    let voices =
                        cache[cacheKey]
                        ?? probe(Int(channel), bank[Int(channel)], program[Int(channel)], note, velocity)
                    cache[cacheKey] = voices
                    started[key] = seconds
                    shapes[key] = voices
                case .noteOn(let channel, let note, _), .noteOff(let channel, let note, _):
                    end(Int(channel) * 128 + Int(note), at: seconds)
                default:
                    break
                }
            }
            for key in started.indices { end(key, at: started[key] + 2) }
        }
        return loads
    }

    /// Channel sets for up to `parts` synthesizers (longest-processing-time first), or nil when
    /// the song cannot be split usefully: fewer than two channels play, or the busiest part
    /// would carry much more than its share.
    static func plan(for sequence: MusicSequence, parts: Int, voices: VoiceProbe) -> [Set<Int>]? {
        let loads = channelLoads(of: sequence, voices: voices)
        let playing = (0..<16).filter { loads[$0] > 0 }.sorted { loads[$0] > loads[$1] }
        let count = min(parts, playing.count)
        guard count > 1 else { return nil }
        var sets = [Set<Int>](repeating: [], count: count)
        var totals = [Double](repeating: 0, count: count)
        for channel in playing {
            let lightest = totals.indices.min { totals[$0] < totals[$1] }!
            sets[lightest].insert(channel)
            totals[lightest] += loads[channel]
        }
        let total = totals.reduce(0, +)
        guard totals.max()! <= total * (1 / Double(count) + 0.2) else { return nil }
        // Channels that only send controllers or programs go with the first part.
        for channel in 0..<16 where loads[channel] == 0 { sets[0].insert(channel) }
        return sets
    }
}
