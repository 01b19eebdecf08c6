import Synchronization

/// Something that watches a node's output on the render thread (meters, capture for tests).
/// `process` must not allocate, lock or block.
public protocol AudioTap: AnyObject, Sendable {
    /// Called on the render thread each quantum, right after the tapped node renders: `buffer` is its output,
    /// `frameCount` the frames rendered and `time` the quantum's start on the engine's clock. The nodes
    /// downstream read the buffer afterwards, so a tap only reads it. Must not allocate, lock or block.
    func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime)
}

/// Peak and RMS levels of a node's output, per channel, readable from any thread.
///
/// `peak` holds the highest absolute sample since the last `takePeaks()`; `rms` is the RMS of
/// the last quantum. Values are linear (1.0 = 0 dBFS).
public final class LevelMeter: AudioTap, @unchecked Sendable {
    private let peakLeft = Atomic<UInt32>(0)
    private let peakRight = Atomic<UInt32>(0)
    private let rmsLeft = Atomic<UInt32>(0)
    private let rmsRight = Atomic<UInt32>(0)
    private let framesSeen = Atomic<Int>(0)

    /// A meter with every level at zero. Install it with `AudioEngine.installTap(on:_:)`.
    public init() {}

    /// Measures one quantum (render thread; lock-free, allocates nothing): raises each channel's held peak,
    /// replaces its RMS and adds `frameCount` to the frames seen. Only the first two channels are measured; a
    /// mono buffer updates the left one only.
    public func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime) {
        for channel in 0..<min(2, buffer.channelCount) {
            let samples = buffer.channel(channel)
            var peak: Float = 0
            var sum: Float = 0
            for frame in 0..<frameCount {
                let value = samples[frame]
                peak = max(peak, abs(value))
                sum += value * value
            }
            let rms = (sum / Float(max(frameCount, 1))).squareRoot()
            if channel == 0 {
                if peak > Float(bitPattern: peakLeft.load(ordering: .relaxed)) {
                    peakLeft.store(peak.bitPattern, ordering: .relaxed)
                }
                rmsLeft.store(rms.bitPattern, ordering: .relaxed)
            } else {
                if peak > Float(bitPattern: peakRight.load(ordering: .relaxed)) {
                    peakRight.store(peak.bitPattern, ordering: .relaxed)
                }
                rmsRight.store(rms.bitPattern, ordering: .relaxed)
            }
        }
        framesSeen.add(frameCount, ordering: .relaxed)
    }

    /// The peak per channel since the last call, and resets it.
    public func takePeaks() -> [Float] {
        [
            Float(bitPattern: peakLeft.exchange(0, ordering: .relaxed)),
            Float(bitPattern: peakRight.exchange(0, ordering: .relaxed)),
        ]
    }

    /// The RMS of the last quantum per channel.
    public var rms: [Float] {
        [Float(bitPattern: rmsLeft.load(ordering: .relaxed)), Float(bitPattern: rmsRight.load(ordering: .relaxed))]
    }

    /// Frames measured so far.
    public var frameCount: Int { framesSeen.load(ordering: .relaxed) }
}
