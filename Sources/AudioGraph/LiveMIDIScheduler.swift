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
/// same latency (delay plus the output buffer), wherever it arrives inside a period.
///
/// The envelope falls at once when a quantum renders earlier than any before (that keeps events
/// off rendered frames) but rises only as fast as a device clock can drift against the system's
/// (0.2 ms per second), towards the minimum of the last second: a second in which the thread
/// happened to wake late everywhere (common on a loaded or virtual machine) must not move notes
/// against each other. After an underrun (the output's `discontinuityCount`, or the minimum of a
/// whole second more than 10 ms above the envelope) the map is learned anew.
///
/// A stream that starts, or resumes after a break, renders quanta back to back until its buffer
/// is full and only then plays: its first quanta's lateness is up to a buffer above the map it
/// will settle on, and would place a note that arrived during the break at once (sooner than
/// the buffer's latency after its arrival) instead of where it keeps the latency. Until a whole
/// buffer (the presentation clock's `bufferDuration`) is rendered again, the map is lowered by the
/// part of the buffer not refilled yet: as it stands once the buffer is full.
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

    /// The output's clock: with it, each note's latency is measured (`noteLatencies`). Set it
    /// before the stream starts (AudioIO's `ALSAOutput` is one).
    public var presentationClock: (any AudioPresentationClock)?
    private static let latencyCapacity = 1 << 17
    private let latencies = RealTimeBuffer<Float>(capacity: LiveMIDIScheduler.latencyCapacity)
    private let latencyCount = Atomic<Int>(0)
    /// Notes placed but not yet timed: the output times a frame only once it has written it
    /// while playing (after a break, a frame written before the stream plays again has no time
    /// yet, and the time of the frames before the break is not its time). Resolved in order.
    private static let pendingMask = 4_095
    private let pendingArrivals = RealTimeBuffer<UInt64>(capacity: LiveMIDIScheduler.pendingMask + 1)
    private let pendingBlocks = RealTimeBuffer<Int64>(capacity: LiveMIDIScheduler.pendingMask + 1)
    private let pendingHead = Atomic<Int>(0)
    private let pendingTail = Atomic<Int>(0)

    /// Where each delivered message was placed (arrival → sample time), while `logsPlacements`:
    /// a single-producer ring the control thread drains (`takePlacements()`).
    private static let placementMask = 65_535
    private let placedArrivals = RealTimeBuffer<UInt64>(capacity: LiveMIDIScheduler.placementMask + 1)
    private let placedFrames = RealTimeBuffer<Int64>(capacity: LiveMIDIScheduler.placementMask + 1)
    private let placementHead = Atomic<Int>(0)
    private let placementTail = Atomic<Int>(0)
    private let placing = Atomic<Bool>(false)

    // Audio-thread state.
    private var anchor: UInt64 = 0
    private var hasAnchor = false
    private var envelope = 0.0
    private static let window = 1.0
    private static let windowMask = 16_383
    private let windowTimes = RealTimeBuffer<Double>(capacity: LiveMIDIScheduler.windowMask + 1)
    private let windowValues = RealTimeBuffer<Double>(capacity: LiveMIDIScheduler.windowMask + 1)
    private var windowStart = 0
    private var windowCount = 0
    private var lastSampleTime: Int64 = 0
    private var lastNow = 0.0
    private var relearnUntil = 0.0
    private var discontinuities = 0
    /// The sample time the stream (re)started at, until a whole buffer has been rendered since.
    private var refillStart: Int64?
    /// How fast the envelope may rise: 200 ppm, more than crystals drift.
    private static let maximumDrift = 0.000_2
    /// A rise of the whole last second's minimum this large is a break in the stream.
    private static let breakThreshold = 0.010

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

    /// Before each quantum (audio thread): moves the map from arrival times to frames on
    /// (`updateMap`), then hands the destination every queued message due before the quantum's
    /// end (`deliver`).
    public func willRender(frameCount: Int, at time: AudioTime) {
        if let clock = presentationClock { resolveLatencies(clock: clock) }
        let previousEnvelope = updateMap(frameCount: frameCount, at: time)
        deliver(from: time.sampleTime, to: time.sampleTime + Int64(frameCount), rate: time.sampleRate, previousEnvelope)
    }

    /// Takes this quantum's lateness (how far the clock is past the quantum's end) into the
    /// sliding minimum over the last second, and moves `envelope`, the map's offset, to it: at
    /// once when it falls, while the map is learnt again (a new stream, or one that broke off and
    /// resumed) or after a jump; else by at most the allowed drift; while the buffer refills,
    /// lower by what is still to fill. Returns the envelope before the move (a message it placed
    /// on time is not counted late).
    private func updateMap(frameCount: Int, at time: AudioTime) -> Double {
        let now = clock()
        let rate = time.sampleRate
        // A restarted stream (sample time going back) starts a new map.
        // Lateness is measured at the quantum's end: every frame before it is rendered by now.
        let renderedEnd = Double(time.sampleTime + Int64(frameCount)) / rate
        let breaks = presentationClock?.discontinuityCount ?? 0
        if !hasAnchor || time.sampleTime < lastSampleTime {
            anchor = now
            windowCount = 0
            hasAnchor = true
            relearnUntil = Self.window
            lastNow = 0
            refillStart = time.sampleTime
        }
        // The lower envelope over the last second: a sliding minimum (a monotonic queue in
        // preallocated storage). A window, not an all-time minimum, so that the map follows the
        // stream after an underrun (which shifts frames against time) and a drifting device clock.
        let nowSeconds = Double(Int64(bitPattern: now &- anchor)) / 1e9
        let lateness = nowSeconds - renderedEnd
        while windowCount > 0 && windowValues[(windowStart + windowCount - 1) & Self.windowMask] >= lateness {
            windowCount -= 1
        }
        if windowCount == Self.windowMask + 1 {
            windowStart = (windowStart + 1) & Self.windowMask
            windowCount -= 1
        }
        windowTimes[(windowStart + windowCount) & Self.windowMask] = nowSeconds
        windowValues[(windowStart + windowCount) & Self.windowMask] = lateness
        windowCount += 1
        while windowTimes[windowStart] < nowSeconds - Self.window {
            windowStart = (windowStart + 1) & Self.windowMask
            windowCount -= 1
        }
        if breaks != discontinuities {
            // The stream broke off and resumed: learn the map from this quantum on.
            discontinuities = breaks
            windowStart = (windowStart + windowCount - 1) & Self.windowMask
            windowCount = 1
            relearnUntil = nowSeconds + Self.window
            refillStart = time.sampleTime
        }
        let minimum = windowValues[windowStart]
        let previousEnvelope = envelope
        if nowSeconds < relearnUntil || minimum < envelope || minimum - envelope > Self.breakThreshold {
            envelope = minimum
        } else {
            envelope += min(minimum - envelope, Self.maximumDrift * max(0, nowSeconds - lastNow))
        }
        if let refillStart {
            // Refilling: the map as it will stand once the buffer is full (lower, if anything, by
            // the time the refill itself takes: a note then plays a little late, never early).
            let refilled = Double(time.sampleTime + Int64(frameCount) - refillStart) / rate
            let buffer = presentationClock?.bufferDuration ?? 0
            if refilled < buffer { envelope = minimum - (buffer - refilled) } else { self.refillStart = nil }
        }
        lastNow = nowSeconds
        lastSampleTime = time.sampleTime
        return previousEnvelope
    }

    /// Hands the destination every queued message whose frame is before `end`, the queues merged
    /// in time order, each at its offset in the quantum from `start` (a late one at 0, counted);
    /// notes their latencies and placements when asked for.
    private func deliver(from start: Int64, to end: Int64, rate: Double, _ previousEnvelope: Double) {
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
            // Late: its frame was rendered before it could be placed. (One the envelope's rise just
            // moved before `start` was still ahead under the previous map: it is on time.)
            if chosenFrame < start,
                let arrival = queues[chosen].firstArrival,
                frame(arrival: arrival, rate: rate, envelope: min(envelope, previousEnvelope)) < start
            {
                late.add(1, ordering: .relaxed)
            }
            let offset = Int(max(0, chosenFrame - start))
            let destination = self.destination
            let noteOn = queues[chosen].withFirst { event -> UInt64? in
                if event.isSystemExclusive {
                    destination.receiveSystemExclusive(event.bytes, atFrameOffset: offset)
                } else if let message = event.message {
                    destination.receive(message, atFrameOffset: offset)
                    if message.isNoteStart { return event.arrival }
                }
                return nil
            }
            if let arrival = noteOn ?? nil, presentationClock != nil {
                deferLatency(arrival: arrival, frame: start + Int64(offset))
            }
            if placing.load(ordering: .relaxed), let arrival = queues[chosen].firstArrival {
                logPlacement(arrival: arrival, frame: start + Int64(offset))
            }
            queues[chosen].removeFirst()
            delivered.add(1, ordering: .relaxed)
        }
    }

    /// Whether the scheduler logs where it places each message (`takePlacements()`): for a MIDI
    /// recording whose times are those the audio has them at (`pianola live --record-audio`).
    public var logsPlacements: Bool {
        get { placing.load(ordering: .relaxed) }
        set { placing.store(newValue, ordering: .relaxed) }
    }

    /// The placements logged since the last call, oldest first: each message's arrival stamp and the
    /// sample time it was placed at (control thread). The log holds 65 536; more between two calls
    /// are not logged.
    public func takePlacements() -> [(arrival: UInt64, sampleTime: Int64)] {
        let head = placementHead.load(ordering: .relaxed)
        let tail = placementTail.load(ordering: .acquiring)
        let taken = (head..<tail).map {
            (arrival: placedArrivals[$0 & Self.placementMask], sampleTime: placedFrames[$0 & Self.placementMask])
        }
        placementHead.store(tail, ordering: .releasing)
        return taken
    }

    private func logPlacement(arrival: UInt64, frame: Int64) {
        let tail = placementTail.load(ordering: .relaxed)
        guard tail - placementHead.load(ordering: .acquiring) <= Self.placementMask else { return }
        placedArrivals[tail & Self.placementMask] = arrival
        placedFrames[tail & Self.placementMask] = frame
        placementTail.store(tail + 1, ordering: .releasing)
    }

    /// Keeps a note placed at `frame` until the output has timed the first frame FluidSynth can
    /// start it on (its next 64-frame block). A full queue drops the note's latency, not the note.
    private func deferLatency(arrival: UInt64, frame: Int64) {
        let tail = pendingTail.load(ordering: .relaxed)
        guard tail - pendingHead.load(ordering: .acquiring) <= Self.pendingMask else { return }
        pendingArrivals[tail & Self.pendingMask] = arrival
        pendingBlocks[tail & Self.pendingMask] = (frame + 63) / 64 * 64
        pendingTail.store(tail + 1, ordering: .releasing)
    }

    /// Records the latency of every waiting note whose block the output has timed, in order.
    private func resolveLatencies(clock: any AudioPresentationClock) {
        var head = pendingHead.load(ordering: .relaxed)
        let tail = pendingTail.load(ordering: .relaxed)
        while head < tail, let played = clock.presentationTime(ofSampleTime: pendingBlocks[head & Self.pendingMask]) {
            let index = latencyCount.load(ordering: .relaxed)
            if index < Self.latencyCapacity {
                let arrival = pendingArrivals[head & Self.pendingMask]
                latencies[index] = Float(Double(Int64(bitPattern: played &- arrival)) / 1e6)
                latencyCount.store(index + 1, ordering: .releasing)
            }
            head += 1
        }
        pendingHead.store(head, ordering: .releasing)
    }

    /// Each note-on's latency so far, in milliseconds: from its arrival to the moment the output
    /// plays the frame it starts on (FluidSynth starts notes on 64-frame blocks), by the output's
    /// own account (frames written and `snd_pcm_delay`). Needs `presentationClock`; keeps the
    /// first 131 072 notes.
    public var noteLatencies: [Double] {
        let count = latencyCount.load(ordering: .acquiring)
        var result = (0..<count).map { Double(latencies[$0]) }
        // The last notes, timed since the last quantum (the stream may have stopped since).
        if let clock = presentationClock {
            for position in pendingHead.load(ordering: .acquiring)..<pendingTail.load(ordering: .acquiring) {
                guard let played = clock.presentationTime(ofSampleTime: pendingBlocks[position & Self.pendingMask])
                else { break }
                result.append(Double(Int64(bitPattern: played &- pendingArrivals[position & Self.pendingMask])) / 1e6)
            }
        }
        return result
    }

    /// The frame an event arriving at `arrival` is placed at.
    @inline(__always)
    private func frame(arrival: UInt64, rate: Double, envelope: Double? = nil) -> Int64 {
        let since = Double(Int64(bitPattern: arrival &- anchor) + delayNanoseconds) / 1e9
        return Int64(((since - (envelope ?? self.envelope)) * rate).rounded(.down))
    }
}
