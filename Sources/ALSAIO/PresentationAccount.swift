import Synchronization

/// An output's last account of its timing, published by its audio thread after each period and
/// read by any thread (a sequence lock: no lock, no allocation, never blocking the writer): when
/// the period was handed over (CLOCK_MONOTONIC nanoseconds), the engine's sample time at its end,
/// and the frames the device still held then. It maps a frame to the time it is heard.
final class PresentationAccount: Sendable {
    // The version is odd while the account is being written.
    private let version = Atomic<Int>(0)
    private let takenAt = Atomic<UInt64>(0)
    private let lastFrame = Atomic<Int64>(0)
    private let held = Atomic<Int64>(0)

    /// Publishes an account (the audio thread): at `time`, the frames up to sample time `end` had
    /// been written, `delay` of them not yet played.
    func publish(time now: UInt64, end sampleTime: Int64, delay frames: Int64) {
        let current = version.load(ordering: .relaxed)
        version.store(current + 1, ordering: .sequentiallyConsistent)
        takenAt.store(now, ordering: .sequentiallyConsistent)
        lastFrame.store(sampleTime, ordering: .sequentiallyConsistent)
        held.store(frames, ordering: .sequentiallyConsistent)
        version.store(current + 2, ordering: .sequentiallyConsistent)
    }

    /// When the frame at `sampleTime` is heard (CLOCK_MONOTONIC nanoseconds) at `sampleRate`, by
    /// the last account; nil before the first, or for a frame written after it (it may come after a
    /// break the account does not know of).
    func presentationTime(ofSampleTime sampleTime: Int64, sampleRate: Double) -> UInt64? {
        while true {
            let before = version.load(ordering: .sequentiallyConsistent)
            if before == 0 { return nil }
            if before & 1 == 1 { continue }
            let time = takenAt.load(ordering: .sequentiallyConsistent)
            let end = lastFrame.load(ordering: .sequentiallyConsistent)
            let delay = held.load(ordering: .sequentiallyConsistent)
            guard version.load(ordering: .sequentiallyConsistent) == before else { continue }
            guard sampleTime < end else { return nil }
            // At `time`, the frame at end − delay was being played.
            let frames = Double(sampleTime - (end - delay))
            return UInt64(max(0, Int64(time) + Int64(frames / sampleRate * 1e9)))
        }
    }

    /// When the last account was taken (CLOCK_MONOTONIC nanoseconds), nil before the first.
    var time: UInt64? {
        let time = takenAt.load(ordering: .sequentiallyConsistent)
        return time == 0 ? nil : time
    }
}
