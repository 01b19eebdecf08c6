import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles
@testable import Meters
@testable import RateAndPitch

@Suite("TimePitch (SoundTouch, cut at onsets)")
struct TimePitchTests {
    let rate = 48_000.0

    func sine(_ frequency: Double, seconds: Double) -> AudioFile.Buffer {
        let samples = (0..<Int(seconds * rate)).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / rate)) }
        return AudioFile.Buffer(samples: samples, channelCount: 1, sampleRate: rate)
    }

    /// A sine's frequency from its upward zero crossings (linearly interpolated), away from the ends.
    func frequency(_ samples: [Float]) -> Double {
        var crossings: [Double] = []
        for n in 4_001..<(samples.count - 4_000) where samples[n - 1] < 0 && samples[n] >= 0 {
            let (a, b) = (Double(samples[n - 1]), Double(samples[n]))
            crossings.append(Double(n - 1) + a / (a - b))
        }
        return Double(crossings.count - 1) * rate / (crossings.last! - crossings.first!)
    }

    @Test(
        "duration scales by 1/rate (within 0.5 %) and a sine's pitch moves by the cents asked (±2 cents)",
        arguments: [(0.8, 300.0), (1.5, 0), (1, -700), (0.5, 1_200), (2, -1_200)])
    func durationAndPitch(stretch: Double, cents: Double) throws {
        let input = sine(1_000, seconds: 3)
        let output = try TimePitch.process(input, rate: stretch, cents: cents)
        let expected = Double(input.frameCount) / stretch
        #expect(abs(Double(output.frameCount) - expected) <= 1)
        // The sound lasts to the end, not only the frames: the last loud sample within 0.5 %.
        let last = Double(output.samples.lastIndex { abs($0) > 0.25 } ?? 0)
        #expect(abs(last - expected) < 0.005 * expected, "sound ends at \(last), expected \(expected)")
        let measured = 1_200 * log2(frequency(output.samples) / 1_000)
        #expect(abs(measured - cents) < 2, "\(measured) cents, asked \(cents)")
    }

    @Test(
        "a click train keeps its onsets: every click once, within 10 ms of its time / rate",
        arguments: [(0.8, 300.0), (1.5, 0), (1, -700), (0.5, 0), (2, 0)])
    func clickTrain(stretch: Double, cents: Double) throws {
        var samples = [Float](repeating: 0, count: Int(3 * rate))
        for click in stride(from: 0, to: samples.count, by: 4_800) { samples[click] = 0.9 }
        let input = AudioFile.Buffer(samples: samples, channelCount: 1, sampleRate: rate)
        let output = try TimePitch.process(input, rate: stretch, cents: cents).samples
        // Clicks found: a sample above 0.1 after at least 5 ms below it.
        var found: [Int] = []
        var last = Int.min / 2
        for (index, sample) in output.enumerated() where abs(sample) > 0.1 {
            if index - last > 240 { found.append(index) }
            last = index
        }
        let expected = (0..<30).map { Double($0 * 4_800) / stretch }
        #expect(found.count == expected.count, "\(found.count) clicks found, \(expected.count) expected")
        let worst = expected.map { time in found.map { abs(Double($0) - time) }.min() ?? .infinity }.max()!
        #expect(worst / rate * 1_000 < 10, "an onset \(worst / rate * 1_000) ms from its place")
    }

    @Test("a held tone cut at its attacks sounds on up to each attack, without a gap", arguments: [0.8, 1.25, 0.5, 2])
    func noGapBeforeAttacks(stretch: Double) throws {
        let samples = heldToneWithBursts(seconds: 3, sampleRate: rate)
        let input = AudioFile.Buffer(samples: samples, channelCount: 1, sampleRate: rate)
        #expect(TimePitch.onsets(in: input).count == 19)
        let output = try TimePitch.process(input, rate: stretch, cents: 0).samples
        // Every 5 ms window holds the tone (it peaks at 0.1), but the last.
        var quiet: [Int] = []
        for window in stride(from: 0, to: output.count - 480, by: 240)
        where (output[window..<window + 240].map(abs).max() ?? 0) < 0.05 {
            quiet.append(window)
        }
        #expect(quiet.isEmpty, "rate \(stretch): quiet windows at \(quiet)")
    }

    /// Music enough for the loudness meter, interleaved stereo at `rate`: chords of harmonic
    /// tones decaying as e^(−`decay` t), a new one every 250 ms, for 8 s.
    static func chords(rate: Double, decay: Double = 4) -> [Float] {
        var samples = [Float](repeating: 0, count: Int(8 * rate) * 2)
        let roots = [220.0, 261.6, 329.6, 392.0, 293.7, 349.2]
        for note in 0..<32 {
            let start = Int(Double(note) * 0.25 * rate)
            let root = roots[note % roots.count]
            for n in 0..<Int(0.6 * rate) where start + n < samples.count / 2 {
                let t = Double(n) / rate
                var value = 0.0
                for harmonic in 1...5 { value += sin(2 * Double.pi * root * Double(harmonic) * t) / Double(harmonic) }
                let sample = Float(0.15 * value * exp(-decay * t))
                samples[2 * (start + n)] += sample
                samples[2 * (start + n) + 1] += sample * 0.8
            }
        }
        return samples
    }

    /// The integrated loudness of interleaved stereo `samples` at `rate`, LUFS.
    static func loudness(_ samples: [Float], rate: Double) throws -> Double {
        let meter = try LoudnessMeter(channelCount: 2, sampleRate: rate, measuresTruePeakAndRange: false)
        samples.withUnsafeBufferPointer { meter.add(interleaved: $0) }
        return meter.integratedLoudness
    }

    @Test("at rate 1 and pitch 0 music keeps its loudness (within 0.5 LU)")
    func loudness() throws {
        let input = AudioFile.Buffer(samples: Self.chords(rate: rate), channelCount: 2, sampleRate: rate)
        let output = try TimePitch.process(input, rate: 1, cents: 0)
        let (before, after) = (
            try Self.loudness(input.samples, rate: rate), try Self.loudness(output.samples, rate: rate)
        )
        print("timepitch loudness at rate 1: \(before) LUFS in, \(after) LUFS out")
        #expect(abs(before - after) < 0.5, "\(before) LUFS in, \(after) LUFS out")
    }

    @Test("out-of-range settings are a typed error")
    func ranges() {
        #expect(throws: AudioFileError.self) { try TimePitch.process(sine(440, seconds: 0.1), rate: 40, cents: 0) }
        #expect(throws: AudioFileError.self) { try TimePitch.process(sine(440, seconds: 0.1), rate: 1, cents: 3_000) }
    }
}
