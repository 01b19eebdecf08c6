/// A block of planar float audio with a fixed capacity, allocated once and reused: the currency of
/// the render path. Reading and writing its channels never allocates.
///
/// It is a reference type so that nodes can hold their buffers without copying; it is not
/// synchronized: one thread writes it at a time (the render thread while rendering).
public final class AudioBuffer: @unchecked Sendable {
    /// The number of channels, fixed at creation (at least 1).
    public let channelCount: Int
    /// The frames each channel holds, fixed at creation (at least 1).
    public let frameCapacity: Int
    /// Frames of valid audio (at most `frameCapacity`).
    public var frameLength: Int
    private let storage: RealTimeBuffer<Float>

    /// A zeroed buffer of `channelCount` channels of `frameCapacity` frames, `frameLength` at full capacity.
    /// Allocates (control thread). A count below 1 is taken as 1: a buffer always has a channel and a
    /// frame (`channelCount` and `frameCapacity` tell what it has).
    public init(channelCount: Int, frameCapacity: Int) {
        let channelCount = max(1, channelCount)
        let frameCapacity = max(1, frameCapacity)
        self.channelCount = channelCount
        self.frameCapacity = frameCapacity
        self.frameLength = frameCapacity
        storage = RealTimeBuffer(capacity: channelCount * frameCapacity)
    }

    /// A zeroed buffer with `format`'s channel count (the sample rate is not kept), as
    /// `init(channelCount:frameCapacity:)` makes it.
    public convenience init(format: AudioFormat, frameCapacity: Int) {
        self.init(channelCount: format.channelCount, frameCapacity: frameCapacity)
    }

    /// The samples of one channel (`frameCapacity` of them).
    @inline(__always)
    public func channel(_ index: Int) -> UnsafeMutablePointer<Float> { storage.base + index * frameCapacity }

    /// Sets the first `frames` frames of every channel to zero.
    public func clear(frames: Int) {
        for channel in 0..<channelCount {
            self.channel(channel).update(repeating: 0, count: min(frames, frameCapacity))
        }
    }

    /// The valid frames interleaved (allocates: for tests and file writing, not the render path).
    public func interleaved() -> [Float] {
        var samples = [Float](repeating: 0, count: frameLength * channelCount)
        for frame in 0..<frameLength {
            for channel in 0..<channelCount { samples[frame * channelCount + channel] = self.channel(channel)[frame] }
        }
        return samples
    }

    /// One channel's valid frames as an array (allocates).
    public func samples(channel index: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: channel(index), count: frameLength))
    }
}
