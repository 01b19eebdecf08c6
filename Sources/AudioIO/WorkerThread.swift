#if canImport(Glibc)
    import Glibc
#endif

/// A joinable POSIX thread running a closure: the capture clock's audio thread and the disk
/// writers. (Foundation's `Thread` cannot be joined, and the audio thread must not be a task.)
final class WorkerThread {
    private final class Body {
        let run: () -> Void
        init(_ run: @escaping () -> Void) { self.run = run }
    }

    private var thread: pthread_t?

    /// Starts `body` on a new thread; nil if the system refused one.
    init?(_ body: @escaping () -> Void) {
        var handle = pthread_t()
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        let result = pthread_create(
            &handle, nil,
            { argument in
                Unmanaged<Body>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return nil
        }
        thread = handle
    }

    /// Waits for the closure to return (once; later calls return at once).
    func join() {
        guard let thread else { return }
        self.thread = nil
        pthread_join(thread, nil)
    }

    /// Asks for SCHED_FIFO at `priority` for the calling thread; whether it was granted.
    static func requestRealTimeScheduling(priority: Int32 = 70) -> Bool {
        var parameters = sched_param()
        parameters.sched_priority = priority
        return pthread_setschedparam(pthread_self(), Int32(SCHED_FIFO), &parameters) == 0
    }
}
