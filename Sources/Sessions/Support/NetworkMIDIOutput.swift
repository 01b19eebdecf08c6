import AudioGraph
import Foundation
import MIDICore
import MIDIIO
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Sends what a player plays to network MIDI sessions (RTP-MIDI, with recovery journals), each
/// message when the output plays the frame it was placed at: the render thread stamps it with
/// that frame's presentation time and queues it (no allocation, no lock, no waiting), and a
/// thread of its own sends it when that time comes, so that a peer hears the song with the
/// sound Pianola makes.
///
/// Like `MIDIChannelRouter`, it is a destination for a player (or for one track of a sequence,
/// `MusicSequence.Track.destination`), not attached to an engine:
///
/// ```swift
/// let network = RTPMIDIListener(host: "0.0.0.0", port: 5004)
/// let output = NetworkMIDIOutput(listener: network, engine: engine, clock: device, sampleRate: 48_000)
/// try network.start()
/// try network.invite(host: "studio-mac.local", port: 5004)
/// output.start()
/// sequence.tracks[1].destination = output   // the bass to the Mac, the rest to the sampler
/// ```
public final class NetworkMIDIOutput: AudioNode, MIDIReceivingNode, @unchecked Sendable {
    /// The sessions the messages go to.
    public let listener: RTPMIDIListener
    private let engine: AudioEngine
    private let clock: (any AudioPresentationClock)?
    private let sampleRate: Double
    private let queue = MIDIEventQueue(capacity: 8_192)
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)

    /// An output to `listener`'s sessions of what `engine` renders, timed by `clock` (the
    /// engine's output device).
    public init(
        listener: RTPMIDIListener, engine: AudioEngine, clock: (any AudioPresentationClock)?, sampleRate: Double
    ) {
        self.listener = listener
        self.engine = engine
        self.clock = clock
        self.sampleRate = sampleRate
        super.init(name: "network MIDI out")
    }

    /// Messages dropped because the queue was full (more than 8192 waiting to be sent).
    public var droppedCount: Int { queue.droppedCount }

    /// Queues `message` for the time its frame is heard (render thread: no allocation, no lock).
    public func receive(_ message: MIDIMessage, atFrameOffset frameOffset: Int) {
        queue.push(message, arrival: time(ofFrameOffset: frameOffset))
    }

    /// Queues a SysEx message from its payload, copied without building an array (render thread).
    public func receiveSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int) {
        queue.pushSystemExclusive(payload, arrival: time(ofFrameOffset: frameOffset))
    }

    /// When the frame at `frameOffset` into the quantum being rendered is heard: the device's
    /// account of it, or (where the device knows only frames already written, as ALSA does)
    /// now plus its buffer plus the frame's place in the quantum.
    private func time(ofFrameOffset frameOffset: Int) -> UInt64 {
        let sampleTime = engine.currentSampleTime + Int64(frameOffset)
        if let time = clock?.presentationTime(ofSampleTime: sampleTime) { return time }
        let ahead = max(0, clock?.bufferDuration ?? 0) + Double(max(0, frameOffset)) / sampleRate
        return MIDITimestamp.now() + UInt64(ahead * 1e9)
    }

    /// Starts the sending thread (start the listener first).
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            while running.load(ordering: .acquiring) {
                sendDue(before: MIDITimestamp.now())
                usleep(1_000)
            }
            sendDue(before: .max)  // what is left, at once
            stopped.signal()
        }
        thread.name = "pianola network MIDI out"
        thread.start()
    }

    /// Sends what is queued (at once), then stops the sending thread; the sessions stay open.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
    }

    /// Sends every message due before `time`, together.
    private func sendDue(before time: UInt64) {
        var batch: [MIDIMessage] = []
        while let due = queue.firstArrival, due <= time {
            if let message = queue.withFirst({ event in
                event.isSystemExclusive ? MIDIMessage.systemExclusive(Array(event.bytes)) : event.message
            }) ?? nil {
                batch.append(message)
            }
            queue.removeFirst()
        }
        listener.send(batch)
    }
}
