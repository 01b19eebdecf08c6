import Foundation
import TestSupport
import Testing

@testable import Effects

/// An independent true-peak meter as ITU-R BS.1770 defines it (4× oversampling), with a long
/// Blackman-windowed sinc (±64 taps) rather than the limiter's short detector.
func truePeak(_ signal: [Float]) -> Double {
    let half = 64
    let factor = 4
    var tables: [[Double]] = []
    for phase in 0..<factor {
        let offset = Double(phase) / Double(factor)
        tables.append(
            (-half + 1...half).map { k in
                let u = offset - Double(k)
                let sinc = u == 0 ? 1 : sin(Double.pi * u) / (Double.pi * u)
                let x = (u + Double(half)) / Double(2 * half)
                let window = 0.42 - 0.5 * cos(2 * Double.pi * x) + 0.08 * cos(4 * Double.pi * x)
                return sinc * window
            })
    }
    var peak = 0.0
    let samples = signal.map(Double.init)
    for n in half..<(samples.count - half) {
        for table in tables {
            var value = 0.0
            for (index, k) in ((-half + 1)...half).enumerated() { value += table[index] * samples[n + k] }
            peak = max(peak, abs(value))
        }
    }
    return 20 * log10(peak)
}

func samplePeak(_ signal: [Float]) -> Double { 20 * log10(Double(signal.map(abs).max() ?? 0)) }

@Suite("LimiterNode")
struct LimiterNodeTests {
    let rate = 48_000.0

    func limiter(
        ceiling: Double = -1, truePeak: Bool = false, preGain: Double = 0, attack: Double = 5, release: Double = 100
    )
        -> LimiterNode
    {
        let node = LimiterNode()
        node.ceiling = ceiling
        node.truePeak = truePeak
        node.preGain = preGain
        node.attack = attack
        node.release = release
        return node
    }

    /// Adversarial stimuli, 0.5 s each, with the pre-gain they are played at.
    var stimuli: [(String, [Float], Double)] {
        let count = 24_000
        var generator = SplitMix(seed: 3)
        let square997 = (0..<count).map { Float(sin(2 * Double.pi * 997 * Double($0) / rate) >= 0 ? 1 : -1) }
        let square1k = (0..<count).map { Float(sin(2 * Double.pi * 1_000 * Double($0) / rate + 0.1) >= 0 ? 1 : -1) }
        // Samples ±1, peaks of √2 between them.
        let quarterRate = (0..<count).map { Float(2.0.squareRoot() * sin(Double.pi / 2 * Double($0) + Double.pi / 4)) }
        var impulses = [Float](repeating: 0, count: count)
        for index in stride(from: 1_000, to: count, by: 4_800) { impulses[index] = pow(10, 12.0 / 20) }
        let noise = (0..<count).map { _ in Float(Double.random(in: -0.3...0.3, using: &generator)) }
        return [
            ("997 Hz square, 0 dBFS", square997, 0), ("1 kHz square, +6 dB", square1k, 6),
            ("fs/4 sine at 45°, +3 dBTP", quarterRate, 0),
            ("impulses at +12 dBFS", impulses, 0), ("noise, +20 dB pre-gain", noise, 20),
        ]
    }

    @Test("sample peaks never exceed the ceiling; in true-peak mode neither do in-band true peaks (+0.1 dB)")
    func ceilingHolds() throws {
        // (The BS.1770 gate on every stimulus, with libebur128 as the meter, is
        // Tests/Effects/limiter_true_peak.py; this meter is a longer interpolator, stricter than
        // BS.1770's on full-band signals such as squares and noise.)
        for truePeakMode in [false, true] {
            for (name, signal, preGain) in stimuli {
                let node = limiter(ceiling: -1, truePeak: truePeakMode, preGain: preGain)
                let output = try process(node, signal, sampleRate: rate)
                #expect(samplePeak(output) <= -1 + 1e-5, "\(name): sample peak \(samplePeak(output)) dBFS")
                if truePeakMode && (name.hasPrefix("fs/4") || name.hasPrefix("impulses")) {
                    let measured = truePeak(output)
                    #expect(measured <= -0.9, "\(name): true peak \(measured) dBTP")
                }
            }
        }
        // The stimulus that makes true-peak mode necessary: sample-peak limiting lets it through.
        let quarterRate = stimuli[2].1
        let sampleMode = truePeak(try process(limiter(ceiling: -1), quarterRate, sampleRate: rate))
        #expect(sampleMode > 0.5, "sample-peak mode on fs/4 at 45°: \(sampleMode) dBTP")
    }

    @Test("below the ceiling the limiter is a pure delay of exactly its reported latency")
    func transparent() throws {
        for truePeakMode in [false, true] {
            var generator = SplitMix(seed: 9)
            let signal = (0..<20_000).map { _ in Float(Double.random(in: -0.1...0.1, using: &generator)) }
            let node = limiter(ceiling: -1, truePeak: truePeakMode, attack: 3)
            let output = try process(node, signal, sampleRate: rate)
            let latency = node.latency
            #expect(latency == Int((0.003 * rate).rounded()) + (truePeakMode ? 16 : 0))
            let difference = zip(output.dropFirst(latency), signal).map { abs($0 - $1) }.max() ?? 1
            #expect(difference < 1e-6, "true peak \(truePeakMode): \(difference)")
            #expect(node.gainReduction == 0)
        }
    }

    @Test(
        "equals the plain per-frame definition (sliding minimum, moving average, release), also while it rests at unity",
        arguments: [256, 61])
    func matchesDefinition(quantum: Int) throws {
        // Quiet, a burst, quiet long enough for the gain to come back to 1 (where whole blocks
        // rest at unity), a lone spike, another burst, quiet.
        let attack = 2.0
        let release = 50.0
        func sine(_ amplitude: Double, _ count: Int, _ offset: Int) -> [Float] {
            (0..<count).map { Float(amplitude * sin(2 * Double.pi * 440 * Double($0 + offset) / rate)) }
        }
        var signal = sine(0.3, 14_400, 0) + sine(2, 4_800, 14_400) + sine(0.3, 96_000, 19_200)
        signal[60_000] = 3
        signal += sine(1.5, 2_400, 0) + sine(0.2, 48_000, 2_400)
        let node = limiter(ceiling: -1, attack: attack, release: release)
        let output = try process(node, signal, sampleRate: rate, quantum: quantum)

        let lookAhead = Int((attack / 1_000 * rate).rounded())
        let limit = Float(pow(10, -1.0 / 20))
        let coefficient = 1 - exp(-1 / (release / 1_000 * rate))
        let targets = signal.map { abs($0) > limit ? Double(limit) / Double(abs($0)) : 1 }
        var box = [Double](repeating: 1, count: lookAhead)
        var gain = 1.0
        var lowest = 1.0
        var worst: Float = 0
        for frame in signal.indices {
            let minimum = targets[max(0, frame - lookAhead)...frame].min()!
            box[frame % lookAhead] = minimum
            let smoothed = min(box.reduce(0, +) / Double(lookAhead), 1)
            gain = min(smoothed, (1 - coefficient) * gain + coefficient * smoothed)
            lowest = min(lowest, gain)
            let delayed = frame >= lookAhead ? signal[frame - lookAhead] : 0
            let expected = min(max(delayed * Float(gain), -limit), limit)
            worst = max(worst, abs(output[frame] - expected))
        }
        #expect(worst < 1e-6, "largest difference from the definition: \(worst)")
        #expect(lowest < 0.5, "the bursts were limited (gain \(lowest))")
    }

    @Test("release: the gain recovers with the release time constant (within 10 %)", arguments: [50.0, 100, 200])
    func releaseTime(release: Double) throws {
        let loud = (0..<24_000).map { Float(2 * sin(2 * Double.pi * 1_000 * Double($0) / rate)) }
        let quiet = (0..<72_000).map { Float(0.1 * sin(2 * Double.pi * 1_000 * Double($0 + 24_000) / rate)) }
        let node = limiter(ceiling: 0, attack: 5, release: release)
        let output = try process(node, loud + quiet, sampleRate: rate)
        let input = loud + quiet
        let latency = node.latency
        // Gain per 1 ms hop: output peak over the aligned input's peak.
        let hop = 48
        var gains: [Double] = []
        var hopStart = 24_000
        while hopStart + hop + latency < input.count {
            let inPeak = input[hopStart..<(hopStart + hop)].map { abs(Double($0)) }.max()!
            let outPeak = output[(hopStart + latency)..<(hopStart + latency + hop)].map { abs(Double($0)) }.max()!
            gains.append(outPeak / inPeak)
            hopStart += hop
        }
        let lowest = gains.min()!
        #expect(lowest < 0.6, "the loud part was limited (\(lowest))")
        // From the first hop where the gain rises to where 1 − g has fallen to 1/e.
        let rising = gains.firstIndex { $0 > lowest + 0.01 * (1 - lowest) }!
        let reduction = 1 - gains[rising - 1]
        let settled = gains[rising...].firstIndex { 1 - $0 <= reduction / M_E }!
        let measured = Double(settled - rising + 1)  // ms
        #expect(abs(measured - release) <= 0.1 * release, "release \(release) ms measured \(measured) ms")
    }
}

@Suite("LookAheadLimiter's true-peak inner product")
struct TruePeakDotTests {
    /// Debug builds (the tests) run the scalar form, optimized builds the vector one: they must
    /// agree bit for bit, or the tests would not test what users run.
    @Test("the scalar and the SIMD4 inner products are bit-identical on the detector's phases")
    func scalarMatchesVector() {
        let taps = TruePeakInterpolator.taps
        let phases = TruePeakInterpolator.coefficients()
        var generator = SplitMix(seed: 20)
        let samples = (0..<taps).map { _ in Float(Double(generator.next() >> 11) / Double(1 << 53) * 2 - 1) * 1.5 }
        var compared = 0
        samples.withUnsafeBytes { window in
            for phase in 0..<4 {
                let coefficients = phases.base + taps * phase
                let vector = LookAheadLimiter.vectorDot(coefficients, window.baseAddress!, taps)
                let scalar = LookAheadLimiter.scalarDot(coefficients, window.baseAddress!, taps)
                #expect(vector.bitPattern == scalar.bitPattern, "phase \(phase): \(vector) against \(scalar)")
                compared += vector != 0 ? 1 : 0
            }
        }
        #expect(compared == 4)
    }
}
