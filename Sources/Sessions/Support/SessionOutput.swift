import ALSAIO
import AudioFiles
import AudioGraph
import JACKIO
import Sampler

/// What a session plays through: an ALSA device (`ALSAOutput`), a JACK client (`JACKOutput`), or
/// no device, the clock keeping time (`ClockOutput`: nothing is to be heard).
public protocol SessionOutput: AudioOutputDevice {
    /// The rate the engine renders at: the device's, or the JACK server's.
    var sampleRate: Double { get }
    /// The channels (ports) the engine's output has.
    var channelCount: Int { get }
    /// Underruns so far (ALSA's recovered underruns, the xruns the JACK server reports).
    var xrunCount: Int { get }
    /// The latency the output's buffer adds, in seconds.
    var bufferLatency: Double { get }
    /// Frames per period (each render).
    var periodFrames: Int { get }
    /// Periods in the buffer (JACK: 1, the server's own buffering is not the client's to know).
    var periodCount: Int { get }
    /// Whether the thread that renders has real-time scheduling (ALSA: Pianola's audio thread
    /// got SCHED_FIFO; JACK: the server schedules its process thread itself).
    var isRealTimeScheduled: Bool { get }
    /// Whether the stream runs in real time (ALSA: the device paces it, or the clock does for a
    /// `null` device with `pacesUnpacedDevice`; false for a bare `null` device, whose thread is then
    /// not given real-time scheduling. JACK: the server's driver paces it. No device: the clock).
    var isPaced: Bool { get }
    /// Why the stream stopped on its own (a device lost, a server gone), if it did.
    var streamFailure: (any Error)? { get }
    /// Stops and lets go of the device or client; closing twice is harmless.
    func close()
    /// Whether the device or client is still open (until `close()`).
    var isOpen: Bool { get }
}

extension ALSAOutput: SessionOutput {
    public var streamFailure: (any Error)? { failure }
}

extension ClockOutput: SessionOutput {
    /// True: the monotonic clock paces it.
    public var isPaced: Bool { true }
    /// Nil: with no device, nothing can fail.
    public var streamFailure: (any Error)? { nil }
}

extension JACKOutput: SessionOutput {
    /// True: JACK runs the process callback on its own thread, with the server's priority.
    public var isRealTimeScheduled: Bool { true }
    /// True: the server's driver paces the process callback (in freewheel mode it runs as fast as
    /// it can, by the server's choice).
    public var isPaced: Bool { true }
    public var streamFailure: (any Error)? { failure }
}

extension AudioEngine {
    /// A session's output: the JACK client it opened first, or else the ALSA `device` opened now
    /// with the channel routing's channel count, as the engine's output device; `withoutDevice`
    /// (nothing is to be heard): no device, the clock driving the engine with `device`'s rate and
    /// buffer (`ClockOutput`).
    func sessionOutput(
        jack: JACKOutput?, device: ALSAOutput.Configuration, routing: ChannelRouting?, withoutDevice: Bool = false
    ) throws(ALSAPCMError) -> any SessionOutput {
        if let jack { return jack }
        let device = RoutedSynthesis.device(device, for: routing)
        if withoutDevice { return driveFromClock(device) }
        return try connectOutput(toDevice: device)
    }

    /// Lets go of a session's output when set-up fails: the JACK client opened first closed, and
    /// the engine and its device no longer holding each other.
    func releaseOutput(_ jack: JACKOutput?) {
        jack?.close()
        outputDevice = nil
    }

    /// A sampler playing `soundFonts` at `sampleRate`, attached to the engine.
    func attachedSampler(
        soundFonts: [String], settings: SamplerNode.Settings, sampleRate: Double
    ) throws(SessionError) -> SamplerNode {
        let sampler = try SamplerNode.loaded(soundFonts: soundFonts, settings: settings, sampleRate: sampleRate)
        do { try attach(sampler) } catch { throw .graph(error) }
        return sampler
    }

    /// Opens a JACK client playing this engine (`configuration.channelCount` ports) and makes
    /// it the engine's output device, replacing (and stopping) any device it had.
    @discardableResult
    public func connectOutput(toJACK configuration: JACKOutput.Configuration) throws(JACKError) -> JACKOutput {
        outputDevice?.stop()
        outputDevice = nil
        let output = try JACKOutput(engine: self, configuration: configuration)
        outputDevice = output
        return output
    }
}
