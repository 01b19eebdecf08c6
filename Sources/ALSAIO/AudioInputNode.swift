import AudioFiles
import AudioGraph
import CALSA
import CALSAShims
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The graph's source of device input, like AVAudioInputNode: an ALSA capture device (a
/// microphone, a line input, a loopback) whose audio flows into the engine, to be tapped into a
/// file (`AudioFileTap`), measured (`PowerMeter`) or run through effects.
///
/// The node reads one period from the device each time it renders, on the render thread, so it
/// runs on whatever clock drives the engine:
/// - with an `ALSAOutput` on the same card (full duplex), the output's audio thread reads the
///   capture and writes the playback each period, one thread and one clock;
/// - alone (only recording), `AudioInputClock` drives the engine from the capture itself.
///
/// Overruns (the device's buffer filled before it was read) are recovered and counted
/// (`overrunCount`); a device that goes away stops the capture, the node then renders silence and
/// `failure` says why. Rendering blocks only on the PCM and allocates nothing.
public final class AudioInputNode: AudioNode, @unchecked Sendable {
    /// What to open and how.
    public struct Configuration: Sendable, Hashable {
        /// ALSA PCM name: `default`, `hw:1,0`, `plughw:1`, `dsnoop:…`, or one that `definitions` defines.
        public var device: String
        /// The sample rate in Hz; the device must accept it exactly (`plughw:` converts).
        public var sampleRate: Double
        /// Channels to capture (1…8).
        public var channelCount: Int
        /// Frames per period (32…8192): the engine renders this many per pull when the input drives it.
        public var periodFrames: Int
        /// Periods in the device buffer (2…16): more periods tolerate longer stalls before an overrun.
        public var periodCount: Int
        /// ALSA configuration text (asoundrc syntax) added to the system's for this device only,
        /// e.g. `pcm.take { type file slave.pcm null file "/dev/null" infile "in.raw" format raw }`;
        /// empty: the system's configuration alone.
        public var definitions: String

        /// A configuration; ranges are checked when the node opens the device.
        public init(
            device: String = "default", sampleRate: Double = 48_000, channelCount: Int = 2, periodFrames: Int = 1_024,
            periodCount: Int = 3, definitions: String = ""
        ) {
            self.device = device
            self.sampleRate = sampleRate
            self.channelCount = channelCount
            self.periodFrames = periodFrames
            self.periodCount = periodCount
            self.definitions = definitions
        }
    }

    /// The device's sample format, in order of preference.
    public enum SampleFormat: String, Sendable, CaseIterable {
        /// 32-bit float; 32-, 24- (packed in 3 bytes) and 16-bit signed integers; all little-endian.
        case float32, int32, int24, int16
        var alsa: snd_pcm_format_t {
            switch self {
            case .float32: return SND_PCM_FORMAT_FLOAT_LE
            case .int32: return SND_PCM_FORMAT_S32_LE
            case .int24: return SND_PCM_FORMAT_S24_3LE
            case .int16: return SND_PCM_FORMAT_S16_LE
            }
        }
        var bytes: Int {
            switch self {
            case .float32, .int32: return 4
            case .int24: return 3
            case .int16: return 2
            }
        }
    }

    /// The configuration as opened; `periodFrames` and `periodCount` as the device granted them.
    public let configuration: Configuration
    /// The format the device delivers: the first of `SampleFormat.allCases` it accepts.
    public let sampleFormat: SampleFormat
    /// Whether the device delivers frames at its own rate, so that a read waits for them: false
    /// for ALSA's `null` device, which hands out silence as fast as it is read (`AudioInputClock`
    /// then keeps the capture to the clock; an output driving the engine paces it otherwise).
    public let isPaced: Bool
    private let pcm: OpaquePointer
    private let interleaved: UnsafeMutableRawPointer
    private let captured: AudioBuffer
    private let overruns = Atomic<Int>(0)
    private let framesCaptured = Atomic<Int>(0)
    private let failed = Atomic<Int32>(0)
    // The last read's timing (a sequence lock: odd while being written): when it ended, the frames
    // captured by then, and the frames the device held beyond them (`snd_pcm_delay`).
    private let timingVersion = Atomic<Int>(0)
    private let timingTime = Atomic<UInt64>(0)
    private let timingEnd = Atomic<Int64>(0)
    private let timingDelay = Atomic<Int64>(0)
    private var capturedPending = false
    private var closed = false

    /// Opens and configures the capture device; throws with the device's name and ALSA's reason.
    public init(configuration: Configuration) throws(ALSAPCMError) {
        let device = configuration.device
        guard (32...8_192).contains(configuration.periodFrames) else {
            throw .unsupportedConfiguration(device: device, reason: "period must be 32…8192 frames")
        }
        guard (2...16).contains(configuration.periodCount) else {
            throw .unsupportedConfiguration(device: device, reason: "periods must be 2…16")
        }
        guard (1...8).contains(configuration.channelCount) else {
            throw .unsupportedConfiguration(device: device, reason: "1…8 channels can be captured")
        }
        pianola_alsa_silence_library_errors()
        var handle: OpaquePointer?
        let opened = pianola_alsa_pcm_open(
            &handle, device, configuration.definitions, Int32(SND_PCM_STREAM_CAPTURE.rawValue), SND_PCM_NONBLOCK)
        guard opened == 0, let handle else {
            var reason = String(cString: snd_strerror(opened))
            if opened == -EBUSY { reason += " (another program is using it)" }
            if !configuration.definitions.isEmpty {
                // The definitions themselves may be at fault (a syntax error, a missing file): no guess.
            } else if opened == -ENOENT {
                reason += " (no such capture device)"
            } else if opened == -EINVAL {
                // A playback-only PCM (dmix, a card without a capture device) has no capture stream.
                reason += " (not a capture device)"
            }
            throw .cannotOpen(device: device, reason: reason)
        }
        guard snd_pcm_nonblock(handle, 0) == 0 else {
            snd_pcm_close(handle)
            throw .cannotOpen(device: device, reason: "cannot switch to blocking reads")
        }
        var granted = configuration
        granted.sampleRate = configuration.sampleRate.rounded()
        do {
            (sampleFormat, granted.periodFrames, granted.periodCount) = try Self.configure(handle, configuration)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        pcm = handle
        isPaced = snd_pcm_type(handle) != SND_PCM_TYPE_NULL
        self.configuration = granted
        // Room for the largest quantum an engine asks for (an output's period may differ from the input's).
        captured = AudioBuffer(channelCount: granted.channelCount, frameCapacity: Self.maximumFrames)
        interleaved = .allocate(byteCount: Self.maximumFrames * granted.channelCount * 4, alignment: 16)
        super.init(name: "input \(device)")
    }

    deinit {
        close()
        interleaved.deallocate()
    }

    /// The most frames one render reads (the largest period).
    static let maximumFrames = 8_192

    private static func configure(
        _ pcm: OpaquePointer, _ configuration: Configuration
    ) throws(ALSAPCMError) -> (SampleFormat, Int, Int) {
        let device = configuration.device
        let formats = SampleFormat.allCases
        let granted = try ALSAHardwareSetup.apply(
            pcm, device: device, verb: "captures", formats: formats.map(\.alsa),
            formatNames: "float, s32, s24, s16", channelCount: configuration.channelCount,
            sampleRate: configuration.sampleRate, periodFrames: configuration.periodFrames,
            periodCount: configuration.periodCount)
        let period = granted.periodFrames
        guard (1...8_192).contains(period) else {
            throw .unsupportedConfiguration(device: device, reason: "the device granted a period of \(period) frames")
        }
        return (formats[granted.formatIndex], period, granted.periodCount)
    }

    /// Overruns recovered so far (each one loses the audio the device could not hold).
    public var overrunCount: Int { overruns.load(ordering: .relaxed) }
    /// Counts an overrun the device did not report (a capture kept to the clock fell behind).
    func countOverrun() { overruns.add(1, ordering: .relaxed) }
    /// Frames captured since the node opened.
    public var capturedFrameCount: Int { framesCaptured.load(ordering: .relaxed) }
    /// Why capture stopped for good (the device went away), if it did; the node renders silence since.
    public var failure: ALSAPCMError? {
        let code = failed.load(ordering: .relaxed)
        guard code != 0 else { return nil }
        let text = String(cString: snd_strerror(code))
        return .readFailed(
            device: configuration.device, reason: "the device was disconnected or stopped responding (\(text))")
    }
    /// The capture buffer's length in seconds: the most a stall can last without an overrun.
    public var bufferDuration: Double {
        Double(configuration.periodFrames * configuration.periodCount) / configuration.sampleRate
    }

    override public var inputBusCount: Int { 0 }

    override public func outputChannelCount(inputChannelCounts: [Int]) -> Int { configuration.channelCount }

    override public func prepare(format: AudioFormat, maximumFrameCount: Int) throws {
        guard format.sampleRate == configuration.sampleRate else {
            throw AudioGraphError.formatMismatch(
                node: name, format: format, reason: "the device captures at \(Int(configuration.sampleRate)) Hz")
        }
    }

    /// Copies the captured period into the output, reading it from the device first unless the
    /// clock already did (render thread).
    override public func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        let frames = min(frameCount, captured.frameCapacity)
        if !capturedPending { capture(frameCount: frames) }
        capturedPending = false
        for channel in 0..<output.channelCount {
            output.channel(channel).update(
                from: captured.channel(min(channel, captured.channelCount - 1)), count: frames)
        }
        if frames < frameCount {
            for channel in 0..<output.channelCount {
                (output.channel(channel) + frames).update(repeating: 0, count: frameCount - frames)
            }
        }
    }

    /// Reads the next `frameCount` frames (at most 8192) from the device, blocking until they are
    /// there; the next render hands them out. For the clock that drives the engine (render thread).
    /// Returns false once capture has failed for good (the frames are then silence).
    @discardableResult
    public func capturePeriod(frameCount: Int) -> Bool {
        capture(frameCount: min(frameCount, captured.frameCapacity))
        capturedPending = true
        return failed.load(ordering: .relaxed) == 0
    }

    private func capture(frameCount: Int) {
        guard failed.load(ordering: .relaxed) == 0, !closed else {
            captured.clear(frames: frameCount)
            return
        }
        let stride = configuration.channelCount * sampleFormat.bytes
        var done = 0
        while done < frameCount {
            let result = snd_pcm_readi(pcm, interleaved + done * stride, snd_pcm_uframes_t(frameCount - done))
            if result > 0 {
                done += Int(result)
                continue
            }
            if result == 0 {
                // No frames and no error: a plugin whose source ended (the file plugin's infile at its
                // end). The rest of the period is silence; the next read tries again.
                (interleaved + done * stride).initializeMemory(
                    as: UInt8.self, repeating: 0, count: (frameCount - done) * stride)
                done = frameCount
                break
            }
            if result == -Int(EAGAIN) { continue }
            let error = Int32(result)
            if error == -EPIPE || error == -ESTRPIPE { overruns.add(1, ordering: .relaxed) }
            if snd_pcm_recover(pcm, error, 1) < 0 || error == -ENODEV {
                failed.store(error, ordering: .relaxed)
                (interleaved + done * stride).initializeMemory(
                    as: UInt8.self, repeating: 0, count: (frameCount - done) * stride)
                break
            }
            snd_pcm_start(pcm)
        }
        framesCaptured.add(done, ordering: .relaxed)
        deinterleave(frameCount: frameCount)
        publishTiming()
    }

    /// Records when this read ended and how much the device held beyond it: the map from a captured
    /// frame to the time it entered the device (`captureTime(ofFrame:)`).
    private func publishTiming() {
        guard snd_pcm_state(pcm) == SND_PCM_STATE_RUNNING else { return }
        var delay = snd_pcm_sframes_t(0)
        guard snd_pcm_delay(pcm, &delay) == 0 else { return }
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let version = timingVersion.load(ordering: .relaxed)
        timingVersion.store(version + 1, ordering: .sequentiallyConsistent)
        timingTime.store(UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec), ordering: .sequentiallyConsistent)
        timingEnd.store(Int64(framesCaptured.load(ordering: .relaxed)), ordering: .sequentiallyConsistent)
        timingDelay.store(Int64(delay), ordering: .sequentiallyConsistent)
        timingVersion.store(version + 2, ordering: .sequentiallyConsistent)
    }

    /// When captured frame `frame` (counted from the first frame the node read, 0) entered the device,
    /// on `MIDITimestamp`'s clock (CLOCK_MONOTONIC, nanoseconds), by the device's own account
    /// (`snd_pcm_delay` after the last read); nil before the first read. In full duplex, frame *k* is
    /// the engine's sample time *k*: with the output's `presentationTime(ofSampleTime:)` it gives the
    /// monitoring latency.
    public func captureTime(ofFrame frame: Int64) -> UInt64? {
        while true {
            let before = timingVersion.load(ordering: .sequentiallyConsistent)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let time = timingTime.load(ordering: .sequentiallyConsistent)
            let end = timingEnd.load(ordering: .sequentiallyConsistent)
            let delay = timingDelay.load(ordering: .sequentiallyConsistent)
            guard timingVersion.load(ordering: .sequentiallyConsistent) == before else { continue }
            // At `time`, the frame at end + delay was entering the device.
            let frames = Double(end + delay - frame)
            return UInt64(max(0, Int64(time) - Int64(frames / configuration.sampleRate * 1e9)))
        }
    }

    /// When the account `captureTime(ofFrame:)` uses was taken (CLOCK_MONOTONIC nanoseconds), nil
    /// before the first: an account taken before an overrun times the frames after it wrongly.
    package var accountTime: UInt64? {
        let time = timingTime.load(ordering: .sequentiallyConsistent)
        return time == 0 ? nil : time
    }

    private func deinterleave(frameCount: Int) {
        let channels = configuration.channelCount
        for channel in 0..<channels {
            let out = captured.channel(channel)
            switch sampleFormat {
            case .float32:
                let samples = interleaved.assumingMemoryBound(to: Float.self) + channel
                for frame in 0..<frameCount { out[frame] = samples[frame &* channels] }
            case .int32:
                let samples = interleaved.assumingMemoryBound(to: Int32.self) + channel
                let scale = Float(1.0 / 2_147_483_648.0)  // 2⁻³¹: exact
                for frame in 0..<frameCount { out[frame] = Float(samples[frame &* channels]) * scale }
            case .int24:
                let bytes = interleaved.assumingMemoryBound(to: UInt8.self) + channel &* 3
                let stride = channels &* 3
                for frame in 0..<frameCount {
                    let at = frame &* stride
                    let bits = UInt32(bytes[at]) << 8 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 24
                    out[frame] = Float(Int32(bitPattern: bits) >> 8) * (1.0 / 8_388_608)
                }
            case .int16:
                let samples = interleaved.assumingMemoryBound(to: Int16.self) + channel
                for frame in 0..<frameCount { out[frame] = Float(samples[frame &* channels]) * (1.0 / 32_768) }
            }
        }
    }

    /// Stops capturing and closes the device (control thread, with the engine stopped); closing twice
    /// is harmless. The node renders silence afterwards.
    public func close() {
        guard !closed else { return }
        closed = true
        snd_pcm_drop(pcm)
        snd_pcm_close(pcm)
    }
}
