import MIDICore

/// A unit of audio processing in an `AudioEngine`: a source (no inputs), an effect (one input) or
/// a mixer (many inputs). Every node has one output bus.
///
/// Subclasses override `render(into:inputs:frameCount:time:)`, which runs on the render thread:
/// it must not allocate, lock, log or block. Everything a render needs is set up beforehand in
/// `prepare(format:maximumFrameCount:)`, which runs on the control thread.
open class AudioNode: @unchecked Sendable, CustomStringConvertible {
    /// A name for messages and diagnostics.
    public let name: String
    /// The format of the node's output, known once the engine is prepared.
    public internal(set) var outputFormat: AudioFormat?
    weak var engine: AudioEngine?
    /// The frames of the engine's quantum being rendered, set before the node renders. A node
    /// upstream of a `RateConvertingNode` renders another count (its `frameCount`); a node that
    /// takes MIDI at frame offsets in engine frames scales them by `frameCount / engineFrameCount`.
    public internal(set) var engineFrameCount = 0
    let identifier = NodeIdentifier()

    /// A node called `name` (for messages and `description`), attached to no engine. Subclasses call it from
    /// their initializers.
    public init(name: String) { self.name = name }

    /// How many input buses the node has (0 for sources). `Int.max` for mixers, which grow.
    open var inputBusCount: Int { 0 }

    /// The output channel count the node produces for given input formats (by default: stereo).
    open func outputChannelCount(inputChannelCounts: [Int]) -> Int { 2 }

    /// Whether the node accepts `format` on input `bus`. By default, mono or stereo at any rate
    /// (the engine checks the rate).
    open func accepts(_ format: AudioFormat, onBus bus: Int) -> Bool { (1...2).contains(format.channelCount) }

    /// Allocates whatever rendering needs. Called on the control thread, before the node renders
    /// and again if the engine's format or maximum frame count changes.
    open func prepare(format: AudioFormat, maximumFrameCount: Int) throws {}

    /// Forgets internal state (voices, delay lines, ramps). Control thread, engine stopped.
    open func reset() {}

    /// Renders `frameCount` frames into `output` (render thread).
    open func render(into output: AudioBuffer, inputs: RenderInputs, frameCount: Int, time: AudioTime) {
        output.clear(frames: frameCount)
    }

    public var description: String { name }

    /// Renders a one-input node outside an engine: `input` on bus 0, the result in `output`
    /// (offline effect chains, tests). Call `prepare(format:maximumFrameCount:)` first. Allocates
    /// nothing.
    public final func process(_ input: AudioBuffer, into output: AudioBuffer, frameCount: Int, time: AudioTime) {
        var slot: Unmanaged<AudioBuffer>? = Unmanaged.passUnretained(input)
        withUnsafePointer(to: &slot) { pointer in
            render(
                into: output, inputs: RenderInputs(buffers: UnsafeBufferPointer(start: pointer, count: 1)),
                frameCount: frameCount, time: time)
        }
    }
}

/// A node's identity, for graph bookkeeping.
final class NodeIdentifier: Hashable, @unchecked Sendable {
    static func == (lhs: NodeIdentifier, rhs: NodeIdentifier) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The rendered inputs of a node for one quantum, by bus. Valid only during `render`.
public struct RenderInputs {
    let buffers: UnsafeBufferPointer<Unmanaged<AudioBuffer>?>

    /// The number of input buses (connected or not).
    public var count: Int { buffers.count }

    /// The audio on `bus`, nil when nothing is connected to it.
    @inline(__always)
    public subscript(bus: Int) -> AudioBuffer? {
        guard bus < buffers.count, let buffer = buffers[bus] else { return nil }
        return buffer.takeUnretainedValue()
    }

    /// No inputs (for sources rendered outside a graph, e.g. in tests).
    public static var none: RenderInputs { RenderInputs(buffers: UnsafeBufferPointer(start: nil, count: 0)) }
}

/// Something the engine calls at the start of every render quantum, on the render thread,
/// before any node renders: the music player uses it to hand out the quantum's MIDI events.
public protocol RenderObserver: AnyObject, Sendable {
    /// Render thread; must not allocate, lock or block.
    func willRender(frameCount: Int, at time: AudioTime)
}

/// A node that takes MIDI events placed at frame offsets inside the next quantum (a sampler, an
/// external MIDI port). The sequencer knows only this protocol.
public protocol MIDIReceivingNode: AudioNode {
    /// Schedules `message` at `frameOffset` frames into the quantum about to render. Called on the
    /// render thread from a `RenderObserver`; offsets arrive in non-decreasing order.
    func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int)

    /// Schedules a SysEx message given as its payload (without F0 and F7) in memory the caller
    /// owns for the duration of the call. Live input uses it so the audio thread never builds a
    /// SysEx array. The default wraps the bytes in a `MIDIMessage` (which allocates); nodes that
    /// run on a real-time thread copy the bytes into storage of their own instead.
    func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int)

    /// Tells the destination that the stream it plays broke off at `frameOffset` (a player
    /// paused, stopped or moved), after the sounding notes were released and before the new
    /// place's state is chased. An external instrument is reset here (All Notes Off, and Reset All
    /// Controllers before a chase); the default does nothing (a sampler needs nothing more).
    /// Render thread: no allocation, no lock.
    func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int)

    /// Whether notes sent to the node can sound: false for a sampler with no SoundFont loaded,
    /// whose notes would play as silence. `AudioSequencer` refuses to start into a node that
    /// cannot (`AudioSequencerError.noSoundFont`). The default is true (an external instrument,
    /// a MIDI output). Control thread.
    var canPlayNotes: Bool { get }

    /// The voices sounding at the end of the last quantum rendered; the default, 0, is for a node
    /// that has none or cannot tell. `AudioSequencer.isFinished(includingTail:)` waits for them
    /// to end. Any thread.
    var activeVoiceCount: Int { get }
}

/// How a stream of MIDI to a destination broke off (`MIDIReceivingNode.streamInterrupted`).
public enum MIDIStreamInterruption: Sendable, Equatable {
    /// Paused, stopped or at the song's end: what sounds must stop; the controllers stay as they are.
    case stopped
    /// Moved to another place (a seek, a transport relocation): the controllers the new place
    /// does not set go back to rest, then the new place's state follows (the chase).
    case relocated
}

extension MIDIReceivingNode {
    public func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int) {}

    /// True: a node can play notes unless it says otherwise (a sampler without a SoundFont does).
    public var canPlayNotes: Bool { true }

    /// 0: a node has no voices to wait for unless it says otherwise (a sampler does).
    public var activeVoiceCount: Int { 0 }

    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        receive(.systemExclusive(Array(payload)), atFrameOffset: frameOffset)
    }
}
