import Foundation
import TestSupport
import Testing

@testable import AudioGraph
@testable import Effects

@Suite("Distortion node")
struct DistortionNodeTests {
    let rate = 48_000.0
    let latency = 58

    /// The share of `signal`'s energy that lies off the harmonics of `fundamental` (DC included
    /// as harmonic 0), in dB. `signal` must hold a whole number of periods of the fundamental and
    /// of the sample rate's 10 Hz grid (a multiple of 4 800 samples at 48 kHz for 5 kHz): then
    /// every harmonic and every alias sits on a DFT bin and no window is needed.
    func nonHarmonicDecibels(_ signal: ArraySlice<Float>, fundamental: Double) -> Double {
        let samples = signal.map(Double.init)
        let n = Double(samples.count)
        let total = samples.reduce(0) { $0 + $1 * $1 }
        var harmonic = 0.0
        var k = 0.0
        while k * fundamental <= rate / 2 {
            let w = 2 * Double.pi * k * fundamental / rate
            var (re, im) = (0.0, 0.0)
            for (index, x) in samples.enumerated() {
                re += x * cos(w * Double(index))
                im -= x * sin(w * Double(index))
            }
            let power = (re * re + im * im) / n
            // Bins other than DC and Nyquist stand for two (the negative frequency too).
            harmonic += (k == 0 || k * fundamental == rate / 2) ? power : 2 * power
            k += 1
        }
        return 10 * log10(max(total - harmonic, 1e-300) / total)
    }

    @Test("a 5 kHz sine driven 60 dB into each curve: aliases at least 80 dB below the signal at 48 kHz")
    func aliasing() throws {
        let input = sine(5_000, amplitude: 0.9, count: 24_000, sampleRate: rate)
        for shape in [DistortionNode.Shape.softClip, .hardClip, .tube] {
            let node = DistortionNode(shape: shape, drive: 60, tone: 96_000, wetDryMix: 100)
            let output = try process(node, input, sampleRate: rate, quantum: 256)
            let aliases = nonHarmonicDecibels(output[14_400..<24_000], fundamental: 5_000)
            print("distortion aliasing, \(shape.rawValue), drive 60 dB, 5 kHz: \(aliases) dB")
            #expect(aliases < -80, "\(shape.rawValue): aliases at \(aliases) dB")
        }
    }

    @Test("at low rate each curve's output is its formula of the driven input, 58 frames later")
    func transferCurves() throws {
        let input = sine(50, amplitude: 1, count: 9_600, sampleRate: rate)
        let curves: [(DistortionNode.Shape, Double, (Double) -> Double)] = [
            (.softClip, 12, { tanh($0) }),
            (.hardClip, 12, { min(max($0, -1), 1) }),
            (.tube, 12, { $0 >= 0 ? tanh($0) : tanh(2 * $0) / 2 }),
            (
                .foldback, 6,
                { x in
                    let p = (x + 1) - 4 * ((x + 1) / 4).rounded(.down)
                    return p <= 2 ? p - 1 : 3 - p
                }
            ),
        ]
        for (shape, drive, curve) in curves {
            let node = DistortionNode(shape: shape, drive: drive, tone: 96_000, wetDryMix: 100)
            let output = try process(node, input, sampleRate: rate, quantum: 100)
            let gain = pow(10, drive / 20)
            var expected = input.map { curve(gain * Double($0)) }
            if shape == .tube {
                // The node's DC blocker, applied to the formula.
                let r = 1 - 2 * Double.pi * 10 / rate
                var (x1, y1) = (0.0, 0.0)
                expected = expected.map { x in
                    y1 = x - x1 + r * y1
                    x1 = x
                    return y1
                }
            }
            var (error, energy) = (0.0, 0.0)
            for t in 1_000..<(input.count - latency) {
                let difference = Double(output[t + latency]) - expected[t]
                error += difference * difference
                energy += expected[t] * expected[t]
            }
            let decibels = 10 * log10(error / energy)
            print("distortion transfer curve, \(shape.rawValue): \(decibels) dB off the formula")
            #expect(decibels < -60, "\(shape.rawValue): the output is \(decibels) dB off the formula")
        }
    }

    @Test("mix 0 is the input bit for bit, 58 frames late, for every shape")
    func dryIsExact() throws {
        var generator = SystemRandomNumberGenerator()
        let input = (0..<5_000).map { _ in Float.random(in: -1...1, using: &generator) }
        for shape in DistortionNode.Shape.allCases {
            let node = DistortionNode(shape: shape, drive: 40, tone: 3_000, wetDryMix: 0)
            let output = try process(node, input, sampleRate: rate, quantum: 128)
            #expect(output[0..<latency].allSatisfy { $0 == 0 }, "\(shape.rawValue)")
            #expect(Array(output[latency...]) == Array(input[..<(input.count - latency)]), "\(shape.rawValue)")
        }
    }

    @Test("below clipping the curves pass the signal: a quiet 1 kHz sine comes out 58 frames late at every factor")
    func linearRegion() throws {
        let input = sine(1_000, amplitude: 0.5, count: 4_800, sampleRate: rate)
        for factor in [1, 2, 4, 8] {
            let node = DistortionNode(shape: .hardClip, drive: 0, tone: 96_000, wetDryMix: 100)
            node.oversampling = factor
            let output = try process(node, input, sampleRate: rate, quantum: 256)
            var worst: Float = 0
            for t in 500..<(input.count - latency) { worst = max(worst, abs(output[t + latency] - input[t])) }
            // The kernel's mean over three samples is a gentle low-pass, (1 + 2 cos ω)/3 at the
            // oversampled rate (−0.05 dB at 1 kHz at 1×); the filters add ripple below 3·10⁻⁴.
            let w = 2 * Double.pi * 1_000 / (rate * Double(factor))
            let bound = 0.5 * (1 - (1 + 2 * cos(w)) / 3) + 3e-4
            #expect(Double(worst) < bound, "\(factor)×: largest difference \(worst), bound \(bound)")
        }
    }

    @Test("lower factors let more aliasing through, in order; the default is 8×")
    func oversamplingFactors() throws {
        let input = sine(5_000, amplitude: 0.9, count: 24_000, sampleRate: rate)
        var last = -Double.infinity
        #expect(DistortionNode().oversampling == 8)
        for factor in [8, 4, 2, 1] {
            let node = DistortionNode(shape: .hardClip, drive: 60, tone: 96_000, wetDryMix: 100)
            node.oversampling = factor
            let output = try process(node, input, sampleRate: rate, quantum: 256)
            let aliases = nonHarmonicDecibels(output[14_400..<24_000], fundamental: 5_000)
            print("distortion aliasing, hard, drive 60 dB, 5 kHz, \(factor)x: \(aliases) dB")
            #expect(aliases > last + 10, "\(factor)×: \(aliases) dB")
            last = aliases
        }
    }

    @Test("bitcrush: values on the 2^(bits−1) grid, each held `downsample` frames, from the delayed input")
    func bitCrush() throws {
        let input = sine(97, amplitude: 0.8, count: 3_000, sampleRate: rate)
        let node = DistortionNode(shape: .bitCrush, drive: 0, tone: 96_000, wetDryMix: 100)
        node.bits = 4
        node.downsample = 3
        let output = try process(node, input, sampleRate: rate, quantum: 100)
        // Holds start at frame 0: frames 3k, 3k + 1 and 3k + 2 hold the input of frame 3k − 58.
        for t in stride(from: 60, to: output.count - 3, by: 3) {
            let expected = (input[t - latency] * 8).rounded() / 8
            #expect(output[t] == expected && output[t + 1] == expected && output[t + 2] == expected, "frame \(t)")
        }
    }

    @Test("ring modulator: a 300 Hz sine against a 1 kHz carrier gives 700 and 1300 Hz at half amplitude, no 300 Hz")
    func ringModulator() throws {
        let input = sine(300, amplitude: 0.5, count: 9_600, sampleRate: rate)
        let node = DistortionNode(shape: .ringModulator, drive: 0, tone: 96_000, wetDryMix: 100)
        node.carrier = 1_000
        let output = Array(try process(node, input, sampleRate: rate, quantum: 256)[4_800..<9_600])
        // A Hann-free DTFT is exact here: 4 800 samples hold whole periods of 100 Hz.
        func amplitude(_ frequency: Double) -> Double {
            pow(10, measuredDecibels(output, atFrequency: frequency, sampleRate: rate) / 20) * 2 / Double(output.count)
        }
        #expect(abs(amplitude(700) - 0.25) < 0.003, "700 Hz at \(amplitude(700))")
        #expect(abs(amplitude(1_300) - 0.25) < 0.003, "1300 Hz at \(amplitude(1_300))")
        #expect(amplitude(300) < 1e-4, "300 Hz at \(amplitude(300))")
    }

    @Test("presets and specs: a preset's values, then the spec's own keys; ranges refused in one line")
    func presetsAndSpecs() throws {
        let fuzz = try EffectChain.makeNodes([EffectSpec.parse("distortion:preset=fuzz,drive=10")])
        let node = try #require(fuzz.first as? DistortionNode)
        #expect(node.shape == .hardClip && node.drive == 10 && node.tone == 5_000 && node.level == -10)
        #expect(DistortionNode(preset: "speechAlienChatter")?.shape == .ringModulator)
        #expect(DistortionNode(preset: "nothing") == nil)
        #expect(Set(DistortionPreset.all.map(\.name)).count == DistortionPreset.all.count)
        #expect(throws: EffectSpecError.self) { try EffectSpec.parse("distortion:drive=61") }
        #expect(throws: EffectSpecError.self) { try EffectSpec.parse("distortion:type=cubic") }
        let chain = try EffectChain([EffectSpec.parse("distortion")], sampleRate: rate)
        #expect(chain.latency == 58)
    }

    @Test("a change of shape while playing makes no spike; a NaN in the input passes and is gone 2 000 frames later")
    func shapeChangesAndNaN() throws {
        let input = sine(220, amplitude: 0.5, count: 24_000, sampleRate: rate)
        let node = DistortionNode(shape: .softClip, drive: 6, tone: 96_000, wetDryMix: 100)
        let shapes: [DistortionNode.Shape] = [
            .softClip, .hardClip, .tube, .foldback, .softClip, .ringModulator, .tube,
            .bitCrush, .hardClip, .ringModulator, .foldback, .softClip,
        ]
        let output = try process(node, input, sampleRate: rate, quantum: 250) { position in
            node.shape = shapes[min(position / 2_000, shapes.count - 1)]
        }
        let peak = output.map(abs).max() ?? 0
        #expect(peak < 1.2, "peak \(peak) across the changes")
        var poisoned = sine(220, amplitude: 0.5, count: 6_000, sampleRate: rate)
        poisoned[1_000] = .nan
        for shape in [DistortionNode.Shape.softClip, .tube, .hardClip] {
            let node = DistortionNode(shape: shape, drive: 6, tone: 5_000, wetDryMix: 50)
            let result = try process(node, poisoned, sampleRate: rate, quantum: 256)
            let finite = result[3_100...].allSatisfy { $0.isFinite }
            #expect(finite, "\(shape.rawValue): still not finite")
        }
    }
}
