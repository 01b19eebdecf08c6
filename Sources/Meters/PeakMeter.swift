import AudioGraph
import Synchronization

/// The peak of a node's output per channel since it was last read, and the RMS of the last
/// quantum: linear values (1.0 = 0 dBFS), readable from any thread. What a display that polls
/// shows (`pianola play` and `live` do, ten times a second); for levels in dBFS over fixed
/// windows, with held peaks and clip lights, see `PowerMeter`.
///
/// `takePeaks()` returns the highest absolute sample per channel since the last call; `rms` is
/// the RMS of the last quantum. Only the first two channels are measured.
public final class PeakMeter: AudioTap, @unchecked Sendable {
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
            let (sum, peak) = LevelMeasurement.sumOfSquaresAndPeak(buffer.channel(channel), count: frameCount)
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

/// The meter `PeakMeter` was called before the meters became one family.
@available(*, deprecated, renamed: "PeakMeter")
public typealias LevelMeter = PeakMeter
