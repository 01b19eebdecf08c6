import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles

@Suite("AudioFileTap: impossible channel counts, rates and parts are typed errors, not traps")
struct AudioFileTapSettingsTests {
    @Test("no channels, no hertz or parts of no frames: unsupportedFormat, and no file is made")
    func impossibleSettings() throws {
        try withTemporaryFolder("tap-settings") { folder in
            let path = folder + "/take.wav"
            var parts = AudioFileTap.Settings()
            parts.splitFrames = 0
            var fileRate = AudioFileTap.Settings()
            fileRate.fileSampleRate = .infinity
            let cases: [(channels: Int, rate: Double, settings: AudioFileTap.Settings, reason: String)] = [
                (0, 48_000, AudioFileTap.Settings(), "0 channels: a file needs 1 or more"),
                (-2, 48_000, AudioFileTap.Settings(), "-2 channels: a file needs 1 or more"),
                (Int.max, 48_000, AudioFileTap.Settings(), "\(Int.max) channels: a file needs 1 or more"),
                (2, 0, AudioFileTap.Settings(), "a sample rate of 0.0 Hz (1 Hz or more)"),
                (2, .nan, AudioFileTap.Settings(), "a sample rate of nan Hz (1 Hz or more)"),
                (2, 48_000, fileRate, "a sample rate of inf Hz (1 Hz or more)"),
                (2, 48_000, parts, "parts of 0 frames: a part needs 1 or more"),
            ]
            for item in cases {
                #expect(throws: AudioFileError.unsupportedFormat(path: path, reason: item.reason)) {
                    try AudioFileTap(
                        path: path, channelCount: item.channels, sampleRate: item.rate, settings: item.settings)
                }
                #expect(access(path, F_OK) != 0, "nothing is created: \(item.reason)")
            }
        }
    }

    @Test("a NaN or negative ring time makes the smallest ring; the tap records")
    func ringTimeClamped() throws {
        try withTemporaryFolder("tap-ring") { folder in
            for seconds in [Double.nan, -1] {
                var settings = AudioFileTap.Settings()
                settings.ringSeconds = seconds
                settings.overwrite = true
                let tap = try AudioFileTap(
                    path: folder + "/take.wav", channelCount: 1, sampleRate: 8_000, settings: settings)
                tap.record()
                let buffer = AudioBuffer(channelCount: 1, frameCapacity: 512)
                tap.process(buffer, frameCount: 512, time: AudioTime(sampleTime: 0, sampleRate: 8_000))
                try tap.finish()
                #expect(try AudioFile.read(from: folder + "/take.wav").frameCount == 512, "ring of \(seconds) s")
            }
        }
    }

    @Test("a file that exists names the setting that replaces it, not a command-line option")
    func existingFileWording() throws {
        try withTemporaryFolder("tap-exists") { folder in
            let path = folder + "/take.wav"
            #expect(FileManager.default.createFile(atPath: path, contents: Data([1])))
            let reason = "the file exists (set AudioFileTap.Settings.overwrite to replace it)"
            #expect(throws: AudioFileError.cannotOpen(path: path, reason: reason)) {
                try AudioFileTap(path: path, channelCount: 2, sampleRate: 48_000)
            }
            #expect(AudioFileTap.fileExistsReason == reason)
            var split = AudioFileTap.Settings()
            split.splitFrames = 48_000
            let second = folder + "/take-002.wav"
            #expect(FileManager.default.createFile(atPath: second, contents: Data([1])))
            #expect(throws: AudioFileError.cannotOpen(path: second, reason: reason)) {
                try AudioFileTap(path: folder + "/take.wav", channelCount: 2, sampleRate: 48_000, settings: split)
            }
        }
    }
}
