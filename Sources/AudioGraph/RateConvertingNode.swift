/// A node that takes in audio at another pace than it puts it out: a varispeed or a time-pitch
/// unit. The engine renders the nodes upstream of it (its input's "rate domain") for as many
/// frames as it asks for each quantum, so a varispeed at rate 1.5 pulls one and a half quanta
/// from its source for every quantum it plays.
///
/// Subclasses override `maximumInputFrameCount(forOutputFrames:)` (for sizing: the engine
/// prepares the upstream nodes and their buffers for it) and `inputFrameCount(forOutputFrames:)`
/// (render thread, before anything upstream renders: the input the next quantum needs), then
/// find that many frames in `inputs[0]` (its `frameLength`) when they render.
///
/// A node upstream of a rate-converting node renders only for it: a node that would feed it and
/// also another path (the output, or another rate-converting node) is refused when the graph is
/// compiled. Render observers (a `MusicPlayer`) still run once per engine quantum: a MIDI node
/// upstream is handed its events at offsets in engine frames, which it scales by
/// `renderedFrameCount / engineFrameCount` (the sampler does), so notes sound when they are due
/// and are then sped up or slowed down with the rest of the input.
open class RateConvertingNode: AudioNode, @unchecked Sendable {
    /// The clock (`AudioTime`) of the nodes upstream of this one: the engine's sample time when
    /// it first rendered (since the engine was made or reset), then advancing by the input frames
    /// rendered for it each quantum. A player upstream schedules in this time.
    public internal(set) var inputSampleTime: Int64 = 0
    /// Whether `inputSampleTime` has been set from the engine's clock.
    var isClockStarted = false

    /// The most input frames `inputFrameCount(forOutputFrames:)` may ask for when the output
    /// quantum is `outputFrames` long (by default: the same).
    open func maximumInputFrameCount(forOutputFrames outputFrames: Int) -> Int { outputFrames }

    /// Render thread, at the start of each quantum: the input frames the next `outputFrames`
    /// output frames need (the engine clamps it to 0…`maximumInputFrameCount`). By default: as
    /// many as it puts out.
    open func inputFrameCount(forOutputFrames outputFrames: Int) -> Int { outputFrames }

    open override var inputBusCount: Int { 1 }
}
