import ALSAIO
import AudioFiles
import AudioGraph
import Effects
import MIDICore
import Meters
import Synchronization

/// Records a capture device into an audio file, the counterpart of AVAudioRecorder: `record()`,
/// `record(forDuration:)`, `pause()`, `resume()`, `stop()`, `deleteRecording()`, and meters a UI
/// can poll at any rate (`averagePower(channel:)`, `peakPower(channel:)`, `meterReading()`).
///
/// Inside it is an engine: an `AudioInputNode`, the effects of `Configuration.effects`, and on the
/// last of them an `AudioFileTap` (ring buffer and writer thread: the audio thread never waits
/// for the disk) and a `PowerMeter`. Without monitoring, the capture's clock drives the engine
/// (`AudioInputClock`); with `Configuration.monitor`, an `ALSAOutput` plays the recorded signal
/// (full duplex: one audio thread reads the capture and writes the playback each period).
///
/// The file is created by `init` (never over an existing file unless `overwrite` is set) and is
/// valid at all times: its header is brought up to date twice a second while recording.
///
/// ```swift
/// let recorder = try AudioRecorder(path: "take.wav", configuration: .init(input: .init(device: "hw:1")))
/// try recorder.record(forDuration: 10)
/// while recorder.isRecording { print(recorder.peakPower(channel: 0)); sleep(1) }
/// try recorder.stop()
/// ```
public final class AudioRecorder: @unchecked Sendable {
    /// Why a rate effect (`varispeed`, `timepitch`) is refused in a recording's chain, for a caller
    /// to put in its own words (the `pianola` command names `pianola process`).
    public static let rateEffectRefusal =
        "changes the pace, which a recording as it happens cannot (process the take with AudioFileProcessor)"

    /// What to record from, how to write it, and what to do to it on the way.
    public struct Configuration: Sendable {
        /// The capture device.
        public var input: AudioInputNode.Configuration
        /// The file's encoding, splitting, overwrite and ring settings.
        public var file: AudioFileTap.Settings
        /// Effects applied to the recorded signal, in order (mono or stereo input only).
        public var effects: [EffectSpec]
        /// Play the recorded signal (after the effects) on this output device too; its rate is the
        /// input's, and its period the input's when the device grants it.
        public var monitor: ALSAOutput.Configuration?
        /// Frames per meter window.
        public var meterWindowFrames: Int

        /// A configuration recording `input` with the file settings' defaults, no effects and no monitor.
        public init(
            input: AudioInputNode.Configuration, file: AudioFileTap.Settings = AudioFileTap.Settings(),
            effects: [EffectSpec] = [], monitor: ALSAOutput.Configuration? = nil, meterWindowFrames: Int = 1_024
        ) {
            self.input = input
            self.file = file
            self.effects = effects
            self.monitor = monitor
            self.meterWindowFrames = meterWindowFrames
        }
    }

    /// The file given (with splitting, `files` names the parts).
    public let path: String
    /// The engine that carries the recording.
    public let engine: AudioEngine
    /// The capture device's node.
    public let input: AudioInputNode
    /// The tap writing the file.
    public let tap: AudioFileTap
    /// The meters of the recorded signal (after the effects).
    public let meter: PowerMeter
    /// The output playing the recorded signal, with `Configuration.monitor`.
    public let monitorOutput: ALSAOutput?
    /// Channels in the file.
    public let channelCount: Int
    private var started = false
    private let latencyEstimate: Mutex<MonitorLatencyEstimate>

    /// Opens the device, builds the graph and creates the file. Throws, leaving no file behind, if the
    /// device cannot be opened or configured, an effect is wrong, or the file cannot be created.
    public init(path: String, configuration: Configuration) throws(SessionError) {
        self.path = path
        let engine = AudioEngine()
        let input: AudioInputNode
        do {
            input = try AudioInputNode(configuration: configuration.input)
        } catch { throw .device(error) }
        self.engine = engine
        self.input = input
        /// Undoes a half-built recorder: the device closes and the engine and its device let go of
        /// each other (nothing else would free them).
        func abandon() {
            engine.outputDevice = nil
            input.close()
        }
        let rate = input.configuration.sampleRate
        latencyEstimate = Mutex(MonitorLatencyEstimate(sampleRate: rate))
        var last: AudioNode = input
        var channels = input.configuration.channelCount
        do {
            try engine.attach(input)
            let effects = try EffectSpec.engineNodes(
                configuration.effects, allowingRateChanges: false,
                refusal: Self.rateEffectRefusal)
            if !effects.isEmpty && channels > 2 {
                throw SessionError.failed("effects take 1 or 2 channels; \(channels) are recorded")
            }
            for node in effects {
                try engine.attach(node)
                try engine.connect(last, to: node)
                channels = node.outputChannelCount(inputChannelCounts: [channels])
                last = node
            }
            if let monitor = configuration.monitor {
                if channels > 2 {
                    throw SessionError.failed("monitoring plays 1 or 2 channels; \(channels) are recorded")
                }
                var output = monitor
                output.sampleRate = rate
                // The output's thread reads the input: a capture that does not pace it (ALSA's
                // null) and a null monitor are kept to the clock together (a paced capture paces
                // the pair, and a second clock would drift against it).
                output.pacesUnpacedDevice = output.pacesUnpacedDevice || !input.isPaced
                try engine.connect(last, to: engine.mainMixerNode)
                monitorOutput = try engine.connectOutput(toDevice: output)
            } else {
                monitorOutput = nil
                engine.driveFromInput(input)
            }
        } catch {
            abandon()
            throw SessionError(error)
        }
        channelCount = channels
        meter = PowerMeter(
            channelCount: min(channels, PowerMeter.maximumChannelCount), sampleRate: rate,
            windowFrames: configuration.meterWindowFrames)
        let tap: AudioFileTap
        do {
            tap = try AudioFileTap(path: path, channelCount: channels, sampleRate: rate, settings: configuration.file)
        } catch {
            abandon()
            throw .audioFile(error)
        }
        self.tap = tap
        do {
            try engine.installTap(on: last, meter)
            try engine.installTap(on: last, tap)
        } catch {
            tap.deleteFiles()
            abandon()
            throw SessionError(error)
        }
    }

    /// A recorder let go without `stop()` stops: its audio thread ends, the device closes and the
    /// file is completed.
    deinit {
        engine.stop()
        input.close()
        _ = try? tap.finish()
        // The engine and its device (clock or output) hold each other: let go.
        engine.outputDevice = nil
    }

    /// Starts the audio (meters move) without recording yet; `record()` does it too.
    public func prepareToRecord() throws(SessionError) {
        guard !started else { return }
        do { try engine.start() } catch { throw SessionError(error) }
        started = true
    }

    /// Starts recording, or resumes after `pause()`.
    public func record() throws(SessionError) {
        // Taking audio before the stream starts: a recording begins with the first captured frame.
        tap.record()
        do { try prepareToRecord() } catch {
            tap.pause()
            throw error
        }
    }

    /// Records `seconds` of audio in all (pauses not counted), then stops taking audio by itself
    /// (`isRecording` turns false; call `stop()` to complete the file).
    public func record(forDuration seconds: Double) throws(SessionError) {
        tap.stop(afterFrames: Int((seconds * input.configuration.sampleRate).rounded()))
        try record()
    }

    /// Stops taking audio until `resume()` (the meters go on).
    public func pause() { tap.pause() }

    /// Takes audio again after `pause()`.
    public func resume() { tap.record() }

    /// Stops the audio, completes the file and closes the device. Throws the failure that ended the
    /// recording early (a full disk), if any: the file then holds everything up to it.
    public func stop() throws(SessionError) {
        engine.stop()
        input.close()
        do { try tap.finish() } catch { throw .audioFile(error) }
    }

    /// Stops (as `stop()`) and removes the recorded files.
    public func deleteRecording() {
        engine.stop()
        input.close()
        tap.deleteFiles()
    }

    /// Whether audio is being taken into the file now.
    public var isRecording: Bool { tap.isRecording }
    /// Seconds recorded so far (pauses not counted).
    public var currentTime: Double { Double(tap.recordedFrameCount) / input.configuration.sampleRate }
    /// The sample rate of the recording.
    public var sampleRate: Double { input.configuration.sampleRate }
    /// The last meter window's RMS level of `channel` in dBFS (−160 … 0).
    public func averagePower(channel: Int) -> Float { meter.averagePower(channel: channel) }
    /// The last meter window's peak level of `channel` in dBFS (−160 … 0).
    public func peakPower(channel: Int) -> Float { meter.peakPower(channel: channel) }
    /// Every channel's levels for the last meter window, with held peaks and clip lights.
    public func meterReading() -> PowerMeter.Reading { meter.reading() }
    /// Capture overruns so far (audio the device could not hold while the thread was late).
    public var overrunCount: Int { input.overrunCount }
    /// Monitor underruns so far.
    public var underrunCount: Int { monitorOutput?.xrunCount ?? 0 }
    /// Frames lost because the disk did not keep up.
    public var droppedFrameCount: Int { tap.droppedFrameCount }
    /// The files written (one, or the parts when splitting).
    public var files: [String] { tap.files }
    /// What stopped the recording early, if anything did: the device went away, the disk is full.
    public var failure: SessionError? {
        if let error = input.failure ?? monitorOutput?.failure { return .device(error) }
        if let error = tap.failure { return .audioFile(error) }
        return nil
    }
    /// Seconds from a sound reaching the input to its being heard on the monitor, as measured by the
    /// devices' own accounts: when a recent frame entered the capture device
    /// (`AudioInputNode.captureTime(ofFrame:)`) and when the output plays it
    /// (`ALSAOutput.presentationTime(ofSampleTime:)`). Each read takes the current pair of
    /// accounts, and the figure is the steadiest of the last 32 pairs (a thread held up while
    /// reading a device makes its account late; see `MonitorLatencyEstimate`), so a UI that
    /// reads it on each refresh gets a truer one. Nil without a monitor, or before both have
    /// timed a frame.
    public var measuredMonitorLatency: Double? {
        guard let output = monitorOutput else { return nil }
        let frame = Int64(input.capturedFrameCount) - Int64(4 * input.configuration.periodFrames)
        return latencyEstimate.withLock { estimate in
            if frame > 0, let captureAccount = input.accountTime, let playbackAccount = output.accountTime,
                let captured = input.captureTime(ofFrame: frame),
                let played = output.presentationTime(ofSampleTime: frame)
            {
                estimate.add(
                    frame: frame, captured: captured, played: played,
                    accountTimes: (captureAccount, playbackAccount),
                    breaks: input.overrunCount + output.discontinuityCount, now: MIDITimestamp.now())
            }
            return estimate.seconds
        }
    }

    /// The most seconds from a sound reaching the input to its being heard on the monitor: the input's
    /// period plus the output's buffer (the last frame of a period waits only for the buffer). Nil
    /// without a monitor.
    public var monitorLatency: Double? {
        guard let output = monitorOutput else { return nil }
        return Double(input.configuration.periodFrames) / sampleRate + output.bufferLatency
    }
}
