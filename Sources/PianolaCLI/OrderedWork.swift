import Dispatch
import MIDICore
import Synchronization

/// Runs `work` for the indices `0..<count` on up to `threads` threads and hands each result to
/// `deliver` on the calling thread, in index order, as soon as it and those before it are done.
/// At most `window` results wait to be delivered at once, so memory stays bounded however many
/// items there are. With one thread (or one item) everything runs on the calling thread.
func forEachInOrder<Output: Sendable>(
    count: Int, threads: Int, window: Int = 8, work: @escaping @Sendable (Int) -> Output,
    deliver: (Int, Output) -> Void
) {
    let threads = min(threads, count)
    guard threads > 1 else {
        for index in 0..<count { deliver(index, work(index)) }
        return
    }
    let window = max(window, threads)
    let shared = OrderedSlots<Output>(window: window)
    for _ in 0..<threads {
        POSIXSupport.startThread {
            while true {
                shared.free.wait()
                guard let index = shared.claim(below: count) else {
                    shared.free.signal()
                    return
                }
                shared.store(work(index), at: index)
            }
        }
    }
    for index in 0..<count {
        let output = shared.take(index)
        shared.free.signal()
        deliver(index, output)
    }
}

/// A ring of `window` result slots: a slot is filled by the worker that claimed its index and
/// emptied by the delivering thread, each with its own semaphore.
private final class OrderedSlots<Output: Sendable>: Sendable {
    let free: DispatchSemaphore
    private let next = Mutex(0)
    private let slots: Mutex<[Output?]>
    private let ready: [DispatchSemaphore]

    init(window: Int) {
        free = DispatchSemaphore(value: window)
        slots = Mutex([Output?](repeating: nil, count: window))
        ready = (0..<window).map { _ in DispatchSemaphore(value: 0) }
    }

    /// The next index to work on, nil when all are taken.
    func claim(below count: Int) -> Int? {
        next.withLock { next in
            guard next < count else { return nil }
            defer { next += 1 }
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
            return slots[index % ready.count]!
        }
    }
}
