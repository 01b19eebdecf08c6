import AudioGraph
import CALSAShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Drives an engine in real time without an audio device, when nothing is to be heard (MIDI sent
/// to external instruments only): an audio thread renders a period whenever a sound card with the
/// same buffer would take one, by the monotonic clock (`ClockPacer`), and discards it. Its account
/// of when each frame would be heard (`presentationTime(ofSampleTime:)`) times MIDI out as a sound
/// card's does, so a song takes its own length, and the engine's taps, meters and players run as
/// on a device. A stream that falls a buffer behind (the thread held up) is an underrun, counted.
///
/// Set it as the engine's `outputDevice` (or use `AudioEngine.driveFromClock(_:)`) and call
/// `start()`. The thread asks for SCHED_FIFO and runs at normal priority where that is not
/// permitted; it allocates nothing and blocks only on the clock.
public final class ClockOutput: AudioOutputDevice, AudioPresentationClock, @unchecked Sendable {
    /// The engine the audio thread pulls for each period.
    public let engine: AudioEngine
    /// The sample rate in Hz (whole hertz, as a device would take it).
    public let sampleRate: Double
    /// Frames per period (32…8192): the engine renders this many per pull.
    public let periodFrames: Int
    /// Periods in the emulated buffer (2…16).
    public let periodCount: Int
    /// Channels the engine renders (1…64).
    public let channelCount: Int
    private let buffer: AudioBuffer
    private let account = PresentationAccount()
    private let running = Atomic<Bool>(false)
    private let underruns = Atomic<Int>(0)
    private let thread = AudioThread()
    /// Set by `close()`: the output cannot start again.
    private var isClosed = false

    /// An output for `engine` with `configuration`'s rate, buffer shape and channel count (its
    /// `device` is not opened, nor is any other); a period size or count out of range is taken at
    /// the nearest allowed, as a device grants the nearest it has.
    public init(engine: AudioEngine, configuration: ALSAOutput.Configuration = ALSAOutput.Configuration()) {
        self.engine = engine
        sampleRate = configuration.sampleRate.rounded()
        periodFrames = min(max(configuration.periodFrames, 32), 8_192)
        periodCount = min(max(configuration.periodCount, 2), 16)
        channelCount = min(max(configuration.channelCount, 1), 64)
        buffer = AudioBuffer(channelCount: channelCount, frameCapacity: periodFrames)
    }

    deinit { close() }

    /// Whether the audio thread is running.
    public var isRunning: Bool { running.load(ordering: .relaxed) }
    /// Underruns so far: times the thread fell a whole buffer behind the clock.
    public var xrunCount: Int { underruns.load(ordering: .relaxed) }
    /// The underruns so far: each one shifts frames against time.
    public var discontinuityCount: Int { xrunCount }
    /// The emulated buffer's length in seconds.
    public var bufferLatency: Double { Double(periodFrames * periodCount) / sampleRate }
    /// The buffer's length in seconds (`bufferLatency`), as the presentation clock tells it.
    public var bufferDuration: Double { bufferLatency }
    /// Whether the audio thread got SCHED_FIFO; known once `start()` returned.
    public var isRealTimeScheduled: Bool { thread.isRealTimeScheduled }
    /// The audio thread's kernel thread id, once it has started.
    public var audioThreadID: Int32? { thread.kernelID }
    /// Whether the output can still start (until `close()`).
    public var isOpen: Bool { !isClosed }

    /// Prepares the engine for the period and starts the audio thread.
    public func start() throws {
        guard !running.load(ordering: .relaxed) else { return }
        guard !isClosed else { throw ALSAPCMError.unsupportedConfiguration(device: "clock", reason: "closed") }
        try engine.prepare(
            format: AudioFormat(sampleRate: sampleRate, channelCount: channelCount), maximumFrameCount: periodFrames)
        running.store(true, ordering: .relaxed)
        do { try thread.start(realTime: true, device: "clock") { [self] in run() } } catch {
            running.store(false, ordering: .relaxed)
            throw error
        }
    }

    /// Stops the audio thread after the period it is rendering.
    public func stop() {
        running.store(false, ordering: .relaxed)
        thread.join()
    }

    /// Stops (as `stop()`); the output cannot start again. Closing twice is harmless.
    public func close() {
        stop()
        isClosed = true
    }

    /// When the frame rendered at `sampleTime` would be heard (CLOCK_MONOTONIC nanoseconds), by
    /// the clock's account after the last period; nil before the first, or while the emulated
    /// buffer fills.
    public func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64? {
        account.presentationTime(ofSampleTime: sampleTime, sampleRate: sampleRate)
    }

    private func run() {
        let frames = periodFrames
        var pacer = ClockPacer(sampleRate: sampleRate, bufferFrames: frames * periodCount)
        while running.load(ordering: .relaxed) {
            if pacer.waitForRoom(frames) { underruns.add(1, ordering: .relaxed) }
            engine.render(frameCount: frames, into: buffer)
            if pacer.wrote(frames) { underruns.add(1, ordering: .relaxed) }
            let now = ClockPacer.now()
            if let held = pacer.delay(at: now) {
                account.publish(time: now, end: engine.currentSampleTime, delay: held)
            }
        }
    }
}

extension AudioEngine {
    /// Makes the clock drive this engine in real time with no audio device (a `ClockOutput` as
    /// its `outputDevice`), replacing (and stopping) any device it had. Call `start()` to begin.
    @discardableResult
    public func driveFromClock(
        _ configuration: ALSAOutput.Configuration = ALSAOutput.Configuration()
    ) -> ClockOutput {
        outputDevice?.stop()
        let output = ClockOutput(engine: self, configuration: configuration)
        outputDevice = output
        return output
    }
}
