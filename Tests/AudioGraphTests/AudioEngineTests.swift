import MIDICore
import Testing

@testable import AudioGraph

/// A source that outputs a constant value on every channel.
final class ConstantNode: AudioNode, @unchecked Sendable {
    let value: Float
    let channels: Int
    init(_ value: Float, channels: Int = 2, name: String = "constant") {
        self.value = value
        self.channels = channels
        super.init(name: name)
    }
    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { channels }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        for channel in 0..<output.channelCount { output.channel(channel).update(repeating: value, count: frameCount) }
    }
}

/// A one-input node that multiplies by a gain.
final class GainNode: AudioNode, @unchecked Sendable {
    let gain: Float
    init(_ gain: Float) {
        self.gain = gain
        super.init(name: "gain")
    }
    override var inputBusCount: Int { 1 }
    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        guard let input = inputs[0] else { return output.clear(frames: frameCount) }
        for channel in 0..<output.channelCount {
            for frame in 0..<frameCount { output.channel(channel)[frame] = input.channel(channel)[frame] * gain }
        }
    }
}

final class QuantumRecorder: RenderObserver, @unchecked Sendable {
    var calls: [(Int, Int64)] = []
    func willRender(frameCount: Int, at time: AudioTime) { calls.append((frameCount, time.sampleTime)) }
}

func render(_ engine: AudioEngine, frames: Int) throws -> AudioBuffer {
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: frames)
    try engine.renderOffline(frameCount: frames, into: buffer)
    return buffer
}

@Suite("Audio engine: graph, mixer, manual rendering")
struct AudioEngineTests {
    let format = AudioFormat.stereo(sampleRate: 48_000)

    @Test("a source through the main mixer reaches the output unchanged")
    func sourceToOutput() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        try engine.attach(source)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 256)
        _ = try render(engine, frames: 256)  // the first quantum ramps the new input in
        let buffer = try render(engine, frames: 256)
        #expect(buffer.samples(channel: 0).allSatisfy { $0 == 0.5 })
        #expect(buffer.samples(channel: 1).allSatisfy { $0 == 0.5 })
    }

    @Test("mixer: per-input volume, stereo balance and equal-power mono pan; sum of inputs")
    func mixerVolumeAndPan() throws {
        let engine = AudioEngine()
        let stereo = ConstantNode(0.5)
        let mono = ConstantNode(1, channels: 1, name: "mono")
        try engine.attach(stereo)
        try engine.attach(mono)
        let mixer = engine.mainMixerNode
        try engine.connect(stereo, to: mixer, toBus: 0)
        try engine.connect(mono, to: mixer, toBus: 1)
        try mixer.setVolume(0.5, forInputBus: 0)
        try mixer.setPan(-1, forInputBus: 0)  // stereo hard left: right channel silenced
        try mixer.setPan(0, forInputBus: 1)  // mono centre: −3 dB each side
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 128)
        _ = try render(engine, frames: 128)
        let buffer = try render(engine, frames: 128)
        let centre = Float(0.5).squareRoot()
        #expect(abs(buffer.channel(0)[10] - (0.25 + centre)) < 1e-6)
        #expect(abs(buffer.channel(1)[10] - centre) < 1e-6)
    }

    @Test("volume changes ramp across one quantum instead of jumping")
    func volumeRamp() throws {
        let engine = AudioEngine()
        let source = ConstantNode(1)
        try engine.attach(source)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 100)
        _ = try render(engine, frames: 100)
        try engine.mainMixerNode.setVolume(0, forInputBus: 0)
        let buffer = try render(engine, frames: 100)
        let samples = buffer.samples(channel: 0)
        #expect(abs(samples[0] - 0.99) < 1e-5)
        #expect(samples[99] == 0)
        #expect(zip(samples, samples.dropFirst()).allSatisfy { $0 >= $1 })
    }

    @Test("a mixer's volume and pan of a bus it does not have throw invalidBus and change nothing")
    func mixerBusOutOfRange() throws {
        let mixer = MixerNode(name: "strip")
        for bus in [-1, MixerNode.maximumInputCount, Int.max, Int.min] {
            let invalid = AudioGraphError.invalidBus(node: "strip", bus: bus)
            #expect(throws: invalid) { try mixer.setVolume(0.5, forInputBus: bus) }
            #expect(throws: invalid) { try mixer.setPan(-1, forInputBus: bus) }
            #expect(throws: invalid) { try mixer.volume(forInputBus: bus) }
            #expect(throws: invalid) { try mixer.pan(forInputBus: bus) }
        }
        let last = MixerNode.maximumInputCount - 1
        #expect(try mixer.volume(forInputBus: last) == 1 && mixer.pan(forInputBus: last) == 0)
        try mixer.setVolume(-2, forInputBus: last)
        try mixer.setPan(3, forInputBus: last)
        #expect(try mixer.volume(forInputBus: last) == 0 && mixer.pan(forInputBus: last) == 1)
    }

    @Test("connecting while rendering fades in; disconnecting fades out over one quantum, then silence")
    func graphChangesDoNotClick() throws {
        let engine = AudioEngine()
        let first = ConstantNode(1)
        let second = ConstantNode(1)
        try engine.attach(first)
        try engine.attach(second)
        try engine.connect(first, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 64)
        _ = try render(engine, frames: 64)
        try engine.connect(second, to: engine.mainMixerNode)
        let fadeIn = try render(engine, frames: 64).samples(channel: 0)
        #expect(abs(fadeIn[0] - (1 + 1.0 / 64)) < 1e-5)
        #expect(abs(fadeIn[63] - 2) < 1e-6)
        try engine.disconnectOutput(of: first)
        let fadeOut = try render(engine, frames: 64).samples(channel: 0)
        #expect(abs(fadeOut[0] - (2 - 1.0 / 64)) < 1e-5)
        #expect(abs(fadeOut[63] - 1) < 1e-6)
        let after = try render(engine, frames: 64).samples(channel: 0)
        #expect(after.allSatisfy { $0 == 1 })
        // The largest step between neighbouring samples across the whole sequence stays small.
        let all = fadeIn + fadeOut + after
        #expect(zip(all, all.dropFirst()).map { abs($0 - $1) }.max()! <= 1.0 / 64 + 1e-5)
    }

    @Test("nodes render after their inputs (a chain through an effect)")
    func chainOrder() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.25)
        let gain = GainNode(4)
        try engine.attach(source)
        try engine.attach(gain)
        try engine.connect(source, to: gain)
        try engine.connect(gain, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 32)
        _ = try render(engine, frames: 32)
        #expect(try render(engine, frames: 32).samples(channel: 1).allSatisfy { $0 == 1 })
    }

    @Test("clear errors: cycles, unattached nodes, bad buses, format mismatches, unconnected output, unprepared")
    func errors() throws {
        let engine = AudioEngine()
        let a = GainNode(1)
        let b = GainNode(1)
        let stranger = ConstantNode(1)
        try engine.attach(a)
        try engine.attach(b)
        try engine.connect(a, to: b)
        #expect(throws: AudioGraphError.cycle("gain → gain → … → gain")) { try engine.connect(b, to: a) }
        #expect(throws: AudioGraphError.self) { try engine.connect(a, to: a) }
        #expect(throws: AudioGraphError.nodeNotAttached("constant")) {
            try engine.connect(stranger, to: engine.mainMixerNode)
        }
        #expect(throws: AudioGraphError.invalidBus(node: "gain", bus: 3)) {
            try engine.connect(try ConstantNodeAttached(engine), to: a, toBus: 3)
        }
        let source = try ConstantNodeAttached(engine)
        #expect(throws: AudioGraphError.self) {
            try engine.connect(
                source, to: engine.mainMixerNode, format: AudioFormat(sampleRate: 48_000, channelCount: 3))
        }
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 16)
        #expect(throws: AudioGraphError.notPrepared) { try engine.renderOffline(frameCount: 16, into: buffer) }
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 16)
        let empty = AudioEngine()
        try empty.enableManualRenderingMode(format: format, maximumFrameCount: 16)
        #expect(throws: AudioGraphError.outputNotConnected) { try empty.renderOffline(frameCount: 16, into: buffer) }
        #expect(throws: AudioGraphError.self) {
            try engine.connect(
                source, to: engine.mainMixerNode, format: AudioFormat(sampleRate: 44_100, channelCount: 2))
        }
        // A declared format that disagrees with what the source produces.
        let mono = ConstantNode(1, channels: 1)
        try engine.attach(mono)
        #expect(throws: AudioGraphError.self) {
            try engine.connect(mono, to: engine.mainMixerNode, format: AudioFormat(sampleRate: 48_000, channelCount: 2))
        }
        // A refused change leaves the graph as it was.
        #expect(engine.inputBus(of: engine.mainMixerNode, connectedFrom: mono) == nil)
        try engine.renderOffline(frameCount: 16, into: buffer)
        #expect("\(AudioGraphError.outputNotConnected)" == "nothing is connected to the engine's output")
    }

    @Test("render observers run once per quantum with the sample time; long renders split into quanta")
    func observersAndQuanta() throws {
        let engine = AudioEngine()
        let recorder = QuantumRecorder()
        let source = ConstantNode(0.1)
        try engine.attach(source)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.addRenderObserver(recorder)
        try engine.enableManualRenderingMode(format: format, maximumFrameCount: 100)
        _ = try render(engine, frames: 250)
        #expect(recorder.calls.map(\.0) == [100, 100, 50])
        #expect(recorder.calls.map(\.1) == [0, 100, 200])
        #expect(engine.currentSampleTime == 250)
    }

    @Test("a node belongs to one engine: attaching it to a second is an error until it is detached")
    func nodeAttachedToTwoEngines() throws {
        let first = AudioEngine()
        let second = AudioEngine()
        let node = GainNode(1)
        try first.attach(node)
        try first.attach(node)  // attaching again to the same engine is harmless
        #expect(throws: AudioGraphError.nodeAttachedElsewhere("gain")) { try second.attach(node) }
        #expect(!second.attachedNodes.contains { $0 === node })
        try first.detach(node)
        try second.attach(node)
        #expect(second.attachedNodes.contains { $0 === node })
        #expect(
            AudioGraphError.nodeAttachedElsewhere("gain").description
                == "gain is attached to another engine (detach it there first)")
    }

    @Test("rendering into a buffer too small for the frames asked names the buffer, not the engine")
    func bufferTooSmall() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        try engine.attach(source)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 4096)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 256)
        #expect(throws: AudioGraphError.bufferTooSmall(requested: 512, capacity: 256)) {
            try engine.renderOffline(frameCount: 512, into: buffer)
        }
        #expect(
            AudioGraphError.bufferTooSmall(requested: 512, capacity: 256).description.contains("the buffer holds 256"))
        try engine.renderOffline(frameCount: 256, into: buffer)
        #expect(buffer.channel(0)[255] == 0.5)
    }

    @Test("the engine counts the frames its output has been silent (below −90 dBFS) since it last sounded")
    func silentFrameCount() throws {
        let engine = AudioEngine()
        let loud = ConstantNode(0.1, name: "loud")
        let faint = ConstantNode(AudioEngine.silenceThreshold / 2, name: "faint")
        for node in [loud, faint] { try engine.attach(node) }
        try engine.connect(faint, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        _ = try render(engine, frames: 512)
        #expect(engine.silentFrameCount == 512, "under the threshold is silence")
        try engine.connect(loud, to: engine.mainMixerNode)
        _ = try render(engine, frames: 256)
        #expect(engine.silentFrameCount == 0)
        try engine.disconnectOutput(of: loud)
        _ = try render(engine, frames: 256)  // the loud input fades out over this quantum
        _ = try render(engine, frames: 1_000)
        #expect(engine.silentFrameCount == 1_000)
        engine.reset()
        #expect(engine.silentFrameCount == 0)
    }
}

@discardableResult
func ConstantNodeAttached(_ engine: AudioEngine) throws -> ConstantNode {
    let node = ConstantNode(1)
    try engine.attach(node)
    return node
}
