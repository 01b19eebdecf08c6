import ALSAIO
import AudioFiles
import AudioGraph
import Foundation
import Meters
import TestSupport
import Testing

@testable import Sessions

#if canImport(Glibc)
    import Glibc
#endif

extension FileCaptureDevice {
    func configuration(rate: Double, channels: Int, period: Int = 1_024) -> AudioInputNode.Configuration {
        AudioInputNode.Configuration(
            device: name, sampleRate: rate, channelCount: channels, periodFrames: period, periodCount: 3,
            definitions: definitions)
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
        try withTemporaryFolder("audio-recorder") { folder in
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
    }

    @Test("an existing file is refused and left alone; bad devices are one clear error and create nothing")
    func badInput() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let device = try FileCaptureDevice.make(samples: [Float](repeating: 0, count: 4_096), in: folder)
            try Data("keep".utf8).write(to: URL(fileURLWithPath: folder + "/take.wav"))
            #expect {
                _ = try AudioRecorder(
                    path: folder + "/take.wav",
                    configuration: .init(input: device.configuration(rate: 48_000, channels: 2))
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
            #expect {
                _ = try AudioRecorder(path: folder + "/new.wav", configuration: .init(input: channels))
            } throws: {
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
}

/// The source frame each recorded frame came from (see `numberedFrames`).
func frameNumbers(_ samples: [Float]) -> [Int] {
    stride(from: 0, to: samples.count - 1, by: 2).map {
        Int((samples[$0] * 32_768).rounded()) + Int((samples[$0 + 1] * 32_768).rounded()) * 32_768
    }
}

/// Runs of consecutive frame numbers: (first, count) each.
func runs(_ numbers: [Int]) -> [(first: Int, count: Int)] {
    var result: [(first: Int, count: Int)] = []
    for number in numbers {
        if let last = result.last, last.first + last.count == number {
            result[result.count - 1].count += 1
        } else {
            result.append((number, 1))
        }
    }
    return result
}

@Suite("Audio recorder: pause, split, meters, a file valid while it grows", .serialized)
struct AudioRecorderBehaviourTests {
    @Test("pause and resume leave exactly the un-paused parts, each whole")
    func pauseAndResume() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 48_000.0
            let feeder = PacedFeeder(
                folder: folder, samples: numberedFrames(Int(rate) * 8), rate: rate, channels: 2, speed: 4)
            var file = AudioFileTap.Settings()
            file.encoding = .f32
            let recorder = try AudioRecorder(
                path: folder + "/take.wav",
                configuration: .init(
                    input: feeder.device.configuration(rate: rate, channels: 2, period: 256), file: file))
            try recorder.record()
            usleep(250_000)
            recorder.pause()
            usleep(150_000)
            recorder.resume()
            usleep(150_000)
            recorder.pause()
            usleep(100_000)
            recorder.resume()
            usleep(150_000)
            try recorder.stop()
            let recorded = try AudioFile.read(from: folder + "/take.wav")
            let parts = runs(frameNumbers(recorded.samples))
            #expect(parts.count == 3, "runs: \(parts.map { "\($0.first)+\($0.count)" })")
            #expect(parts.first?.first == 0, "the recording starts with the first captured frame")
            // Each part is whole periods of the capture, and the gaps are the paused periods.
            #expect(parts.allSatisfy { $0.first % 256 == 0 && $0.count % 256 == 0 })
            #expect(parts.dropFirst().allSatisfy { $0.count > 256 })
            #expect(recorded.frameCount == recorder.tap.writtenFrameCount)
            #expect(recorded.frameCount == Int((recorder.currentTime * rate).rounded()))
        }
    }

    @Test("--split parts follow each other without a gap or an overlap: together they are the whole")
    func splitParts() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 44_100.0
            let source = testSignal(frames: Int(rate * 2), channels: 2, rate: rate)
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            func record(_ name: String, split: Int?) throws -> AudioRecorder {
                var file = AudioFileTap.Settings()
                file.splitFrames = split
                let recorder = try AudioRecorder(
                    path: folder + "/" + name,
                    configuration: .init(input: device.configuration(rate: rate, channels: 2), file: file))
                try recorder.record(forDuration: 1.5)
                while recorder.isRecording { usleep(5_000) }
                try recorder.stop()
                return recorder
            }
            let whole = try record("whole.wav", split: nil)
            let split = try record("part.wav", split: 10_000)
            #expect(split.files.map { String($0.split(separator: "/").last!) } == (1...7).map { "part-00\($0).wav" })
            let parts = try split.files.map { try AudioFile.read(from: $0) }
            #expect(parts.dropLast().allSatisfy { $0.frameCount == 10_000 })
            let joined = parts.flatMap(\.samples)
            let reference = try AudioFile.read(from: whole.files[0]).samples
            #expect(joined.count == reference.count && joined == reference, "the parts differ from the whole recording")
            #expect(reference.count == Int(rate * 1.5) * 2)
        }
    }

    @Test("meters: each window's RMS and peak equal those computed from the recorded samples, within 0.1 dB")
    func meters() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 48_000.0
            let source = testSignal(frames: Int(rate * 4), channels: 2, rate: rate)
            let feeder = PacedFeeder(folder: folder, samples: source, rate: rate, channels: 2, speed: 4)
            var file = AudioFileTap.Settings()
            file.encoding = .f32
            let recorder = try AudioRecorder(
                path: folder + "/take.wav",
                configuration: .init(
                    input: feeder.device.configuration(rate: rate, channels: 2, period: 256), file: file,
                    meterWindowFrames: 2_048))
            try recorder.record(forDuration: 3)
            var readings: [PowerMeter.Reading] = []
            while recorder.isRecording {
                let reading = recorder.meterReading()
                if reading.endFrame > 0 && reading.endFrame != readings.last?.endFrame { readings.append(reading) }
                usleep(7_000)
            }
            try recorder.stop()
            #expect(readings.count > 20)
            var worst = 0.0
            for reading in readings {
                for channel in 0..<2 {
                    let window = (reading.endFrame - 2_048..<reading.endFrame).map { Double(source[$0 * 2 + channel]) }
                    let rms = 20 * log10((window.map { $0 * $0 }.reduce(0, +) / 2_048).squareRoot())
                    let peak = 20 * log10(window.map(abs).max()!)
                    worst = max(
                        worst, abs(rms - Double(reading.averagePower[channel])),
                        abs(peak - Double(reading.peakPower[channel])))
                    #expect(reading.peakHoldPower[channel] >= reading.peakPower[channel])
                }
            }
            #expect(worst < 0.1, "largest difference \(worst) dB")
            #expect(readings.allSatisfy { $0.clipped == [false, false] })
            #expect(recorder.averagePower(channel: 5) == PowerMeter.floor)
        }
    }

    @Test("the file is valid while it grows: opened mid-recording, it holds all but the last second")
    func validWhileRecording() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 48_000.0
            let feeder = PacedFeeder(
                folder: folder, samples: numberedFrames(Int(rate) * 6), rate: rate, channels: 2, speed: 1)
            var file = AudioFileTap.Settings()
            file.encoding = .f32
            let recorder = try AudioRecorder(
                path: folder + "/take.wav",
                configuration: .init(
                    input: feeder.device.configuration(rate: rate, channels: 2, period: 512), file: file))
            try recorder.record()
            usleep(2_500_000)
            let captured = recorder.currentTime
            let partial = try AudioFile.read(from: folder + "/take.wav")
            try recorder.stop()
            #expect(
                Double(partial.frameCount) / rate >= captured - 1, "\(partial.frameCount) frames after \(captured) s")
            #expect(partial.frameCount > 0)
            #expect(runs(frameNumbers(partial.samples)).count == 1)
        }
    }

    @Test(
        "every format stays whole through its header refreshes (WAV, AIFF, FLAC, Ogg)",
        arguments: ["wav", "aiff", "flac", "ogg"])
    func everyFormatWhileRefreshing(format: String) throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 48_000.0
            let source = testSignal(frames: Int(rate * 3), channels: 2, rate: rate)
            let feeder = PacedFeeder(folder: folder, samples: source, rate: rate, channels: 2, speed: 1.5)
            var file = AudioFileTap.Settings()
            file.headerInterval = 0.2
            let recorder = try AudioRecorder(
                path: folder + "/take." + format,
                configuration: .init(
                    input: feeder.device.configuration(rate: rate, channels: 2, period: 512), file: file))
            try recorder.record(forDuration: 1.5)
            while recorder.isRecording { usleep(10_000) }
            try recorder.stop()
            let recorded = try AudioFile.read(from: folder + "/take." + format)
            #expect(recorded.frameCount == 72_000, "\(format): \(recorded.frameCount) frames")
            // Lossless formats hold the samples; Vorbis holds the sound (a single stream, not restarted):
            // its error at least 20 dB below the signal.
            let differences = zip(recorded.samples, source).map { Double($0 - $1) }
            if format == "ogg" {
                let noise = differences.map { $0 * $0 }.reduce(0, +)
                let signal = source.prefix(differences.count).map { Double($0) * Double($0) }.reduce(0, +)
                #expect(noise < signal / 100, "ogg: error \(10 * log10(noise / signal)) dB")
            } else {
                #expect(differences.allSatisfy { $0 == 0 }, "\(format): the samples differ")
            }
        }
    }

    @Test("a file at another rate: converted on the writer thread, the tone and its length kept")
    func fileAtAnotherRate() throws {
        try withTemporaryFolder("audio-recorder") { folder in
            let source = (0..<48_000 * 2).flatMap { frame -> [Float] in
                let value = Float(0.5 * sin(2 * Double.pi * 1_000 * Double(frame) / 48_000))
                return [value, -value]
            }
            let device = try FileCaptureDevice.make(samples: source, in: folder)
            var file = AudioFileTap.Settings()
            file.encoding = .f32
            file.fileSampleRate = 44_100
            let recorder = try AudioRecorder(
                path: folder + "/take.wav",
                configuration: .init(input: device.configuration(rate: 48_000, channels: 2), file: file))
            try recorder.record(forDuration: 1)
            while recorder.isRecording { usleep(5_000) }
            try recorder.stop()
            let recorded = try AudioFile.read(from: folder + "/take.wav")
            #expect(recorded.sampleRate == 44_100)
            #expect(abs(recorded.frameCount - 44_100) <= 2, "\(recorded.frameCount) frames")
            // Past the converter's start: a 1 kHz tone at half scale, the channels opposite.
            let left = stride(from: 4_410, to: 40_000, by: 1).map { recorded.samples[$0 * 2] }
            let crossings = zip(left, left.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
            let seconds = Double(left.count) / 44_100
            #expect(abs(Double(crossings) / seconds - 1_000) < 2, "\(Double(crossings) / seconds) Hz")
            let peak = left.map(abs).max() ?? 0
            #expect(abs(peak - 0.5) < 0.005, "peak \(peak)")
            #expect(recorded.samples[8_000 * 2] == -recorded.samples[8_000 * 2 + 1])
        }
    }

    @Test("a full disk ends the recording with one clear error and a valid file of what came before")
    func fullDisk() throws {
        let small: SmallFileSystem
        switch SmallFileSystem.mount(kilobytes: 512) {
        case .success(let system): small = system
        case .failure(let reason):
            print("skipped: \(reason.text)")
            return
        }
        try withTemporaryFolder("audio-recorder") { folder in
            let rate = 48_000.0
            let device = try FileCaptureDevice.make(
                samples: testSignal(frames: Int(rate * 4), channels: 2, rate: rate), in: folder)
            small.fill(leaving: 200_000)
            let recorder = try AudioRecorder(
                path: small.path + "/take.wav",
                configuration: .init(input: device.configuration(rate: rate, channels: 2)))
            try recorder.record(forDuration: 3)
            let deadline = Date().addingTimeInterval(20)
            while recorder.isRecording && recorder.failure == nil && Date() < deadline { usleep(10_000) }
            #expect(throws: SessionError.self) { try recorder.stop() }
            #expect(recorder.failure?.description == "no space left on device (\(small.path)/take.wav)")
            let saved = try AudioFile.read(from: small.path + "/take.wav")
            #expect(saved.frameCount > 10_000 && saved.frameCount < Int(rate * 3), "\(saved.frameCount) frames saved")
        }
    }
}
