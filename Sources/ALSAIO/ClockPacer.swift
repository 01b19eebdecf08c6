#if canImport(Glibc)
    import Glibc
#endif

/// Keeps a stream to a device that does not pace it (ALSA's `null`, which takes frames as fast as
/// they come, and hands out silence as fast as it is read) to real time by the monotonic clock, as
/// a sound card with the same buffer would. Playback: the stream starts once the buffer is full, a
/// period is written only when the frames played since leave room for it, and a stream that falls
/// behind (its buffer run dry) starts over, an underrun. Capture (`waitForCapture`): a period is
/// read once it has been captured, and a reader a whole buffer behind starts over, an overrun.
/// The writes are whole periods and the buffer a whole number of them, as on a sound card.
/// Render-thread code: no allocation, no lock; it blocks only in `clock_nanosleep`.
struct ClockPacer {
    /// Frames per second of the stream.
    let sampleRate: Double
    /// Frames the emulated device buffer holds.
    let bufferFrames: Int
    /// When the stream started playing (a capture: its first read), CLOCK_MONOTONIC nanoseconds;
    /// 0 while a playback fills.
    private var start: UInt64 = 0
    /// Frames written since a playback started filling (a capture: read since it started).
    private var written: Int64 = 0

    init(sampleRate: Double, bufferFrames: Int) {
        self.sampleRate = sampleRate
        self.bufferFrames = bufferFrames
    }

    /// Waits until the buffer has room for `frames`; true if the stream had run dry since the
    /// last write (an underrun: it fills and starts again).
    mutating func waitForRoom(_ frames: Int) -> Bool {
        guard start != 0 else { return false }
        let now = Self.now()
        if ranDry(at: now) {
            (start, written) = (0, 0)
            return true
        }
        // Room once the frames played reach written + frames − buffer.
        let needed = written + Int64(frames) - Int64(bufferFrames)
        if needed > played(at: now) { sleep(untilPlayed: needed) }
        return false
    }

    /// Counts `frames` written; the stream starts once they fill the buffer. True if the stream
    /// had run dry before they came (a render slower than the buffer: an underrun, as ALSA reports
    /// it on the write): they are then the first of the buffer filling again.
    mutating func wrote(_ frames: Int) -> Bool {
        var underrun = false
        if start != 0 && ranDry(at: Self.now()) {
            (start, written) = (0, 0)
            underrun = true
        }
        written += Int64(frames)
        if start == 0 && written >= Int64(bufferFrames) { start = Self.now() }
        return underrun
    }

    /// The frames written and not yet played at `now` (CLOCK_MONOTONIC nanoseconds): the device's
    /// delay, as `snd_pcm_delay` gives it for a sound card. Nil while the stream fills, or once it
    /// has run dry.
    func delay(at now: UInt64) -> Int64? {
        guard start != 0, !ranDry(at: now) else { return nil }
        return written - played(at: now)
    }

    /// For a capture: waits until `frames` more have been captured in real time since the stream
    /// started (the first read starts it); true if the reader had fallen a whole buffer behind (an
    /// overrun: a sound card would have overwritten what it had not read), and the stream starts
    /// again from now.
    mutating func waitForCapture(_ frames: Int) -> Bool {
        let now = Self.now()
        if start == 0 { start = now }
        // Captured and not read: a full buffer is an overrun (ALSA's rule).
        let overrun = played(at: now) - written >= Int64(bufferFrames)
        if overrun { (start, written) = (now, 0) }
        written += Int64(frames)
        if played(at: now) < written { sleep(untilPlayed: written) }
        return overrun
    }

    /// Whether everything written has been played (ALSA's underrun: the buffer empty).
    private func ranDry(at now: UInt64) -> Bool { played(at: now) >= written }

    /// Sleeps until `frames` frames have played (been captured) since the stream started.
    private func sleep(untilPlayed frames: Int64) {
        var until = Self.timespec(start + UInt64((Double(frames) / sampleRate * 1e9).rounded(.up)))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nil) == EINTR {}
    }

    private func played(at now: UInt64) -> Int64 {
        Int64(Double(now &- start) / 1e9 * sampleRate)
    }

    static func now() -> UInt64 {
        var time = Glibc.timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func timespec(_ nanoseconds: UInt64) -> Glibc.timespec {
        Glibc.timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
    }
}
