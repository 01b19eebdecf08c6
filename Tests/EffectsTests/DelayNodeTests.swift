import Foundation
import TestSupport
import Testing

@testable import AudioGraph
@testable import Effects

@Suite("Delay node")
struct DelayNodeTests {
    /// The sum and the centroid (Σ k·h[k] / Σ h[k]) of `response` over `range`.
    func echo(_ response: [Float], _ range: Range<Int>) -> (sum: Double, centroid: Double) {
        let sum = range.reduce(0.0) { $0 + Double(response[$1]) }
        let moment = range.reduce(0.0) { $0 + Double($1) * Double(response[$1]) }
        return (sum, moment / sum)
    }

    @Test("an impulse's echoes land at the exact fractional delay, each the feedback times the one before")
    func echoesAtTheDelay() throws {
        let rate = 48_000.0
        for (time, feedback) in [(0.012_345_6, 50.0), (0.000_3, -70), (0.25, 90), (1.999, 30)] {
            let delay = DelayNode(delayTime: time, feedback: feedback, lowPassCutoff: 96_000, wetDryMix: 100)
            let samples = time * rate
            let response = try process(delay, impulse(Int(3.5 * samples) + 64), sampleRate: rate, quantum: 256)
            // Lagrange interpolation reproduces a linear ramp exactly: its kernel's centroid is the
            // delay, and the k-th echo's (k kernels and k − 1 loop gains) is k times it.
            for k in 1...3 {
                let center = Int((Double(k) * samples).rounded())
                let half = min(4 * k + 2, Int(samples / 2))
                let (sum, centroid) = echo(response, max(0, center - half)..<(center + half))
                let expected = pow(feedback / 100, Double(k - 1))
                #expect(abs(sum - expected) < 1e-4, "\(time) s, echo \(k): \(sum), expected \(expected)")
                #expect(
                    abs(centroid - Double(k) * samples) < 2e-3,
                    "\(time) s, echo \(k) at \(centroid), not \(Double(k) * samples)")
            }
            // Nothing before the first echo.
            #expect(response[0..<Int(samples) - 2].allSatisfy { $0 == 0 })
        }
    }

    @Test(
        "the loop's low-pass: each echo is the one before through H(f) = one-pole (bilinear), times the feedback (mono and stereo)"
    )
    func loopFilter() throws {
        let rate = 48_000.0
        // Mono runs the plain recursion, stereo the four-at-a-time one (`BlockLowPass`).
        for cutoff in [500.0, 2_000, 9_000] {
            // An integral delay (4 800 samples): the interpolator passes the samples as they are.
            let mono = try process(
                DelayNode(delayTime: 0.1, feedback: 60, lowPassCutoff: cutoff, wetDryMix: 100), impulse(3 * 4_800),
                sampleRate: rate, quantum: 512)
            let stereo = try process(
                DelayNode(delayTime: 0.1, feedback: 60, lowPassCutoff: cutoff, wetDryMix: 100), impulse(3 * 4_800),
                sampleRate: rate, quantum: 512, channels: 2)
            let apart = zip(mono, stereo).map { abs($0 - $1) }.max() ?? 1
            #expect(apart < 1e-6, "cutoff \(cutoff) Hz: the stereo loop is \(apart) from the mono one")
            let response = stereo
            let first = Array(response[4_800..<9_600])
            let second = Array(response[9_600..<14_400])
            let k = tan(Double.pi * cutoff / rate)
            var worst = 0.0
            for frequency in logSpaced(from: 50, to: 20_000, count: 24) {
                let expected = -10 * log10(1 + pow(tan(Double.pi * frequency / rate) / k, 2))
                guard expected > -60 else { continue }
                let one = measuredDecibels(first, atFrequency: frequency, sampleRate: rate)
                let ratio = measuredDecibels(second, atFrequency: frequency, sampleRate: rate) - one
                worst = max(worst, abs(one - expected), abs(ratio - (expected + 20 * log10(0.6))))
            }
            #expect(worst < 0.05, "cutoff \(cutoff) Hz: off the formula by \(worst) dB")
        }
    }

    @Test("changing the delay glides: no zipper noise above 5 kHz (stepping the delay at once would have it)")
    func glideWithoutZipper() throws {
        let rate = 48_000.0
        let signal = sine(440, amplitude: 0.5, count: 60_000, sampleRate: rate)
        let delay = DelayNode(delayTime: 0.010, feedback: 0, lowPassCutoff: 96_000, wetDryMix: 100)
        let output = try process(delay, signal, sampleRate: rate, quantum: 128) { position in
            if position == 24_064 { delay.delayTime = 0.0123 }
            if position == 36_096 { delay.delayTime = 0.0101 }
        }
        let residual = butterworthHighPass8(output, cutoff: 5_000, sampleRate: rate)[20_000...].map(abs).max()!
        #expect(20 * log10(residual) <= -90, "residual \(20 * log10(residual)) dBFS")
        // The same change made at once: the metric hears the jump.
        let stepped: [Float] = (0..<60_000).map { index in
            let seconds = index < 24_064 ? 0.010 : 0.0123
            return Float(0.5 * sin(2 * Double.pi * 440 * (Double(index) / rate - seconds)))
        }
        let steppedResidual = butterworthHighPass8(stepped, cutoff: 5_000, sampleRate: rate)[20_000...].map(abs).max()!
        #expect(20 * log10(steppedResidual) > -60, "a step gives \(20 * log10(steppedResidual)) dBFS")
        // After the glide the delay is where it was set, exactly: the output is the input 484.8 samples late.
        let late = Array(output[59_500..<59_700])
        let expected = (59_500..<59_700).map { Float(0.5 * sin(2 * Double.pi * 440 * (Double($0) / rate - 0.0101))) }
        #expect(zip(late, expected).allSatisfy { abs($0 - $1) < 1e-5 })
    }

    @Test("mix 0 is the input bit for bit; mix and feedback changes ramp; a stereo input keeps its channels apart")
    func mixAndChannels() throws {
        var generator = SplitMix(seed: 3)
        let noise = (0..<20_000).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let delay = DelayNode(delayTime: 0.01, feedback: 80, lowPassCutoff: 5_000, wetDryMix: 0)
        #expect(try process(delay, noise, sampleRate: 48_000, channels: 2) == noise)
        // From 0 to 100 % wet: no step larger than the signal's own.
        let ramped = DelayNode(delayTime: 0.01, feedback: 0, lowPassCutoff: 96_000, wetDryMix: 0)
        let tone = sine(100, amplitude: 0.5, count: 9_600, sampleRate: 48_000)
        let output = try process(ramped, tone, sampleRate: 48_000, quantum: 64) { position in
            if position == 4_800 { ramped.wetDryMix = 100 }
        }
        let steps = zip(output, output.dropFirst()).map { abs($1 - $0) }
        #expect(steps.max()! < 0.01, "largest step \(steps.max()!)")
        // Stereo: a left-only impulse echoes on the left only.
        let node = DelayNode(delayTime: 0.001, feedback: 50, lowPassCutoff: 96_000, wetDryMix: 100)
        try node.prepare(format: AudioFormat(sampleRate: 48_000, channelCount: 2), maximumFrameCount: 256)
        let input = AudioBuffer(channelCount: 2, frameCapacity: 256)
        let out = AudioBuffer(channelCount: 2, frameCapacity: 256)
        input.channel(0)[0] = 1
        var slot: Unmanaged<AudioBuffer>? = Unmanaged.passUnretained(input)
        withUnsafePointer(to: &slot) { pointer in
            node.render(
                into: out, inputs: RenderInputs(buffers: UnsafeBufferPointer(start: pointer, count: 1)),
                frameCount: 256,
                time: AudioTime(sampleTime: 0, sampleRate: 48_000))
        }
        #expect(out.channel(0)[48] == 1 && out.channel(0)[96] == 0.5)
        #expect((0..<256).allSatisfy { out.channel(1)[$0] == 0 })
    }

    @Test("full feedback on a steady input stays bounded, and the loop's silence costs nothing (no subnormals)")
    func bounded() throws {
        let delay = DelayNode(delayTime: 0.001, feedback: 100, lowPassCutoff: 96_000, wetDryMix: 100)
        let output = try process(delay, [Float](repeating: 1, count: 48_000), sampleRate: 48_000)
        #expect(output.allSatisfy { $0.isFinite && abs($0) <= 64 })
        let decaying = DelayNode(delayTime: 0.001, feedback: 90, lowPassCutoff: 1_000, wetDryMix: 100)
        let tail = try process(decaying, impulse(200_000), sampleRate: 48_000)
        #expect(tail[150_000...].allSatisfy { $0 == 0 || abs($0) >= Float.leastNormalMagnitude })
        #expect(tail[199_000...].allSatisfy { $0 == 0 })
    }

    @Test("--fx delay: seconds or note values at a tempo; ranges; the tail a chain reports")
    func specs() throws {
        let plain = try EffectSpec.parse("delay:time=0.25,feedback=-40,lowpass=8000,mix=20")
        #expect(plain.values == ["time": 0.25, "feedback": -40, "lowpass": 8_000, "mix": 20])
        for (text, seconds) in [("1/8", 0.3), ("1/8.", 0.45), ("1/8t", 0.2), ("3/16", 0.45), ("1/4", 0.6)] {
            let spec = try EffectSpec.parse("delay:time=\(text),tempo=100")
            #expect(abs(spec.delaySeconds(songTempo: 150) - seconds) < 1e-12, "\(text)")
        }
        // Without a tempo of its own: the song's, else 120 BPM.
        let synced = try EffectSpec.parse("delay:time=1/4")
        #expect(synced.followsSongTempo)
        #expect(synced.delaySeconds(songTempo: 150) == 0.4 && synced.delaySeconds(songTempo: nil) == 0.5)
        #expect(synced.delaySeconds(songTempo: 20) == 2)
        let nodes = try EffectChain.makeNodes([synced], songTempo: 75)
        #expect((nodes.first as? DelayNode)?.delayTime == 0.8)
        let errors: [(String, String)] = [
            ("delay:time=3", "delay: time=3 is out of range 0…2 s"),
            ("delay:time=1/0", "delay: time=1/0 is not a note value (1/4, 1/8, dotted 1/8., triplet 1/8t) or seconds"),
            ("delay:time=1/1,tempo=60", "delay: time=1/1 at 60 BPM is 4 s, more than 2 s"),
            ("delay:feedback=101", "delay: feedback=101 is out of range -100…100 %"),
            ("delay:lowpass=5", "delay: lowpass=5 is out of range 10…96000 Hz"),
            ("delay:tempo=10", "delay: tempo=10 is out of range 20…400"),
            ("delay:speed=2", "delay: unknown parameter 'speed' (delay takes time, feedback, lowpass, mix, tempo)"),
        ]
        for (text, message) in errors {
            #expect(throws: EffectSpecError(message), "\(text)") { try EffectSpec.parse(text) }
        }
        // Echoes to −90 dB: with 50 % feedback, 1 + 90 / 6.02 ≈ 15.9 repeats of 0.2 s.
        let chain = try EffectChain([try EffectSpec.parse("delay:time=0.2,feedback=50")], sampleRate: 48_000)
        #expect(abs(chain.tailSeconds - 0.2 * (1 + log(pow(10, -4.5)) / log(0.5))) < 1e-9)
        #expect(chain.longestEcho == 0.2)
    }
}
