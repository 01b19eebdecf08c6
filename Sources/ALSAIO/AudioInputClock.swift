import AudioGraph
import CALSAShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Drives an engine from a capture device's clock when nothing plays it: an audio thread that
/// waits for each period from an `AudioInputNode`, then renders the engine for it (its taps and
/// meters see the period; the engine's output is discarded). Set it as the engine's
/// `outputDevice` (or use `AudioEngine.driveFromInput(_:)`) and call `start()`.
///
/// An input that does not pace its reads (`AudioInputNode.isPaced`: ALSA's `null` device hands
/// out silence as fast as it is read) is kept to the clock, as a sound card with the same buffer
/// would deliver it (`ClockPacer`): a recording from it is as long as the recording ran.
///
/// The thread asks for SCHED_FIFO and runs at normal priority where that is not permitted. It
/// allocates nothing and blocks only on the capture PCM (and on the clock, for an unpaced input).
public final class AudioInputClock: AudioOutputDevice, @unchecked Sendable {
    /// The engine rendered once per captured period.
    public let engine: AudioEngine
    /// The input whose periods pace the engine.
    public let input: AudioInputNode
    private let scratch: AudioBuffer
    private let running = Atomic<Bool>(false)
    private let thread = AudioThread()

    /// A clock for `engine` paced by `input` (which should be attached to it).
    public init(engine: AudioEngine, input: AudioInputNode) {
        self.engine = engine
        self.input = input
        scratch = AudioBuffer(channelCount: 2, frameCapacity: input.configuration.periodFrames)
    }

    /// Whether the audio thread is running (it stops by itself if capture fails for good).
    public var isRunning: Bool { running.load(ordering: .relaxed) }
    /// The audio thread's kernel thread id (for `chrt`, `top -H`, profilers), once it has started.
    public var audioThreadID: Int32? { thread.kernelID }
    /// Whether the audio thread got SCHED_FIFO; known once `start()` returned.
    public var isRealTimeScheduled: Bool { thread.isRealTimeScheduled }

    /// Prepares the engine for the input's rate and period and starts the audio thread.
    public func start() throws {
        guard !running.load(ordering: .relaxed) else { return }
        let configuration = input.configuration
        try engine.prepare(
            format: .stereo(sampleRate: configuration.sampleRate), maximumFrameCount: configuration.periodFrames)
        // (A thread that ended by itself, capture having failed, is joined before another starts.)
        running.store(true, ordering: .relaxed)
        do { try thread.start(realTime: true, device: configuration.device) { [self] in run() } } catch {
            running.store(false, ordering: .relaxed)
            throw error
        }
    }

    /// Stops the audio thread after the period it is reading.
    public func stop() {
        running.store(false, ordering: .relaxed)
        thread.join()
    }

    private func run() {
        let configuration = input.configuration
        let frames = configuration.periodFrames
        var pacer =
            input.isPaced
            ? nil
            : ClockPacer(sampleRate: configuration.sampleRate, bufferFrames: frames * configuration.periodCount)
        while running.load(ordering: .relaxed) {
            if pacer?.waitForCapture(frames) == true { input.countOverrun() }
            guard input.capturePeriod(frameCount: frames) else { break }
            engine.render(frameCount: frames, into: scratch)
        }
        running.store(false, ordering: .relaxed)
    }
}

extension AudioEngine {
    /// Makes `input`'s capture clock drive this engine (an `AudioInputClock` as its
    /// `outputDevice`), for recording without playing anything; replaces (and stops) any device it
    /// had. Call `start()` to begin.
    @discardableResult
    public func driveFromInput(_ input: AudioInputNode) -> AudioInputClock {
        outputDevice?.stop()
        let clock = AudioInputClock(engine: self, input: input)
        outputDevice = clock
        return clock
    }
}
