import Testing

@testable import JACKIO

@Suite("JACKClockLine: when a JACK client's frames are heard")
struct JACKClockLineTests {
    static let period = 1_024
    static let nanosecondsPerFrame = 1e9 / 48_000
    /// When cycle `cycle` truly starts (the server's schedule), in nanoseconds.
    static func start(_ cycle: Int) -> Double { 5e12 + Double(cycle * period) * nanosecondsPerFrame }
    /// When the frame at `sample` is heard on the true line: a period after its cycle's start.
    static func heard(_ sample: Int64) -> UInt64 {
        UInt64((5e12 + Double(sample + Int64(period)) * nanosecondsPerFrame).rounded())
    }

    @Test("late callbacks are passed over: the line is the earliest cycle start, read with its epoch and accounts")
    func earliestStart() throws {
        let line = JACKClockLine(sampleRate: 48_000)
        #expect(line.reading(ofSampleTime: 0) == nil, "a reading before any cycle")
        // The first callback 3.8 ms late: the line rests on it alone.
        line.publishCycle(sample: 0, xruns: 0, periodFrames: Self.period, now: Self.start(0) + 3.8e6)
        let first = try #require(line.reading(ofSampleTime: 500))
        #expect(first.epoch == 1 && first.accounts == 1)
        #expect(abs(Double(first.time) - Double(Self.heard(500)) - 3.8e6) < 2)
        // Late by up to 15 ms (a busy machine), one on time: from then on the line is exact.
        let lateness = [2.1e6, 0, 15e6, 0.4e6, 9e6, 1e6, 3e6, 12e6, 0.2e6, 7e6]
        for (index, late) in lateness.enumerated() {
            let cycle = index + 1
            line.publishCycle(
                sample: Int64(cycle * Self.period), xruns: 0, periodFrames: Self.period, now: Self.start(cycle) + late)
        }
        let settled = try #require(line.reading(ofSampleTime: 5_000))
        #expect(settled.epoch == 1 && settled.accounts == 11)
        #expect(abs(Int64(settled.time) - Int64(Self.heard(5_000))) <= 1, "\(settled.time) vs \(Self.heard(5_000))")
        // A callback 20 ms earlier than the line needs no start-over: it is the new earliest.
        line.publishCycle(
            sample: Int64(11 * Self.period), xruns: 0, periodFrames: Self.period, now: Self.start(11) - 20e6)
        let earlier = try #require(line.reading(ofSampleTime: 5_000))
        #expect(earlier.epoch == 1 && abs(Double(earlier.time) - Double(Self.heard(5_000)) + 20e6) < 2)
    }

    @Test("an xrun, a new period, or a cycle 20 ms after the line starts it over; a wake-up 15 ms late does not")
    func startOvers() throws {
        let line = JACKClockLine(sampleRate: 48_000)
        var cycle = 0
        func publish(xruns: Int = 0, period: Int = Self.period, late: Double = 0) {
            line.publishCycle(
                sample: Int64(cycle * Self.period), xruns: xruns, periodFrames: period, now: Self.start(cycle) + late)
            cycle += 1
        }
        for _ in 0..<4 { publish() }
        #expect(line.reading(ofSampleTime: 0).map { [$0.epoch, $0.accounts] } == [1, 4])
        publish(late: 15e6)
        #expect(line.reading(ofSampleTime: 0).map { [$0.epoch, $0.accounts] } == [1, 5])
        publish(late: 25e6)
        let moved = try #require(line.reading(ofSampleTime: 0))
        #expect(moved.epoch == 2 && moved.accounts == 1)
        #expect(abs(Double(moved.time) - Double(Self.heard(0)) - 25e6) < 2, "the new line is the late one")
        publish(xruns: 1)
        #expect(line.reading(ofSampleTime: 0).map { [$0.epoch, $0.accounts] } == [3, 1])
        publish(xruns: 1, period: 2_048)
        #expect(line.reading(ofSampleTime: 0).map { [$0.epoch, $0.accounts] } == [4, 1])
    }
}
