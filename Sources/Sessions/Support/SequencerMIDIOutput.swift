import AudioGraph
import Foundation
import MIDICore
import MIDIIO

/// Sends what a player plays to an ALSA sequencer destination (an external synthesizer, another
/// program's port) through an `ALSASequencerOutput`: the render thread queues each message with
/// its frame (no allocation, no lock, no waiting), and a thread of its own schedules it on the
/// output's sequencer queue for the time that frame is heard, as soon as it is rendered (a
/// buffer's length ahead). The kernel delivers it then: its timing does not depend on Pianola's
/// threads, and it goes with the sound Pianola makes.
///
/// A destination for a player or for one track of a sequence (`MusicSequence.Track.destination`),
/// not attached to an engine, as `MIDIChannelRouter` is:
///
/// ```swift
/// let sequencer = try ALSASequencerOutput()
/// let drums = try sequencer.connect("Drum Machine")
/// let output = SequencerMIDIOutput(output: sequencer, destination: drums.index, engine: engine,
///                                  clock: device, sampleRate: 48_000)
/// try output.start()
/// sequence.tracks[9].destination = output
/// ```
///
/// When the player pauses, stops or moves, the destination gets All Notes Off on every channel
/// (and, before a move's chase, Reset All Controllers), after the player's own Note Offs: nothing
/// is left sounding on the instrument; the output's `close()` resets it at the end.
public final class SequencerMIDIOutput: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// The sequencer client the messages leave from.
    public let output: ALSASequencerOutput
    /// The index of the output's destination they go to; nil: every subscriber of its port.
    public let destination: Int?
    private let stream: ExternalMIDIStream

    /// An output of what `engine` renders to `output`'s destination at index `destination` (nil:
    /// every subscriber of its port), timed by `clock` (the engine's output device).
    public init(
        output: ALSASequencerOutput, destination: Int?, engine: AudioEngine, clock: (any AudioPresentationClock)?,
        sampleRate: Double
    ) {
        self.output = output
        self.destination = destination
        stream = ExternalMIDIStream(engine: engine, clock: clock, sampleRate: sampleRate)
        super.init(name: "sequencer MIDI out")
    }

    /// Messages dropped because the queue was full (more than 8192 waiting to be scheduled).
    public var droppedCount: Int { stream.droppedCount }

    /// Queues `message` for the time its frame is heard (render thread).
    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        stream.push(message, atFrameOffset: frameOffset)
    }

    /// Queues a SysEx message from its payload, copied without building an array (render thread).
    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        stream.pushSystemExclusive(payload, atFrameOffset: frameOffset)
    }

    /// All Notes Off on every channel; before a move's chase, Reset All Controllers too
    /// (render thread).
    public func streamInterrupted(_ interruption: MIDIStreamInterruption, atFrameOffset frameOffset: Int) {
        for channel in UInt8(0)..<16 {
            stream.push(.controlChange(channel: channel, controller: 123, value: 0), atFrameOffset: frameOffset)
            if interruption == .relocated {
                stream.push(.controlChange(channel: channel, controller: 121, value: 0), atFrameOffset: frameOffset)
            }
        }
    }

    /// Whether the output device has told when its frames are heard (until then, messages would
    /// be timed by a guess).
    public var isClockKnown: Bool { stream.isClockKnown }

    /// Starts the scheduling thread.
    ///
    /// - Throws: `SessionError.failed` when the system refuses the thread.
    public func start() throws(SessionError) {
        let output = output
        let destination = destination
        try stream.start(
            name: "pianola sequencer MIDI out", lead: nil,
            deliver: { batch in
                for item in batch { output.send(item.message, at: item.time, to: destination) }
                output.flush()
            },
            idle: { output.maintain() })
    }

    /// Schedules what is queued and stops the thread (`ALSASequencerOutput.close()` then lets it
    /// be delivered and resets the destinations).
    public func stop() { stream.stop() }
}
