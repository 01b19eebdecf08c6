import Testing

@testable import AudioGraph

@Suite("Audio engine: multichannel output and channel maps")
struct OutputRoutingTests {
    let quad = AudioFormat(sampleRate: 48_000, channelCount: 4)

    /// Renders `frames` frames of a prepared engine into a buffer of `channels` channels.
    func rendered(_ engine: AudioEngine, channels: Int, frames: Int = 300) throws -> AudioBuffer {
        let buffer = AudioBuffer(channelCount: channels, frameCapacity: frames)
        try engine.renderOffline(frameCount: frames, into: buffer)
        return buffer
    }

    func values(_ buffer: AudioBuffer, frames: Int = 300) -> [Set<Float>] {
        (0..<buffer.channelCount).map { Set(UnsafeBufferPointer(start: buffer.channel($0), count: frames)) }
    }

    @Test("each source sounds on the channels its map names and nowhere else")
    func routesReachTheirChannels() throws {
        let engine = AudioEngine()
        let music = ConstantNode(0.25, name: "music")
        let click = ConstantNode(0.5, name: "click")
        try engine.attach(music)
        try engine.attach(click)
        try engine.connect(music, to: engine.outputNode, channels: [0, 1])
        try engine.connect(click, to: engine.outputNode, channels: [3, 2])
        try engine.enableManualRenderingMode(format: quad, maximumFrameCount: 128)
        // 300 frames: three quanta, the last a partial one, through renderOffline's scratch buffer.
        #expect(values(try rendered(engine, channels: 4)) == [[0.25], [0.25], [0.5], [0.5]])
        #expect(engine.outputChannels(of: click) == [3, 2])

        // Re-mapping keeps the source's bus: the click moves, nothing is doubled.
        try engine.connect(click, to: engine.outputNode, channels: [1, 3])
        #expect(values(try rendered(engine, channels: 4)) == [[0.25], [0.75], [0], [0.5]])
    }

    @Test("sources on the same channels sum, a mono source fills every channel named")
    func sumsAndMono() throws {
        let engine = AudioEngine()
        let left = ConstantNode(0.125, channels: 1, name: "mono")
        let pair = ConstantNode(0.25, name: "pair")
        try engine.attach(left)
        try engine.attach(pair)
        try engine.connect(left, to: engine.outputNode, channels: [0, 1, 2])
        try engine.connect(pair, to: engine.outputNode, channels: [2, 3])
        try engine.enableManualRenderingMode(format: quad, maximumFrameCount: 256)
        #expect(values(try rendered(engine, channels: 4)) == [[0.125], [0.125], [0.375], [0.25]])
    }

    @Test("a bus without a map goes to the first channels; the rest of a wider output is silent")
    func defaultMap() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        try engine.attach(source)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: quad, maximumFrameCount: 256)
        _ = try rendered(engine, channels: 4)  // the mixer fades the new input in
        #expect(values(try rendered(engine, channels: 4)) == [[0.5], [0.5], [0], [0]])
    }

    @Test("stereo output is what it always was: a mono source on both channels, bit for bit")
    func stereoUnchanged() throws {
        let engine = AudioEngine()
        let mono = ConstantNode(0.3, channels: 1)
        try engine.attach(mono)
        try engine.connect(mono, to: engine.outputNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        let buffer = try rendered(engine, channels: 2)
        #expect(values(buffer) == [[0.3], [0.3]])
    }

    @Test("a stereo source on a mono output without a map is folded down, left and right at ½")
    func monoFoldDown() throws {
        let engine = AudioEngine()
        let left = ConstantNode(0.5, channels: 1, name: "left")
        let mixer = engine.mainMixerNode
        try engine.attach(left)
        try engine.connect(left, to: mixer)
        try mixer.setPan(-1, forInputBus: 0)  // hard left: the right channel is silent
        try engine.enableManualRenderingMode(
            format: AudioFormat(sampleRate: 48_000, channelCount: 1), maximumFrameCount: 256)
        _ = try rendered(engine, channels: 1, frames: 256)
        let buffer = try rendered(engine, channels: 1, frames: 256)
        // Equal-power pan of a mono input: 0.5 at full left; folded down, half of it.
        #expect(abs(buffer.channel(0)[100] - 0.25) < 1e-6, "\(buffer.channel(0)[100])")
    }

    @Test("a stereo engine rendered into a mono buffer gets (L + R) / 2, a hard-panned source at half its level")
    func stereoEngineIntoMonoBuffer() throws {
        for pan: Float in [-1, 1] {
            let engine = AudioEngine()
            let source = ConstantNode(0.5, channels: 1, name: "panned")
            try engine.attach(source)
            try engine.connect(source, to: engine.mainMixerNode)
            try engine.mainMixerNode.setPan(pan, forInputBus: 0)  // hard left, then hard right
            try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
            _ = try rendered(engine, channels: 2, frames: 256)  // past the pan's ramp
            let stereo = try rendered(engine, channels: 2, frames: 256)
            let (sounding, silent) = pan < 0 ? (0, 1) : (1, 0)
            #expect(abs(stereo.channel(sounding)[100] - 0.5) < 1e-6 && abs(stereo.channel(silent)[100]) < 1e-6)
            // In one quantum, and in several (more frames than the engine renders at once).
            for frames in [256, 1_000] {
                let mono = try rendered(engine, channels: 1, frames: frames)
                let samples = UnsafeBufferPointer(start: mono.channel(0), count: frames)
                #expect(samples.allSatisfy { abs($0 - 0.25) < 1e-6 }, "pan \(pan), \(frames) frames: \(samples[0])")
            }
        }
    }

    @Test("a buffer of more than one channel but fewer than the engine's is refused, naming the counts")
    func bufferWithTooFewChannels() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5, channels: 2)
        try engine.attach(source)
        try engine.connect(source, to: engine.outputNode, channels: [0, 1])
        try engine.enableManualRenderingMode(format: quad, maximumFrameCount: 256)
        let error = #expect(throws: AudioGraphError.self) { _ = try rendered(engine, channels: 3, frames: 256) }
        guard case .formatMismatch(_, let format, let reason)? = error else {
            Issue.record("wrong error \(String(describing: error))")
            return
        }
        #expect(format == quad && reason.contains("3 channels") && reason.contains("give it 4"), "\(reason)")
        // One channel: the mean of the four (two at 0.5, two silent).
        let mono = try rendered(engine, channels: 1, frames: 256)
        #expect(mono.channel(0)[10] == 0.25)
    }

    @Test("maps that cannot work are refused with the reason, and leave the graph as it was")
    func badMaps() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5, name: "click")
        let other = ConstantNode(0.25, name: "music")
        try engine.attach(source)
        try engine.attach(other)
        try engine.connect(other, to: engine.outputNode, channels: [0, 1])
        try engine.enableManualRenderingMode(format: quad, maximumFrameCount: 256)
        func reason(_ channels: [Int]) -> String? {
            do {
                try engine.connect(source, to: engine.outputNode, channels: channels)
                return nil
            } catch { return "\(error)" }
        }
        #expect(reason([4, 5]) == "click's channel map: output channel 5 does not exist: the output has 4")
        #expect(reason([2]) == "click's channel map: 1 output channels named for 2 source channels (name one for each)")
        #expect(reason([2, 2]) == "click's channel map: an output channel is named twice")
        #expect(reason([]) == "click's channel map: name 1…64 output channels")
        #expect(reason([-1, 0]) == "click's channel map: channel index -1 is outside 0…63")
        #expect(engine.outputChannels(of: source) == nil)
        #expect(values(try rendered(engine, channels: 4)) == [[0.25], [0.25], [0], [0]])

        let stranger = OutputNode(name: "another output")
        #expect(throws: AudioGraphError.self) { try engine.connect(source, to: stranger, channels: [0, 1]) }

        // A map made before the engine is prepared is checked when it is.
        let later = AudioEngine()
        let node = ConstantNode(0.5, name: "late")
        try later.attach(node)
        try later.connect(node, to: later.outputNode, channels: [6, 7])
        #expect(
            throws: AudioGraphError.invalidChannelMap(
                node: "late", reason: "output channel 7 does not exist: the output has 4")
        ) {
            try later.enableManualRenderingMode(format: quad, maximumFrameCount: 256)
        }
    }
}

@Suite("Audio engine: connecting to the output, preparing again")
struct OutputConnectionTests {
    /// A one-input node counting the capacities it is prepared for.
    final class PrepareCounter: AudioNode, @unchecked Sendable {
        var capacities: [Int] = []
        override var inputBusCount: Int { 1 }
        override func outputChannelCount(inputChannelCounts: [Int]) -> Int { inputChannelCounts.first ?? 2 }
        override func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
            capacities.append(maximumFrameCount)
        }
        override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
            guard let input = inputs[0] else { return output.clear(frames: frameCount) }
            for channel in 0..<output.channelCount {
                output.channel(channel).update(from: input.channel(channel), count: frameCount)
            }
        }
    }

    /// Asks for twice the frames it puts out, and puts out the first half of them.
    final class Doubler: RateConvertingNode, @unchecked Sendable {
        override func maximumInputFrameCount(forOutputFrames outputFrames: Int) -> Int { 2 * outputFrames }
        override func inputFrameCount(forOutputFrames outputFrames: Int) -> Int { 2 * outputFrames }
        override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
            guard let input = inputs[0] else { return output.clear(frames: frameCount) }
            for channel in 0..<output.channelCount {
                output.channel(channel).update(from: input.channel(channel), count: frameCount)
            }
        }
    }

    @Test("connecting a node to the output without a bus replaces bus 0, as AVAudioEngine does")
    func replacesBusZero() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        let limiter = GainNode(0.5)
        try engine.attach(source)
        try engine.attach(limiter)
        try engine.connect(source, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        // The usual "an effect after the main mixer": the mixer's own route to the output goes.
        try engine.connect(engine.mainMixerNode, to: limiter)
        try engine.connect(limiter, to: engine.outputNode)
        _ = try render(engine, frames: 256)
        let buffer = try render(engine, frames: 256)
        #expect(buffer.channel(0)[100] == 0.25, "the dry mix was added: \(buffer.channel(0)[100])")
        #expect(engine.inputBus(of: engine.outputNode, connectedFrom: engine.mainMixerNode) == nil)
    }

    @Test("a node connected straight to the output keeps its place when the main mixer is first asked for")
    func mainMixerDoesNotDisplace() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        try engine.attach(source)
        try engine.connect(source, to: engine.outputNode)
        engine.mainMixerNode.outputVolume = 0.5
        #expect(engine.inputBus(of: engine.outputNode, connectedFrom: source) == 0)
        #expect(engine.inputBus(of: engine.outputNode, connectedFrom: engine.mainMixerNode) == nil)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        #expect(try render(engine, frames: 256).channel(1)[10] == 0.5)
    }

    @Test("a node keeps its state when a rate domain goes: prepared again only to grow; clocks start at engine time")
    func preparedOnceToGrow() throws {
        let engine = AudioEngine()
        let source = ConstantNode(0.5)
        let effect = PrepareCounter(name: "effect")
        let doubler = Doubler(name: "doubler")
        for node in [source, effect, doubler] as [AudioNode] { try engine.attach(node) }
        try engine.connect(source, to: effect)
        try engine.connect(effect, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        for _ in 0..<10 { _ = try render(engine, frames: 256) }
        try engine.disconnectOutput(of: effect)
        try engine.connect(effect, to: doubler)
        try engine.connect(doubler, to: engine.mainMixerNode)
        _ = try render(engine, frames: 256)  // the mixer's fade-out quantum, on the plan before
        let started = engine.currentSampleTime
        _ = try render(engine, frames: 256)
        // The doubler's input clock started at the engine's time, then ran at twice its pace.
        #expect(started == 11 * 256 && doubler.inputSampleTime == started + 512, "\(doubler.inputSampleTime)")
        try engine.disconnectOutput(of: doubler)
        try engine.connect(effect, to: engine.mainMixerNode)
        _ = try render(engine, frames: 256)
        #expect(effect.capacities == [256, 512], "\(effect.capacities)")
    }
}
