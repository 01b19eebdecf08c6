import AudioFiles
import AudioGraph

#if canImport(Glibc)
    import Glibc
#endif

/// A clip whose sample n is (n + 1) / 100 000 on the left and the negative on the right, so every
/// output sample says which clip frame it came from.
public func rampClip(frames: Int, sampleRate: Double = 48_000, offset: Int = 0) throws -> AudioClip {
    let left = (0..<frames).map { Float($0 + 1 + offset) / 100_000 }
    return try AudioClip(channels: [left, left.map { -$0 }], sampleRate: sampleRate, name: "ramp")
}

/// Renders `node` (a source) for `frames` frames in quanta of `quantum`, from engine time `start`.
public func renderSource(
    _ node: AudioNode, frames: Int, quantum: Int = 256, sampleRate: Double = 48_000, start: Int64 = 0,
    prepare: Bool = true, between: (Int) -> Void = { _ in }
) throws -> (left: [Float], right: [Float]) {
    if prepare { try node.prepare(format: .stereo(sampleRate: sampleRate), maximumFrameCount: quantum) }
    let buffer = AudioBuffer(channelCount: 2, frameCapacity: quantum)
    var left: [Float] = []
    var right: [Float] = []
    var done = 0
    while done < frames {
        between(done)
        let count = min(quantum, frames - done)
        node.render(
            into: buffer, inputs: .none, frameCount: count,
            time: AudioTime(sampleTime: start + Int64(done), sampleRate: sampleRate))
        left += UnsafeBufferPointer(start: buffer.channel(0), count: count)
        right += UnsafeBufferPointer(start: buffer.channel(1), count: count)
        done += count
    }
    return (left, right)
}

/// Waits (at most 2 s) for `condition`.
public func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<200 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
