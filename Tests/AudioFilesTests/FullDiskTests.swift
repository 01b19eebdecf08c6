import AudioGraph
import Foundation
import TestSupport
import Testing

@testable import AudioFiles

@Suite("A full disk", .serialized)
struct FullDiskTests {
    /// Writes five seconds of noise (which no encoder squeezes into 32 KB), then finishes.
    private func writeNoise(to path: String) throws(AudioFileError) {
        let writer = try AudioFileWriter(path: path, sampleRate: 44_100, encoding: .s16)
        let buffer = AudioBuffer(channelCount: 2, frameCapacity: 4_410)
        var random = SplitMix(seed: 3)
        for channel in 0..<2 {
            for frame in 0..<4_410 { buffer.channel(channel)[frame] = Float.random(in: -0.5...0.5, using: &random) }
        }
        do {
            for _ in 0..<50 { try writer.write(buffer, frameCount: 4_410) }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
    }

    @Test(
        "every format says 'no space left on device (PATH)', whether the disk is full at the start or fills up, and leaves nothing"
    )
    func everyFormat() throws {
        let mounted = SmallFileSystem.mount(kilobytes: 256)
        guard case .success(let disk) = mounted else {
            if case .failure(let reason) = mounted { print("skipped: \(reason.text)") }
            return
        }
        for leaving in [0, 32_768] {
            disk.fill(leaving: leaving)
            for name in ["out.wav", "out.flac", "out.ogg", "out.aiff", "out.raw"] {
                let path = disk.path + "/" + name
                #expect(throws: AudioFileError.noSpace(path: path), "\(name), \(leaving) bytes free") {
                    try writeNoise(to: path)
                }
                #expect(disk.files.isEmpty, "\(name) left \(disk.files)")
            }
            unlink(disk.path + "/filler")
        }
    }
}
