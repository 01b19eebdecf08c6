import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles
@testable import RateAndPitch

/// `clip` played by a player through `node` into an engine's output at 48 kHz: the output's left
/// channel over `frames` frames, in quanta of `quantum`, `change` called before each quantum.
func renderedThrough<Node: RateConvertingNode>(
    _ node: Node, _ clip: AudioClip, frames: Int, quantum: Int = 512, change: (Int, Node) -> Void = { _, _ in }
) throws -> [Float] {
    let engine = AudioEngine()
    let player = AudioFilePlayerNode()
    try engine.attach(player)
    try engine.attach(node)
    try engine.connect(player, to: node)
    try engine.connect(node, to: engine.outputNode)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: quantum)
    try player.schedule(clip)
    player.play()
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
    var output: [Float] = []
    while output.count < frames {
        change(output.count, node)
        try engine.renderOffline(frameCount: quantum, into: buffer)
        output += UnsafeBufferPointer(start: buffer.channel(0), count: quantum)
    }
    return output
}

@Suite("VarispeedNode: a rate-converting node in the graph")
struct VarispeedNodeTests {
    /// `clip` through a varispeed at `rate` (see `renderedThrough`).
    func rendered(
        _ clip: AudioClip, rate: Double, frames: Int, change: (Int, VarispeedNode) -> Void = { _, _ in }
    ) throws -> (output: [Float], varispeed: VarispeedNode) {
        let varispeed = VarispeedNode()
        varispeed.rate = rate
        return (try renderedThrough(varispeed, clip, frames: frames, change: change), varispeed)
    }

    @Test("a 1 kHz sine at rate 1.5 comes out at 1.5 kHz (±0.1 Hz); the source is pulled 1.5 times as fast")
    func rateInTheGraph() throws {
        let sine = (0..<96_000).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        let (output, varispeed) = try rendered(
            try AudioClip(channels: [sine], sampleRate: 48_000), rate: 1.5, frames: 48_000)
        let measured = VarispeedTests().frequency(output, 4_000..<40_000, sampleRate: 48_000)
        #expect(abs(measured - 1_500) < 0.1, "\(measured) Hz")
        // The player (upstream) rendered 1.5 frames per output frame, plus what the node keeps ahead.
        let pulled = Double(varispeed.inputSampleTime)
        #expect(abs(pulled - 1.5 * Double(output.count)) < 600, "\(pulled) input frames for \(output.count)")

        // The input's timeline: a ramp (frame k holds k + 1, over 100 000) comes out 1.5 frames a frame.
        let ramp = try rampClip(frames: 45_000)
        let values = try rendered(ramp, rate: 1.5, frames: 40_000).output.map(Double.init)
        let points = 2_000..<28_000
        let slope = (values[points.upperBound - 1] - values[points.lowerBound]) / Double(points.count - 1)
        #expect(abs(slope * 100_000 - 1.5) < 1e-4, "\(slope * 100_000) input frames per output frame")
        // 45 000 input frames last 30 000 output frames, after the node's delay (about 400 input frames).
        let end = values.lastIndex { abs($0) > 1e-3 } ?? 0
        #expect((30_000...30_400).contains(end), "the ramp ends at output frame \(end)")
    }

    @Test("rates 0.25 and 4, and a glide between them: the pitch follows, no click, no gap")
    func extremesAndGlide() throws {
        let sine = (0..<240_000).map { Float(0.5 * sin(2 * Double.pi * 500 * Double($0) / 48_000)) }
        let clip = try AudioClip(channels: [sine], sampleRate: 48_000)
        for rate in [0.25, 4.0] {
            let output = try rendered(clip, rate: rate, frames: 40_000).output
            let measured = VarispeedTests().frequency(output, 8_000..<40_000, sampleRate: 48_000)
            #expect(abs(measured - 500 * rate) < 0.1, "rate \(rate): \(measured) Hz")
        }
        let output = try rendered(clip, rate: 1, frames: 48_000) { done, node in
            if done == 12_288 { node.rate = 3 }
            if done == 20_480 { node.cents = .nan }  // ignored: the rate stays 3
        }.output
        // A smooth glide: no sample-to-sample jump beyond the fastest sine's (2π·1500/48000·0.5).
        var largest: Float = 0
        for n in 2_000..<output.count { largest = max(largest, abs(output[n] - output[n - 1])) }
        #expect(largest < 0.1, "largest step \(largest)")
        let late = VarispeedTests().frequency(output, 30_000..<48_000, sampleRate: 48_000)
        #expect(abs(late - 1_500) < 0.1, "after the glide: \(late) Hz")
    }

    @Test("a node that feeds a varispeed and another path is refused with the reason")
    func mixedRates() throws {
        let engine = AudioEngine()
        let player = AudioFilePlayerNode(name: "loop player")
        let varispeed = VarispeedNode()
        try engine.attach(player)
        try engine.attach(varispeed)
        try engine.connect(player, to: varispeed)
        try engine.connect(varispeed, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
        do {
            try engine.connect(player, to: engine.mainMixerNode)
            Issue.record("a node feeding two rates was accepted")
        } catch {
            #expect("\(error)".hasPrefix("loop player cannot feed both: a rate-converting node"), "\(error)")
        }
        #expect(engine.inputBus(of: engine.mainMixerNode, connectedFrom: player) == nil, "the graph is as it was")
    }
}
