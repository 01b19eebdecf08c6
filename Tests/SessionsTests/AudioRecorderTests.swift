import AudioGraph
import AudioIO
import Foundation
import TestSupport
import Testing

@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

/// A capture device made of ALSA's own plugins: the `file` plugin over `null`, whose `infile`
/// feeds the capture stream from a file (or a FIFO) of interleaved float samples.
struct FileCaptureDevice {
    let name = "pianola_test_capture"
    let path: String

    /// The device's ALSA definition (for `AudioInputNode.Configuration.definitions`).
    var definitions: String {
        "pcm.\(name) { type file slave.pcm null file \"/dev/null\" infile \"\(path)\" format raw }"
    }

    func configuration(rate: Double, channels: Int, period: Int = 1_024) -> AudioInputNode.Configuration {
        AudioInputNode.Configuration(
            device: name, sampleRate: rate, channelCount: channels, periodFrames: period, periodCount: 3,
            definitions: definitions)
    }

    /// Writes `samples` (interleaved float) as the device's input.
    static func make(samples: [Float], in folder: String) throws -> FileCaptureDevice {
        let path = folder + "/input.raw"
        try samples.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: path)) }
        return FileCaptureDevice(path: path)
    }
}

/// A chirp plus noise, `frames` frames of `channels` channels, interleaved, each channel different
/// and every sample a multiple of 2⁻¹⁵ (exact in 16-, 24-bit and float files).
func testSignal(frames: Int, channels: Int, rate: Double, seed: UInt64 = 7) -> [Float] {
    var state = seed
    var samples = [Float](repeating: 0, count: frames * channels)
    for frame in 0..<frames {
        let time = Double(frame) / rate
        for channel in 0..<channels {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let noise = Double(Int64(bitPattern: state) >> 40) / Double(1 << 23) * 0.05
            let chirp = 0.6 * sin(2 * .pi * (100 + 2_000 * time) * time + Double(channel))
            samples[frame * channels + channel] = Float(((chirp + noise) * 32_768).rounded() / 32_768)
        }
    }
    return samples
}

@Suite("Audio recorder (ALSA file plugin capture)", .serialized)
struct AudioRecorderTests {
    @Test(
        "a recording equals the captured signal sample for sample",
        arguments: [(44_100.0, 1, AudioFile.Encoding.s16), (48_000, 2, .s24), (48_000, 2, .f32), (44_100, 2, .s16)])
    func recordingEqualsSource(rate: Double, channels: Int, encoding: AudioFile.Encoding) throws {
        let folder = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let frames = Int(rate * 1.5)
        let source = testSignal(frames: frames, channels: channels, rate: rate)
        let device = try FileCaptureDevice.make(samples: source, in: folder)
        var file = AudioFileTap.Settings()
        file.encoding = encoding
        let recorder = try AudioRecorder(
            path: folder + "/take.wav",
            configuration: .init(input: device.configuration(rate: rate, channels: channels), file: file))
        try recorder.record(forDuration: 1.2)
        let deadline = Date().addingTimeInterval(20)
        while recorder.isRecording && Date() < deadline { usleep(10_000) }
        try recorder.stop()
        let recorded = try AudioFile.read(from: folder + "/take.wav")
        #expect(recorded.channelCount == channels)
        #expect(recorded.sampleRate == rate)
        #expect(recorded.frameCount == Int(rate * 1.2))
        let count = min(recorded.samples.count, source.count)
        let differing = (0..<count).filter { recorded.samples[$0] != source[$0] }.count
        #expect(differing == 0, "\(differing) of \(count) samples differ")
        #expect(recorder.droppedFrameCount == 0)
        #expect(recorder.failure == nil)
    }

    @Test("an existing file is refused and left alone; bad devices are one clear error and create nothing")
    func badInput() throws {
        let folder = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let device = try FileCaptureDevice.make(samples: [Float](repeating: 0, count: 4_096), in: folder)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/take.wav"))
        #expect {
            _ = try AudioRecorder(
                path: folder + "/take.wav", configuration: .init(input: device.configuration(rate: 48_000, channels: 2))
            )
        } throws: { "\($0)".contains("the file exists") }
        #expect(try String(contentsOfFile: folder + "/take.wav", encoding: .utf8) == "keep")

        var unknown = device.configuration(rate: 48_000, channels: 2)
        unknown.device = "hw:57,0"
        #expect { _ = try AudioRecorder(path: folder + "/new.wav", configuration: .init(input: unknown)) } throws: {
            "\($0)".hasPrefix("audio device 'hw:57,0': cannot open")
        }
        var channels = device.configuration(rate: 48_000, channels: 9)
        channels.channelCount = 9
        #expect { _ = try AudioRecorder(path: folder + "/new.wav", configuration: .init(input: channels)) } throws: {
            "\($0)".contains("1…8 channels")
        }
        #expect {
            _ = try AudioRecorder(
                path: folder + "/missing/new.wav",
                configuration: .init(input: device.configuration(rate: 48_000, channels: 2)))
        } throws: { "\($0)".contains("No such file") }
        #expect(!FileManager.default.fileExists(atPath: folder + "/new.wav"))
    }
}
