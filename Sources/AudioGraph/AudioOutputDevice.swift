/// A device that plays an engine's output in real time by calling the engine's
/// `render(frameCount:into:)` from its own audio thread, one period at a time. AudioIO's
/// `ALSAOutput` is one; set it as the engine's `outputDevice` and call the engine's `start()`.
public protocol AudioOutputDevice: AnyObject, Sendable {
    /// Prepares the engine for the device's period and starts the audio thread.
    func start() throws
    /// Stops the audio thread and lets the device play out what it holds.
    func stop()
    /// Whether the audio thread is running.
    var isRunning: Bool { get }
}

/// A device that knows when a rendered frame reaches the listener.
public protocol AudioPresentationClock: AnyObject, Sendable {
    /// When the frame rendered at `sampleTime` is (or was) played, on `MIDITimestamp`'s clock
    /// (CLOCK_MONOTONIC, nanoseconds); nil until the device has written that frame while playing
    /// (before it starts, and after a break until it plays again: until then the frame's time is
    /// not known). Safe to call on the audio thread.
    func presentationTime(ofSampleTime sampleTime: Int64) -> UInt64?

    /// How many times the stream broke off and resumed (underruns, suspends): after each, frames
    /// stand in a new relation to time. Safe to call on the audio thread.
    var discontinuityCount: Int { get }

    /// How much audio the device holds when its buffer is full, in seconds: a stream starting,
    /// or resuming after a break, renders that much back to back before it plays. Safe to call on
    /// the audio thread.
    var bufferDuration: Double { get }
}

extension AudioPresentationClock {
    /// A device that never reports a break.
    public var discontinuityCount: Int { 0 }
    /// A device whose buffer is not known (0).
    public var bufferDuration: Double { 0 }
}
