import Dispatch
import JACKIO
import MIDICore
import Sequencer
import Synchronization

/// What JACK's MIDI input takes in, on its way from the process thread to the recorder: each
/// channel or system message (SysEx is not recorded) with its sample time and when it sounds. A
/// bounded lock-free ring (one producer, the process thread; one consumer, a drain every 20 ms
/// on a queue of its own), so recording never waits on the audio thread and never depends on
/// anyone polling the session.
///
/// When a message sounds comes from the output's clock line, the earliest of its cycles' starts
/// (`JACKClockLine`). In the first cycles that line rests on a few callbacks, often late ones
/// (3.8 ms seen on a busy machine): a message timed then waits in the ring, up to a second, until
/// the line has followed `matureAccounts` cycles, and is timed again on it, unless the line started
/// over in between (an xrun, a new period, a jump: then the first time stands).
final class JACKMIDILog: @unchecked Sendable {
    private struct Entry {
        var arrival: UInt64 = 0
        var sampleTime: Int64 = 0
        var bytes: (UInt8, UInt8, UInt8) = (0, 0, 0)
        /// The clock's line when it was timed, and whether it had followed enough cycles then.
        var epoch = 0
        var isTimedOnMatureLine = true
    }

    /// The cycles a line follows before its times stand.
    static let matureAccounts = 8
    private let clock: JACKClockLine

    private let capacity = 8_192
    private let entries: UnsafeMutablePointer<Entry>
    private let head = Atomic<Int>(0)
    private let tail = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let queue = DispatchQueue(label: "pianola.jack-midi-log")
    private var timer: DispatchSourceTimer?
    /// Where each message sounds (arrival, sample time), for aligning the MIDI file with the audio.
    let placements = Mutex<[(arrival: UInt64, sampleTime: Int64)]>([])

    init(clock: JACKClockLine) {
        self.clock = clock
        entries = .allocate(capacity: capacity)
        entries.initialize(repeating: Entry(), count: capacity)
    }

    deinit {
        stop()
        entries.deallocate()
    }

    /// Messages lost because the ring was full.
    var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Process thread: logs one JACK MIDI event (no allocation, no lock).
    func push(_ bytes: UnsafeBufferPointer<UInt8>, sampleTime: Int64) {
        guard let base = bytes.baseAddress, bytes.count > 0, base[0] != 0xF0,
            let reading = clock.reading(ofSampleTime: sampleTime)
        else { return }
        let write = head.load(ordering: .relaxed)
        guard write - tail.load(ordering: .acquiring) < capacity else {
            dropped.add(1, ordering: .relaxed)
            return
        }
        entries[write & (capacity - 1)] = Entry(
            arrival: reading.time, sampleTime: sampleTime,
            bytes: (base[0], bytes.count > 1 ? base[1] : 0, bytes.count > 2 ? base[2] : 0), epoch: reading.epoch,
            isTimedOnMatureLine: reading.accounts >= Self.matureAccounts)
        head.store(write + 1, ordering: .releasing)
    }

    /// Drains into `recorder` every 20 ms until `stop()`.
    func start(into recorder: MIDIRecorder) {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: .milliseconds(20))
        timer.setEventHandler { [weak self] in self?.drain(into: recorder) }
        timer.resume()
        self.timer = timer
    }

    /// Stops the drain; a last drain into `recorder` takes what is left.
    func stop(drainingInto recorder: MIDIRecorder? = nil) {
        timer?.cancel()
        timer = nil
        queue.sync {
            if let recorder { drain(into: recorder, waiting: false) }
        }
    }

    /// Records what the ring holds, in order; with `waiting`, stops at a message timed on a young
    /// line that may yet be timed better (for a second at most).
    private func drain(into recorder: MIDIRecorder, waiting: Bool = true) {
        var read = tail.load(ordering: .relaxed)
        let end = head.load(ordering: .acquiring)
        var placed: [(arrival: UInt64, sampleTime: Int64)] = []
        while read < end {
            var entry = entries[read & (capacity - 1)]
            if !entry.isTimedOnMatureLine, let now = clock.reading(ofSampleTime: entry.sampleTime),
                now.epoch == entry.epoch
            {
                if now.accounts >= Self.matureAccounts {
                    entry.arrival = now.time
                } else if waiting && MIDITimestamp.now() < entry.arrival &+ 1_000_000_000 {
                    break
                }
            }
            if let message = MIDIMessage(status: entry.bytes.0, data1: entry.bytes.1, data2: entry.bytes.2) {
                recorder.record(message, at: entry.arrival)
                placed.append((entry.arrival, entry.sampleTime))
            }
            read += 1
        }
        tail.store(read, ordering: .releasing)
        if !placed.isEmpty { placements.withLock { $0 += placed } }
    }
}
