import AudioGraph

/// The reverb's pre-delay, the time before the reverberation starts: up to 50 ms, a ring per
/// channel. Render-thread code: all memory is allocated in `init`, and freed with the pre-delay.
struct PreDelay: ~Copyable {
    /// Left, then right (each a ring of `1 << bits` samples).
    private let ring: RealTimeBuffer<Float>
    private let bits: Int
    /// The delay in samples (at least 1).
    private var length = 1

    /// A pre-delay with room for 50 ms at `sampleRate`.
    init(sampleRate: Double) {
        bits = DelayRing.bits(above: Int(0.05 * sampleRate) + 2)
        ring = RealTimeBuffer(capacity: 2 << bits)
    }

    /// Sets the delay and clears the ring (render thread on a preset change: only preallocated
    /// memory is touched).
    mutating func configure(seconds: Double, sampleRate: Double) {
        length = max(1, min((1 << bits) - 1, Int(seconds * sampleRate)))
        ring.clear()
    }

    /// `count` frames of `left` and `right`, from sample `start` on, delayed into `outLeft` and
    /// `outRight`.
    mutating func process(
        _ left: UnsafeMutablePointer<Float>, _ right: UnsafeMutablePointer<Float>, count: Int, from start: Int,
        into outLeft: UnsafeMutablePointer<Float>, _ outRight: UnsafeMutablePointer<Float>
    ) {
        let ring = self.ring.base
        let size = 1 << bits
        let mask = size - 1
        // As copies: in runs of at most the delay, each read out of the ring before it is written
        // in (the ring is longer than the delay, so nothing still to be read is overwritten).
        var done = 0
        while done < count {
            let run = min(count - done, length)
            let now = start &+ done
            Self.copy(from: ring, size, at: (now &- length) & mask, to: outLeft + done, run)
            Self.copy(from: ring + size, size, at: (now &- length) & mask, to: outRight + done, run)
            Self.copy(left + done, run, into: ring, size, at: now & mask)
            Self.copy(right + done, run, into: ring + size, size, at: now & mask)
            done += run
        }
    }

    /// `count` samples out of a ring of `size` from `position` on (wrapping around once at most).
    @inline(__always)
    private static func copy(
        from ring: UnsafeMutablePointer<Float>, _ size: Int, at position: Int, to target: UnsafeMutablePointer<Float>,
        _ count: Int
    ) {
        let first = min(count, size - position)
        target.update(from: ring + position, count: first)
        if first < count { (target + first).update(from: ring, count: count - first) }
    }

    /// `count` samples into a ring of `size` from `position` on (wrapping around once at most).
    @inline(__always)
    private static func copy(
        _ source: UnsafeMutablePointer<Float>, _ count: Int, into ring: UnsafeMutablePointer<Float>, _ size: Int,
        at position: Int
    ) {
        let first = min(count, size - position)
        (ring + position).update(from: source, count: first)
        if first < count { ring.update(from: source + first, count: count - first) }
    }
}
