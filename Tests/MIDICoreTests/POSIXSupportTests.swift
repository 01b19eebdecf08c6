import Dispatch
import Testing

@testable import MIDICore

@Suite("POSIX support: a thread the system refuses is an error, not a trap")
struct POSIXSupportTests {
    @Test("startThread runs its body on a new thread, and throws the C library's reason when refused")
    func startThread() throws {
        let ran = DispatchSemaphore(value: 0)
        try POSIXSupport.startThread { ran.signal() }
        #expect(ran.wait(timeout: .now() + 10) == .success)

        // A stack larger than any address space: pthread_create cannot map it.
        let refused = DispatchSemaphore(value: 0)
        #expect(throws: POSIXReason.self) { try POSIXSupport.startThread(stackSize: 1 << 62) { refused.signal() } }
        #expect(refused.wait(timeout: .now() + 0.2) == .timedOut, "the body never runs")

        // The tests' stand-in for a refusal, on this task only.
        POSIXSupport.$refusesThreads.withValue(true) {
            #expect(throws: POSIXReason.self) { try POSIXSupport.startThread { refused.signal() } }
        }
        #expect(refused.wait(timeout: .now() + 0.2) == .timedOut)
    }
}
