import Synchronization

/// A fixed-size, lock-free ring of interleaved float frames with one writer and one reader: the
/// way audio leaves the render thread for a disk writer (taps, recorders) without the render
/// thread ever waiting.
///
/// The writer (`write(_:from:frameCount:)`, render thread) copies what fits and counts the frames
/// that did not (`droppedFrameCount`): a reader that falls behind loses the newest audio, never
/// blocks the writer. The reader (`read(into:maximumFrames:)`, any one other thread) takes what
/// has been written, oldest first. Both allocate nothing; the storage is allocated once, in `init`.
public final class SampleRing: @unchecked Sendable {
    /// Samples per frame.
    public let channelCount: Int
    /// Frames the ring holds when full.
    public let capacity: Int
    private let storage: RealTimeBuffer<Float>
    /// Frames written and read since the start (they only grow; their difference is the fill).
    private let written = Atomic<Int>(0)
    private let readCount = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)

    /// A ring of `capacity` frames of `channelCount` samples. Allocates: call it off the audio thread.
    public init(channelCount: Int, capacity: Int) {
        precondition(channelCount > 0 && capacity > 0, "a ring needs channels and room")
        self.channelCount = channelCount
        self.capacity = capacity
        storage = RealTimeBuffer(capacity: channelCount * capacity)
    }

    /// Frames written and not yet read.
    public var availableFrames: Int { written.load(ordering: .acquiring) - readCount.load(ordering: .acquiring) }

    /// Frames the writer could not store because the ring was full, since the start.
    public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) }

    /// Frames written since the start (dropped ones not counted).
    public var writtenFrameCount: Int { written.load(ordering: .acquiring) }

    /// Appends `frameCount` frames of `buffer` from frame `start`, interleaving its channels (a
    /// buffer with fewer channels repeats its last one; extra channels are left out). Frames that
    /// do not fit are dropped and counted. Returns the frames stored. Writer thread only; lock-free,
    /// allocates nothing.
    @discardableResult
    public func write(_ buffer: AudioBuffer, from start: Int = 0, frameCount: Int) -> Int {
        let head = written.load(ordering: .relaxed)
        let tail = readCount.load(ordering: .acquiring)
        let room = capacity - (head - tail)
        let count = min(room, frameCount)
        if count < frameCount { dropped.add(frameCount - count, ordering: .relaxed) }
        guard count > 0 else { return 0 }
        // At most two contiguous stretches: up to the end of the storage, then from its start.
        let first = head % capacity
        let firstCount = min(count, capacity - first)
        interleave(buffer, from: start, frames: firstCount, into: storage.base + first * channelCount)
        if firstCount < count {
            interleave(buffer, from: start + firstCount, frames: count - firstCount, into: storage.base)
        }
        written.store(head + count, ordering: .releasing)
        return count
    }

    @inline(__always)
    private func interleave(
        _ buffer: AudioBuffer, from start: Int, frames: Int, into destination: UnsafeMutablePointer<Float>
    ) {
        let channels = channelCount
        if channels == 2 && buffer.channelCount >= 2 {
            let left = buffer.channel(0) + start
            let right = buffer.channel(1) + start
            for frame in 0..<frames {
                destination[2 &* frame] = left[frame]
                destination[2 &* frame &+ 1] = right[frame]
            }
            return
        }
        for channel in 0..<channels {
            let source = buffer.channel(min(channel, buffer.channelCount - 1)) + start
            let out = destination + channel
            for frame in 0..<frames { out[frame &* channels] = source[frame] }
        }
    }

    /// Moves up to `maximumFrames` of the oldest frames into `destination` (interleaved, room for
    /// `maximumFrames * channelCount` samples). Returns the frames moved. Reader thread only.
    public func read(into destination: UnsafeMutablePointer<Float>, maximumFrames: Int) -> Int {
        let tail = readCount.load(ordering: .relaxed)
        let head = written.load(ordering: .acquiring)
        let count = min(head - tail, maximumFrames)
        guard count > 0 else { return 0 }
        let channels = channelCount
        let first = tail % capacity
        let firstPart = min(count, capacity - first)
        (destination).update(from: storage.base + first * channels, count: firstPart * channels)
        if firstPart < count {
            (destination + firstPart * channels).update(from: storage.base, count: (count - firstPart) * channels)
        }
        readCount.store(tail + count, ordering: .releasing)
        return count
    }
}
