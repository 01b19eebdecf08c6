// Issue 43, point 12: a stereo engine rendered into a mono buffer gets the mix-down, (L + R) / 2,
// not the left channel alone. A source panned hard left, then hard right, must come out at half
// its level either way. Exits 1 with a message otherwise.
import Pianola

#if canImport(Glibc)
    import Glibc
#endif

/// A mono source of a constant 0.5.
final class Constant: AudioNode, @unchecked Sendable {
    override func outputChannelCount(inputChannelCounts: [Int]) -> Int { 1 }
    override func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        output.channel(0).update(repeating: 0.5, count: frameCount)
    }
}

var results: [String] = []
for (pan, side) in [(Float(-1), "left"), (1, "right")] {
    let engine = AudioEngine()
    let source = Constant(name: "constant")
    try engine.attach(source)
    try engine.connect(source, to: engine.mainMixerNode)
    try engine.mainMixerNode.setPan(pan, forInputBus: 0)
    try engine.enableManualRenderingMode(format: .stereo(sampleRate: 48_000), maximumFrameCount: 256)
    let stereo = AudioBuffer(channelCount: 2, frameCapacity: 256)
    try engine.renderOffline(frameCount: 256, into: stereo)  // past the pan's ramp
    let mono = AudioBuffer(channelCount: 1, frameCapacity: 1_024)
    try engine.renderOffline(frameCount: 1_024, into: mono)
    let samples = mono.samples(channel: 0)
    guard samples.allSatisfy({ abs($0 - 0.25) < 1e-6 }) else {
        print("point 12 FAILED: panned hard \(side), the mono buffer holds \(samples[0]), not (0.5 + 0) / 2 = 0.25")
        exit(1)
    }
    results.append("hard \(side) → \(samples[0])")
}
// A buffer of 3 channels for a 4-channel engine has no one way to fold: refused.
let quad = AudioEngine()
let source = Constant(name: "constant")
try quad.attach(source)
try quad.connect(source, to: quad.outputNode, channels: [0])
try quad.enableManualRenderingMode(format: AudioFormat(sampleRate: 48_000, channelCount: 4), maximumFrameCount: 256)
do {
    try quad.renderOffline(frameCount: 256, into: AudioBuffer(channelCount: 3, frameCapacity: 256))
    print("point 12 FAILED: a 3-channel buffer took a 4-channel engine's render without a word")
    exit(1)
} catch let error as AudioGraphError {
    guard case .formatMismatch = error else {
        print("point 12 FAILED: a 3-channel buffer for a 4-channel engine threw \(error), not formatMismatch")
        exit(1)
    }
}
print("point 12: a stereo engine into a mono buffer gives (L + R) / 2 (\(results.joined(separator: ", ")))")
