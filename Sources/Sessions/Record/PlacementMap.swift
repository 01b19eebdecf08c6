/// Turns MIDI arrival stamps into the times the audio has those messages at, from the live
/// scheduler's log of where it placed each one (`LiveMIDIScheduler.takePlacements()`): a MIDI
/// recording made alongside an audio recording then lines up with it sample for sample.
struct PlacementMap {
    private let arrivals: [UInt64]
    private let sampleTimes: [Int64]
    private let sampleRate: Double
    private let start: UInt64

    /// A map from `placements`, for audio whose frame 0 is sample time 0 at `sampleRate`; arrivals
    /// before any placement fall back to their time since `start`.
    init(_ placements: [(arrival: UInt64, sampleTime: Int64)], sampleRate: Double, start: UInt64) {
        let sorted = placements.sorted { $0.arrival < $1.arrival }
        arrivals = sorted.map(\.arrival)
        sampleTimes = sorted.map(\.sampleTime)
        self.sampleRate = sampleRate
        self.start = start
    }

    /// Seconds from the start of the audio to where the message that arrived at `arrival` is: its own
    /// placement, or (a message not logged) the nearest earlier one's plus the time between them.
    func seconds(_ arrival: UInt64) -> Double {
        // The last placement at or before the arrival.
        var low = 0
        var high = arrivals.count
        while low < high {
            let middle = (low + high) / 2
            if arrivals[middle] <= arrival { low = middle + 1 } else { high = middle }
        }
        let index = low - 1
        guard index >= 0 else {
            guard let first = arrivals.first else { return Double(Int64(bitPattern: arrival &- start)) / 1e9 }
            return max(0, Double(sampleTimes[0]) / sampleRate - Double(first - arrival) / 1e9)
        }
        return Double(sampleTimes[index]) / sampleRate + Double(arrival - arrivals[index]) / 1e9
    }
}
