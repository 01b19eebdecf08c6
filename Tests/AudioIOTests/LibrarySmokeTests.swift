import AudioGraph
import TestSupport
import Testing

@testable import AudioIO

#if canImport(Glibc)
    import Glibc
#endif

func temporaryPath(_ name: String) -> String { makeTemporaryDirectory() + "/" + name }

@Suite("libsndfile and ALSA link smoke tests")
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
        let path = temporaryPath("roundtrip.wav")
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

    @Test("an unknown extension is rejected with a clear error")
    func unknownExtension() {
        #expect(throws: AudioFileError.self) {
            try AudioFile.write(
                AudioFile.Buffer(samples: [0, 0], channelCount: 2, sampleRate: 44_100), to: temporaryPath("x.mp9"))
        }
    }

    @Test("the ALSA null PCM opens, plays a few periods of an engine's output and drains")
    func alsaNullDevice() throws {
        let output = try ALSAOutput(engine: AudioEngine(), configuration: nullDevice())
        try output.start()
        usleep(20_000)
        output.stop()
        #expect(output.failure == nil)
        #expect(output.periodFrames == 256)
    }

    @Test("an unknown ALSA device name is a cannotOpen error naming the device")
    func unknownDevice() {
        var configuration = nullDevice()
        configuration.device = "no_such_pianola_device"
        do {
            _ = try ALSAOutput(engine: AudioEngine(), configuration: configuration)
            Issue.record("opening a nonexistent device succeeded")
        } catch {
            #expect(error.description.contains("no_such_pianola_device"))
        }
    }
}

func nullDevice() -> ALSAOutput.Configuration {
    var configuration = ALSAOutput.Configuration()
    configuration.device = "null"
    return configuration
}
