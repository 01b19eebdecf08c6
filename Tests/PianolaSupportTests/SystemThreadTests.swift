import CSystemThread
import Dispatch
import Synchronization
import Testing

@testable import PianolaSupport

#if canImport(Glibc)
    import Glibc
#endif

@Suite("SystemThread: one way to start a thread, a typed error where the system refuses one")
struct SystemThreadTests {
    @Test("a detached thread runs its body; a refused one throws the C library's reason and never runs it")
    func detachedAndRefused() throws {
        let ran = DispatchSemaphore(value: 0)
        try SystemThread.detach { ran.signal() }
        #expect(ran.wait(timeout: .now() + 10) == .success)

        // A stack larger than any address space: pthread_create cannot map it.
        let refused = DispatchSemaphore(value: 0)
        #expect(throws: POSIXReason.self) { try SystemThread.detach(stackSize: 1 << 62) { refused.signal() } }
        #expect(refused.wait(timeout: .now() + 0.2) == .timedOut, "the body never runs")

        // The tests' stand-in for a refusal, on this task only.
        SystemThread.$refusesThreads.withValue(true) {
            #expect(throws: POSIXReason.self) { try SystemThread.detach { refused.signal() } }
            #expect(throws: POSIXReason.self) { try SystemThread(scheduling: .audio) { refused.signal() } }
        }
        #expect(refused.wait(timeout: .now() + 0.2) == .timedOut)
    }

    @Test("join waits for the body; the kernel id is the thread's own, known when init returns")
    func joinAndKernelID() throws {
        let seen = Atomic<Int32>(0)
        let finished = Atomic<Bool>(false)
        let thread = try SystemThread {
            seen.store(pianola_current_thread_id(), ordering: .relaxed)
            usleep(50_000)
            finished.store(true, ordering: .relaxed)
        }
        #expect(thread.kernelID > 0)
        #expect(thread.kernelID != pianola_current_thread_id())
        thread.join()
        let (done, id) = (finished.load(ordering: .relaxed), seen.load(ordering: .relaxed))
        #expect(done, "join returned before the body did")
        #expect(id == thread.kernelID)
        thread.join()  // a second join returns at once
    }

    @Test("real-time scheduling where asked: the policy the thread runs under is the one reported")
    func realTimeWhereAsked() throws {
        for scheduling in [SystemThread.Scheduling.normal, .audio, .realTimeIfPermitted(priority: 500)] {
            let policy = Atomic<Int32>(-1)
            let thread = try SystemThread(scheduling: scheduling) {
                var current: Int32 = 0
                var parameters = sched_param()
                pthread_getschedparam(pthread_self(), &current, &parameters)
                policy.store(current, ordering: .relaxed)
            }
            thread.join()
            let fifo = policy.load(ordering: .relaxed) == Int32(SCHED_FIFO)
            let reported = thread.isRealTimeScheduled
            #expect(fifo == reported, "\(scheduling)")
            // A priority no policy takes (500) runs at normal priority rather than failing.
            if scheduling != .audio { #expect(!thread.isRealTimeScheduled, "\(scheduling)") }
        }
    }
}
