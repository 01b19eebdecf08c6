import CSystemThread

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of Pianola's own, not a pool's: every thread Pianola starts starts here (the outputs'
/// and clocks' audio threads, the recorders' disk writers, MIDI input and output, render lanes,
/// batch and `info --jobs` workers, the transport follower). Each gets the stack size asked for,
/// real-time scheduling where asked and permitted, its kernel id, and a typed error when the
/// system refuses it. (Foundation's `Thread` cannot be joined, and an audio thread must not be a
/// task: a task may move between threads and share its thread with others.)
///
/// ```swift
/// let audio = try SystemThread(scheduling: .audio) { [self] in run() }
/// print(audio.isRealTimeScheduled, audio.kernelID)
/// audio.join()
/// ```
///
/// `join()` waits for the body to return. A handle dropped without a join detaches its thread,
/// which runs on to the end of its body (`detach(stackSize:_:)` says so where that is the intent).
package final class SystemThread: @unchecked Sendable {
    /// How the thread is scheduled.
    package enum Scheduling: Sendable, Equatable {
        /// The system's normal time sharing (SCHED_OTHER), inherited from the caller.
        case normal
        /// SCHED_FIFO at `priority` (1…99) where the system permits it (root, CAP_SYS_NICE or an
        /// `rtprio` limit); normal time sharing where it does not: `isRealTimeScheduled` tells which.
        case realTimeIfPermitted(priority: Int32)

        /// What an audio thread asks for: SCHED_FIFO at 70 where permitted, above the desktop's
        /// threads and JACK's clients, below the kernel's interrupt threads.
        package static let audio = Scheduling.realTimeIfPermitted(priority: 70)
    }

    /// For tests of what callers do without a thread: while bound to true (`$refusesThreads.withValue`,
    /// on the calling task only), starting a thread fails as when the system refuses one.
    @TaskLocal package static var refusesThreads = false

    /// Whether the thread runs under SCHED_FIFO (false: normal priority, not asked for or not
    /// permitted here).
    package let isRealTimeScheduled: Bool
    /// The thread's kernel id (`gettid()`): what `top -H`, `chrt -p` and profilers show.
    package let kernelID: Int32

    private var handle: pthread_t?

    /// Starts `body` on a new thread with a stack of `stackSize` bytes (64 KiB at least) and the
    /// scheduling asked for, named `name` where given (15 bytes of it: what `top -H` shows), and
    /// returns once the thread runs (its kernel id known).
    ///
    /// The closure runs on the new thread while the caller goes on: what it captures must be safe
    /// to use from there (atomics, locks, or state the caller no longer touches).
    ///
    /// - Throws: the C library's reason when the system refuses the thread (`EAGAIN`: too many
    ///   threads, or no memory for the stack); `body` is then not run.
    package init(
        name: String? = nil, stackSize: Int = 1 << 20, scheduling: Scheduling = .normal,
        _ body: @escaping () -> Void
    ) throws(POSIXReason) {
        if Self.refusesThreads { throw POSIXReason(EAGAIN) }
        let start = Start(name: name, body)
        var thread = pthread_t()
        var realTime = false
        var status = EPERM
        if case .realTimeIfPermitted(let priority) = scheduling {
            status = Self.create(&thread, stackSize: stackSize, fifoPriority: priority, start)
            realTime = status == 0
        }
        // Refused real-time scheduling (EPERM; EINVAL for a priority out of range): time sharing.
        if status == EPERM || status == EINVAL {
            status = Self.create(&thread, stackSize: stackSize, fifoPriority: nil, start)
        }
        guard status == 0 else { throw POSIXReason(status) }
        start.started.wait()
        handle = thread
        isRealTimeScheduled = realTime
        kernelID = start.kernelID
    }

    /// Starts `body` on a thread that nobody joins (as `init`, the handle dropped at once).
    ///
    /// - Throws: the C library's reason when the system refuses the thread; `body` is then not run.
    package static func detach(
        name: String? = nil, stackSize: Int = 1 << 20, _ body: @escaping () -> Void
    ) throws(POSIXReason) {
        _ = try SystemThread(name: name, stackSize: stackSize, body)
    }

    deinit {
        if let handle { pthread_detach(handle) }
    }

    /// Waits for the body to return. Call it from one thread (the one that owns the handle); later
    /// calls return at once. A thread must not join itself.
    package func join() {
        guard let thread = handle else { return }
        handle = nil
        pthread_join(thread, nil)
    }

    /// `pthread_create` with a stack of `stackSize` bytes and, given `fifoPriority`, SCHED_FIFO at
    /// that priority (set through the attributes, so the thread never runs a moment without it);
    /// the C library's status.
    private static func create(
        _ thread: inout pthread_t, stackSize: Int, fifoPriority: Int32?, _ start: Start
    ) -> Int32 {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, max(stackSize, 1 << 16))
        if let fifoPriority {
            pthread_attr_setinheritsched(&attributes, Int32(PTHREAD_EXPLICIT_SCHED))
            pthread_attr_setschedpolicy(&attributes, Int32(SCHED_FIFO))
            var parameters = sched_param()
            parameters.sched_priority = fifoPriority
            pthread_attr_setschedparam(&attributes, &parameters)
        }
        let context = Unmanaged.passRetained(start).toOpaque()
        let status = pthread_create(
            &thread, &attributes,
            { context in
                let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
                start.kernelID = pianola_current_thread_id()
                if let name = start.name { pianola_set_thread_name(name) }
                let body = start.body
                start.started.signal()
                body()
                return nil
            }, context)
        if status != 0 { Unmanaged<Start>.fromOpaque(context).release() }
        return status
    }

    /// What the new thread is handed: its name and body, and the signal that it runs (with its id).
    private final class Start: @unchecked Sendable {
        let name: String?
        let body: () -> Void
        var kernelID: Int32 = 0
        let started = Semaphore()
        init(name: String?, _ body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }
}

/// A POSIX semaphore (the count starts at 0), for one thread to wait until another signals.
package final class Semaphore: @unchecked Sendable {
    private let semaphore = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)

    package init() { sem_init(semaphore, 0, 0) }

    deinit {
        sem_destroy(semaphore)
        semaphore.deallocate()
    }

    /// Adds one to the count, waking a waiter.
    package func signal() { sem_post(semaphore) }

    /// Waits until the count is above zero, then takes one (interrupted waits go on waiting).
    package func wait() {
        while sem_wait(semaphore) != 0 && errno == EINTR {}
    }
}
