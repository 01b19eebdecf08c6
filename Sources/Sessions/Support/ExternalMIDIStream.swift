import AudioGraph
import Dispatch
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A message on its way to an external destination, with the time it is to be heard.
struct TimedMIDIMessage {
    var message: MIDIMessage
    /// CLOCK_MONOTONIC nanoseconds (`MIDITimestamp`).
    var time: UInt64
    /// Which of the sink's destinations it goes to (the sink's own numbering).
    var tag: UInt16
}

/// What a render thread plays to an external MIDI destination (a network session, an ALSA
/// sequencer port), carried to a thread of its own: the render thread queues each message with
/// the engine's sample time of its frame (no allocation, no lock, no waiting); the sending thread
/// gives it the time that frame is heard, through `SampleClock`'s line through the output
/// device's accounts, and hands it on `lead` ahead of that time (nil: as soon as it is queued).
final class ExternalMIDIStream: @unchecked Sendable {
    private let queue = MIDIEventQueue(capacity: 8_192)
    private let engine: AudioEngine
    private let clock: (any AudioPresentationClock)?
    private let sampleRate: Double
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let clockKnown = Atomic<Bool>(false)

    /// Whether the device has told, eight times, when its frames are heard (messages are timed by
    /// the earliest of its accounts, not by a guess): a song's first notes are best started after
    /// that.
    var isClockKnown: Bool { clockKnown.load(ordering: .acquiring) }

    init(engine: AudioEngine, clock: (any AudioPresentationClock)?, sampleRate: Double) {
        self.engine = engine
        self.clock = clock
        self.sampleRate = sampleRate
    }

    /// Messages dropped because the queue was full (more than 8192 waiting).
    var droppedCount: Int { queue.droppedCount }

    /// Queues `message`, played at `frameOffset` into the quantum being rendered (render thread).
    func push(_ message: MIDIMessage, atFrameOffset frameOffset: Int, tag: UInt16 = 0) {
        queue.push(message, arrival: sampleTime(ofFrameOffset: frameOffset), source: tag)
    }

    /// Queues a SysEx message from its payload, copied without building an array (render thread).
    func pushSystemExclusive(_ payload: UnsafeBufferPointer<UInt8>, atFrameOffset frameOffset: Int, tag: UInt16 = 0) {
        queue.pushSystemExclusive(payload, arrival: sampleTime(ofFrameOffset: frameOffset), source: tag)
    }

    private func sampleTime(ofFrameOffset frameOffset: Int) -> UInt64 {
        UInt64(max(0, engine.currentSampleTime + Int64(max(0, frameOffset))))
    }

    /// Starts the sending thread: every millisecond (with `lead` nil, every eighth of the device's
    /// buffer), the messages due within `lead` (nil: all) go to `deliver`, oldest first, in one
    /// batch; `idle` runs on each pass (announcements).
    func start(
        name: String, lead: UInt64?, deliver: @escaping @Sendable ([TimedMIDIMessage]) -> Void,
        idle: (@Sendable () -> Void)? = nil
    ) throws(SessionError) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Messages sent when due are looked at every millisecond; those scheduled ahead need only
        // be handed over before their time: an eighth of the device's buffer (0.5 to 5 ms) leaves
        // the machine quieter (every wake-up counts on a small one).
        let buffer = clock?.bufferDuration ?? 0
        let pause = lead != nil ? 1_000 : UInt32(min(max(buffer / 8, 0.000_5), 0.005) * 1e6)
        let body = { [self] in
            var sampleClock = SampleClock(sampleRate: sampleRate)
            var firstWaiting: UInt64?
            while running.load(ordering: .acquiring) {
                sampleClock.update(engine: engine, clock: clock)
                clockKnown.store(sampleClock.accounts >= 8, ordering: .releasing)
                // Until the device has told when a frame is heard, the first messages wait (a
                // third of a second at most): a guess would time them worse.
                let now = MIDITimestamp.now()
                if clock != nil && sampleClock.isProvisional && queue.firstArrival != nil {
                    // (Once: when the wait ran out, the guess times what follows.)
                    firstWaiting = firstWaiting ?? now
                    if now - firstWaiting! < 300_000_000 {
                        idle?()
                        usleep(1_000)
                        continue
                    }
                } else if !sampleClock.isProvisional {
                    firstWaiting = nil
                }
                let batch = due(before: lead.map { now &+ $0 } ?? .max, clock: sampleClock)
                if !batch.isEmpty { deliver(batch) }
                idle?()
                usleep(pause)
            }
            // What is left: sent when due (a second at most) where messages go out on time, at
            // once where they are scheduled ahead.
            if let lead {
                let deadline = MIDITimestamp.now() + 1_000_000_000
                while queue.firstArrival != nil && MIDITimestamp.now() < deadline {
                    let batch = due(before: MIDITimestamp.now() &+ lead, clock: sampleClock)
                    if !batch.isEmpty { deliver(batch) }
                    usleep(1_000)
                }
            }
            let rest = due(before: .max, clock: sampleClock)
            if !rest.isEmpty { deliver(rest) }
            stopped.signal()
        }
        do { try SystemThread.detach(name: name, body) } catch {
            running.store(false, ordering: .releasing)
            throw .failed("cannot start the MIDI output thread (\(error))")
        }
    }

    /// Delivers what is queued (when due, a second at most, for messages sent when due; at once
    /// for those scheduled ahead), then stops the sending thread.
    func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
    }

    /// The messages queued whose time is before `limit`, in order.
    private func due(before limit: UInt64, clock: SampleClock) -> [TimedMIDIMessage] {
        var batch: [TimedMIDIMessage] = []
        while let sample = queue.firstArrival {
            let time = clock.time(ofSampleTime: Int64(sample))
            guard time <= limit else { break }
            if let (message, tag) = queue.withFirst({ event -> (MIDIMessage?, UInt16) in
                (
                    event.isSystemExclusive ? MIDIMessage.systemExclusive(Array(event.bytes)) : event.message,
                    event.source
                )
            }), let message {
                batch.append(TimedMIDIMessage(message: message, time: time, tag: tag))
            }
            queue.removeFirst()
        }
        return batch
    }
}

/// The time a frame of the engine's output is heard, as a line through the device's own
/// accounts (`AudioPresentationClock`). An account pairs a frame's place in the device with the
/// time it was read, and reading takes time: the clock is read after the device, so a thread
/// held up in between makes the account late, never early (by microseconds usually, by
/// milliseconds when the machine stalls). The line takes the earliest of the last 32 accounts (as
/// NTP takes the fastest round trip), which follows a device clock that drifts and ignores the
/// stalls, and starts over after a break in the stream. Without a device clock (or before its
/// first account) it guesses: now, plus the device's buffer, is when the frame being rendered is
/// heard.
struct SampleClock {
    let nanosecondsPerFrame: Double
    /// CLOCK_MONOTONIC nanoseconds at sample time 0, on the line.
    private(set) var offset: Double?
    /// Whether `offset` is a guess (no account from the device yet).
    private(set) var isProvisional = true
    private var lastAccount: Double?
    private var discontinuities = -1
    /// The last accounts, the earliest of which is the line's offset.
    private var recent = EarliestAccounts()
    /// The accounts the line has followed since it last started over.
    var accounts: Int { recent.count }

    init(sampleRate: Double) { nanosecondsPerFrame = 1e9 / sampleRate }

    mutating func update(engine: AudioEngine, clock: (any AudioPresentationClock)?) {
        let current = engine.currentSampleTime
        if let clock {
            if clock.discontinuityCount != discontinuities {
                discontinuities = clock.discontinuityCount
                startOver()
            }
            if current > 0, let played = clock.presentationTime(ofSampleTime: current - 1) {
                let account = Double(played) - Double(current - 1) * nanosecondsPerFrame
                guard account != lastAccount else { return }
                lastAccount = account
                // An account far from the line (20 ms: more than a stall) means the stream moved
                // without saying so: the line starts over.
                if let offset, !isProvisional, abs(account - offset) >= 20e6 { startOver() }
                recent.add(account)
                offset = recent.earliest
                isProvisional = false
                return
            }
        }
        guard isProvisional else { return }
        offset =
            Double(MIDITimestamp.now()) + max(0, clock?.bufferDuration ?? 0) * 1e9
            - Double(current) * nanosecondsPerFrame
    }

    private mutating func startOver() {
        offset = nil
        isProvisional = true
        recent.startOver()
    }

    /// When the frame at `sampleTime` is heard (CLOCK_MONOTONIC nanoseconds).
    func time(ofSampleTime sampleTime: Int64) -> UInt64 {
        let base = offset ?? Double(MIDITimestamp.now())
        return UInt64(max(0, base + Double(sampleTime) * nanosecondsPerFrame))
    }
}
