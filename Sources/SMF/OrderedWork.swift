import Dispatch
import MIDICore
import PianolaSupport
import Synchronization

/// Runs `work` for the indices `0..<count` on up to `threads` threads and hands each result to
/// `deliver` on the calling thread, in index order, as soon as it and those before it are done.
/// At most `window` batches of results wait to be delivered at once, so memory stays bounded
/// however many items there are. Many items are claimed in batches of consecutive indices, so
/// that small items do not cost a thread hand-over each. With one thread (or one item)
/// everything runs on the calling thread; so it does when the system refuses every worker
/// thread (with some refused, the others do the work).
///
/// The work pool behind `pianola info --jobs`: it reads many files at once (each with
/// `MIDIFileSummary.read`) and reports them in the order given.
package func forEachInOrder<Output: Sendable>(
    count: Int, threads: Int, window: Int = 8, work: @escaping @Sendable (Int) -> Output,
    deliver: (Int, Output) -> Void
) {
    let threads = min(threads, count)
    guard threads > 1 else {
        for index in 0..<count { deliver(index, work(index)) }
        return
    }
    let window = max(window, threads)
    // Up to 16 items a batch once there are many: every thread still gets several batches.
    let batch = max(1, min(16, count / (threads * window)))
    let shared = OrderedSlots<Output>(capacity: window * batch, window: window)
    var started = 0
    for _ in 0..<threads {
        do throws(POSIXReason) {
            try SystemThread.detach {
                while true {
                    shared.free.wait()
                    guard let first = shared.claim(batch, below: count) else {
                        shared.free.signal()
                        return
                    }
                    for index in first..<min(first + batch, count) { shared.store(work(index), at: index) }
                }
            }
            started += 1
        } catch {
            break
        }
    }
    guard started > 0 else {
        for index in 0..<count { deliver(index, work(index)) }
        return
    }
    for index in 0..<count {
        let output = shared.take(index)
        // A batch's permit comes back once all of it has been taken.
        if (index + 1) % batch == 0 || index + 1 == count { shared.free.signal() }
        deliver(index, output)
    }
}

/// A ring of result slots: a slot is filled by the worker that claimed its index and emptied by
/// the delivering thread, each with its own semaphore; `free` holds one permit per batch that
/// may be in flight.
private final class OrderedSlots<Output: Sendable>: Sendable {
    let free: DispatchSemaphore
    private let next = Mutex(0)
    private let slots: Mutex<[Output?]>
    private let ready: [DispatchSemaphore]

    init(capacity: Int, window: Int) {
        free = DispatchSemaphore(value: window)
        slots = Mutex([Output?](repeating: nil, count: capacity))
        ready = (0..<capacity).map { _ in DispatchSemaphore(value: 0) }
    }

    /// The first of the next `batch` indices to work on, nil when all are taken.
    func claim(_ batch: Int, below count: Int) -> Int? {
        next.withLock { next in
            guard next < count else { return nil }
            defer { next += batch }
            return next
        }
    }

    func store(_ output: Output, at index: Int) {
        slots.withLock { $0[index % ready.count] = output }
        ready[index % ready.count].signal()
    }

    func take(_ index: Int) -> Output {
        ready[index % ready.count].wait()
        return slots.withLock { slots in
            defer { slots[index % ready.count] = nil }
            // `ready` was signalled by `store`, which filled the slot first.
            guard let output = slots[index % ready.count] else {
                preconditionFailure("result \(index) was signalled ready but never stored")
            }
            return output
        }
    }
}
