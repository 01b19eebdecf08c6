import AudioFiles
import AudioGraph
import Foundation
import RateAndPitch

/// The streaming time-pitch unit's cost on `channels` (planar stereo at `rate`): a player through a
/// `TimePitchNode` at `stretch` and `cents`, rendered in quanta of 1024 frames until the node has
/// taken the whole signal, best of `runs`. Prints one JSON object: seconds per second of the
/// signal, as `Benchmarks/timepitch_benchmark.py` gives pedalboard's `time_stretch` and the
/// offline `pianola process`.
func timePitch(_ channels: [[Float]], rate: Double, runs: Int, stretch: Double, cents: Double) throws {
    let quantum = 1_024
    let clip = try AudioClip(channels: channels, sampleRate: rate)
    var best = Double.infinity
    var cuts = 0
    for _ in 0..<runs {
        let engine = AudioEngine()
        let player = AudioFilePlayerNode()
        let node = TimePitchNode()
        node.rate = stretch
        node.pitch = cents
        try engine.attach(player)
        try engine.attach(node)
        try engine.connect(player, to: node)
        try engine.connect(node, to: engine.mainMixerNode)
        try engine.enableManualRenderingMode(format: .stereo(sampleRate: rate), maximumFrameCount: quantum)
        try player.schedule(clip)
        player.play()
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
        let frames = Int64(channels[0].count)
        let start = DispatchTime.now().uptimeNanoseconds
        while node.inputSampleTime < frames { _ = engine.render(frameCount: quantum, into: buffer) }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        best = min(best, elapsed / (Double(frames) / rate))
        cuts = node.attacksCut
    }
    print("{\"name\": \"timepitch\", \"secondsPerSecond\": \(best), \"attacksCut\": \(cuts)}")
}
