import Foundation
import TestSupport
import Testing

@testable import AudioGraph
@testable import Effects

/// The static curve (Giannoulis, Massberg and Reiss 2012), computed here on its own.
func compressorCurve(
    _ x: Double, threshold: Double, ratio: Double, knee: Double, expansionThreshold: Double = -120,
    expansionRatio: Double = 1
) -> Double {
    var gain = 0.0
    if 2 * (x - threshold) >= knee {
        gain = (1 / ratio - 1) * (x - threshold)
    } else if 2 * abs(x - threshold) < knee {
        gain = (1 / ratio - 1) * pow(x - threshold + knee / 2, 2) / (2 * knee)
    }
    if x < expansionThreshold { gain += (expansionRatio - 1) * (x - expansionThreshold) }
    return max(gain, -120)
}

/// Renders `node` with `main` on bus 0 and, when given, `side` on bus 1 (mono, or `channels`
/// copies of it); returns every output channel.
func render(
    _ node: AudioNode, main: [[Float]], side: [Float]? = nil, sampleRate: Double = 48_000, quantum: Int = 512
) throws -> [[Float]] {
    let channels = main.count
    try node.prepare(format: AudioFormat(sampleRate: sampleRate, channelCount: channels), maximumFrameCount: quantum)
    let input = AudioBuffer(channelCount: channels, frameCapacity: quantum)
    let sideBuffer = AudioBuffer(channelCount: 1, frameCapacity: quantum)
    let output = AudioBuffer(channelCount: channels, frameCapacity: quantum)
    var result = [[Float]](repeating: [], count: channels)
    let slots: [Unmanaged<AudioBuffer>?] = [.passUnretained(input), side == nil ? nil : .passUnretained(sideBuffer)]
    var position = 0
    while position < main[0].count {
        let count = min(quantum, main[0].count - position)
        for channel in 0..<channels {
            for frame in 0..<count { input.channel(channel)[frame] = main[channel][position + frame] }
        }
        if let side { for frame in 0..<count { sideBuffer.channel(0)[frame] = side[position + frame] } }
        slots.withUnsafeBufferPointer { buffers in
            node.render(
                into: output, inputs: RenderInputs(buffers: buffers), frameCount: count,
                time: AudioTime(sampleTime: Int64(position), sampleRate: sampleRate))
        }
        for channel in 0..<channels {
            result[channel] += UnsafeBufferPointer(start: output.channel(channel), count: count)
        }
        position += count
    }
    return result
}

func rms(_ samples: ArraySlice<Float>) -> Double {
    (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
}

@Suite("Dynamics processor (compressor and expander)")
struct DynamicsProcessorNodeTests {
    @Test("the fast log₂ and 2^x agree with the C library's to 3·10⁻⁵ (2·10⁻⁴ dB)")
    func fastLog() {
        var worstLog: Float = 0
        var worstExp: Float = 0
        for step in 0..<4_000 {
            let x = Float(pow(10, -30 + Double(step) * 0.0101))
            let lanes = SIMD8<Float>(repeating: x) * SIMD8(1, 1.1, 1.3, 1.7, 1.9, 0.5, 0.3, 0.77)
            let logs = FastLog.log2(lanes)
            let powers = FastLog.exp2(
                SIMD8(repeating: Float(step) * 0.05 - 100) + SIMD8(0, 0.1, 0.3, -0.3, 0.5, 0.7, 0.9, -0.9))
            for lane in 0..<8 {
                worstLog = max(worstLog, abs(logs[lane] - log2(lanes[lane])))
                let exact = exp2(Float(step) * 0.05 - 100 + [0, 0.1, 0.3, -0.3, 0.5, 0.7, 0.9, -0.9][lane])
                worstExp = max(worstExp, abs(powers[lane] / exact - 1))
            }
        }
        #expect(worstLog < 3e-5 && worstExp < 3e-5, "log₂ off by \(worstLog), 2^x by \(worstExp) (relative)")
    }

    @Test(
        "static curve: sine steps from −60 to 0 dBFS come out within 0.5 dB of the formula, hard and soft knee, peak and RMS",
        arguments: [(0.0, DynamicsProcessorNode.Detector.peak), (12, .peak), (0, .rms), (12, .rms)])
    func staticCurve(knee: Double, detector: DynamicsProcessorNode.Detector) throws {
        var worst = (error: 0.0, level: 0.0)
        for level in stride(from: -60.0, through: 0, by: 3) {
            let node = DynamicsProcessorNode()
            node.threshold = -24
            node.ratio = 5
            node.kneeWidth = knee
            node.detector = detector
            node.expansionThreshold = -45
            node.expansionRatio = 2
            // A fast attack: a peak detector's gain settles at the sine's peak level.
            node.attackTime = detector == .peak ? 0.1 : 10
            node.releaseTime = 200
            let signal = sine(997, amplitude: pow(10, level / 20), count: 96_000, sampleRate: 48_000)
            let output = try render(node, main: [signal])[0]
            let measured = 20 * log10(rms(output[86_000...]) / rms(signal[86_000...]))
            // The detector's level: the sine's peak, or its RMS (3.01 dB below).
            let detected = detector == .peak ? level : level - 10 * log10(2)
            let expected = compressorCurve(
                detected, threshold: -24, ratio: 5, knee: knee, expansionThreshold: -45, expansionRatio: 2)
            if abs(measured - expected) > worst.error { worst = (abs(measured - expected), level) }
        }
        #expect(worst.error < 0.5, "knee \(knee), \(detector): \(worst.error) dB off the curve at \(worst.level) dBFS")
    }

    @Test("attack and release are time constants of the gain in dB, within 10 % of the setting")
    func timeConstants() throws {
        for (attack, release) in [(20.0, 200.0), (2, 50), (150, 2_000)] {
            let node = DynamicsProcessorNode()
            node.threshold = -20
            node.ratio = 4
            node.kneeWidth = 0
            node.attackTime = attack
            node.releaseTime = release
            // DC at −40 dBFS, 0 dBFS from 0.5 s for 1.5 s, then −40 dBFS again: the curve's gain
            // goes 0 → −15 dB → 0.
            let rate = 48_000
            let signal = (0..<rate * 12).map { index -> Float in index >= rate / 2 && index < 2 * rate ? 1 : 0.01 }
            let output = try render(node, main: [signal])[0]
            let gain = zip(output, signal).map { 20 * log10(Double($0) / Double($1)) }
            let falling = gain[(rate / 2)...].firstIndex { $0 <= -15 * (1 - exp(-1)) }.map { $0 - rate / 2 }
            let rising = gain[(2 * rate)...].firstIndex { $0 >= -15 * exp(-1) }.map { $0 - 2 * rate }
            let measuredAttack = Double(falling ?? 0) / 48
            let measuredRelease = Double(rising ?? 0) / 48
            #expect(abs(measuredAttack / attack - 1) < 0.1, "attack \(attack) ms measured \(measuredAttack) ms")
            #expect(abs(measuredRelease / release - 1) < 0.1, "release \(release) ms measured \(measuredRelease) ms")
        }
    }

    @Test("a side-chain ducks the music; silence on it leaves the music bit for bit; the meter shows the reduction")
    func sideChain() throws {
        let node = DynamicsProcessorNode()
        node.threshold = -30
        node.ratio = 10
        node.kneeWidth = 0
        node.attackTime = 5
        node.releaseTime = 50
        let music = sine(440, amplitude: 0.5, count: 96_000, sampleRate: 48_000)
        // A square wave: its level is the same at every sample, for a peak detector as for RMS.
        let voice = (0..<96_000).map { index -> Float in index >= 48_000 ? (index / 40 % 2 == 0 ? 0.5 : -0.5) : 0 }
        let output = try render(node, main: [music], side: voice)[0]
        #expect(Array(output[0..<48_000]) == Array(music[0..<48_000]))
        // The voice, −6 dBFS, is 24 dB over the threshold: 10:1 takes 21.6 dB off the music.
        let ducked = 20 * log10(rms(output[80_000...]) / rms(music[80_000...]))
        let voiceLevel = 20 * log10(0.5)
        let expected = compressorCurve(voiceLevel, threshold: -30, ratio: 10, knee: 0)
        #expect(abs(ducked - expected) < 0.5, "ducked by \(ducked) dB, expected \(expected)")
        #expect(abs(node.gainReduction - expected) < 0.5, "meter \(node.gainReduction)")
    }

    @Test("look-ahead delays the audio by its latency and has the gain down before a peak arrives; linking")
    func lookAheadAndLinking() throws {
        let node = DynamicsProcessorNode()
        node.lookAhead = 5
        node.attackTime = 0.5
        node.threshold = -20
        node.ratio = 20
        node.kneeWidth = 0
        let quiet = (0..<9_600).map { index -> Float in index >= 4_800 ? 1 : 0.01 * sin(Float(index) * 0.05) }
        let output = try render(node, main: [quiet])[0]
        #expect(node.latency == 240)
        #expect(try EffectChain(nodes: [node], sampleRate: 48_000).latency == 240)
        // Below the threshold the output is the input 240 frames late, exactly.
        #expect(Array(output[240..<4_800]) == Array(quiet[0..<4_560]))
        // The step reaches the output at 5040 already 5 ms (10 attack constants) into the attack.
        #expect(20 * log10(Double(output[5_040])) < -15, "first loud sample at \(20 * log10(Double(output[5_040]))) dB")

        // A loud left and a quiet right: linked, both are lowered; unlinked, only the left.
        let left = [Float](repeating: 1, count: 24_000)
        let right = sine(300, amplitude: 0.01, count: 24_000, sampleRate: 48_000)
        for linked in [true, false] {
            let stereo = DynamicsProcessorNode()
            stereo.isLinked = linked
            let out = try render(stereo, main: [left, right])
            let rightGain = 20 * log10(rms(out[1][20_000...]) / rms(right[20_000...]))
            #expect(linked ? rightGain < -10 : abs(rightGain) < 1e-3, "linked \(linked): right \(rightGain) dB")
        }
    }

    @Test("--fx compressor: keys, defaults, one-line range errors")
    func specs() throws {
        let spec = try EffectSpec.parse(
            "compressor:threshold=-30,ratio=8,knee=0,attack=5,release=300,makeup=6,lookahead=2,detector=rms,expansionRatio=2,expansionThreshold=-70,link=off"
        )
        let node = try #require(try EffectChain.makeNodes([spec]).first as? DynamicsProcessorNode)
        #expect(node.threshold == -30 && node.ratio == 8 && node.kneeWidth == 0 && node.attackTime == 5)
        #expect(node.releaseTime == 300 && node.makeUpGain == 6 && node.lookAhead == 2 && node.detector == .rms)
        #expect(node.expansionRatio == 2 && node.expansionThreshold == -70 && !node.isLinked)
        let errors: [(String, String)] = [
            ("compressor:ratio=0.5", "compressor: ratio=0.5 is out of range 1…50"),
            ("compressor:attack=0", "compressor: attack=0 is out of range 0.1…200 ms"),
            ("compressor:detector=loud", "compressor: detector=loud is not one of peak, rms"),
            ("compressor:threshold=-50", "compressor: threshold=-50 is out of range -40…20 dB"),
        ]
        for (text, message) in errors {
            #expect(throws: EffectSpecError(message), "\(text)") { try EffectSpec.parse(text) }
        }
    }
}
