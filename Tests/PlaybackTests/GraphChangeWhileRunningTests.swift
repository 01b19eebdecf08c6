import Foundation
import Pianola
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A sine of `frequency` on `channels` channels at amplitude 0.5, phase-continuous.
private final class ToneNode: AudioNode, @unchecked Sendable {
    let channels: Int
    let frequency: Double
    private var phase = 0.0

    init(name: String, channels: Int, frequency: Double) {
        self.channels = channels
        self.frequency = frequency
        super.init(name: name)
    }

    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { channels }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        let step = 2 * Double.pi * frequency / time.sampleRate
        for frame in 0..<frameCount {
            let value = Float(0.5 * sin(phase + step * Double(frame)))
            for channel in 0..<channels { output.channel(channel)[frame] = value }
        }
        phase = (phase + step * Double(frameCount)).truncatingRemainder(dividingBy: 2 * Double.pi)
    }
}

/// Passes its input through with as many channels, and counts what a device's render thread must
/// never see: a render while `prepare` runs (it takes 20 ms), or into a buffer of another
/// channel count than prepared.
private final class CheckedNode: AudioNode, @unchecked Sendable {
    let preparing = Atomic<Bool>(false)
    let violations = Atomic<Int>(0)
    let preparedChannels = Atomic<Int>(0)
    let preparations = Atomic<Int>(0)

    override var inputBusCount: Int { 1 }
    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { max(1, inputChannelCounts.first ?? 1) }
    override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        preparing.store(true, ordering: .sequentiallyConsistent)
        usleep(20_000)
        preparedChannels.store(format.channelCount, ordering: .sequentiallyConsistent)
        preparations.add(1, ordering: .sequentiallyConsistent)
        preparing.store(false, ordering: .sequentiallyConsistent)
    }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        if preparing.load(ordering: .sequentiallyConsistent)
            || output.channelCount != preparedChannels.load(ordering: .sequentiallyConsistent)
        {
            violations.add(1, ordering: .relaxed)
        }
        for channel in 0..<output.channelCount {
            guard let input = inputs[0], channel < input.channelCount else {
                output.channel(channel).update(repeating: 0, count: frameCount)
                continue
            }
            output.channel(channel).update(from: input.channel(channel), count: frameCount)
        }
    }
}

/// Counts the frames a node renders, its largest quantum and its peak (×10⁴).
private final class CountingTap: AudioTap, @unchecked Sendable {
    let frames = Atomic<Int64>(0)
    let largestQuantum = Atomic<Int>(0)
    let peak = Atomic<Int>(0)

    func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime) {
        frames.add(Int64(frameCount), ordering: .relaxed)
        largestQuantum.max(frameCount, ordering: .relaxed)
        var largest: Float = 0
        for frame in 0..<frameCount { largest = max(largest, abs(buffer.channel(0)[frame])) }
        peak.max(Int(largest * 10_000), ordering: .relaxed)
    }
}

@Suite("Graph changes while a device runs", .serialized)
struct GraphChangeWhileRunningTests {
    /// Zero crossings of `samples` (one channel) per second, halved: the frequency of a sine.
    func frequency(_ samples: ArraySlice<Float>, rate: Double) -> Double {
        let crossings = zip(samples, samples.dropFirst()).filter { ($0 < 0) != ($1 < 0) }.count
        return Double(crossings) / 2 / (Double(samples.count) / rate)
    }

    @Test(
        "a node whose format changes is prepared again while the device runs, never while rendered, without a click")
    func formatChangeWhileRunning() throws {
        let raw = FileManager.default.temporaryDirectory.appendingPathComponent("pianola-change-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: raw) }
        let engine = AudioEngine()
        let mono = ToneNode(name: "mono tone", channels: 1, frequency: 440)
        let stereo = ToneNode(name: "stereo tone", channels: 2, frequency: 880)
        let checked = CheckedNode(name: "checked")
        for node in [mono, stereo, checked] as [AudioNode] { try engine.attach(node) }
        try engine.connect(mono, to: checked)
        try engine.connect(checked, to: engine.mainMixerNode)
        let output = try engine.connectOutput(
            toDevice: .init(device: "file:FILE=\(raw),FORMAT=raw", periodFrames: 256, periodCount: 4))
        defer {
            output.close()
            engine.outputDevice = nil
        }
        try engine.start()
        let rate = try #require(engine.format?.sampleRate)
        func wait(until frames: Int64) throws {
            let deadline = Date().addingTimeInterval(20)
            while engine.currentSampleTime < frames && Date() < deadline { usleep(1_000) }
            try #require(engine.currentSampleTime >= frames, "the device stopped rendering")
        }
        try wait(until: Int64(rate))
        #expect(checked.preparedChannels.load(ordering: .relaxed) == 1)
        let changedAt = engine.currentSampleTime
        // The checked node goes from one channel to two: before, this was refused while running.
        try engine.connect(stereo, to: checked, toBus: 0)
        let afterChange = engine.currentSampleTime
        try wait(until: afterChange + Int64(rate))
        engine.stop()
        #expect(output.failure == nil)
        #expect(checked.violations.load(ordering: .relaxed) == 0, "rendered while prepared, or in another format")
        #expect(checked.preparations.load(ordering: .relaxed) == 2)
        #expect(checked.preparedChannels.load(ordering: .relaxed) == 2)

        let captured = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes {
            Array($0.bindMemory(to: Float.self))
        }
        let left = stride(from: 0, to: captured.count - 1, by: 2).map { captured[$0] }
        let right = stride(from: 1, to: captured.count, by: 2).map { captured[$0] }
        let window = Int(rate / 4)
        try #require(left.count >= Int(afterChange) + window && changedAt > Int64(window), "\(left.count) frames")
        let before = frequency(left[Int(changedAt) - window..<Int(changedAt)], rate: rate)
        let after = frequency(left[(left.count - window)...], rate: rate)
        #expect(abs(before - 440) < 10, "before the change: \(before) Hz")
        #expect(abs(after - 880) < 10, "after the change: \(after) Hz")
        #expect(zip(left.suffix(window), right.suffix(window)).allSatisfy { $0 == $1 }, "both channels the tone")
        // A sine of 0.5 at 880 Hz moves at most 0.058 a frame; a cut to silence would move 0.5.
        let jumps = zip(left, left.dropFirst()).map { abs($1 - $0) }
        let largest = jumps.max() ?? 0
        var silence = (longest: 0, run: 0)
        for value in left[Int(changedAt)...] {
            silence.run = value == 0 ? silence.run + 1 : 0
            silence.longest = max(silence.longest, silence.run)
        }
        #expect(largest < 0.08, "the largest step between frames: \(largest)")
        // The node is out only while the change is made (this device renders as fast as it can,
        // so that is many quanta), plus the quanta of the fades.
        let during = Int(afterChange - changedAt) + 2 * 256
        #expect(silence.longest <= during, "\(silence.longest) frames of silence, the change took \(during)")
    }

    @Test(
        "a node a running device renders moved in front of a varispeed (directly or by a new EQ) renders on",
        arguments: [false, true])
    func rateDomainWhileRunning(throughNewEQ: Bool) throws {
        let (engine, player) = try demoGraph(effects: false)
        let sampler = try #require(engine.attachedNodes.first { $0 is SamplerNode })
        let varispeed = VarispeedNode()
        varispeed.rate = 2
        try engine.attach(varispeed)
        let output = try engine.connectOutput(toDevice: .init(device: "null", periodFrames: 256))
        defer {
            output.close()
            engine.outputDevice = nil
        }
        player.play()
        try engine.start()
        try engine.connect(varispeed, to: engine.mainMixerNode)
        usleep(100_000)
        let tap = CountingTap()
        try engine.installTap(on: sampler, tap)
        try engine.disconnectOutput(of: sampler)
        if throughNewEQ {
            // The EQ, never prepared, is compiled for the sampler's two channels while the
            // sampler is held.
            let eq = EQNode(numberOfBands: 1)
            try engine.attach(eq)
            try engine.connect(sampler, to: eq)
            try engine.connect(eq, to: varispeed)
            #expect(engine.inputBus(of: varispeed, connectedFrom: eq) == 0)
        } else {
            try engine.connect(sampler, to: varispeed)
            #expect(engine.inputBus(of: varispeed, connectedFrom: sampler) == 0)
        }
        let start = (engine.currentSampleTime, tap.frames.load(ordering: .relaxed))
        // A note of its own (this device renders as fast as it can: the song may be over), and
        // six seconds through the sampler, however slowly a busy machine renders.
        tap.peak.store(0, ordering: .relaxed)
        try (sampler as? SamplerNode)?.startNote(60, withVelocity: 110, onChannel: 0)
        let rate = try #require(engine.format?.sampleRate)
        let deadline = Date().addingTimeInterval(30)
        while tap.frames.load(ordering: .relaxed) - start.1 < Int64(6 * rate) && Date() < deadline { usleep(10_000) }
        #expect(engine.isRunning && output.failure == nil)
        // The sampler renders again, through the varispeed: twice the engine's frames, in
        // quanta of twice the period, and the song sounds.
        let rendered = (engine.currentSampleTime - start.0, tap.frames.load(ordering: .relaxed) - start.1)
        #expect(rendered.0 > 0 && rendered.1 >= 2 * rendered.0 - 1_024, "engine \(rendered.0), sampler \(rendered.1)")
        #expect(tap.largestQuantum.load(ordering: .relaxed) == 512)
        #expect(
            tap.peak.load(ordering: .relaxed) > 100, "the sampler's peak ×10⁴: \(tap.peak.load(ordering: .relaxed))")
        engine.stop()
    }
}
