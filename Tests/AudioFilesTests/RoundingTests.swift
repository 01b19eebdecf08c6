import AudioGraph
import TestSupport
import Testing

@testable import AudioFiles

#if canImport(Glibc)
    import Glibc
#endif

/// Samples written to an integer file and read back, as integer steps of `bits`.
private func roundTrip(
    _ samples: [Float], encoding: AudioFile.Encoding, fileExtension: String = "wav", dither: Bool = false
) throws -> [Int] {
    try withTemporaryFolder("rounding") { folder in
        let path = folder + "/rounding.\(fileExtension)"
        let writer = try AudioFileWriter(
            path: path, sampleRate: 48_000, channelCount: 1, encoding: encoding, dither: dither)
        try writer.write(interleaved: samples)
        try writer.finish()
        let scale = encoding == .s16 ? 32_768.0 : 8_388_608.0
        return try AudioFile.read(from: path).samples.map { Int((Double($0) * scale).rounded()) }
    }
}

@Suite("16- and 24-bit files: each sample rounded to the nearest step, dither where asked")
struct RoundingTests {
    @Test(
        "rounding, not truncation: silence and near-silence stay 0, half a step rounds away from 0, full scale clips",
        arguments: [("wav", AudioFile.Encoding.s16), ("flac", .s16), ("aiff", .s16), ("wav", .s24), ("flac", .s24)])
    func rounds(fileExtension: String, encoding: AudioFile.Encoding) throws {
        let step: Float = encoding == .s16 ? 1 / 32_768 : 1 / 8_388_608
        let top = encoding == .s16 ? 32_767 : 8_388_607
        let samples: [Float] = [
            0, -1e-9, 1e-9, 0.3 * step, 0.7 * step, -0.3 * step, -0.7 * step, 0.5 * step, -0.5 * step,
            100.4 * step, -100.6 * step, 1, -1, 1.5, -1.5, .nan,
        ]
        let expected = [0, 0, 0, 0, 1, 0, -1, 1, -1, 100, -101, top, -top - 1, top, -top - 1, 0]
        #expect(try roundTrip(samples, encoding: encoding, fileExtension: fileExtension) == expected)
    }

    @Test("the mean of a quiet sine's error is 0 (truncation would leave −½ step), and its error is within ½ step")
    func noOffset() throws {
        let samples = (0..<48_000).map { Float(sin(Double($0) * 0.01) * 20.3 / 32_768) }
        let written = try roundTrip(samples, encoding: .s16)
        let errors = zip(written, samples).map { Double($0) - Double($1) * 32_768 }
        #expect(abs(errors.reduce(0, +) / Double(errors.count)) < 0.01)
        #expect(errors.allSatisfy { abs($0) <= 0.5 + 1e-6 })
    }

    @Test("TPDF dither: unbiased, at most one step from the input's nearest steps, the same noise every time")
    func dither() throws {
        let quarter = [Float](repeating: 0.25 / 32_768, count: 48_000)
        let first = try roundTrip(quarter, encoding: .s16, dither: true)
        #expect(Set(first).isSubset(of: [-1, 0, 1, 2]))
        #expect(Set(first).count >= 3, "noise, not a constant")
        let mean = Double(first.reduce(0, +)) / Double(first.count)
        #expect(abs(mean - 0.25) < 0.02, "mean \(mean) steps")
        #expect(try roundTrip(quarter, encoding: .s16, dither: true) == first, "reproducible")
        // Floats are written as they are, dither or not.
        try withTemporaryFolder("rounding") { folder in
            let path = folder + "/float.wav"
            let writer = try AudioFileWriter(
                path: path, sampleRate: 48_000, channelCount: 1, encoding: .f32, dither: true)
            try writer.write(interleaved: quarter)
            try writer.finish()
            #expect(try AudioFile.read(from: path).samples == quarter)
        }
    }

    @Test("a recording (the file tap) rounds too, and dithers where its settings ask")
    func tap() throws {
        try withTemporaryFolder("rounding-tap") { folder in
            var written: [[Int]] = []
            for dither in [false, true] {
                var settings = AudioFileTap.Settings()
                settings.dither = dither
                let path = folder + "/take-\(dither).wav"
                let tap = try AudioFileTap(path: path, channelCount: 1, sampleRate: 8_000, settings: settings)
                tap.record()
                let buffer = AudioBuffer(channelCount: 1, frameCapacity: 4_000)
                for frame in 0..<4_000 { buffer.channel(0)[frame] = frame % 2 == 0 ? -1e-9 : 0.7 / 32_768 }
                tap.process(buffer, frameCount: 4_000, time: AudioTime(sampleTime: 0, sampleRate: 8_000))
                try tap.finish()
                written.append(try AudioFile.read(from: path).samples.map { Int((Double($0) * 32_768).rounded()) })
            }
            #expect(written[0] == (0..<4_000).map { $0 % 2 == 0 ? 0 : 1 }, "rounded: -1e-9 is 0, 0.7 step is 1")
            #expect(written[1] != written[0] && written[1].allSatisfy { (-1...2).contains($0) }, "dithered")
        }
    }
}
