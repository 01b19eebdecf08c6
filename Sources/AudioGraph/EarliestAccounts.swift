/// The earliest of the last 32 accounts of a device's clock, as NTP takes the fastest round trip.
///
/// An account is a time the clock was read, less the frames the device had played by then
/// (CLOCK_MONOTONIC nanoseconds at frame 0, on the device's line). Reading takes time: a thread
/// held up between the device and the clock makes an account late, never early (by microseconds
/// usually, by milliseconds when the machine is busy). The earliest of the last few is therefore
/// the best guess of the line, and late ones are passed over. It follows a device clock that
/// drifts against the system's: at once when the device runs fast (each account is earlier), and
/// as old accounts leave the window when it runs slow (32 accounts behind, a few nanoseconds).
/// Fixed storage: it neither allocates nor locks, so a real-time thread may keep one.
package struct EarliestAccounts: Sendable {
    /// How many accounts the earliest is taken from.
    package static let window = 32
    private var ring = InlineArray<32, Double>(repeating: 0)
    private var next = 0
    /// The accounts taken since the last start-over.
    package private(set) var count = 0

    package init() {}

    /// Takes one account (nanoseconds at frame 0).
    package mutating func add(_ account: Double) {
        ring[next] = account
        next = next == Self.window - 1 ? 0 : next + 1
        count += 1
    }

    /// Forgets every account: after a break in the stream, the old ones describe another line.
    package mutating func startOver() {
        next = 0
        count = 0
    }

    /// The earliest of the last `window` accounts; nil before the first.
    package var earliest: Double? {
        guard count > 0 else { return nil }
        var lowest = ring[0]
        for index in 1..<min(count, Self.window) where ring[index] < lowest { lowest = ring[index] }
        return lowest
    }
}
