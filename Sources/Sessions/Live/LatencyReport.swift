import FoundationEssentials
import MIDICore

#if canImport(Glibc)
    import Glibc
#endif

/// Each live note's latency (from its arrival to the output playing it, by the device's own
/// account): percentiles, jitter and a histogram, as `pianola live --latency-report` writes it.
public struct LatencyReport: Sendable, Codable, Hashable {
    /// Percentiles of the latency, in milliseconds.
    public struct Summary: Sendable, Codable, Hashable {
        /// The lowest, 1st-percentile, median, 99th-percentile, highest and mean latency, in milliseconds
        /// (all 0 when no note was measured).
        public var min, p1, p50, p99, max, mean: Double
    }

    /// A 0.1 ms bin of the histogram.
    public struct Bin: Sendable, Codable, Hashable {
        /// The bin's lower edge.
        public var milliseconds: Double
        /// The notes whose latency falls in the bin.
        public var count: Int

        private enum CodingKeys: String, CodingKey {
            case milliseconds = "ms", count
        }
    }

    /// The notes measured.
    public var notes: Int
    /// The output device's sample rate, in Hz.
    public var sampleRate: Double
    /// Frames per period, as the device accepted them.
    public var periodFrames: Int
    /// Periods in the device buffer.
    public var periods: Int
    /// The output buffer and the fixed delay, which the latency is made of.
    public var bufferMilliseconds: Double
    /// The fixed delay added to every note, in milliseconds (`delayMs` in the JSON).
    public var delayMilliseconds: Double
    /// Output underruns (xruns) the device recovered from so far.
    public var underruns: Int
    /// The latency's percentiles (`latencyMs` in the JSON).
    public var latency: Summary
    /// p99 − p1.
    public var jitterMilliseconds: Double
    /// The latencies in 0.1 ms bins, lowest first; empty bins are left out.
    public var histogram: [Bin]

    private enum CodingKeys: String, CodingKey {
        case notes, sampleRate, periodFrames, periods, underruns, histogram
        case bufferMilliseconds = "bufferMs", delayMilliseconds = "delayMs", latency = "latencyMs"
        case jitterMilliseconds = "jitterMs"
    }

    /// The report of `latencies` (milliseconds) played on `output` with `delay` ms added.
    public init(latencies: [Double], output: any SessionOutput, delayMilliseconds delay: Double) {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !sorted.isEmpty else { return 0 }
            return sorted[Swift.min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))]
        }
        var bins: [Int: Int] = [:]
        for latency in sorted { bins[Int((latency * 10).rounded(.down)), default: 0] += 1 }
        notes = sorted.count
        sampleRate = output.sampleRate
        periodFrames = output.periodFrames
        periods = output.periodCount
        bufferMilliseconds = output.bufferLatency * 1000
        delayMilliseconds = delay
        underruns = output.xrunCount
        latency = Summary(
            min: sorted.first ?? 0, p1: percentile(1), p50: percentile(50), p99: percentile(99), max: sorted.last ?? 0,
            mean: sorted.isEmpty ? 0 : sorted.reduce(0, +) / Double(sorted.count))
        jitterMilliseconds = percentile(99) - percentile(1)
        histogram = bins.keys.sorted().map { Bin(milliseconds: Double($0) / 10, count: bins[$0, default: 0]) }
    }

    /// Writes the report as JSON (through a temporary name and a rename).
    public func write(to path: String) throws(SessionError) { try TextFile.writeJSON(self, to: path) }
}
