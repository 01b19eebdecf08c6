import Dispatch
import FoundationEssentials
import MIDICore
import PianolaSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A lane rendered ahead on its own thread into a small ring of chunks. The consumer takes the
/// chunks in order with `nextChunk()` and hands each back with `releaseChunk()`. When the system
/// refuses the thread, the lane renders each chunk on the consumer's thread as it is asked for:
/// the same audio, without the overlap.
final class LaneWorker: @unchecked Sendable {
    private let lane: RenderLane
    private let slots: [RenderChunk]
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private var consumed = 0
    private var started = false
    /// Whether the lane renders on the consumer's thread (the system refused the worker's).
    private var rendersOnDemand = false

    init(lane: RenderLane, quantumFrames: Int, quantumCount: Int, slotCount: Int = 3) {
        self.lane = lane
        slots = (0..<slotCount).map { _ in RenderChunk(quantumFrames: quantumFrames, quantumCount: quantumCount) }
        // Counted up rather than created at slotCount: libdispatch traps when a semaphore is
        // freed below the value it was created with.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<slotCount { free.signal() }
    }

    func start() {
        started = true
        // A thread of its own, not libdispatch's pool: the worker blocks between chunks, and a
        // pool as small as the machine's cores (which Swift concurrency's tasks share on Linux)
        // could run out of threads with several lanes, and never render the chunk awaited.
        do throws(POSIXReason) { try SystemThread.detach { self.run() } } catch {
            started = false
            rendersOnDemand = true
        }
    }

    private func run() {
        var produced = 0
        while true {
            free.wait()
            if stopping.load(ordering: .acquiring) { break }
            lane.render(into: slots[produced % slots.count])
            produced += 1
            filled.signal()
        }
        finished.signal()
    }

    /// The next chunk in song order (waits until the worker has rendered it, or renders it now
    /// without a worker thread).
    func nextChunk() -> RenderChunk {
        if rendersOnDemand {
            lane.render(into: slots[consumed % slots.count])
        } else {
            filled.wait()
        }
        return slots[consumed % slots.count]
    }

    /// Gives the chunk from `nextChunk()` back to the worker to render into.
    func releaseChunk() {
        consumed += 1
        if !rendersOnDemand { free.signal() }
    }

    /// Stops the worker after the chunk it is rendering, and waits for it.
    func stop() {
        guard started else { return }
        started = false
        stopping.store(true, ordering: .releasing)
        free.signal()
        finished.wait()
    }
}
