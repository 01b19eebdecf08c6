import AudioGraph
import TestSupport
import Testing

@testable import AudioFiles

#if canImport(Glibc)
    import Glibc
#endif

@Suite("libsndfile link smoke tests")
struct LibrarySmokeTests {
    @Test(
        "a WAV written through libsndfile reads back with the same samples", arguments: [AudioFile.Encoding.s16, .f32])
    func wavRoundTrip(encoding: AudioFile.Encoding) throws {
        let frames = 1_000
        var samples: [Float] = []
        for index in 0..<frames {
            let value = Float(sin(2 * Double.pi * 440 * Double(index) / 48_000)) * 0.5
            samples += [value, -value]
        }
        try withTemporaryFolder("library-smoke") { folder in
            let path = folder + "/roundtrip.wav"
            try AudioFile.write(
                AudioFile.Buffer(samples: samples, channelCount: 2, sampleRate: 48_000), to: path, encoding: encoding)
            let read = try AudioFile.read(from: path)
            #expect(read.channelCount == 2)
            #expect(read.sampleRate == 48_000)
            #expect(read.frameCount == frames)
            let tolerance: Float = encoding == .f32 ? 0 : 1.0 / 32_768
            let maxError = zip(read.samples, samples).map { abs($0 - $1) }.max() ?? 1
            #expect(maxError <= tolerance)
        }
    }

    @Test("an unknown extension is rejected with a clear error")
    func unknownExtension() throws {
        try withTemporaryFolder("library-smoke") { folder in
            #expect(throws: AudioFileError.self) {
                try AudioFile.write(
                    AudioFile.Buffer(samples: [0, 0], channelCount: 2, sampleRate: 44_100), to: folder + "/x.mp9")
            }
        }
    }
}
