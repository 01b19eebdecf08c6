import AudioGraph
import Foundation
import MIDICore
import MIDIIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sends what a player plays to network MIDI sessions (RTP-MIDI, with recovery journals), each
/// message when the output plays the frame it was placed at: the render thread queues it with
/// its frame (no allocation, no lock, no waiting), and a thread of its own gives it the time the
/// device plays that frame (a smoothed account of the device's clock) and sends it then, so
/// that a peer hears the song with the sound Pianola makes.
///
/// Like `MIDIChannelRouter`, it is a destination for a player (or for one track of a sequence,
/// `MusicSequence.Track.destination`), not attached to an engine:
///
/// ```swift
/// let network = RTPMIDIListener(host: "0.0.0.0", port: 5004)
/// let output = NetworkMIDIOutput(listener: network, engine: engine, clock: device, sampleRate: 48_000)
/// try network.start()
/// try network.invite(host: "studio-mac.local", port: 5004)
/// try output.start()
/// sequence.tracks[1].destination = output   // the bass to the Mac, the rest to the sampler
/// ```
public final class NetworkMIDIOutput: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// The sessions the messages go to.
    public let listener: RTPMIDIListener
    private let stream: ExternalMIDIStream

    /// An output to `listener`'s sessions of what `engine` renders, timed by `clock` (the
    /// engine's output device).
    public init(
        listener: RTPMIDIListener, engine: AudioEngine, clock: (any AudioPresentationClock)?, sampleRate: Double
    ) {
        self.listener = listener
        stream = ExternalMIDIStream(engine: engine, clock: clock, sampleRate: sampleRate)
        super.init(name: "network MIDI out")
    }

    /// Messages dropped because the queue was full (more than 8192 waiting to be sent).
    public var droppedCount: Int { stream.droppedCount }

    /// Queues `message` for the time its frame is heard (render thread: no allocation, no lock).
    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        stream.push(message, atFrameOffset: frameOffset)
    }

    /// Queues a SysEx message from its payload, copied without building an array (render thread).
    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        stream.pushSystemExclusive(payload, atFrameOffset: frameOffset)
    }

    /// Starts the sending thread (start the listener first): each message is sent when its time
    /// comes, those due together in one packet.
    ///
    /// - Throws: `SessionError.failed` when the system refuses the thread.
    public func start() throws(SessionError) {
        let listener = listener
        // The queue refused any message with a number out of range, so `send` has nothing to throw.
        try stream.start(name: "pianola network MIDI out", lead: 0) { batch in
            try? listener.send(batch.map(\.message))
        }
    }

    /// Sends what is queued (each message when due, a second at most), then stops the sending
    /// thread; the sessions stay open.
    public func stop() { stream.stop() }
}
