import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles
@testable import RateAndPitch

@Suite("TimePitchNode: rate and pitch apart, in the graph")
struct TimePitchNodeTests {
    /// `clip` through a time-pitch unit at `rate` and `pitch` (see `renderedThrough`).
    func rendered(
        _ clip: AudioClip, rate: Double, pitch: Double, frames: Int, quantum: Int = 512,
        change: (Int, TimePitchNode) -> Void = { _, _ in }
    ) throws -> (output: [Float], node: TimePitchNode) {
        let node = TimePitchNode()
        node.rate = rate
        node.pitch = pitch
        return (try renderedThrough(node, clip, frames: frames, quantum: quantum, change: change), node)
    }

    func sine(_ frequency: Double, seconds: Double) throws -> AudioClip {
        let samples = (0..<Int(seconds * 48_000)).map {
            Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / 48_000))
        }
        return try AudioClip(channels: [samples], sampleRate: 48_000)
    }

    func cents(_ measured: Double, _ expected: Double) -> Double { 1_200 * log2(measured / expected) }

    @Test(
        "a sine's pitch moves by the cents asked (±2), whatever the rate; the input is pulled at the rate",
        arguments: [(1.0, 300.0), (0.8, 300.0), (2.0, 0.0), (0.5, -700.0), (1.25, 1_200.0)])
    func pitchAndPace(rate: Double, pitch: Double) throws {
        let clip = try sine(440, seconds: 12)
        let (output, node) = try rendered(clip, rate: rate, pitch: pitch, frames: 96_000)
        let expected = 440 * pow(2, pitch / 1_200)
        let measured = VarispeedTests().frequency(output, 24_000..<96_000, sampleRate: 48_000)
        #expect(abs(cents(measured, expected)) < 2, "rate \(rate), \(pitch) cents: \(measured) Hz for \(expected)")
        #expect(abs(Double(node.inputSampleTime) - rate * 96_256) <= 1, "\(node.inputSampleTime) input frames")
        // Once it sounds, it sounds without a gap: every 10 ms window holds the sine.
        let start = (output.firstIndex { abs($0) > 0.1 } ?? 0) + 4_800
        for window in stride(from: start, to: 95_000, by: 480) {
            let peak = output[window..<window + 480].map(abs).max() ?? 0
            #expect(peak > 0.3, "a gap at output frame \(window): peak \(peak)")
            if peak <= 0.3 { break }
        }
    }

    @Test("time scales by 1/rate: two tones 6 s apart come 3 s apart at rate 2, 12 s at 0.5 (±0.5 %)")
    func duration() throws {
        var samples = [Float](repeating: 0, count: 8 * 48_000)
        for start in [48_000, 7 * 48_000] {
            for n in 0..<9_600 { samples[start + n] = Float(0.5 * sin(2 * Double.pi * 440 * Double(n) / 48_000)) }
        }
        let clip = try AudioClip(channels: [samples], sampleRate: 48_000)
        for rate in [2.0, 0.5] {
            let (output, _) = try rendered(clip, rate: rate, pitch: 0, frames: Int(8 / rate * 48_000) + 48_000)
            let first = output.firstIndex { abs($0) > 0.1 } ?? 0
            let second = output[(first + 96_000)...].firstIndex { abs($0) > 0.1 } ?? 0
            let seconds = Double(second - first) / 48_000
            #expect(abs(seconds - 6 / rate) / (6 / rate) < 0.005, "rate \(rate): \(seconds) s apart")
        }
    }

    @Test("pitch glides when changed, without a click")
    func pitchGlide() throws {
        let (output, _) = try rendered(try sine(440, seconds: 6), rate: 1, pitch: 0, frames: 200_000) { done, node in
            if done == 96_256 { node.pitch = 700 }
        }
        var largest: Float = 0
        for n in 20_000..<output.count { largest = max(largest, abs(output[n] - output[n - 1])) }
        // The steepest slope of a 0.5 sine at 659 Hz is 0.043 a sample.
        #expect(largest < 0.06, "largest step \(largest)")
        let late = VarispeedTests().frequency(output, 150_000..<200_000, sampleRate: 48_000)
        #expect(abs(cents(late, 440 * pow(2, 700.0 / 1_200))) < 2, "\(late) Hz")
    }

    @Test(
        "pitch changes back and forth keep the output flowing: no silent quantum once it sounds",
        arguments: [(200, 0.0, 1_200.0), (50, -1_200.0, 1_200.0), (20, 0.0, 700.0)])
    func noDropouts(every: Int, low: Double, high: Double) throws {
        // Octave jumps every 200 quanta of 256 frames, for 16 s: without a level control the queue
        // drifts down by the glides' mismatch until every jump up leaves quanta silent.
        let (output, node) = try rendered(
            try sine(440, seconds: 30), rate: 1, pitch: 0, frames: 3_000 * 256, quantum: 256
        ) { done, node in
            let quantum = done / 256
            if quantum % every == 0 { node.pitch = (quantum / every) % 2 == 0 ? low : high }
            if quantum == 2_990 { node.rate = .nan }  // ignored
        }
        let start = (output.firstIndex { abs($0) > 0.1 } ?? 0) + 256
        var silent = 0
        for quantum in stride(from: start, to: output.count - 256, by: 256) {
            if (output[quantum..<quantum + 256].map(abs).max() ?? 0) < 0.05 { silent += 1 }
        }
        #expect(silent == 0, "every \(every) quanta \(low)/\(high) cents: \(silent) silent quanta")
        #expect(node.rate == 1 && !node.pitch.isNaN)
    }
}

extension TimePitchNodeTests {
    @Test("streaming, at rate 1 and pitch 0 music keeps its loudness (within 0.5 LU), cut at its attacks")
    func loudness() throws {
        // Plucked: each chord down 26 dB when the next comes, a clear attack.
        let music = TimePitchTests.chords(rate: 48_000, decay: 12)
        let left = stride(from: 0, to: music.count, by: 2).map { music[$0] }
        let right = stride(from: 1, to: music.count, by: 2).map { music[$0] }
        let (output, node) = try rendered(
            try AudioClip(channels: [left, right], sampleRate: 48_000), rate: 1, pitch: 0, frames: left.count + 24_000)
        #expect(node.attacksCut > 20, "\(node.attacksCut) attacks cut")
        // The left channel (what the helper renders), the latency dropped, measured as stereo.
        let latency = Int(node.latency * 48_000)
        let (before, after) = (
            try TimePitchTests.loudness(left.flatMap { [$0, $0] }, rate: 48_000),
            try TimePitchTests.loudness(output[latency..<(latency + left.count)].flatMap { [$0, $0] }, rate: 48_000)
        )
        print("streaming timepitch loudness at rate 1: \(before) LUFS in, \(after) LUFS out")
        #expect(abs(before - after) < 0.5, "\(before) LUFS in, \(after) LUFS out")
    }

    /// Where `output` falls quiet (every sample within 0.05) for `window` frames, from `start`
    /// to `end`: windows a third of their length apart.
    func quietWindows(_ output: [Float], window: Int, from start: Int, to end: Int) -> [Int] {
        stride(from: start, to: end - window, by: window / 3).filter { at in
            !output[at..<at + window].contains { abs($0) > 0.05 }
        }
    }

    @Test(
        "streaming, where SoundTouch's batch is too long to cut at attacks (rate 16; 4 two octaves down), it sounds on",
        arguments: [(16.0, 0.0), (4, -2_400)])
    func tooFastToCut(rate: Double, pitch: Double) throws {
        let samples = heldToneWithBursts(seconds: 16, sampleRate: 48_000)
        let frames = Int(16 / rate * 48_000)
        let (output, node) = try rendered(
            try AudioClip(channels: [samples], sampleRate: 48_000), rate: rate, pitch: pitch, frames: frames,
            quantum: 256)
        #expect(node.attacksCut == 0)
        // Two periods of the tone as transposed.
        let window = Int(2 * 48_000 / (440 * pow(2, pitch / 1_200)))
        let start = output.firstIndex { abs($0) > 0.05 } ?? frames
        let quiet = quietWindows(output, window: window, from: start, to: frames - Int(node.latency * 48_000))
        #expect(start < frames / 2 && quiet.isEmpty, "rate \(rate), \(pitch) cents: quiet at \(quiet.prefix(10))")
    }

    /// Onsets in `output`: the first sample above `level` after at least 5 ms below it.
    func onsets(_ output: [Float], above level: Float) -> [Int] {
        var found: [Int] = []
        var last = Int.min / 2
        for (index, sample) in output.enumerated() where abs(sample) > level {
            if index - last > 240 { found.append(index) }
            last = index
        }
        return found
    }

    @Test(
        "streaming, a click train keeps its onsets: every click once, within 10 ms of latency + time / rate",
        arguments: [(0.8, 300.0), (1.5, 0), (1, -700), (0.5, 0), (2, 0), (0.25, 0), (4, 0), (1, 1_200), (0.5, -2_400)])
    func clickTrain(rate: Double, pitch: Double) throws {
        var samples = [Float](repeating: 0, count: 3 * 48_000)
        for click in stride(from: 0, to: samples.count, by: 4_800) { samples[click] = 0.9 }
        let clip = try AudioClip(channels: [samples], sampleRate: 48_000)
        let (output, node) = try rendered(clip, rate: rate, pitch: pitch, frames: Int(3 / rate * 48_000) + 48_000)
        let found = onsets(output, above: 0.1)
        let expected = (0..<30).map { node.latency * 48_000 + Double($0 * 4_800) / rate }
        #expect(found.count == expected.count, "rate \(rate), \(pitch) cents: \(found.count) clicks for 30")
        let worst = expected.map { time in found.map { abs(Double($0) - time) }.min() ?? .infinity }.max()!
        print("streaming timepitch clicks, rate \(rate), \(pitch) cents: \(found.count) of 30, worst \(worst / 48) ms")
        #expect(worst / 48 < 10, "rate \(rate), \(pitch) cents: an onset \(worst / 48) ms from its place")
    }

    @Test(
        "streaming, attacks on a held tone keep their places, the pitch still or jumping a fifth back and forth",
        arguments: [0.8, 1.25], [false, true])
    func attacksWhilePitchJumps(rate: Double, jumps: Bool) throws {
        let samples = heldToneWithBursts(seconds: 8, sampleRate: 48_000)
        let frames = Int(8 / rate * 48_000)
        var latencies: [Double] = []  // the node's latency before each quantum, output frames
        let (output, _) = try rendered(
            try AudioClip(channels: [samples], sampleRate: 48_000), rate: rate, pitch: 0, frames: frames, quantum: 256
        ) { done, node in
            if jumps && done % 25_600 == 0 { node.pitch = (done / 25_600) % 2 == 0 ? 0 : 700 }
            latencies.append(node.latency * 48_000)
        }
        // Once it sounds, it sounds on: no gap of 3 ms (the tone alone peaks at 0.1).
        let quiet = quietWindows(
            output, window: 144, from: output.firstIndex { abs($0) > 0.05 } ?? 0, to: frames - 48_000)
        #expect(quiet.isEmpty, "rate \(rate): quiet at \(quiet.prefix(10))")
        // Every burst once, 150 ms / rate after the one before (±10 ms).
        let bursts = onsets(output.map { abs($0) > 0.2 ? $0 : 0 }, above: 0.2)
        // Less the change in the node's latency between the two (a pitch jump changes it).
        let gaps = zip(bursts, bursts.dropFirst()).map { first, second in
            let (before, after) = (
                latencies[min(first / 256 + 1, latencies.count - 1)],
                latencies[min(second / 256 + 1, latencies.count - 1)]
            )
            return (Double(second - first) - after + before) / 48
        }
        let worst = gaps.map { abs($0 - 150 / rate) }.max() ?? .infinity
        #expect(abs(bursts.count - 53) <= 1, "rate \(rate): \(bursts.count) bursts")
        #expect(worst < 10, "rate \(rate): gaps \(gaps.map { Int($0) })")
    }
}
