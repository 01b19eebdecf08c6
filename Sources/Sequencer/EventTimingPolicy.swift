import AudioGraph

/// How a `MusicPlayer` places its sequence's events in time when its own sample-accurate
/// scheduling is not what a destination wants: for instance another player's timing, for renders
/// that must match that player's sample for sample (the Sampler module's `FluidSynthPlayerTiming`).
///
/// The sequencer knows no synthesizer: a policy is given to the player by whoever knows the
/// destination. A policy plays from the start at the player's rate of 1; it does not take part in
/// loops, rate changes or seeks (the player's transport still pauses, mutes and transposes).
public protocol EventTimingPolicy: Sendable {
    /// Whether messages pass to the destination as the file has them (when the policy schedules
    /// the sequence): a note-on for a key that is already sounding goes as it is (the destination
    /// retriggers), and a note-off for a key that is not sounding is sent too. When false, the
    /// player pairs notes itself (a repeated key ends the previous note first; stray note-offs
    /// are dropped).
    var passesNotesThrough: Bool { get }

    /// The render-thread state for one player of `sequence`, or nil when the policy leaves this
    /// sequence to the player's own sample-accurate scheduling. (The sample rate is the render's:
    /// each quantum's `AudioTime` carries it.)
    func makeScheduler(for sequence: MusicSequence) -> (any EventScheduler)?
}

/// The render-thread half of an `EventTimingPolicy`, one per player.
///
/// Real-time code: `schedule` runs on the audio thread and must not allocate, lock, log or block.
public protocol EventScheduler: AnyObject {
    /// Delivers, through `playhead`, the events this policy places inside the quantum of
    /// `frameCount` frames starting at `time`.
    func schedule(frameCount: Int, at time: AudioTime, through playhead: SequencePlayhead) -> ScheduledQuantum
}

/// What an `EventScheduler` did with a quantum.
public struct ScheduledQuantum: Sendable, Hashable {
    /// The song position at the end of the quantum, in seconds.
    public var positionSeconds: Double
    /// Where in the quantum the song ended (its last event delivered), or nil while it goes on.
    public var endFrameOffset: Int?

    /// A quantum's outcome: the song position at its end, and where in it the song ended, if it did.
    public init(positionSeconds: Double, endFrameOffset: Int? = nil) {
        self.positionSeconds = positionSeconds
        self.endFrameOffset = endFrameOffset
    }
}
