#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The clock live MIDI is stamped with on arrival: `CLOCK_MONOTONIC`, in nanoseconds. It is the
/// clock ALSA, the network stack and other processes can also read, so arrival times compare across
/// threads and programs. Reading it neither allocates nor blocks (it is safe on the audio thread).
public enum MIDITimestamp {
    /// Now, in nanoseconds of `CLOCK_MONOTONIC`.
    @inline(__always)
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}
