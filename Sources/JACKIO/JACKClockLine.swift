import AudioGraph
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// When a JACK client's frames are heard: a line through the starts of its process cycles,
/// written by the process thread, read by any thread.
///
/// The callback runs when the server wakes it, which is late when the machine is busy, never
/// early: each cycle's start, less the frames rendered before it, is an account of the line, and
/// the line is the earliest of the last 32 (`EarliestAccounts`). An xrun or a new period moves
/// frames against time (the server starts its clock again), and so does a cycle that starts 20 ms
/// or more after the line without one: the line starts over, and its epoch counts the
/// start-overs. What a reader takes (the cycle's start, its sample time, the period, the epoch and
/// the accounts behind it) is published under a sequence lock, so it all comes from one cycle.
/// Neither side allocates, locks or blocks.
package final class JACKClockLine: @unchecked Sendable {
    /// A time read from the line, with the line it was read from.
    package struct Reading: Sendable, Equatable {
        /// CLOCK_MONOTONIC nanoseconds.
        package var time: UInt64
        /// The line's start-overs before it.
        package var epoch: Int
        /// The cycles the line had followed since its last start-over.
        package var accounts: Int
    }

    private let nanosecondsPerFrame: Double
    // Odd while being written.
    private let version = Atomic<Int>(0)
    private let cycleTime = Atomic<UInt64>(0)
    private let cycleSample = Atomic<Int64>(0)
    private let period = Atomic<Int>(0)
    private let epoch = Atomic<Int>(0)
    private let accounts = Atomic<Int>(0)
    // The process thread's own (the writer's; readers see only the atomics above).
    private var lineAccounts = EarliestAccounts()
    private var stream = (xruns: -1, period: 0)
    private var lineEpoch = 0

    package init(sampleRate: Double) { nanosecondsPerFrame = 1e9 / sampleRate }

    /// Takes a cycle that starts at sample time `sample`, with the stream's xruns so far and its
    /// period (process thread).
    package func publishCycle(sample: Int64, xruns: Int, periodFrames: Int) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        publishCycle(
            sample: sample, xruns: xruns, periodFrames: periodFrames,
            now: Double(now.tv_sec) * 1e9 + Double(now.tv_nsec))
    }

    /// The same, with the time the callback woke (CLOCK_MONOTONIC nanoseconds) given.
    package func publishCycle(sample: Int64, xruns: Int, periodFrames: Int, now: Double) {
        let account = now - Double(sample) * nanosecondsPerFrame
        if (xruns, periodFrames) != stream {
            stream = (xruns, periodFrames)
            startOver()
        } else if let line = lineAccounts.earliest, account - line >= 20e6 {
            // (An earlier account needs no start-over: it is the new earliest.)
            startOver()
        }
        lineAccounts.add(account)
        let time = lineAccounts.earliest! + Double(sample) * nanosecondsPerFrame
        let current = version.load(ordering: .relaxed)
        version.store(current + 1, ordering: .sequentiallyConsistent)
        cycleTime.store(UInt64(max(0, time)), ordering: .sequentiallyConsistent)
        cycleSample.store(sample, ordering: .sequentiallyConsistent)
        period.store(periodFrames, ordering: .sequentiallyConsistent)
        epoch.store(lineEpoch, ordering: .sequentiallyConsistent)
        accounts.store(lineAccounts.count, ordering: .sequentiallyConsistent)
        version.store(current + 2, ordering: .sequentiallyConsistent)
    }

    private func startOver() {
        lineAccounts.startOver()
        lineEpoch += 1
    }

    /// When the frame rendered at `sampleTime` is heard: a cycle renders what the server plays
    /// from the next one on, so a period after the cycle's start, plus the frame's place in it.
    /// Nil before the first cycle. Safe on the audio thread.
    package func reading(ofSampleTime sampleTime: Int64) -> Reading? {
        while true {
            let before = version.load(ordering: .sequentiallyConsistent)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let time = cycleTime.load(ordering: .sequentiallyConsistent)
            let start = cycleSample.load(ordering: .sequentiallyConsistent)
            let frames = period.load(ordering: .sequentiallyConsistent)
            let line = epoch.load(ordering: .sequentiallyConsistent)
            let count = accounts.load(ordering: .sequentiallyConsistent)
            guard version.load(ordering: .sequentiallyConsistent) == before else { continue }
            let offset = Double(sampleTime - start + Int64(frames)) * nanosecondsPerFrame
            return Reading(
                time: UInt64(max(0, Int64(time) + Int64(offset.rounded()))), epoch: line, accounts: count)
        }
    }
}
