import AudioGraph

/// Stereo frames waiting for a converter on the render thread: planar, first in first out, in
/// memory allocated in `init`. What is appended beyond the room left is dropped; what is read
/// beyond what is queued is silence.
struct StereoQueue: ~Copyable {
    private let left: RealTimeBuffer<Float>
    private let right: RealTimeBuffer<Float>
    private var start = 0
    /// Frames queued.
    private(set) var count = 0

    /// Room for `capacity` frames.
    init(capacity: Int) {
        left = RealTimeBuffer(capacity: max(1, capacity), repeating: 0)
        right = RealTimeBuffer(capacity: max(1, capacity), repeating: 0)
    }

    /// The most frames the queue holds.
    var capacity: Int { left.capacity }

    /// Forgets what is queued.
    mutating func clear() {
        start = 0
        count = 0
    }

    /// Appends `input`'s frames (a mono input on both channels).
    mutating func append(_ input: AudioBuffer) {
        let frames = min(input.frameLength, capacity - count)
        guard frames > 0 else { return }
        let end = endMakingRoom(for: frames)
        (left.base + end).update(from: input.channel(0), count: frames)
        (right.base + end).update(from: input.channel(min(1, input.channelCount - 1)), count: frames)
        count += frames
    }

    /// Appends `frames` interleaved stereo frames from `samples`; returns how many it took.
    @discardableResult
    mutating func append(interleaved samples: UnsafePointer<Float>, frames: Int) -> Int {
        let taken = min(frames, capacity - count)
        guard taken > 0 else { return 0 }
        let end = endMakingRoom(for: taken)
        for frame in 0..<taken {
            left.base[end + frame] = samples[2 * frame]
            right.base[end + frame] = samples[2 * frame + 1]
        }
        count += taken
        return taken
    }

    /// Moves `frames` frames into `leftOut` and `rightOut`, silence where the queue runs out.
    mutating func read(into leftOut: UnsafeMutablePointer<Float>, _ rightOut: UnsafeMutablePointer<Float>, frames: Int)
    {
        let taken = min(frames, count)
        leftOut.update(from: left.base + start, count: taken)
        rightOut.update(from: right.base + start, count: taken)
        (leftOut + taken).update(repeating: 0, count: frames - taken)
        (rightOut + taken).update(repeating: 0, count: frames - taken)
        start += taken
        count -= taken
    }

    /// Where `frames` more frames go: the queue moved to the front first when they would not fit.
    private mutating func endMakingRoom(for frames: Int) -> Int {
        if start + count + frames > capacity {
            left.base.update(from: left.base + start, count: count)
            right.base.update(from: right.base + start, count: count)
            start = 0
        }
        return start + count
    }
}
