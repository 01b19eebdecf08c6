import AudioFiles
import Foundation
import Meters
import SMF
import Sampler
import TestSupport
import Testing

@testable import Sessions

/// The integrated loudness of interleaved stereo samples at 44.1 kHz.
private func loudness(_ samples: [Float]) throws -> Double {
    let meter = try LoudnessMeter(channelCount: 2, sampleRate: 44_100)
    samples.withUnsafeBufferPointer { meter.add(interleaved: $0) }
    return meter.integratedLoudness
}

@Suite("OfflineRenderer keeps its promises: no silent render without a font, stems at the loudness asked")
struct RenderPromisesTests {
    @Test("a renderer given no SoundFont is a typed error, not a silent file")
    func noSoundFont() throws {
        #expect(throws: SoundFontError.notFound(path: "")) { _ = try OfflineRenderer(soundFonts: [String]()) }
        #expect(throws: SoundFontError.notFound(path: "")) { _ = try OfflineRenderer(soundFonts: [URL]()) }
    }

    @Test("stems with a loudness target: one gain brings the mix to it, and the stems still sum to the mix")
    func stemsAtTheLoudnessAsked() throws {
        try withTemporaryFolder("stems-loudness") { folder in
            let file = busyFile(notes: [0: 24, 1: 24, 9: 24])
            for encoding in [AudioFile.Encoding.f32, .s16] {
                var options = RenderOptions()
                options.encoding = encoding
                options.loudness = LoudnessTarget(integrated: -20, truePeakCeiling: -1)
                let stems = folder + "/\(encoding.rawValue)"
                let result = try OfflineRenderer(soundFont: bundledFontPath, options: options)
                    .renderStems(file, toFolder: stems, mode: .channel)
                #expect(result.stems.count == 4 && result.mix.warnings.isEmpty, "\(result.mix.warnings)")
                #expect(abs((result.mix.loudness ?? 0) + 20) < 0.1, "\(String(describing: result.mix.loudness))")
                #expect(abs(result.stems[0].loudness + 20) < 0.1, "the mix's entry says what it measures")
                let mix = try AudioFile.read(from: stems + "/mix.wav").samples
                var sum = [Float](repeating: 0, count: mix.count)
                for stem in result.stems.dropFirst() {
                    let samples = try AudioFile.read(from: stems + "/" + stem.file).samples
                    #expect(samples.count == mix.count)
                    for index in sum.indices { sum[index] += samples[index] }
                    #expect(abs(try loudness(samples) - stem.loudness) < 0.01, "\(stem.file)")
                }
                let summed = try loudness(sum)
                #expect(abs(summed + 20) < 0.1, "\(encoding): the stems sum to \(summed) LUFS")
                #expect(abs(try loudness(mix) + 20) < 0.1, "\(encoding)")
                // Floats: the stems sum to the mix, to the rounding of the sum's order.
                let apart = zip(sum, mix).map { abs($0 - $1) }.max() ?? 1
                #expect(apart < (encoding == .f32 ? 1e-6 : 3 / 32_768), "\(encoding): \(apart) apart")
                let hidden = try FileManager.default.contentsOfDirectory(atPath: stems).filter { $0.hasPrefix(".") }
                #expect(hidden.isEmpty, "\(hidden)")
            }
        }
    }

    @Test("a target the true-peak ceiling does not allow stops the gain at the ceiling, with a warning")
    func stemsHeldBackByTheCeiling() throws {
        try withTemporaryFolder("stems-ceiling") { folder in
            var options = RenderOptions()
            options.encoding = .f32
            options.loudness = LoudnessTarget(integrated: -5, truePeakCeiling: -1)
            let result = try OfflineRenderer(soundFont: bundledFontPath, options: options)
                .renderStems(busyFile(notes: [0: 24, 9: 24]), toFolder: folder, mode: .channel)
            #expect(result.mix.warnings.contains { $0.contains("not -5.0") && $0.contains("-1.0 dBTP") })
            let truePeak = result.mix.truePeak ?? 0
            #expect(truePeak <= -1 && truePeak > -1.2, "\(truePeak) dBTP")
            #expect((result.mix.loudness ?? 0) < -5)
        }
    }
}
