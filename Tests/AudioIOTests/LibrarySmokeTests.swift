import Testing

@testable import AudioIO

#if canImport(Glibc)
    import Glibc
#endif

func temporaryPath(_ name: String) -> String {
    var template = Array("/tmp/pianola-test-XXXXXX".utf8CString)
    let directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    return directory + "/" + name
}

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
                AudioFile.Buffer(samples: [0, 0], channelCount: 2, sampleRate: 44_100), to: "/tmp/x.mp9")
        }
    }

    @Test("the ALSA null PCM opens, takes 512 frames and drains")
    func alsaNullDevice() throws {
        let device = try ALSAPCMDevice(name: "null", sampleRate: 44_100)
        try device.write(interleaved: [Float](repeating: 0.25, count: 1_024))
        device.drain()
    }

    @Test("an unknown ALSA device name is a cannotOpen error naming the device")
    func unknownDevice() {
        do {
            _ = try ALSAPCMDevice(name: "no_such_pianola_device")
            Issue.record("opening a nonexistent device succeeded")
        } catch {
            #expect(error.description.contains("no_such_pianola_device"))
        }
    }
}
