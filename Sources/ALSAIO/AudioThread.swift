import PianolaSupport
import Synchronization

/// The audio thread of an output or a clock (`ALSAOutput`, `ClockOutput`, `AudioInputClock`): a
/// `SystemThread` asking for real-time scheduling where wanted, whose kernel id and scheduling any
/// thread may read while it runs.
final class AudioThread: Sendable {
    private let current = Mutex<SystemThread?>(nil)
    private let realTime = Atomic<Bool>(false)
    private let id = Atomic<Int32>(0)

    /// Starts `body` (SCHED_FIFO where `realTime` and permitted); a thread that ended by itself is
    /// joined first.
    ///
    /// - Throws: `ALSAPCMError.unsupportedConfiguration` naming `device` when the system refuses
    ///   the thread.
    func start(realTime wanted: Bool, device: String, _ body: @escaping () -> Void) throws(ALSAPCMError) {
        join()
        do {
            let thread = try SystemThread(scheduling: wanted ? .audio : .normal, body)
            realTime.store(thread.isRealTimeScheduled, ordering: .relaxed)
            id.store(thread.kernelID, ordering: .relaxed)
            current.withLock { $0 = thread }
        } catch {
            throw .unsupportedConfiguration(device: device, reason: "cannot start the audio thread (\(error))")
        }
    }

    /// Waits for the body to return (once it has been told to stop); whether a thread was
    /// running (false, and harmless, when none was).
    @discardableResult
    func join() -> Bool {
        let thread = current.withLock { thread -> SystemThread? in
            defer { thread = nil }
            return thread
        }
        thread?.join()
        return thread != nil
    }

    /// Whether the thread got SCHED_FIFO (known once `start` returned).
    var isRealTimeScheduled: Bool { realTime.load(ordering: .relaxed) }

    /// The thread's kernel id, once one has started.
    var kernelID: Int32? {
        let value = id.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }
}
