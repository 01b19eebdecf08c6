import Testing

@testable import Sessions

@Suite("MonitorLatencyEstimate")
struct MonitorLatencyEstimateTests {
    /// Frame `frame` enters the capture device at `start` + frame / rate and is heard `latency`
    /// later; each account is read late by the stall the generator gives it (0 for a third).
    static func accounts(
        count: Int, latency: Double, seed: UInt64, start: Double = 5e9, firstFrame: Int64 = 4_096
    ) -> [(frame: Int64, captured: UInt64, played: UInt64, naive: Double)] {
        // Each account is taken when it says (stalls only make it late).
        var state = seed
        func stall() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let draw = Double(state >> 11) / Double(1 << 53)
            return draw < 1.0 / 3 ? 0 : draw * 15e6
        }
        return (0..<count).map { index in
            let frame = firstFrame + Int64(index * 12_000)
            let entered = start + Double(frame) / 48_000 * 1e9
            let captured = entered + stall()
            let played = entered + latency * 1e9 + stall()
            return (frame, UInt64(captured), UInt64(played), (played - captured) / 1e9)
        }
    }

    /// Adds a pair as the recorder does: both accounts taken when they say, the breaks read just after.
    static func add(
        _ pair: (frame: Int64, captured: UInt64, played: UInt64, naive: Double),
        to estimate: inout MonitorLatencyEstimate, breaks: Int, accounts: (UInt64, UInt64)? = nil
    ) {
        estimate.add(
            frame: pair.frame, captured: pair.captured, played: pair.played,
            accountTimes: accounts ?? (pair.captured, pair.played), breaks: breaks,
            now: max(pair.captured, pair.played) + 1_000)
    }

    @Test("stalled accounts (up to 15 ms late) give the true latency; a single pair can be 10 ms off")
    func earliestAccounts() throws {
        var estimate = MonitorLatencyEstimate(sampleRate: 48_000)
        let pairs = Self.accounts(count: 40, latency: 0.085, seed: 3)
        for pair in pairs {
            Self.add(pair, to: &estimate, breaks: 0)
        }
        let measured = try #require(estimate.seconds)
        #expect(abs(measured - 0.085) < 0.000_1, "measured \(measured * 1000) ms")
        // What reading one pair of accounts gave (the measurement before this estimate).
        let worst = pairs.map { abs($0.naive - 0.085) }.max() ?? 0
        #expect(worst > 0.010, "the stalls should move a single reading by more than 10 ms")
    }

    @Test("a break in a stream starts the estimate over (the lines moved); nil before any pair")
    func startsOverAfterABreak() throws {
        var estimate = MonitorLatencyEstimate(sampleRate: 48_000)
        #expect(estimate.seconds == nil)
        for pair in Self.accounts(count: 20, latency: 0.085, seed: 5) {
            Self.add(pair, to: &estimate, breaks: 0)
        }
        // After an underrun the output plays each frame a period (21.3 ms) later.
        for pair in Self.accounts(count: 20, latency: 0.085 + 1_024.0 / 48_000, seed: 9) {
            Self.add(pair, to: &estimate, breaks: 1)
        }
        let measured = try #require(estimate.seconds)
        #expect(abs(measured - (0.085 + 1_024.0 / 48_000)) < 0.000_1, "measured \(measured * 1000) ms")
    }

    @Test("after a break, a pair that mixes an account from before it with one from after is left out")
    func mixedAccountsAfterABreak() throws {
        var estimate = MonitorLatencyEstimate(sampleRate: 48_000)
        let before = Self.accounts(count: 20, latency: 0.085, seed: 5)
        for pair in before { Self.add(pair, to: &estimate, breaks: 0) }
        // A capture overrun loses 53 ms: each frame after it enters the device 53 ms later (and
        // the output, which did not break, plays it where it would have: the latency is 32 ms).
        let gap = 0.053
        let after = Self.accounts(
            count: 20, latency: 0.085 - gap, seed: 7, start: 5e9 + gap * 1e9, firstFrame: 4_096 + 20 * 12_000)
        // The first reads after the break: the capture's account is new, the output's still
        // the one from before (its thread has not written since): the pair is read with the
        // break, and the next one still holds the old playback account.
        let stale = before[before.count - 1]
        for pair in after.prefix(2) {
            let mixed = (pair.frame, pair.captured, pair.played - UInt64(0.02e9), pair.naive)
            Self.add(mixed, to: &estimate, breaks: 1, accounts: (pair.captured, stale.played))
        }
        #expect(estimate.seconds == nil, "nothing but mixed pairs yet")
        for pair in after.dropFirst(2) { Self.add(pair, to: &estimate, breaks: 1) }
        let measured = try #require(estimate.seconds)
        #expect(abs(measured - (0.085 - gap)) < 0.000_1, "measured \(measured * 1000) ms")
    }
}
