import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The RMS and peak levels of up to eight channels of a node's output, in dBFS, measured over
/// fixed windows on the render thread and read from any thread at any rate, with held peaks and
/// clip lights: a recorder's or a mixer's meter (AVAudioRecorder's). For the linear peak since the
/// last read, see `PeakMeter`; for loudness in LUFS, `LoudnessMeter`.
///
/// Every `windowFrames` frames the meter publishes, per channel, the window's RMS level
/// (`averagePower`) and its highest absolute sample (`peakPower`), both in dBFS from −160 (silence)
/// to 0 (full scale) and above for floats past full scale; the held peak (`peakHoldPower`: the
/// highest window peak of the last `holdSeconds`); and a clip light that latches when a sample
/// reaches `clipLevel` until `clearClips()`. A reader takes a consistent `Reading` of one window
/// without ever making the render thread wait.
public final class PowerMeter: AudioTap, @unchecked Sendable {
    /// What the meter showed at the end of one window.
    public struct Reading: Sendable, Equatable {
        /// Frames measured since the meter started, at the end of this window: the window is
        /// the `windowFrames` frames before it.
        public var endFrame: Int
        /// RMS level of the window per channel, dBFS (−160 … 0).
        public var averagePower: [Float]
        /// Highest absolute sample of the window per channel, dBFS (−160 … 0).
        public var peakPower: [Float]
        /// The highest window peak of the last `holdSeconds` per channel, dBFS.
        public var peakHoldPower: [Float]
        /// Per channel: whether a sample reached the clip level since the last `clearClips()`.
        public var clipped: [Bool]
        /// The highest peak per channel since the meter started, dBFS.
        public var maximumPeakPower: [Float]
    }

    /// The lowest level reported, for silence (as AVAudioRecorder's meters).
    public static let floor: Float = -160
    /// The most channels measured.
    public static let maximumChannelCount = 8

    /// Channels measured (a tapped buffer's extra channels are ignored; missing ones read −160).
    public let channelCount: Int
    /// Frames per measurement window.
    public let windowFrames: Int
    /// How long a peak is held, in seconds of audio.
    public let holdSeconds: Double
    /// The linear level at which a sample counts as clipped.
    public let clipLevel: Float

    private let version = Atomic<Int>(0)
    private let published = Atomic<Int>(0)
    private let averages: InlineArray<8, Atomic<UInt32>>
    private let peaks: InlineArray<8, Atomic<UInt32>>
    private let holds: InlineArray<8, Atomic<UInt32>>
    private let clips: InlineArray<8, Atomic<Bool>>
    private let maximums: InlineArray<8, Atomic<UInt32>>
    // Render-thread state.
    private let sums: RealTimeBuffer<Double>
    private let windowPeaks: RealTimeBuffer<Float>
    private let heldPeaks: RealTimeBuffer<Float>
    private let heldAge: RealTimeBuffer<Int>
    private var inWindow = 0
    private var measured = 0

    /// A meter of `channelCount` channels (1…8) over windows of `windowFrames` frames, holding peaks for
    /// `holdSeconds` at `sampleRate`, with the clip light at `clipLevelDecibels` dBFS (−0.01 by default:
    /// a full-scale integer sample).
    ///
    /// Values out of range are clamped, as the properties then show: `channelCount` to 1…8 (a tapped
    /// buffer's extra channels are ignored anyway), `windowFrames` to 1 or more; a hold that is
    /// negative or NaN holds for no time, an infinite one for good.
    public init(
        channelCount: Int, sampleRate: Double, windowFrames: Int = 1_024, holdSeconds: Double = 1.5,
        clipLevelDecibels: Float = -0.01
    ) {
        let channelCount = min(max(channelCount, 1), Self.maximumChannelCount)
        self.channelCount = channelCount
        self.windowFrames = max(windowFrames, 1)
        self.holdSeconds = holdSeconds
        clipLevel = Self.linear(clipLevelDecibels)
        let silence = Self.floor.bitPattern
        averages = InlineArray { _ in Atomic(silence) }
        peaks = InlineArray { _ in Atomic(silence) }
        holds = InlineArray { _ in Atomic(silence) }
        clips = InlineArray { _ in Atomic(false) }
        maximums = InlineArray { _ in Atomic(silence) }
        sums = RealTimeBuffer(capacity: channelCount)
        windowPeaks = RealTimeBuffer(capacity: channelCount)
        heldPeaks = RealTimeBuffer(capacity: channelCount)
        heldAge = RealTimeBuffer(capacity: channelCount)
        let frames = holdSeconds * sampleRate
        // (NaN fails both comparisons: no hold.)
        holdFrames = frames > 0 ? Int(min(frames, Double(1 << 62))) : 0
    }

    private let holdFrames: Int

    /// dBFS of a linear level, −160 for silence.
    @inline(__always)
    public static func decibels(_ level: Float) -> Float {
        level > 0 ? max(floor, 20 * log10(level)) : floor
    }

    /// The linear level of `decibels` dBFS.
    public static func linear(_ decibels: Float) -> Float { pow(10, decibels / 20) }

    /// Measures one quantum (render thread; lock-free, allocates nothing).
    public func process(_ buffer: AudioBuffer, frameCount: Int, time: AudioTime) {
        var done = 0
        while done < frameCount {
            let count = min(frameCount - done, windowFrames - inWindow)
            for channel in 0..<channelCount {
                guard channel < buffer.channelCount else { continue }
                let (sum, peak) = LevelMeasurement.sumOfSquaresAndPeak(buffer.channel(channel) + done, count: count)
                sums[channel] += Double(sum)
                windowPeaks[channel] = max(windowPeaks[channel], peak)
            }
            inWindow += count
            done += count
            measured += count
            if inWindow == windowFrames { publishWindow() }
        }
    }

    private func publishWindow() {
        let current = version.load(ordering: .relaxed)
        version.store(current + 1, ordering: .sequentiallyConsistent)
        for channel in 0..<channelCount {
            let peak = windowPeaks[channel]
            let average = Float((sums[channel] / Double(windowFrames)).squareRoot())
            heldAge[channel] += windowFrames
            if peak >= heldPeaks[channel] || heldAge[channel] > holdFrames {
                heldPeaks[channel] = peak
                heldAge[channel] = 0
            }
            averages[channel].store(Self.decibels(average).bitPattern, ordering: .sequentiallyConsistent)
            peaks[channel].store(Self.decibels(peak).bitPattern, ordering: .sequentiallyConsistent)
            holds[channel].store(Self.decibels(heldPeaks[channel]).bitPattern, ordering: .sequentiallyConsistent)
            if peak >= clipLevel { clips[channel].store(true, ordering: .relaxed) }
            let peakDecibels = Self.decibels(peak)
            if peakDecibels > Float(bitPattern: maximums[channel].load(ordering: .relaxed)) {
                maximums[channel].store(peakDecibels.bitPattern, ordering: .sequentiallyConsistent)
            }
            sums[channel] = 0
            windowPeaks[channel] = 0
        }
        published.store(measured, ordering: .sequentiallyConsistent)
        version.store(current + 2, ordering: .sequentiallyConsistent)
        inWindow = 0
    }

    /// The last complete window's levels (a consistent set; allocates the arrays: call it off the
    /// render thread). Before the first window: every level −160 and `endFrame` 0.
    public func reading() -> Reading {
        while true {
            let before = version.load(ordering: .sequentiallyConsistent)
            if before & 1 == 1 { continue }
            var reading = Reading(
                endFrame: 0, averagePower: [], peakPower: [], peakHoldPower: [], clipped: [], maximumPeakPower: [])
            reading.endFrame = published.load(ordering: .sequentiallyConsistent)
            for channel in 0..<channelCount {
                reading.averagePower.append(
                    Float(bitPattern: averages[channel].load(ordering: .sequentiallyConsistent)))
                reading.peakPower.append(Float(bitPattern: peaks[channel].load(ordering: .sequentiallyConsistent)))
                reading.peakHoldPower.append(Float(bitPattern: holds[channel].load(ordering: .sequentiallyConsistent)))
                reading.clipped.append(clips[channel].load(ordering: .relaxed))
                reading.maximumPeakPower.append(
                    Float(bitPattern: maximums[channel].load(ordering: .sequentiallyConsistent)))
            }
            if version.load(ordering: .sequentiallyConsistent) == before { return reading }
        }
    }

    /// The last window's RMS level of `channel` in dBFS (−160 for a channel not measured).
    public func averagePower(channel: Int) -> Float {
        guard (0..<channelCount).contains(channel) else { return Self.floor }
        return Float(bitPattern: averages[channel].load(ordering: .relaxed))
    }

    /// The last window's peak of `channel` in dBFS (−160 for a channel not measured).
    public func peakPower(channel: Int) -> Float {
        guard (0..<channelCount).contains(channel) else { return Self.floor }
        return Float(bitPattern: peaks[channel].load(ordering: .relaxed))
    }

    /// Turns every clip light off (control thread).
    public func clearClips() {
        for channel in 0..<channelCount { clips[channel].store(false, ordering: .relaxed) }
    }
}
