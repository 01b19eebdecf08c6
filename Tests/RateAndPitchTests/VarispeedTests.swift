import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles
@testable import RateAndPitch

@Suite("AudioFilePlayerNode: varispeed")
struct VarispeedTests {
    /// The frequency of a sine from its upward zero crossings (interpolated linearly) in `range`.
    func frequency(_ samples: [Float], _ range: Range<Int>, sampleRate: Double) -> Double {
        var crossings: [Double] = []
        for n in range.dropFirst() where samples[n - 1] < 0 && samples[n] >= 0 {
            let (a, b) = (Double(samples[n - 1]), Double(samples[n]))
            crossings.append(Double(n - 1) + a / (a - b))
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 1 else { return 0 }
        return Double(crossings.count - 1) * sampleRate / (last - first)
    }

    @Test("a 1 kHz sine at rate 1.5 plays at 1.5 kHz (±0.1 Hz) and in 1/1.5 of the time (±1 frame a second)")
    func rateScalesPitchAndLength() throws {
        let sine = (0..<48_000).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        let player = AudioFilePlayerNode()
        player.rate = 1.5
        try player.schedule(try AudioClip(channels: [sine], sampleRate: 48_000))
        player.play()
        let output = try renderSource(player, frames: 40_000).left
        let measured = frequency(output, 2_000..<30_000, sampleRate: 48_000)
        #expect(abs(measured - 1_500) < 0.1, "\(measured) Hz")
        // A ramp gives the length: output frame k holds input frame 1.5 k, to the end at 32 000.
        let ramp = try rampClip(frames: 48_000)
        let rampPlayer = AudioFilePlayerNode()
        rampPlayer.rate = 1.5
        try rampPlayer.schedule(ramp)
        rampPlayer.play()
        let values = try renderSource(rampPlayer, frames: 40_000).left.map(Double.init)
        // A least-squares line through the middle, where the converter has settled.
        let points = 1_000..<31_000
        let meanK = Double(points.lowerBound + points.upperBound - 1) / 2
        let meanV = points.reduce(0.0) { $0 + values[$1] } / Double(points.count)
        let covariance = points.reduce(0.0) { $0 + (Double($1) - meanK) * (values[$1] - meanV) }
        let variance = points.reduce(0.0) { $0 + (Double($1) - meanK) * (Double($1) - meanK) }
        let slope = covariance / variance
        let intercept = meanV - slope * meanK
        #expect(abs(slope * 100_000 - 1.5) < 1e-5, "\(slope * 100_000) input frames per output frame")
        // The last input frame (value 0.48) arrives at output frame 32 000 ± 1.
        let end = (0.48 - intercept) / slope
        #expect(abs(end - 32_000) <= 1, "the clip ends at output frame \(end)")
        #expect(values[32_100...].allSatisfy { abs($0) < 1e-3 }, "silence after the clip")
    }

    @Test("a rate change glides: no click (the second difference stays within that of the faster sine)")
    func glide() throws {
        let sine = (0..<96_000).map { Float(0.5 * sin(2 * Double.pi * 1_000 * Double($0) / 48_000)) }
        let player = AudioFilePlayerNode()
        try player.schedule(try AudioClip(channels: [sine], sampleRate: 48_000))
        player.play()
        let output = try renderSource(player, frames: 30_000) { done in
            if done == 9_984 { player.rate = 2 }
            if done == 19_968 { player.rate = 0.5 }
        }.left
        let measured = frequency(output, 15_000..<19_900, sampleRate: 48_000)
        #expect(abs(measured - 2_000) < 0.5, "\(measured) Hz at rate 2")
        // 0.5 · (2π · 2 kHz / 48 kHz)²: the largest second difference of the fastest sine.
        let bound = 0.5 * pow(2 * Double.pi * 2_000 / 48_000, 2) * 1.05
        var worst = 0.0
        for n in 2..<output.count {
            worst = max(worst, abs(Double(output[n]) - 2 * Double(output[n - 1]) + Double(output[n - 2])))
        }
        #expect(worst < bound, "second difference \(worst), bound \(bound)")
        #expect(player.rate == 0.5)
        player.rate = 10
        #expect(player.rate == 4, "clamped to 0.25 … 4")
    }

    @Test("under varispeed a clip scheduled at a time starts within 3 ms of it, at rates 0.25 to 4")
    func scheduledStart() throws {
        for rate in [0.25, 0.5, 2, 4] {
            let player = AudioFilePlayerNode()
            player.rate = rate
            let clip = try AudioClip(channels: [[Float](repeating: 0.5, count: 20_000)], sampleRate: 48_000)
            try player.schedule(clip, at: AudioTime(sampleTime: 10_000, sampleRate: 48_000))
            player.play()
            let output = try renderSource(player, frames: 14_000).left
            let onset = output.firstIndex { $0 > 0.25 } ?? -1
            #expect(abs(onset - 10_000) <= 144, "rate \(rate): starts at \(onset), scheduled at 10 000")
        }
    }

    @Test("a six-channel buffer at rate 0.8: every channel 1/0.8 as long and 0.8 times the frequency")
    func multichannelBuffer() throws {
        let channels = 6
        var samples = [Float](repeating: 0, count: 48_000 * channels)
        for frame in 0..<48_000 {
            for channel in 0..<channels {
                let frequency = 500 * Double(channel + 1)
                samples[frame * channels + channel] = Float(
                    0.5 * sin(2 * Double.pi * frequency * Double(frame) / 48_000))
            }
        }
        let slower = try AudioFile.Buffer(samples: samples, channelCount: channels, sampleRate: 48_000)
            .varispeed(rate: 0.8)
        #expect(slower.frameCount == 60_000 && slower.channelCount == channels)
        for channel in 0..<channels {
            let one = (0..<slower.frameCount).map { slower.samples[$0 * channels + channel] }
            let measured = frequency(one, 2_000..<58_000, sampleRate: 48_000)
            #expect(abs(measured - 400 * Double(channel + 1)) < 0.1, "channel \(channel): \(measured) Hz")
        }
    }
}
