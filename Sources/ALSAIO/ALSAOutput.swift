import AudioGraph
import CALSA
import CALSAShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Plays an engine's output on an ALSA PCM device in real time: a dedicated audio thread waits
/// until the device has room for a period, pulls the graph for it (`AudioEngine.render`, the same
/// path as offline rendering) and writes it, so the device receives exactly the samples an offline
/// render holds, and the latency is the buffer (`bufferLatency`), not the buffer plus a period.
///
/// The thread asks for SCHED_FIFO and runs at normal priority where that is not permitted
/// (`isRealTimeScheduled` says which), or where nothing paces it (`isPaced`: ALSA's `null` device
/// takes periods as fast as they come, and a real-time thread that never waits would starve the
/// rest of the machine; `Configuration.pacesUnpacedDevice` keeps such a device to the clock). The
/// `null` device is known by its own type: a plugin over it (`plug:null`) counts as paced.
/// Underruns are recovered with `snd_pcm_recover` and counted; a device that goes away stops the
/// stream and is reported by `failure`. After each period the device's own account (frames
/// written, `snd_pcm_delay`; the clock's, for a null device kept to it) maps frames to the time
/// they are heard (`presentationTime(ofSampleTime:)`). The audio thread allocates nothing and
/// blocks only on the PCM (and on the clock, for a null device kept to it).
public final class ALSAOutput: AudioOutputDevice, AudioPresentationClock, @unchecked Sendable {
    /// What to open and how: the PCM device, the sample rate and the device buffer's shape. The
    /// device may grant a period size and count near those asked for (`ALSAOutput.periodFrames`,
    /// `ALSAOutput.periodCount` hold what it granted); out-of-range values make `init` throw.
    public struct Configuration: Sendable, Hashable {
        /// ALSA PCM name: `default`, `hw:0,0`, `plughw:1`, or a plugin such as `file:FILE=out.raw`.
        public var device = "default"
        /// The sample rate in Hz (44 100 by default), rounded to whole Hz for the device, which must
        /// accept it exactly (a `plughw:` device converts); the engine renders at this rate.
        public var sampleRate = 44_100.0
        /// Frames per period (32…8192) and periods in the device buffer (2…16).
        public var periodFrames = 256
        /// Periods in the device buffer (2…16, 2 by default); more periods: fewer underruns, more latency.
        public var periodCount = 2
        /// Channels of the stream (1…64, 2 by default): the engine renders this many, and its output
        /// node's channel maps address them (`AudioEngine.connect(_:to:channels:)`). A `hw:` device
        /// takes only the counts its hardware has; a `plughw:` or `plug:` device adapts.
        public var channelCount = 2
        /// For a device that does not pace the stream (ALSA's `null`), whether to keep it to real
        /// time by the monotonic clock, as a sound card with this buffer would: what a live session
        /// needs on a machine without one (a recording of what is played is then as long as the
        /// playing). False (the default): the engine renders as fast as the device takes it.
        public var pacesUnpacedDevice = false

        /// Makes a configuration; the ranges are checked when `ALSAOutput` opens the device.
        public init(
            device: String = "default", sampleRate: Double = 44_100, periodFrames: Int = 256, periodCount: Int = 2,
            channelCount: Int = 2, pacesUnpacedDevice: Bool = false
        ) {
            self.device = device
            self.sampleRate = sampleRate
            self.periodFrames = periodFrames
            self.periodCount = periodCount
            self.channelCount = channelCount
            self.pacesUnpacedDevice = pacesUnpacedDevice
        }
    }

    /// The sample format the device accepted, in order of preference.
    public enum SampleFormat: String, Sendable, CaseIterable {
        /// `float32`: 32-bit float, little-endian. `int32`: 32-bit signed integer, little-endian,
        /// saturating. `int16`: 16-bit signed integer, little-endian, rounded and saturating.
        case float32, int32, int16
        var alsa: snd_pcm_format_t {
            switch self {
            case .float32: return SND_PCM_FORMAT_FLOAT_LE
            case .int32: return SND_PCM_FORMAT_S32_LE
            case .int16: return SND_PCM_FORMAT_S16_LE
            }
        }
        var bytes: Int { self == .int16 ? 2 : 4 }
    }

    /// The engine the audio thread pulls (`render(frameCount:into:)`) for each period.
    public let engine: AudioEngine
    /// The ALSA PCM name opened (`Configuration.device`), as errors name it.
    public let device: String
    /// The sample rate in Hz, as configured (the device accepted it); `start()` prepares the engine
    /// at this rate.
    public let sampleRate: Double
    /// Frames per period as the device granted them (near the configuration's): the engine renders
    /// this many frames per pull.
    public private(set) var periodFrames: Int
    /// Periods in the device buffer as the device granted them; the buffer holds
    /// `periodFrames * periodCount` frames (`bufferLatency`, in seconds).
    public private(set) var periodCount: Int
    /// The format written to the device: the first of `SampleFormat.allCases` it accepts.
    public private(set) var sampleFormat: SampleFormat
    /// Channels of the stream (`Configuration.channelCount`): the engine's format has as many.
    public let channelCount: Int
    /// Whether the stream runs in real time, the audio thread waiting for the device: false for
    /// ALSA's `null` device, which takes frames as fast as they are rendered (a render faster than
    /// real time, and no real-time scheduling for its thread), unless
    /// `Configuration.pacesUnpacedDevice` keeps it to the clock.
    public let isPaced: Bool
    /// Whether the audio thread keeps an unpaced device to the clock (`ClockPacer`).
    private let emulatesPace: Bool
    private let pcm: OpaquePointer
    private let buffer: AudioBuffer
    private let interleaved: UnsafeMutableRawPointer
    private let running = Atomic<Bool>(false)
    private let xruns = Atomic<Int>(0)
    /// The last period's timing: when it was written, the engine's sample time at its end, and
    /// the frames the device still held then.
    private let account = PresentationAccount()
    private let thread = AudioThread()
    private let fatalError = Mutex<ALSAPCMError?>(nil)
    /// Set by `close()`: the PCM is closed and the output cannot start again.
    private var isClosed = false

    /// Opens and configures the device; throws with the device's name and ALSA's reason.
    public init(engine: AudioEngine, configuration: Configuration = Configuration()) throws(ALSAPCMError) {
        guard (32...8_192).contains(configuration.periodFrames) else {
            throw .unsupportedConfiguration(device: configuration.device, reason: "period must be 32…8192 frames")
        }
        guard (2...16).contains(configuration.periodCount) else {
            throw .unsupportedConfiguration(device: configuration.device, reason: "periods must be 2…16")
        }
        guard (1...64).contains(configuration.channelCount) else {
            throw .unsupportedConfiguration(device: configuration.device, reason: "channels must be 1…64")
        }
        pianola_alsa_silence_library_errors()
        var handle: OpaquePointer?
        // Opened non-blocking: a blocking open of a device another program holds waits until it is
        // free (the kernel queues the opener); non-blocking it fails at once with EBUSY. Writes then
        // block as usual.
        let opened = snd_pcm_open(&handle, configuration.device, SND_PCM_STREAM_PLAYBACK, SND_PCM_NONBLOCK)
        guard opened == 0, let handle else {
            throw .cannotOpen(device: configuration.device, reason: Self.reason(opened))
        }
        let blocking = snd_pcm_nonblock(handle, 0)
        guard blocking == 0 else {
            snd_pcm_close(handle)
            throw .cannotOpen(device: configuration.device, reason: Self.reason(blocking))
        }
        self.engine = engine
        device = configuration.device
        channelCount = configuration.channelCount
        sampleRate = configuration.sampleRate.rounded()  // ALSA rates are whole hertz
        pcm = handle
        let unpaced = snd_pcm_type(handle) == SND_PCM_TYPE_NULL
        emulatesPace = unpaced && configuration.pacesUnpacedDevice
        isPaced = !unpaced || emulatesPace
        do {
            (sampleFormat, periodFrames, periodCount) = try Self.configure(handle, configuration)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        buffer = AudioBuffer(channelCount: channelCount, frameCapacity: periodFrames)
        interleaved = .allocate(byteCount: periodFrames * channelCount * 4, alignment: 16)
    }

    /// ALSA's reason for an error code, with a hint where the bare text says little.
    private static func reason(_ code: Int32) -> String {
        let text = String(cString: snd_strerror(code))
        if code == -EBUSY { return "\(text) (another program is using it)" }
        return text
    }

    /// Why a write failed for good; a disconnected card (unplugged) says so. Depending on where
    /// the stream was when the card went away, ALSA reports it as ENODEV or as EIO.
    private func writeFailureReason(_ code: Int32) -> String {
        let text = String(cString: snd_strerror(code))
        let disconnected =
            code == -ENODEV || code == -EIO || snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED
        return disconnected ? "the device was disconnected or stopped responding (\(text))" : text
    }

    deinit {
        close()
        interleaved.deallocate()
    }

    private static func configure(
        _ pcm: OpaquePointer, _ configuration: Configuration
    ) throws(ALSAPCMError) -> (SampleFormat, Int, Int) {
        let device = configuration.device
        let formats = SampleFormat.allCases
        let granted = try ALSAHardwareSetup.apply(
            pcm, device: device, verb: "plays", formats: formats.map(\.alsa), formatNames: "float, s32, s16",
            channelCount: configuration.channelCount, sampleRate: configuration.sampleRate,
            periodFrames: configuration.periodFrames, periodCount: configuration.periodCount)
        let period = snd_pcm_uframes_t(granted.periodFrames)
        func check(_ result: Int32, _ what: String) throws(ALSAPCMError) {
            try ALSAHardwareSetup.check(result, what, device: device)
        }

        var software: OpaquePointer?
        snd_pcm_sw_params_malloc(&software)
        guard let software else { throw .unsupportedConfiguration(device: device, reason: "out of memory") }
        defer { snd_pcm_sw_params_free(software) }
        try check(snd_pcm_sw_params_current(pcm, software), "software parameters")
        try check(
            snd_pcm_sw_params_set_start_threshold(pcm, software, period * snd_pcm_uframes_t(granted.periodCount)),
            "start threshold")
        try check(snd_pcm_sw_params_set_avail_min(pcm, software, period), "wake-up threshold")
        try check(snd_pcm_sw_params(pcm, software), "applying software parameters")
        return (formats[granted.formatIndex], granted.periodFrames, granted.periodCount)
    }

    /// Underruns recovered so far.
    public var xrunCount: Int { xruns.load(ordering: .relaxed) }
    /// The underruns and suspends so far: each one shifts frames against time.
    public var discontinuityCount: Int { xrunCount }
    /// The audio thread's kernel thread id (for `chrt`, `top -H`, profilers), once it has started.
    public var audioThreadID: Int32? { thread.kernelID }
    /// Whether the audio thread got SCHED_FIFO (false: normal priority; not permitted here, or
    /// not asked for, the device not being paced: `isPaced`). Known once the thread has started:
    /// `start()` waits for it.
    public var isRealTimeScheduled: Bool { thread.isRealTimeScheduled }
    public var isRunning: Bool { running.load(ordering: .relaxed) }
    /// The error that stopped the stream (device lost), if any.
    public var failure: ALSAPCMError? { fatalError.withLock { $0 } }
    /// Output latency of the device buffer, in seconds.
    public var bufferLatency: Double { Double(periodFrames * periodCount) / sampleRate }
    /// The buffer's length in seconds (`bufferLatency`), as the presentation clock tells it.
    public var bufferDuration: Double { bufferLatency }

    /// Prepares the engine for the device's period and starts the audio thread.
    public func start() throws {
        guard !running.load(ordering: .relaxed) else { return }
        guard !isClosed else { throw ALSAPCMError.unsupportedConfiguration(device: device, reason: "closed") }
        try engine.prepare(
            format: AudioFormat(sampleRate: sampleRate, channelCount: channelCount), maximumFrameCount: periodFrames)
        snd_pcm_prepare(pcm)
        running.store(true, ordering: .relaxed)
        // Real-time scheduling only where a device paces the thread: an unpaced one (a file, null)
        // would let a SCHED_FIFO thread spin.
        do { try thread.start(realTime: isPaced, device: device) { [self] in runAudioThread() } } catch {
            running.store(false, ordering: .relaxed)
            throw error
        }
    }

    /// Stops the audio thread, then lets the device play out what it holds.
    public func stop() {
        running.store(false, ordering: .relaxed)
        if thread.join() { snd_pcm_drain(pcm) }
    }

    /// Stops (as `stop()`) and closes the device, so that another program or output can open it.
    /// The output cannot start again; closing twice is harmless.
    public func close() {
        stop()
        guard !isClosed else { return }
        isClosed = true
        snd_pcm_close(pcm)
    }

    /// Whether the device is open (until `close()`).
    public var isOpen: Bool { !isClosed }

    /// The audio thread: render a period, convert, write; recover from underruns.
    private func runAudioThread() {
        let frames = periodFrames
        let stride = channelCount * sampleFormat.bytes
        var pacer = emulatesPace ? ClockPacer(sampleRate: sampleRate, bufferFrames: frames * periodCount) : nil
        while running.load(ordering: .relaxed) {
            // Wait for room for a whole period first, then render it: rendering first and then
            // blocking in the write would keep one more period in flight (latency of the buffer
            // plus a period instead of the buffer).
            let available = snd_pcm_avail_update(pcm)
            if available < 0 {
                if !recover(Int32(available)) { return }
                continue
            }
            if available < frames {
                let waited = snd_pcm_wait(pcm, 1_000)
                if waited < 0 && !recover(waited) { return }
                continue
            }
            // (The null device always has room: the clock decides, and counts a buffer run dry.)
            if pacer?.waitForRoom(frames) == true { xruns.add(1, ordering: .relaxed) }
            engine.render(frameCount: frames, into: buffer)
            convert(frames: frames)
            var written = 0
            while written < frames {
                let result = snd_pcm_writei(pcm, interleaved + written * stride, snd_pcm_uframes_t(frames - written))
                if result >= 0 {
                    written += Int(result)
                    continue
                }
                if !recover(Int32(result)) { return }
            }
            if pacer?.wrote(frames) == true { xruns.add(1, ordering: .relaxed) }
            publishTiming(pacer)
        }
    }

    /// Recovers from an underrun or a suspend (counted); false, with the failure recorded and the
    /// stream stopped, when the device is gone.
    private func recover(_ error: Int32) -> Bool {
        if error == -EPIPE || error == -ESTRPIPE { xruns.add(1, ordering: .relaxed) }
        if snd_pcm_recover(pcm, error, 1) < 0 {
            fatalError.withLock { $0 = .writeFailed(device: device, reason: self.writeFailureReason(error)) }
            running.store(false, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Records when this period was handed over and how much the device still held: the map
    /// from sample time to the time a frame is heard (`presentationTime(ofSampleTime:)`).
    /// With an unpaced device kept to the clock, `pacer` gives the account instead.
    private func publishTiming(_ pacer: ClockPacer?) {
        let now: UInt64
        let delay: Int64
        if let pacer {
            now = ClockPacer.now()
            guard let held = pacer.delay(at: now) else { return }
            delay = held
        } else {
            // Not playing yet (a stream starting, or refilling after an underrun, starts once its
            // buffer is full): the delay would date the frames from now, too early.
            guard snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING else { return }
            var frames = snd_pcm_sframes_t(0)
            guard snd_pcm_delay(pcm, &frames) == 0 else { return }
            now = ClockPacer.now()
            delay = Int64(frames)
        }
        account.publish(time: now, end: engine.currentSampleTime, delay: delay)
    }

    /// When the frame rendered at `sampleTime` is heard (CLOCK_MONOTONIC, nanoseconds), from the
    /// device's own account (`snd_pcm_delay`, or the clock's for a null device kept to it) after the
    /// last period written; nil before the first.
    public func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64? {
        account.presentationTime(ofSampleTime: sampleTime, sampleRate: sampleRate)
    }

    /// When the account `presentationTime(ofSampleTime:)` uses was taken (CLOCK_MONOTONIC
    /// nanoseconds), nil before the first: an account taken before an underrun times the frames
    /// after it wrongly.
    package var accountTime: UInt64? { account.time }

    /// Interleaves the rendered period into the device's sample format (saturating integers).
    private func convert(frames: Int) {
        let channels = channelCount
        for channel in 0..<channels {
            let source = buffer.channel(channel)
            switch sampleFormat {
            case .float32:
                let out = interleaved.assumingMemoryBound(to: Float.self) + channel
                for frame in 0..<frames { out[channels * frame] = source[frame] }
            case .int32:
                let out = interleaved.assumingMemoryBound(to: Int32.self) + channel
                for frame in 0..<frames {
                    out[channels * frame] = Int32(
                        max(-1, min(Double(source[frame]), 0x7FFF_FFFF / 0x8000_0000)) * 0x8000_0000)
                }
            case .int16:
                let out = interleaved.assumingMemoryBound(to: Int16.self) + channel
                for frame in 0..<frames {
                    out[channels * frame] = Int16(max(-32_768, min(32_767, (source[frame] * 32_768).rounded())))
                }
            }
        }
    }
}

extension AudioEngine {
    /// Opens an ALSA playback device for this engine and makes it the engine's `outputDevice`,
    /// replacing (and stopping) any device it had. Call `start()` to begin playing.
    ///
    /// ```swift
    /// let output = try engine.connectOutput(toDevice: .init(device: "default", periodFrames: 256))
    /// try engine.start()
    /// player.play()
    /// ```
    @discardableResult
    public func connectOutput(
        toDevice configuration: ALSAOutput.Configuration = ALSAOutput.Configuration()
    ) throws(ALSAPCMError) -> ALSAOutput {
        outputDevice?.stop()
        outputDevice = nil
        let output = try ALSAOutput(engine: self, configuration: configuration)
        outputDevice = output
        return output
    }
}
