import AudioGraph

/// The time from a frame entering the capture device to its being heard on the monitor, from
/// the two devices' own accounts taken now and then.
///
/// Each account pairs a frame's place in its device with the clock read after it, so a thread
/// held up in between makes it late, never early: a late capture account dates the frame's
/// arrival late (the latency looks shorter), a late playback account dates its playing late (the
/// latency looks longer), by as much as the stall, milliseconds under emulation. A loopback's
/// position that moves on its timer's tick lags the same way. Each account is kept as the time it
/// gives sample 0 (both devices count the same frames in full duplex), and the estimate is the
/// earliest playback line less the earliest capture line of the last 32 pairs, as NTP
/// takes the fastest round trip. A break in either stream (an overrun, an underrun) moves the
/// lines: the estimate starts over, from accounts both taken after the break was seen (an account
/// from before it, paired with one from after, mixes two lines: in the VM, a capture overrun so
/// paired once measured 31.8 ms against 85.3).
struct MonitorLatencyEstimate {
    let nanosecondsPerFrame: Double
    private var capture = EarliestAccounts()
    private var playback = EarliestAccounts()
    private var breaks: Int?
    private var breakSeen: UInt64 = 0

    init(sampleRate: Double) { nanosecondsPerFrame = 1e9 / sampleRate }

    /// Takes one pair of accounts: `captured` and `played` are when frame `frame` entered the
    /// capture device and is heard (CLOCK_MONOTONIC nanoseconds), by accounts taken at
    /// `accountTimes`; `breaks` is the two streams' overruns and underruns so far, read after
    /// the accounts, at `now`.
    mutating func add(
        frame: Int64, captured: UInt64, played: UInt64, accountTimes: (capture: UInt64, playback: UInt64),
        breaks: Int, now: UInt64
    ) {
        if breaks != self.breaks {
            self.breaks = breaks
            breakSeen = now
            capture.startOver()
            playback.startOver()
            return
        }
        // Either account may come from before the break.
        guard min(accountTimes.capture, accountTimes.playback) > breakSeen else { return }
        let offset = Double(frame) * nanosecondsPerFrame
        capture.add(Double(captured) - offset)
        playback.add(Double(played) - offset)
    }

    /// Seconds from capture to monitor, nil before the first pair.
    var seconds: Double? {
        guard let earliestCapture = capture.earliest, let earliestPlayback = playback.earliest else { return nil }
        return (earliestPlayback - earliestCapture) / 1e9
    }
}
