import Foundation
import Testing

@testable import AudioGraph
@testable import Effects

/// Seconds for an impulse response's remaining energy (Schroeder's backward integral) to fall
/// from −5 dB to −35 dB, doubled: the T60 by a 30 dB range.
private func reverberationTime(_ response: [Float], sampleRate: Double) -> Double {
    var remaining = [Double](repeating: 0, count: response.count + 1)
    for index in stride(from: response.count - 1, through: 0, by: -1) {
        remaining[index] = remaining[index + 1] + Double(response[index]) * Double(response[index])
    }
    let first = remaining.firstIndex { $0 < remaining[0] * pow(10, -0.5) }!
    let second = remaining.firstIndex { $0 < remaining[0] * pow(10, -3.5) }!
    return 2 * Double(second - first) / sampleRate
}

@Suite("SoundFont synthesizers' reverb and chorus")
struct SynthEffectsTests {
    @Test("the synth reverb's impulse decays at the T60 its room size gives (0.98 s by default at 44.1 kHz)")
    func reverbDecay() {
        for room in [0.2, 0.5] {
            let settings = SynthReverb.Settings(roomSize: room)
            let reverb = SynthReverb(sampleRate: 44_100, settings: settings)
            let count = 44_100 * 4
            var input = [Float](repeating: 0, count: count)
            input[0] = 1
            var left = [Float](repeating: 0, count: count)
            var right = left
            reverb.process(input, left: &left, right: &right, count: count)
            let expected = settings.reverberationTime(sampleRate: 44_100)
            if room == 0.2 { #expect(abs(expected - 0.976) < 0.01, "T60 \(expected) s") }
            for side in [left, right] {
                let measured = reverberationTime(side, sampleRate: 44_100)
                #expect(abs(measured / expected - 1) < 0.05, "room \(room): T60 \(measured) s, expected \(expected) s")
            }
        }
    }

    @Test("the chorus node adds FluidSynth's chorus to its input; no voices, the input alone")
    func chorusNode() throws {
        var noise: [Float] = []
        for index in 0..<22_050 {
            let (fast, slow) = (sin(Double(index) * 0.37), sin(Double(index) * 0.071))
            noise.append(Float(fast * 0.5 + slow * 0.3))
        }
        let dry = try process(ChorusNode(settings: Chorus.Settings(voiceCount: 0)), noise, sampleRate: 44_100)
        #expect(dry == noise)
        let node = ChorusNode()
        #expect(node.settings == Chorus.Settings(voiceCount: 3, level: 2, speed: 0.3, depth: 8, waveform: .sine))
        let wet = try process(node, noise, sampleRate: 44_100, channels: 2)
        // The same as the processing core's output added to the input (a stereo input of the
        // same signal on both channels: the mono average is the signal).
        let chorus = Chorus(sampleRate: 44_100)
        var left = noise
        var right = noise
        chorus.process(noise, left: &left, right: &right, count: noise.count)
        #expect(zip(wet, left).allSatisfy { abs($0 - $1) < 1e-5 })
        var added = 0.0
        for (out, input) in zip(wet, noise) { added += Double(out - input) * Double(out - input) }
        #expect(added > 1, "the chorus added \(added) of energy")
    }
}
