import MIDICore
import Synchronization

/// Places live MIDI on the audio thread with a fixed delay, so that timing jitter is zero.
///
/// Input threads stamp each message on arrival (`MIDITimestamp`) and push it into their own
/// `MIDIEventQueue`. Before each quantum, the scheduler (a `RenderObserver` on the audio thread)
/// maps arrival times to frames and hands the messages that fall inside the quantum to its
/// destination at their frame offsets, in time order across all queues.
///
/// The map from time to frames is learned from the render itself: by the time a quantum is
/// rendered, every frame before its end exists, and the output pulls quanta as early as it can,
/// so the lower envelope of (render time − end frame's time) traces the stream's clock: at time
/// *t* the rendered frames reach at most the envelope's frame for *t*. An event arriving at *t* is
/// placed at the envelope's frame for *t + delay*, which is not rendered yet: every event gets the
/// same latency (delay plus the output buffer), wherever it arrives inside a period. The envelope
/// creeps up by 200 ppm, so it follows a device clock slower than the system's.
///
/// An event whose frame was already rendered (it arrived later than the delay allows, or before
/// the output started) plays at the start of the next quantum and is counted in `lateCount`.
public final class LiveMIDIScheduler: RenderObserver, @unchecked Sendable {
    /// The queues drained, one per input.
    public let queues: [MIDIEventQueue]
    /// Where the messages go (a sampler).
    public let destination: any MIDIReceivingNode
    /// The fixed delay between arrival and the frame an event is placed at, on top of the output
    /// buffer.
    public let delay: Duration

    private let delayNanoseconds: Int64
    private let clock: @Sendable () -> UInt64
    private let delivered = Atomic<Int>(0)
    private let late = Atomic<Int>(0)

    // Audio-thread state.
    private var anchor: UInt64 = 0
    private var hasAnchor = false
    private var envelope = 0.0
    private var lastNow: UInt64 = 0
    private var lastSampleTime: Int64 = 0
    private static let creep = 200e-6

    /// - Parameters:
    ///   - queues: the input queues to drain (each filled by one input thread).
    ///   - destination: the node that plays the messages.
    ///   - delay: the fixed delay; 1 ms absorbs the time between an arrival stamp and the queue.
    ///   - clock: the time now, on the arrival stamps' clock (`MIDITimestamp.now` unless a test or a
    ///     simulation drives time itself); read once per quantum on the audio thread.
    public init(
        queues: [MIDIEventQueue], destination: any MIDIReceivingNode, delay: Duration = .milliseconds(1),
        clock: @escaping @Sendable () -> UInt64 = MIDITimestamp.now
    ) {
        self.queues = queues
        self.destination = destination
        self.delay = delay
        self.clock = clock
        let components = delay.components
        delayNanoseconds = components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }

    /// Messages handed to the destination so far.
    public var deliveredCount: Int { delivered.load(ordering: .relaxed) }
    /// Messages that arrived too late for their frame (played at the start of the next quantum).
    public var lateCount: Int { late.load(ordering: .relaxed) }

    public func willRender(frameCount: Int, at time: AudioTime) {
        let now = clock()
        let rate = time.sampleRate
        // A restarted stream (sample time going back) starts a new map.
        // Lateness is measured at the quantum's end: every frame before it is rendered by now.
        let renderedEnd = Double(time.sampleTime + Int64(frameCount)) / rate
        if !hasAnchor || time.sampleTime < lastSampleTime {
            anchor = now
            envelope = -renderedEnd
            hasAnchor = true
        } else {
            let lateness = Double(Int64(bitPattern: now &- anchor)) / 1e9 - renderedEnd
            let creep = Double(now &- lastNow) / 1e9 * Self.creep
            envelope = min(envelope + creep, lateness)
        }
        lastNow = now
        lastSampleTime = time.sampleTime

        let start = time.sampleTime
        let end = start + Int64(frameCount)
        // Merge the queues in time order: repeatedly take the earliest due head.
        while true {
            var chosen = -1
            var chosenFrame = Int64.max
            for index in queues.indices {
                guard let arrival = queues[index].firstArrival else { continue }
                let frame = self.frame(arrival: arrival, rate: rate)
                if frame < end && frame < chosenFrame {
                    chosen = index
                    chosenFrame = frame
                }
            }
            guard chosen >= 0 else { break }
            if chosenFrame < start { late.add(1, ordering: .relaxed) }
            let offset = Int(max(0, chosenFrame - start))
            let destination = self.destination
            queues[chosen].withFirst { event in
                if event.isSystemExclusive {
                    destination.receiveSystemExclusive(event.bytes, atFrameOffset: offset)
                } else if let message = event.message {
                    destination.receive(message, atFrameOffset: offset)
                }
            }
            queues[chosen].removeFirst()
            delivered.add(1, ordering: .relaxed)
        }
    }

    /// The frame an event arriving at `arrival` is placed at.
    @inline(__always)
    private func frame(arrival: UInt64, rate: Double) -> Int64 {
        let since = Double(Int64(bitPattern: arrival &- anchor) + delayNanoseconds) / 1e9
        return Int64(((since - envelope) * rate).rounded(.down))
    }
}
