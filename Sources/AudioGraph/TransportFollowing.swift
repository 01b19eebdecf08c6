/// Something that plays along a transport an output device shares with other programs (a JACK
/// server's): the device tells it, on its audio thread, where the shared transport is at the
/// start of each cycle, and asks it whether it is ready before the transport rolls from a new
/// place. `MusicPlayer` is one (set its `followsTransport`).
///
/// Every requirement is called on the device's audio thread, before the engine renders the
/// cycle, and must keep its rules: no allocation, no lock, no blocking.
public protocol TransportFollowing: AnyObject, Sendable {
    /// The transport at the start of the cycle the engine renders next from `sampleTime`: rolling
    /// or not, and its place on the shared timeline in seconds (frames at the server's rate).
    func transportCycle(isRolling: Bool, seconds: Double, sampleTime: Int64)

    /// Whether the follower could roll from `seconds` now. The transport waits (for a while: a
    /// JACK server gives up after its sync timeout, two seconds by default) until every follower
    /// answers yes; a follower that is not ready starts getting ready, off the audio thread, and
    /// is asked again each cycle.
    func isReadyToRoll(from seconds: Double) -> Bool

    /// Where `seconds` on the timeline falls in the follower's music (bar, beat, tempo), for a
    /// device that publishes it to the others (a JACK timebase master); nil when it has no music.
    func musicalPosition(atSeconds seconds: Double) -> MusicalPosition?
}

extension TransportFollowing {
    /// No bar grid to publish.
    public func musicalPosition(atSeconds seconds: Double) -> MusicalPosition? { nil }
}

/// A place in a song's bar grid, as a transport's timebase publishes it (JACK's BBT fields).
public struct MusicalPosition: Hashable, Sendable {
    /// The bar, counted from 1.
    public var bar: Int
    /// The beat within the bar, counted from 1 (beats of `beatType`).
    public var beat: Int
    /// Ticks into the beat, 0 ..< `ticksPerBeat`.
    public var tick: Int
    /// Ticks from the start of the song to the start of this bar.
    public var barStartTick: Double
    /// Beats per bar: the time signature's upper number.
    public var beatsPerBar: Double
    /// The beat's note value: the time signature's lower number (4: quarter notes).
    public var beatType: Double
    /// Ticks per beat.
    public var ticksPerBeat: Double
    /// The tempo in beats of `beatType` per minute.
    public var beatsPerMinute: Double

    /// A position from its fields.
    public init(
        bar: Int, beat: Int, tick: Int, barStartTick: Double, beatsPerBar: Double, beatType: Double,
        ticksPerBeat: Double, beatsPerMinute: Double
    ) {
        self.bar = bar
        self.beat = beat
        self.tick = tick
        self.barStartTick = barStartTick
        self.beatsPerBar = beatsPerBar
        self.beatType = beatType
        self.ticksPerBeat = ticksPerBeat
        self.beatsPerMinute = beatsPerMinute
    }
}
